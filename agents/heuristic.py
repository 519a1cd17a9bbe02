"""Scripted bots, compiled: `heuristic` and the `minbid` baseline.

:class:`HeuristicAgent` decides for the K tables of a view in one call of a compiled kernel
(:func:`decide`) that loops over the view's records (``view.records``, see
:mod:`fourhundred_env.records`), bids and cards mixed, on uint64 card sets. One table and
4,096 tables take the same code, and a table decides the same alone or in a batch. The
kernels run unchanged as plain Python under ``NUMBA_DISABLE_JIT=1``.

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
them from an agent spec (``epsilon`` > 0 mixes in random legal moves, drawn from the position
as every scripted bot's draws are: see :mod:`agents.base`). The kernels read them
as one record (:func:`params_record`).

:class:`MinBidAgent` plays like the heuristic but always bids its minimum, or, as dealer, the
bid that makes the required total (if it can); it never asks for a redeal. It plays like the
frozen `heuristic-v1` (with :data:`HEURISTIC_V1_PARAMS`), so it stays a fixed baseline while
`heuristic` improves.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from agents.base import (
    EXPLORE_SALT,
    PICK_SALT,
    POLICY_HEURISTIC,
    Agent,
    CompiledPolicy,
    nth_true,
    view_uniform,
)
from fourhundred_env._jit import ONE, U64, ZERO, helper, highest_bit, kernel, lowest_bit, popcount
from fourhundred_env.cards import BID_OFFSET, FULL_DECK, NUM_CARDS, REDEAL_ACTION
from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.kernels import BID, HEARTS, PLAY, SUITS, bid_value, rules_record
from fourhundred_env.registry import NoSettings, register_agent, spec_settings
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, valid_view

DECK = FULL_DECK
SQRT2 = math.sqrt(2.0)  # the same double as np.sqrt(2.0)


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
    """Probability of a uniformly random legal action instead (drawn from the position, see
    agents.base): a stochastic variant for mirror checks and diverse opponents."""

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("epsilon", "partner_make_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name}={getattr(self, name)!r}: expected a probability 0 to 1")
        if not self.sigma > 0:
            raise ConfigError(f"sigma={self.sigma!r}: expected a spread above 0")
        if self.void_guess < 0:
            raise ConfigError(f"void_guess={self.void_guess!r}: expected 0 or more")


HEURISTIC_V1_PARAMS = HeuristicParams(
    sigma=1.0,
    bid_bias=0.3,
    others_bids_weight=0.12,
    finish_bonus=20.0,
    risk_loss_weight=0.6,
    partner_make_prob=0.75,
    redeal_below=-0.5,
    void_guess=2,
    epsilon=0.0,
)
"""The parameters of `heuristic-v1` (and of `minbid`'s card play), frozen: written out rather
than taken from the defaults, so that tuning `HeuristicParams` leaves the yardstick alone.
tests/test_heuristic_fixture.py holds both bots to their recorded decisions."""

PARAMS_DTYPE = np.dtype(
    [
        ("sigma", np.float64),
        ("bid_bias", np.float64),
        ("others_bids_weight", np.float64),
        ("finish_bonus", np.float64),
        ("risk_loss_weight", np.float64),
        ("partner_make_prob", np.float64),
        ("redeal_below", np.float64),
        ("void_guess", np.int64),
        ("epsilon", np.float64),
        ("min_bids", np.uint8),  # 1: bid like `minbid` instead of by the hand evaluation
    ],
    align=True,
)
"""The kernels' view of `HeuristicParams` and the bidding."""


def params_record(params: HeuristicParams, min_bids: bool = False) -> np.ndarray:
    """The parameters as a (1,) record array of PARAMS_DTYPE, what the kernels read."""
    p = np.zeros(1, PARAMS_DTYPE)
    for name in PARAMS_DTYPE.names:
        if name != "min_bids":
            p[name] = getattr(params, name)
    p["min_bids"] = min_bids
    return p


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
NUM_FEATURES = len(_FEATURE_NAMES)


# -- card-set helpers -----------------------------------------------------------------------
@helper
def above(card: int) -> np.uint64:
    """The cards with an id above `card` (-1..51; -1: every card)."""
    return DECK & ~((ONE << U64(card + 1)) - ONE)


@helper
def holds(hand: np.uint64, suit: int, rank: int) -> bool:
    """True if `hand` holds the card of `suit` and `rank`."""
    return ((hand >> U64(13 * suit + rank)) & ONE) != ZERO


@helper
def card_set(mask_row: np.ndarray) -> np.uint64:
    """The cards (0..51) set in a row (66,) of a legal mask, as a uint64 set."""
    cards = ZERO
    for c in range(NUM_CARDS):
        if mask_row[c]:
            cards |= ONE << U64(c)
    return cards


@helper
def at(table: int, rel_seat: int, suit: int) -> bool:
    """Entry (rel_seat, suit) of a 4 x 4 boolean table packed into bits 4 * rel_seat + suit
    of an int (the play's tables of who may hold, be void in or ruff each suit)."""
    return ((table >> (4 * rel_seat + suit)) & 1) == 1


# -- bidding --------------------------------------------------------------------------------
@helper
def write_features(hand: np.uint64, f: np.ndarray) -> None:
    """The evaluation features (names in `_FEATURE_NAMES`) of a hand into f (F,) float64."""
    for i in range(NUM_FEATURES):
        f[i] = 0.0
    f[0] = 1.0
    n_h = popcount(hand & HEARTS)
    for s in range(3):
        n = popcount(hand & SUITS[s])
        a = holds(hand, s, 12)
        k = holds(hand, s, 11)
        q = holds(hand, s, 10)
        if a:
            f[1] += 1.0
            if n >= 6:
                f[2] += 1.0
            if k:
                f[3] += 1.0
        elif k:
            if n >= 2:
                f[4] += 1.0
            elif n == 1:
                f[5] += 1.0
        if q:
            if a and k:
                f[6] += 1.0
            elif n >= 3:
                f[7 if a or k else 8] += 1.0  # with one honour above it, or with neither
        f[9] += max(n - 4, 0)
        if n_h >= 1 and n <= 1:
            f[18 + n] += 1.0  # a void or a singleton that hearts can ruff
        if n == 2 and n_h >= 2:
            f[20] += 1.0
    if holds(hand, 3, 12):
        f[10] = 1.0
    if holds(hand, 3, 11):
        f[11 if n_h >= 2 else 12] = 1.0
    if holds(hand, 3, 10):
        f[13 if n_h >= 3 else 14] = 1.0
    if holds(hand, 3, 9) and n_h >= 4:
        f[15] = 1.0
    f[16] = popcount(hand & HEARTS & ~above(13 * 3 + 8))  # hearts 2..10
    f[17] = max(n_h - 3, 0)


@helper
def expected_tricks_of(hand: np.uint64, f: np.ndarray) -> float:
    """Tricks a hand should take before the others' bids (f: (F,) float64 scratch).

    The features are summed in index order, one product at a time: a function of the hand
    alone, the same with and without numba. The numpy version's BLAS dot product summed in
    an order set by the table's place in the batch (four FMA lanes for most rows, other
    kernels for the last K % 4 rows and for K = 1) and differs in the last bit for about a
    third of the hands; no decision of the fixture depends on that bit."""
    write_features(hand, f)
    e = 0.0
    for i in range(NUM_FEATURES):
        e += f[i] * _WEIGHTS[i]
    return e


@helper
def norm_cdf(x: float) -> float:
    """Standard normal CDF (Abramowitz-Stegun 7.1.26 erf, |error| < 1.5e-7).

    math.exp is the C library's exp in numba and in Python alike (numpy's vectorised exp can
    differ in the last bit). The approximation jumps by 1e-9 at x = 0 (its erf(0) is not 0),
    so a bid whose x is 0 in decimal arithmetic (E + bid_bias a half-integer) takes the sign
    of the last bit of E; that decides a bid only where its utility is compared with 0
    (a dealer's thrown-in bids), rarely."""
    z = abs(x) / SQRT2
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * math.exp(-z * z)
    return 0.5 * (1.0 + (erf if x >= 0 else -erf))


@helper
def dealer_others(v: np.ndarray, r: np.ndarray, p: np.ndarray) -> float:
    """The other three players' expected points in a played hand, as the dealer sees them
    from their bids: + for the partner, - for the opponents."""
    me = np.int64(v["seat"])
    scores = v["scores_before"]
    bids = v["bids"]
    target = np.int64(v["target"])
    q = p["partner_make_prob"]
    others = 0.0
    for rel in range(1, 4):
        seat = (me + rel) & 3
        sc = np.int64(scores[seat])
        val = np.float64(bid_value(np.int64(bids[seat]), sc, r))
        win = 1.0 if sc + val >= target and np.int64(scores[(seat + 2) & 3]) > 0 else 0.0
        ev = (2 * q - 1) * val + p["finish_bonus"] * q * win
        others += ev if rel == 2 else -ev
    return others


@helper
def heuristic_bid(v: np.ndarray, r: np.ndarray, p: np.ndarray, f: np.ndarray) -> int:
    """The heuristic's bid (action 52..64) or redeal (65) at a bidding table."""
    me = np.int64(v["seat"])
    scores = v["scores_before"]
    my_score = np.int64(scores[me])
    partner_score = np.int64(scores[(me + 2) & 3])
    right = np.int64(scores[(me + 1) & 3])
    left = np.int64(scores[(me + 3) & 3])
    # the opponents' closest qualifying player
    opp_best = max(right if left > 0 else -999, left if right > 0 else -999)
    target = np.int64(v["target"])
    bids = v["bids"]
    others = 0  # own bid is still 0
    prev_weight = 0
    top_bid = 0
    for s in range(4):
        b = np.int64(bids[s])
        others += b
        prev_weight += np.int64(r["weights"][b])
        top_bid = max(top_bid, b)
    num_prev = np.int64(v["num_bids"])
    e = expected_tricks_of(v["hand_set"], f) + p["bid_bias"]
    e = e - p["others_bids_weight"] * max(others - 3 * num_prev, 0)

    danger = opp_best >= target - 10 and max(my_score, partner_score) < target - 15
    loss_w = p["risk_loss_weight"] if danger else 1.0
    row = 1 if my_score >= r["thirty"] else 0
    # The dealer bids last: a bid that leaves the total short throws the hand in (worth 0).
    dealer = num_prev == 3
    others_ev = dealer_others(v, r, p) if dealer else 0.0
    required = np.int64(v["required_total"])
    legal = v["legal_mask"]
    best = 0
    best_u = -np.inf
    for b in range(1, 14):
        if not legal[BID_OFFSET + b]:
            continue
        value = np.float64(r["values"][row, b])
        prob = norm_cdf((e - b + 0.5) / p["sigma"])
        # bonus * prob * 0/1 rather than a branch: the same doubles, signed zeros included,
        # as the numpy version that the recorded decisions came from
        finish = 1.0 if my_score + value >= target and partner_score > 0 else 0.0
        u = value * (prob - loss_w * (1.0 - prob)) + p["finish_bonus"] * prob * finish
        if dealer:
            if r["five_to_run"]:
                played = top_bid >= 5 or b >= 5
            else:
                played = prev_weight + np.int64(r["weights"][b]) >= required
            u = u + others_ev if played else 0.0
        if u > best_u:  # strict: the lowest of equal bids, as argmax took
            best_u = u
            best = b
    if legal[REDEAL_ACTION] and best_u < p["redeal_below"]:
        return REDEAL_ACTION
    return BID_OFFSET + best


@helper
def minimum_bid(v: np.ndarray, r: np.ndarray) -> int:
    """`minbid`'s bid (action 52..64): its minimum, or as dealer the lowest legal bid that
    makes the total (five_to_run: 5 while nobody has bid 5), when it can."""
    legal = v["legal_mask"]
    lowest = 1
    for b in range(1, 14):
        if legal[BID_OFFSET + b]:
            lowest = b
            break
    if np.int64(v["num_bids"]) != 3:
        return BID_OFFSET + lowest
    bids = v["bids"]
    needed = lowest
    if r["five_to_run"]:
        top_bid = 0
        for s in range(4):
            top_bid = max(top_bid, np.int64(bids[s]))
        if top_bid < 5:
            needed = 5
    else:
        prev_weight = 0
        for s in range(4):
            prev_weight += np.int64(r["weights"][np.int64(bids[s])])
        required = np.int64(v["required_total"])
        for b in range(1, 14):
            if legal[BID_OFFSET + b] and prev_weight + np.int64(r["weights"][b]) >= required:
                needed = b
                break
    return BID_OFFSET + max(needed, lowest)


# -- card play ------------------------------------------------------------------------------
@helper
def low_card(legal: np.uint64, unseen: np.uint64, have_led: bool) -> int:
    """The card to play when not trying to win a trick being followed: the lowest of the suit
    led, or a discard (lowest card of the shortest side suit, keeping masters and hearts)."""
    follow_low = lowest_bit(legal)
    if have_led:
        return follow_low
    best_key = 10**7
    best = -1  # lowest card of the suit with the smallest key, -1 if no side card
    for s in range(3):
        side = legal & SUITS[s]
        n = popcount(side)
        if n == 0:
            continue
        low = lowest_bit(side)
        masters = (unseen & SUITS[s] & above(low)) == ZERO  # nothing out beats even our lowest
        key = n * 16 + low % 13 + (1000 if masters else 0)
        if key < best_key:
            best_key = key
            best = low
    if best < 0:
        best = lowest_bit(legal & HEARTS)
    return best if best >= 0 else follow_low


@helper
def lead_card(hand: np.uint64, unseen: np.uint64, shown: int, may_hold: int, may_ruff: int,
              my_need: bool, p_need: bool, opp_need: bool, low: int) -> int:  # fmt: skip
    """The card to lead. `shown`, `may_hold`, `may_ruff`: the packed (rel seat, suit) tables
    of `play_card`."""
    my_h = hand & HEARTS
    n_h = popcount(my_h)
    top_h = highest_bit(my_h)
    master_h = top_h >= 0 and (unseen & HEARTS & above(top_h)) == ZERO
    safe_key = 0
    cash = -1  # safe master in the suit with most cards still out (least likely to be ruffed)
    single = -1  # singleton side card that is not a master: lead it to ruff that suit later
    short_key = -(10**7)
    short_low = -1  # low from the shortest side suit (towards a void; beat the longest)
    into_void = -1  # low in a suit the partner is void in (partner may ruff)
    for s in range(3):
        side = hand & SUITS[s]
        n = popcount(side)
        if n == 0:
            continue
        top = highest_bit(side)
        low = lowest_bit(side)
        master = (unseen & SUITS[s] & above(top)) == ZERO
        if master and not at(may_ruff, 1, s) and not at(may_ruff, 3, s):
            key = popcount(unseen & SUITS[s]) + 1
            if key > safe_key:
                safe_key = key
                cash = top
        if single < 0 and n == 1 and not master and n_h > 0:
            single = low
        key = -n * 16 - low % 13
        if key > short_key:
            short_key = key
            short_low = low
        if into_void < 0 and at(shown, 2, s) and at(may_hold, 2, 3):
            into_void = low
    if short_low < 0:
        short_low = lowest_bit(my_h)

    # With tricks to make: the top heart first (draws trumps; measured better than cashing
    # side masters first), then safe side masters, then a singleton, then low.
    if my_need:
        if master_h:
            lead = top_h
        elif cash >= 0:
            lead = cash
        elif single >= 0:
            lead = single
        else:
            lead = short_low
    elif p_need:
        lead = into_void if into_void >= 0 else short_low
    elif opp_need:
        lead = top_h if master_h else (cash if cash >= 0 else short_low)
    else:
        lead = short_low
    return lead if lead >= 0 else low


@helper
def play_card(v: np.ndarray, p: np.ndarray) -> int:
    """The heuristic's card (0..51) at a table in play (see the module docstring)."""
    me = np.int64(v["seat"])
    hand = v["hand_set"]
    legal = card_set(v["legal_mask"])
    played = v["played_set"]
    unseen = DECK & ~hand & ~(played[0] | played[1] | played[2] | played[3])  # held by others

    bids = v["bids"]
    won = v["tricks_won"]
    my_need = np.int64(bids[me]) > np.int64(won[me])
    mate = (me + 2) & 3
    p_need = np.int64(bids[mate]) > np.int64(won[mate])
    opp_need = False
    for rel in (1, 3):
        seat = (me + rel) & 3
        opp_need = opp_need or np.int64(bids[seat]) > np.int64(won[seat])
    worth = my_need or opp_need  # our side gains from winning this trick

    # (rel seat, suit) tables, packed 4 bits per rel seat (rel 0 me, 1 right, 2 partner,
    # 3 left): shown void, may still hold the suit, may be void in it, may ruff it.
    guess = p["void_guess"]
    out_suits = 0
    thin_suits = 0
    for s in range(4):
        n = popcount(unseen & SUITS[s])
        if n > 0:
            out_suits |= 1 << s
        if n <= guess:
            thin_suits |= 1 << s
    shown = 0
    may_hold = 0
    may_be_void = 0
    may_ruff = 0
    for rel in range(4):
        void = np.int64(v["shown_void"][(me + rel) & 3]) & 15
        hold = out_suits & ~void
        maybe = void | thin_suits
        shown |= void << (4 * rel)
        may_hold |= hold << (4 * rel)
        may_be_void |= maybe << (4 * rel)
        if hold & 8:  # may hold hearts: may ruff the side suits it may be void in
            may_ruff |= (maybe & 7) << (4 * rel)

    size = np.int64(v["trick_size"])
    leading = size == 0
    if leading:
        return lead_card(hand, unseen, shown, may_hold, may_ruff, my_need, p_need, opp_need,
                         lowest_bit(legal))  # fmt: skip
    led = np.int64(v["led_suit"])
    led_set = SUITS[led]
    w_rel = 0  # the card winning the trick so far, and its player
    w_card = -1
    best = -1
    for rel in range(4):
        c = np.int64(v["trick_cards"][(me + rel) & 3])
        if c < 0:
            continue
        suit = c // 13
        strength = c % 13 + (13 if suit == led else 0) + (26 if suit == 3 else 0)
        if strength > best:
            best = strength
            w_rel = rel
            w_card = c
    heart_wins = w_card >= 39 and led != 3  # a ruff is winning a side-suit trick
    opp1_later = size <= 2  # right-hand opponent still to play (the left-hand one has played)
    have_led = (hand & led_set) != ZERO

    # The cheapest card that beats the trick, and the cheapest sure winner: following suit,
    # or ruffing (void in a side suit led) with the lowest heart that wins.
    beat = -1
    sure = -1
    if have_led:
        if not heart_wins:
            beat = lowest_bit(legal & above(w_card))
            if not (opp1_later and at(may_ruff, 1, led)):
                thr = w_card
                if opp1_later and at(may_hold, 1, led):
                    thr = max(w_card, highest_bit(unseen & led_set))
                sure = lowest_bit(legal & above(thr))
    elif led != 3 and (legal & HEARTS) != ZERO:
        thr = w_card if heart_wins else -1
        beat = lowest_bit(legal & HEARTS & above(thr))
        if opp1_later and at(may_be_void, 1, led) and at(may_hold, 1, 3):  # may overruff
            thr = max(thr, highest_bit(unseen & HEARTS))
        sure = lowest_bit(legal & HEARTS & above(thr))
    low = low_card(legal, unseen, have_led)

    if w_rel == 2:
        # Is the partner's winning card safe from the right-hand opponent (the only one left)?
        if heart_wins:
            beaten = at(may_be_void, 1, led) and at(may_hold, 1, 3)
            beaten = beaten and (unseen & HEARTS & above(w_card)) != ZERO
        else:
            beaten = at(may_hold, 1, led) and (unseen & led_set & above(w_card)) != ZERO
            beaten = beaten or at(may_ruff, 1, led)
        partner_sure = not (opp1_later and beaten)
        if sure >= 0 and ((not p_need and my_need) or (not partner_sure and worth)):
            return sure  # overtake
        return low
    if worth:
        if sure >= 0:
            if size != 1 or my_need:  # second hand: a sure winner only for ourselves
                return sure
        elif beat >= 0:
            if size == 2:  # third hand high
                return highest_bit(legal & led_set) if have_led else beat
            if size == 1 and not have_led:  # second hand ruffs
                return beat
    return low


# -- kernels --------------------------------------------------------------------------------
@helper
def heuristic_one(v: np.ndarray, r: np.ndarray, p: np.ndarray, f: np.ndarray,
                  key: np.uint64) -> int:  # fmt: skip
    """The heuristic's action for the view record `v`: a bid or redeal where bidding (as
    `minbid` when p["min_bids"]), a card where playing, -1 otherwise. With p["epsilon"] > 0,
    that share of decisions is a uniformly random legal action instead, drawn from the
    agent's `key` and the position (agents.base.view_uniform). f: feature scratch."""
    phase = v["phase"]
    if phase > PLAY:
        return -1
    eps = p["epsilon"]
    if eps > 0 and view_uniform(v, key, EXPLORE_SALT) < eps:
        row = v["legal_mask"]
        n = 0
        for a in range(row.shape[0]):
            if row[a]:
                n += 1
        return nth_true(row, np.int64(view_uniform(v, key, PICK_SALT) * n))
    if phase == BID:
        return minimum_bid(v, r) if p["min_bids"] else heuristic_bid(v, r, p, f)
    return play_card(v, p)


@kernel
def decide(views: np.ndarray, rules: np.ndarray, params: np.ndarray, key: np.uint64,
           out: np.ndarray) -> int:  # fmt: skip
    """out (K,) int64: `heuristic_one` at each of the K records of `views` (SeatView.DTYPE).
    params: (1,) PARAMS_DTYPE; rules: the engine's (1,) rules record; key: the agent's.
    Returns the first record that is not a valid view (nothing decided), or -1."""
    for j in range(views.shape[0]):
        if not valid_view(views[j]):
            return j
    r = rules[0]
    p = params[0]
    f = np.empty(NUM_FEATURES)
    for j in range(views.shape[0]):
        out[j] = heuristic_one(views[j], r, p, f, key)
    return -1


@kernel
def features_of(hands: np.ndarray, out: np.ndarray) -> None:
    """out (K, F) float64: the evaluation features of hands (K,) uint64."""
    for i in range(hands.shape[0]):
        write_features(hands[i], out[i])


@kernel
def expected_tricks_kernel(hands: np.ndarray, out: np.ndarray) -> None:
    """out (K,) float64: the tricks hands (K,) uint64 should take, before the others' bids."""
    f = np.empty(NUM_FEATURES)
    for i in range(hands.shape[0]):
        out[i] = expected_tricks_of(hands[i], f)


def hand_features(hand: np.ndarray) -> np.ndarray:
    """(K,) uint64 hands -> (K, F) float64 evaluation features (names in `_FEATURE_NAMES`)."""
    hands = np.ascontiguousarray(hand, np.uint64)
    out = np.empty((hands.shape[0], NUM_FEATURES))
    features_of(hands, out)
    return out


def mask_to_set(mask: np.ndarray) -> np.ndarray:
    """(K, 52) bool -> (K,) uint64 card sets."""
    k = mask.shape[0]
    packed = np.zeros((k, 8), np.uint8)
    packed[:, :7] = np.packbits(mask[:, :NUM_CARDS], axis=1, bitorder="little")
    return packed.view("<u8").reshape(k).astype(np.uint64)


class HeuristicAgent(Agent):
    """Rule-based bidding and card play, compiled (see the module docstring)."""

    name = "heuristic"
    replayable = True  # its explore draws hash the seed, the stream and the position
    _MIN_BIDS = False
    """True: bid like `minbid` (the kernel's min_bids switch) instead of by the evaluation."""

    def __init__(
        self, rules: Rules | None = None, seed: int = 0, params: HeuristicParams | None = None
    ) -> None:
        super().__init__(rules, seed)
        self.params = params if params is not None else HeuristicParams()
        self._rules = rules_record(self.rules)
        self._params = params_record(self.params, self._MIN_BIDS)

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 legal actions for the K tables of `view` (bidding or playing)."""
        out = np.empty(view.size, np.int64)
        bad = decide(view.records, self._rules, self._params, self.key, out)
        if bad >= 0:
            raise FourHundredError(
                f"{self.name}: view {bad} is not a seat's view (phase {int(view.phase[bad])}, "
                f"bids {view.bids[bad].tolist()}): expected one cut by seat_view"
            )
        return out

    def compiled_policy(self) -> CompiledPolicy:
        return CompiledPolicy(POLICY_HEURISTIC, self.key, params=self._params)

    def expected_tricks(self, view: SeatView) -> np.ndarray:
        """(K,) float64: tricks this hand should take, before the others' bids."""
        out = np.empty(view.size)
        expected_tricks_kernel(np.ascontiguousarray(view.hand_set), out)
        return out


class MinBidAgent(HeuristicAgent):
    """Bids its minimum (as dealer: the bid that makes the total, when it can) and plays like
    `heuristic-v1` (frozen parameters, so this baseline does not drift): a yardstick for
    bidding."""

    name = "minbid"
    _MIN_BIDS = True

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed, HEURISTIC_V1_PARAMS)


def parse_params(text: str | None, base: HeuristicParams | None = None) -> HeuristicParams:
    """HeuristicParams from ``"sigma=1.2,bid_bias=0.3"`` (the settings of ``heuristic:...``)
    over `base` (default: the defaults)."""
    changes = spec_settings(f"heuristic:{text}") if text else HeuristicParams()
    if base is None:
        return changes
    given = {k.partition("=")[0].strip() for k in (text or "").split(",") if k}
    return dataclasses.replace(base, **{k: getattr(changes, k) for k in given})


def _make_heuristic(rules: Rules, seed: int, params: HeuristicParams) -> Agent:
    return HeuristicAgent(rules, seed, params)


register_agent(
    "heuristic",
    _make_heuristic,
    "rule-based bidding (hand evaluation, rules context) and card play; compiled "
    "(heuristic:sigma=1.2,... overrides HeuristicParams)",
    settings=HeuristicParams,
)
register_agent(
    "minbid",
    lambda rules, seed, settings: MinBidAgent(rules, seed),
    "always bids its minimum (dealer: makes the total); plays like heuristic-v1",
    settings=NoSettings,
)
