"""Scripted bots, batched with numpy: `heuristic` and the `minbid` baseline.

:class:`HeuristicAgent` decides for K tables at once with array operations on uint64 card sets
(no Python loop over tables).

**Bidding.** A linear hand evaluation gives the expected number of tricks E (side-suit aces,
kings and queens by length and company; heart honours and length; short side suits that can
be ruffed while hearts remain; the bids already made by others). Tricks are taken as normal
around E (sd `sigma`) to get P(make) for every bid, and each legal bid is scored by its expected
points under the rules' value table (thirty rule included), plus a bonus when making it would
win the match (own score + value >= target, partner above zero). A side far behind while the
opponents are close weighs losses less (takes risks). The dealer, who bids last, can make or
break the required total: for each bid it compares the hand being played (its own expected
points plus the partner's and minus the opponents', from their bids) with a throw-in (0). A
hand without A, K, Q or J asks for a redeal when every bid has negative value.

**Play.** From the SeatView only: own hand, cards played (so the cards still out and the hearts
left), voids shown, bids and tricks (who still needs tricks). Following: don't overtake a
partner who wins the trick unless the partner has made and we need tricks (or the partner's
card may still be beaten); otherwise, when our side wants the trick (we need tricks, or an
opponent still does), win with the cheapest card that is sure to hold against the players
still to play; third hand high when nothing is sure; second hand low (a sure winner only when
we need the trick ourselves); ruff with the lowest heart that wins; else play low, discarding
from the shortest side suit to make voids and keeping masters. Leading, with tricks to make:
the top heart when no heart out beats it (draws trumps), then side-suit masters that cannot
be ruffed, then a singleton (to ruff that suit later), else low from the shortest side suit;
when we have made and the partner needs tricks, lead into the partner's void, or low; when
only the opponents need tricks, cash winners to deny them. Each rule was kept because it won
duplicate matches against the version without it (BENCHMARKS.md, "Tournament").

`HeuristicParams` holds the tunable constants; ``heuristic:sigma=1.2,epsilon=0.05`` overrides
them from an agent spec (``epsilon`` > 0 mixes in random legal moves).

:class:`MinBidAgent` plays like the heuristic but always bids its minimum, or, as dealer, the
bid that makes the required total (if it can); it never asks for a redeal. It plays like the
frozen `heuristic-v1`, so it stays a fixed baseline while `heuristic` improves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from agents.base import Agent, sample_masked
from agents.heuristic_v1 import HeuristicV1Agent
from agents.registry import register_agent
from fourhundred_env.cards import BID_OFFSET, NUM_CARDS, REDEAL_ACTION, SUIT_SETS
from fourhundred_env.engine import Phase
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

_U64 = np.uint64
_ONE = _U64(1)
_FULL = _U64((1 << NUM_CARDS) - 1)
_HEARTS = SUIT_SETS[3]
_SIDE = SUIT_SETS[:3]
# _ABOVE[c + 1]: the cards with an id above c, for c = -1..51 (bits above c within the deck).
_ABOVE = np.array(
    [
        ((1 << NUM_CARDS) - 1) & ~((2 << c) - 1) if c >= 0 else (1 << NUM_CARDS) - 1
        for c in range(-1, 52)
    ],
    dtype=np.uint64,
)
_BYTE_WEIGHTS = (1 << np.arange(8, dtype=np.uint64)).astype(np.uint64)


def _lowest(x: np.ndarray) -> np.ndarray:
    """Index (int64) of the lowest set bit of each uint64 (< 2**53), -1 where x == 0."""
    lsb = x & (~x + _ONE)
    e = np.frexp(lsb.astype(np.float64))[1].astype(np.int64) - 1
    return np.where(x != 0, e, -1)


def _highest(x: np.ndarray) -> np.ndarray:
    """Index (int64) of the highest set bit of each uint64 (< 2**53), -1 where x == 0."""
    e = np.frexp(x.astype(np.float64))[1].astype(np.int64) - 1
    return np.where(x != 0, e, -1)


def _count(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x).astype(np.int64)


def _above(card: np.ndarray) -> np.ndarray:
    """(..) uint64: cards with an id above `card` (-1: every card)."""
    return _ABOVE[card + 1]


def mask_to_set(mask: np.ndarray) -> np.ndarray:
    """(K, 52) bool -> (K,) uint64 card sets."""
    k = mask.shape[0]
    packed = np.zeros((k, 8), np.uint8)
    packed[:, :7] = np.packbits(mask[:, :NUM_CARDS], axis=1, bitorder="little")
    return packed.view("<u8").reshape(k).astype(np.uint64)


def _norm_cdf(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF (Abramowitz-Stegun 7.1.26 erf, |error| < 1.5e-7)."""
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.where(x >= 0, erf, -erf))


@dataclass(frozen=True)
class HeuristicParams:
    """Tunable constants of the heuristic (defaults measured by tournaments; see BENCHMARKS.md)."""

    sigma: float = 1.0
    """Spread (sd, tricks) of the tricks actually taken around the evaluation."""
    bid_bias: float = 0.3
    """Added to the expected tricks before choosing a bid (> 0 bids higher)."""
    others_bids_weight: float = 0.12
    """Expected tricks lost per trick the other players have bid above 3 each."""
    finish_bonus: float = 20.0
    """Points-equivalent of making a bid that wins the match."""
    risk_loss_weight: float = 0.6
    """Weight of a missed bid when the opponents are close to winning and we are far."""
    partner_make_prob: float = 0.75
    """Probability the dealer assumes another player makes their bid."""
    redeal_below: float = -0.5
    """Ask for a redeal (when allowed) if the best bid is worth less than this."""
    void_guess: int = 2
    """A player may be void in a suit when at most this many of its cards are still out."""
    epsilon: float = 0.0
    """Probability of a uniformly random legal action instead (from the agent's seeded rng):
    a stochastic variant for mirror checks and diverse opponents."""


# Weights of the hand evaluation features (see `hand_features`); fitted on heuristic self-play
# (tricks taken ~ features) and rounded.
_FEATURE_NAMES = (
    "bias",
    "side_ace",
    "side_ace_long",
    "side_king_with_ace",
    "side_king_guarded",
    "side_king_single",
    "side_queen_with_two",
    "side_queen_with_one",
    "side_queen_guarded",
    "side_length_over_4",
    "heart_ace",
    "heart_king_guarded",
    "heart_king_single",
    "heart_queen_guarded",
    "heart_queen_short",
    "heart_jack_guarded",
    "hearts_low",
    "hearts_over_3",
    "side_voids_with_hearts",
    "side_singletons_with_hearts",
    "side_doubletons_with_hearts",
)
_WEIGHTS = np.array(
    [
        0.11,  # bias
        0.96,  # side_ace
        -0.08,  # side_ace_long (suit of 6+: more often ruffed)
        0.70,  # side_king_with_ace
        0.68,  # side_king_guarded
        0.11,  # side_king_single
        0.17,  # side_queen_with_two
        0.22,  # side_queen_with_one
        0.26,  # side_queen_guarded
        -0.16,  # side_length_over_4
        1.09,  # heart_ace
        1.00,  # heart_king_guarded
        0.20,  # heart_king_single
        0.82,  # heart_queen_guarded
        0.19,  # heart_queen_short
        0.52,  # heart_jack_guarded
        0.13,  # hearts_low (below the jack)
        0.64,  # hearts_over_3
        0.91,  # side_voids_with_hearts
        0.58,  # side_singletons_with_hearts
        0.24,  # side_doubletons_with_hearts
    ]
)


def hand_features(hand: np.ndarray) -> np.ndarray:
    """(K,) uint64 hands -> (K, F) float64 evaluation features (names in `_FEATURE_NAMES`)."""
    k = hand.shape[0]
    f = np.zeros((k, len(_FEATURE_NAMES)))
    f[:, 0] = 1.0

    def has(suit: int, rank: int) -> np.ndarray:
        return ((hand >> _U64(13 * suit + rank)) & _ONE).astype(bool)

    n_h = _count(hand & _HEARTS)
    for s in range(3):
        n = _count(hand & _SIDE[s])
        a, kk, q = has(s, 12), has(s, 11), has(s, 10)
        f[:, 1] += a
        f[:, 2] += a & (n >= 6)
        f[:, 3] += kk & a
        f[:, 4] += kk & ~a & (n >= 2)
        f[:, 5] += kk & ~a & (n == 1)
        f[:, 6] += q & a & kk
        f[:, 7] += q & (a ^ kk) & (n >= 3)
        f[:, 8] += q & ~a & ~kk & (n >= 3)
        f[:, 9] += np.maximum(n - 4, 0)
        trumps = n_h >= 1
        f[:, 18] += (n == 0) & trumps
        f[:, 19] += (n == 1) & trumps
        f[:, 20] += (n == 2) & (n_h >= 2)
    ha, hk, hq, hj = has(3, 12), has(3, 11), has(3, 10), has(3, 9)
    f[:, 10] = ha
    f[:, 11] = hk & (n_h >= 2)
    f[:, 12] = hk & (n_h == 1)
    f[:, 13] = hq & (n_h >= 3)
    f[:, 14] = hq & (n_h < 3)
    f[:, 15] = hj & (n_h >= 4)
    f[:, 16] = _count(hand & _HEARTS & ~_above(np.full(k, 13 * 3 + 8))) - 0  # hearts 2..10
    f[:, 17] = np.maximum(n_h - 3, 0)
    return f


class HeuristicAgent(Agent):
    """Rule-based bidding and card play, batched over tables (see the module docstring)."""

    name = "heuristic"

    def __init__(
        self, rules: Rules | None = None, seed: int = 0, params: HeuristicParams | None = None
    ) -> None:
        super().__init__(rules, seed)
        self.params = params if params is not None else HeuristicParams()
        self._values = self.rules.value_table().astype(np.float64)  # (2, 14)
        self._weights = self.rules.total_weights().astype(np.int64)  # (14,)
        self._thirty = self.rules.five_six_face_value_from

    # -- protocol ---------------------------------------------------------------------------
    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 legal actions for the K tables of `view` (bidding or playing)."""
        out = self._decide(view)
        if self.params.epsilon > 0:
            explore = self.rng.random(view.size) < self.params.epsilon
            if explore.any():
                out[explore] = sample_masked(view.legal_mask[explore], self.rng)
        return out

    def _decide(self, view: SeatView) -> np.ndarray:
        """(K,) int64 the heuristic's action at each table (bids and cards split by phase)."""
        k = view.size
        bidding = view.phase == Phase.BID
        playing = view.phase == Phase.PLAY
        if bidding.all():
            return self._bid(view)
        if playing.all():
            return self._play(view)
        out = np.full(k, -1, np.int64)
        if bidding.any():
            out[bidding] = self._bid(view.select(np.flatnonzero(bidding)))
        if playing.any():
            out[playing] = self._play(view.select(np.flatnonzero(playing)))
        return out

    # -- bidding ----------------------------------------------------------------------------
    def expected_tricks(self, view: SeatView) -> np.ndarray:
        """(K,) float64: tricks this hand should take, before the others' bids."""
        return hand_features(view.hand_set) @ _WEIGHTS

    def _bid_values(self, view: SeatView) -> np.ndarray:
        """(K, 14) float64 value of a made bid of 0..13 for the viewer (thirty rule applied)."""
        rows = np.arange(view.size)
        score = view.scores_before[rows, view.seat]
        if self._thirty is None:
            return np.broadcast_to(self._values[0], (view.size, 14))
        return self._values[(score >= self._thirty).astype(np.intp)]

    def _bid(self, view: SeatView) -> np.ndarray:
        p = self.params
        k = view.size
        rows = np.arange(k)
        me = view.seat.astype(np.int64)
        partner = (me + 2) & 3
        scores = view.scores_before.astype(np.int64)
        my_score = scores[rows, me]
        partner_score = scores[rows, partner]
        opp_best = np.maximum(
            np.where(scores[rows, (me + 3) & 3] > 0, scores[rows, (me + 1) & 3], -999),
            np.where(scores[rows, (me + 1) & 3] > 0, scores[rows, (me + 3) & 3], -999),
        )  # the opponents' closest qualifying player
        target = view.target.astype(np.int64)

        bids = view.bids.astype(np.int64)
        num_prev = view.num_bids.astype(np.int64)
        others = bids.sum(axis=1)  # own bid is still 0
        e = self.expected_tricks(view) + p.bid_bias
        e = e - p.others_bids_weight * np.maximum(others - 3 * num_prev, 0)

        values = self._bid_values(view)  # (K, 14)
        b = np.arange(14)
        prob = _norm_cdf((e[:, None] - b[None, :] + 0.5) / p.sigma)
        danger = (opp_best >= target - 10) & (np.maximum(my_score, partner_score) < target - 15)
        loss_w = np.where(danger, p.risk_loss_weight, 1.0)[:, None]
        finish = (my_score[:, None] + values >= target[:, None]) & (partner_score > 0)[:, None]
        utility = values * (prob - loss_w * (1.0 - prob)) + p.finish_bonus * prob * finish

        # The dealer bids last: a bid that leaves the total short throws the hand in (worth 0).
        dealer = num_prev == 3
        if dealer.any():
            utility = np.where(dealer[:, None], self._dealer_utility(view, utility), utility)

        legal = view.legal_mask[:, BID_OFFSET + 1 : BID_OFFSET + 14]  # bids 1..13
        cand = np.full((k, 14), -np.inf)
        cand[:, 1:] = np.where(legal, utility[:, 1:], -np.inf)
        best = np.argmax(cand, axis=1)
        action = BID_OFFSET + best
        redeal_ok = view.legal_mask[:, REDEAL_ACTION]
        redeal = redeal_ok & (cand[rows, best] < p.redeal_below)
        return np.where(redeal, REDEAL_ACTION, action).astype(np.int64)

    def _dealer_utility(self, view: SeatView, utility: np.ndarray) -> np.ndarray:
        """(K, 14) utility of each bid for a dealer: 0 where the hand would be thrown in."""
        p = self.params
        k = view.size
        rows = np.arange(k)
        me = view.seat.astype(np.int64)
        bids = view.bids.astype(np.int64)
        scores = view.scores_before.astype(np.int64)
        target = view.target.astype(np.int64)
        b = np.arange(14)
        if self.rules.five_to_run:
            played = (bids.max(axis=1)[:, None] >= 5) | (b[None, :] >= 5)
        else:
            prev = self._weights[bids].sum(axis=1)
            played = prev[:, None] + self._weights[b][None, :] >= view.required_total[:, None]
        # The others' expected points (from their bids), + for the partner, - for opponents.
        q = p.partner_make_prob
        thirty = self._thirty
        others = np.zeros(k)
        for rel in (1, 2, 3):
            seat = (me + rel) & 3
            bid = bids[rows, seat]
            sc = scores[rows, seat]
            row = (sc >= thirty).astype(np.intp) if thirty is not None else np.zeros(k, np.intp)
            val = self._values[row, bid]
            mate_positive = scores[rows, (seat + 2) & 3] > 0
            win = (sc + val >= target) & mate_positive
            ev = (2 * q - 1) * val + p.finish_bonus * q * win
            others += ev if rel == 2 else -ev
        return np.where(played, utility + others[:, None], 0.0)

    # -- card play --------------------------------------------------------------------------
    def _play(self, view: SeatView) -> np.ndarray:
        p = self.params
        k = view.size
        rows = np.arange(k)
        me = view.seat.astype(np.int64)
        rel_seat = (me[:, None] + np.arange(4)[None, :]) & 3  # rel 0 me, 1 right, 2 partner, 3 left
        hand = view.hand_set
        legal = mask_to_set(view.legal_mask)
        played = np.bitwise_or.reduce(view.played_set, axis=1)
        unseen = _FULL & ~hand & ~played  # cards still held by the other three

        need = np.maximum(view.bids.astype(np.int64) - view.tricks_won, 0)[rows[:, None], rel_seat]
        my_need, p_need = need[:, 0] > 0, need[:, 2] > 0
        opp_need = (need[:, 1] + need[:, 3]) > 0
        worth = my_need | opp_need  # our side gains from winning this trick
        void = view.shown_void[rows[:, None], rel_seat].astype(np.int64)  # (K, 4) by rel seat
        n_out = _count(unseen[:, None] & SUIT_SETS[None, :])  # (K, 4) unseen per suit

        # (K, 4 rel seats, 4 suits): may still hold the suit / may be void in it
        void_bits = ((void[:, :, None] >> np.arange(4)[None, None, :]) & 1) == 1
        hold_tab = ~void_bits & (n_out > 0)[:, None, :]
        void_tab = void_bits | (n_out <= p.void_guess)[:, None, :]
        ruff_tab = void_tab & hold_tab[:, :, 3:4]
        ruff_tab[:, :, 3] = False

        def may_hold(rel: int, suit: np.ndarray) -> np.ndarray:
            return hold_tab[rows, rel, suit]

        def may_be_void(rel: int, suit: np.ndarray) -> np.ndarray:
            return void_tab[rows, rel, suit]

        hearts3 = np.full(k, 3)

        def may_ruff(rel: int, suit: np.ndarray) -> np.ndarray:
            return ruff_tab[rows, rel, suit]

        size = view.trick_size.astype(np.int64)
        leading = size == 0
        led = np.where(leading, 0, view.led_suit.astype(np.int64))
        led_set = SUIT_SETS[led]
        tc = view.trick_cards.astype(np.int64)[rows[:, None], rel_seat]  # (K, 4) by rel seat
        tsuit = tc // 13
        strength = np.where(tc >= 0, tc % 13 + 13 * (tsuit == led[:, None]) + 26 * (tsuit == 3), -1)
        w_rel = np.argmax(strength, axis=1)
        w_card = np.where(leading, -1, tc[rows, w_rel])
        heart_wins = (w_card >= 39) & (led != 3)  # a ruff is winning a side-suit trick
        opp1_later = size <= 2  # right-hand opponent still to play
        opp3_later = leading  # left-hand opponent still to play (only after our lead)

        top_out_led = _highest(unseen & led_set)
        top_out_h = _highest(unseen & _HEARTS)
        have_led = (hand & led_set) != 0

        # Following suit: the cheapest card that beats the trick, and the cheapest sure winner.
        can_follow_win = have_led & ~heart_wins
        beat_follow = np.where(can_follow_win, _lowest(legal & _above(w_card)), -1)
        opp_may_follow = (opp1_later & may_hold(1, led)) | (opp3_later & may_hold(3, led))
        ruff_risk = (opp1_later & may_ruff(1, led)) | (opp3_later & may_ruff(3, led))
        thr = np.where(opp_may_follow, np.maximum(w_card, top_out_led), w_card)
        sure_follow = np.where(can_follow_win & ~ruff_risk, _lowest(legal & _above(thr)), -1)
        # Ruffing (void in a side suit led): the cheapest heart that wins, and a sure one.
        can_ruff = ~have_led & (led != 3) & ~leading & ((legal & _HEARTS) != 0)
        thr_r = np.where(heart_wins, w_card, -1)
        beat_ruff = np.where(can_ruff, _lowest(legal & _HEARTS & _above(thr_r)), -1)
        overruff = (opp1_later & may_be_void(1, led) & may_hold(1, hearts3)) | (
            opp3_later & may_be_void(3, led) & may_hold(3, hearts3)
        )
        thr_rs = np.where(overruff, np.maximum(thr_r, top_out_h), thr_r)
        sure_ruff = np.where(can_ruff, _lowest(legal & _HEARTS & _above(thr_rs)), -1)
        beat = np.where(have_led, beat_follow, beat_ruff)
        sure = np.where(have_led, sure_follow, sure_ruff)

        # Is the partner's winning card safe from the right-hand opponent (the only one left)?
        partner_wins = ~leading & (w_rel == 2)
        w_is_ruff = heart_wins
        beaten_follow = may_hold(1, led) & ((unseen & led_set & _above(w_card)) != 0)
        beaten_follow |= may_ruff(1, led)
        beaten_ruff = may_be_void(1, led) & may_hold(1, hearts3)
        beaten_ruff &= (unseen & _HEARTS & _above(w_card)) != 0
        partner_sure = ~(opp1_later & np.where(w_is_ruff, beaten_ruff, beaten_follow))

        low = self._low_card(hand, legal, unseen, have_led, leading)

        # -- following decisions --------------------------------------------------------
        choice = low.copy()
        overtake = partner_wins & (sure >= 0) & ((~p_need & my_need) | (~partner_sure & worth))
        choice = np.where(overtake, sure, choice)
        contest = ~leading & ~partner_wins & worth
        take_sure = contest & (sure >= 0) & ((size != 1) | my_need)  # second hand: only for us
        choice = np.where(take_sure, sure, choice)
        third_high = contest & (sure < 0) & (beat >= 0) & (size == 2)
        high_follow = _highest(legal & led_set)
        choice = np.where(third_high, np.where(have_led, high_follow, beat), choice)
        second_ruff = contest & (sure < 0) & (beat >= 0) & (size == 1) & ~have_led
        choice = np.where(second_ruff, beat, choice)

        # -- leading --------------------------------------------------------------------
        if leading.any():
            lead = self._lead(
                hand, unseen, n_out, void_bits, hold_tab, ruff_tab, my_need, p_need, opp_need, low
            )
            choice = np.where(leading, lead, choice)
        return choice.astype(np.int64)

    def _low_card(
        self,
        hand: np.ndarray,
        legal: np.ndarray,
        unseen: np.ndarray,
        have_led: np.ndarray,
        leading: np.ndarray,
    ) -> np.ndarray:
        """(K,) the card to play when not trying to win: lowest of the suit led, or a discard
        (lowest card of the shortest side suit, keeping masters and hearts)."""
        k = hand.shape[0]
        follow_low = _lowest(legal)
        side_sets = legal[:, None] & _SIDE[None, :]  # (K, 3)
        n = _count(side_sets)
        low = _lowest(side_sets)
        out_above_low = (unseen[:, None] & _SIDE[None, :] & _above(low)) != 0
        all_masters = ~out_above_low & (n > 0)  # nothing out beats even our lowest card
        key = np.where(n > 0, n * 16 + (low % 13) + 1000 * all_masters, 10**6)
        s = np.argmin(key, axis=1)
        rows = np.arange(k)
        discard = np.where(n[rows, s] > 0, low[rows, s], _lowest(legal & _HEARTS))
        discard = np.where(discard >= 0, discard, follow_low)
        return np.where(have_led | leading, follow_low, discard)

    def _lead(
        self,
        hand: np.ndarray,
        unseen: np.ndarray,
        n_out: np.ndarray,
        void_bits: np.ndarray,
        hold_tab: np.ndarray,
        ruff_tab: np.ndarray,
        my_need: np.ndarray,
        p_need: np.ndarray,
        opp_need: np.ndarray,
        low: np.ndarray,
    ) -> np.ndarray:
        """(K,) the card to lead. Tables (K, 4 rel seats, 4 suits): shown void, may hold the
        suit, may ruff it (see `_play`)."""
        k = hand.shape[0]
        rows = np.arange(k)
        side_sets = hand[:, None] & _SIDE[None, :]  # (K, 3)
        n_side = _count(side_sets)
        top = _highest(side_sets)
        lowest = _lowest(side_sets)
        master = (top >= 0) & ((unseen[:, None] & _SIDE[None, :] & _above(top)) == 0)
        safe = master & ~ruff_tab[:, 1, :3] & ~ruff_tab[:, 3, :3]
        my_h = hand & _HEARTS
        n_h = _count(my_h)
        top_h = _highest(my_h)
        master_h = (top_h >= 0) & ((unseen & _HEARTS & _above(top_h)) == 0)

        # safe master in the suit with most cards still out (least likely to be ruffed)
        safe_key = np.where(safe, n_out[:, :3] + 1, 0)
        s_safe = np.argmax(safe_key, axis=1)
        has_safe = safe_key[rows, s_safe] > 0
        cash = top[rows, s_safe]
        # singleton side card that is not a master: lead it to ruff that suit later
        single = (n_side == 1) & ~master & (n_h > 0)[:, None]
        s_single = np.argmax(single, axis=1)
        has_single = single[rows, s_single]
        # low from the shortest side suit (towards a void; measured better than the longest)
        s_short = np.argmax(np.where(n_side > 0, -n_side * 16 - lowest % 13, -999), axis=1)
        short_low = np.where(n_side[rows, s_short] > 0, lowest[rows, s_short], _lowest(my_h))
        # a suit the partner is void in (partner may ruff), led low
        partner_void = void_bits[:, 2, :3] & hold_tab[:, 2, 3:4] & (n_side > 0)
        s_pv = np.argmax(partner_void, axis=1)
        has_pv = partner_void[rows, s_pv]

        # With tricks to make: the top heart first (draws trumps; measured better than cashing
        # side masters first), then safe side masters, then a singleton, then low.
        need_lead = np.where(
            master_h,
            top_h,
            np.where(has_safe, cash, np.where(has_single, lowest[rows, s_single], short_low)),
        )
        help_lead = np.where(has_pv, lowest[rows, s_pv], short_low)
        deny_lead = np.where(master_h, top_h, np.where(has_safe, cash, short_low))
        lead = np.where(
            my_need,
            need_lead,
            np.where(p_need, help_lead, np.where(opp_need, deny_lead, short_low)),
        )
        return np.where(lead >= 0, lead, low)


class MinBidAgent(HeuristicV1Agent):
    """Bids its minimum (as dealer: the bid that makes the total, when it can) and plays like
    `heuristic-v1` (frozen, so this baseline does not drift): a yardstick for bidding."""

    name = "minbid"

    def _bid(self, view: SeatView) -> np.ndarray:
        legal = view.legal_mask[:, BID_OFFSET + 1 : BID_OFFSET + 14]  # bids 1..13
        lowest = np.argmax(legal, axis=1) + 1
        bids = view.bids.astype(np.int64)
        if self.rules.five_to_run:
            short = bids.max(axis=1) < 5
            needed = np.where(short, 5, lowest)
        else:
            prev = self._weights[bids].sum(axis=1)
            reach = prev[:, None] + self._weights[None, 1:] >= view.required_total[:, None]
            ok = reach & legal
            needed = np.where(ok.any(axis=1), np.argmax(ok, axis=1) + 1, lowest)
        dealer = view.num_bids == 3
        bid = np.where(dealer, np.maximum(needed, lowest), lowest)
        return (BID_OFFSET + bid).astype(np.int64)


def parse_params(text: str | None, base: HeuristicParams | None = None) -> HeuristicParams:
    """HeuristicParams from ``"sigma=1.2,bid_bias=0.3"`` (the argument of ``heuristic:...``)."""
    base = base if base is not None else HeuristicParams()
    if not text:
        return base
    known = {f.name: f.type for f in dataclasses.fields(HeuristicParams)}
    changes: dict[str, float | int] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in known:
            raise FourHundredError(
                f"heuristic parameter {item!r}: expected name=value with a name among {sorted(known)}"
            )
        try:
            changes[key] = int(value) if known[key] == "int" else float(value)
        except ValueError:
            raise FourHundredError(
                f"heuristic parameter {item!r}: {value!r} is not a number"
            ) from None
    return dataclasses.replace(base, **changes)


def _make_heuristic(rules: Rules, seed: int, arg: str | None) -> Agent:
    return HeuristicAgent(rules, seed, parse_params(arg))


register_agent(
    "heuristic",
    _make_heuristic,
    "rule-based bidding (hand evaluation, rules context) and card play; batched numpy "
    "(heuristic:sigma=1.2,... overrides HeuristicParams)",
)


def _make_minbid(rules: Rules, seed: int, arg: str | None) -> Agent:
    if arg is not None:
        raise FourHundredError(f"agent 'minbid' takes no argument, got 'minbid:{arg}'")
    return MinBidAgent(rules, seed)


register_agent(
    "minbid",
    _make_minbid,
    "always bids its minimum (dealer: makes the total); plays like heuristic-v1",
)
