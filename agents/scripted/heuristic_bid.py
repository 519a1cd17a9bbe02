"""The heuristic's hand evaluation and bidding, as compiled per-record functions.

A linear hand evaluation gives the expected number of tricks E (side-suit aces,
kings and queens by length and company; heart honours and length; short side suits that can
be ruffed while hearts remain; the bids already made by others). Tricks are taken as normal
around E (sd `sigma`) to get P(make) for every bid, and each legal bid is scored by its expected
points under the rules' value table (thirty rule included), plus a bonus when making it would
win the match (own score + value >= target, partner above zero). A side far behind while the
opponents are close weighs losses less (takes risks). The dealer, who bids last, can make or
break the required total: for each bid it compares the hand being played (its own expected
points plus the partner's and minus the opponents', from their bids) with a throw-in (0). A
hand without A, K, Q or J asks for a redeal when every bid has negative value.

`HeuristicParams` holds the tunable constants; the kernels read them as one record
(:func:`params_record`). The card-set helpers here are shared with the card play
(:mod:`fourhundred_agents.scripted.heuristic_play`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fourhundred_env._jit import ONE, U64, ZERO, helper, kernel, popcount
from fourhundred_env.cards import BID_OFFSET, FULL_DECK, NUM_CARDS, REDEAL_ACTION
from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError
from fourhundred_env.kernels import HEARTS, SUITS, bid_value

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
    fourhundred_agents.draws): a stochastic variant for mirror checks and diverse opponents."""

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


@kernel
def features_of(hands: np.ndarray, out: np.ndarray) -> None:
    """`out` (K, F) float64: the evaluation features of hands (K,) uint64."""
    for i in range(hands.shape[0]):
        write_features(hands[i], out[i])


@kernel
def expected_tricks_kernel(hands: np.ndarray, out: np.ndarray) -> None:
    """`out` (K,) float64: the tricks hands (K,) uint64 should take, before the others' bids."""
    f = np.empty(NUM_FEATURES)
    for i in range(hands.shape[0]):
        out[i] = expected_tricks_of(hands[i], f)


def hand_features(hand: np.ndarray) -> np.ndarray:
    """(K,) uint64 hands -> (K, F) float64 evaluation features (names in `_FEATURE_NAMES`)."""
    hands = np.ascontiguousarray(hand, np.uint64)
    out = np.empty((hands.shape[0], NUM_FEATURES))
    features_of(hands, out)
    return out
