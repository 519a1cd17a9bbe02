"""The engine's compiled kernels: the rules of 400 as loops over tables (numpy and numba only).

Every kernel takes the state's record array (``state.records``, one record per table; see
:mod:`fourhundred_env.batches`) and the rules' record (:func:`rules_record`) and loops over the
tables inside, so one table and 4,096 tables run the same code. :class:`~fourhundred_env.
engine.Engine` validates its input at the edge and calls them; nothing here raises: a kernel
that finds bad input returns the index of the first bad table and changes nothing.

The rule helpers (`min_bid_of`, `required_total_of`, `hand_is_played`, `bid_value`,
`qualifies`, `end_of_game`) are compiled copies of the scalar functions of
:mod:`fourhundred_env.rules`, which are the source of truth: tests/test_rules_kernels.py checks
each against its function for every preset and for random rules profiles.

Phases, actions and card ids are those of :mod:`fourhundred_env.cards` and
:class:`~fourhundred_env.engine.Phase`. Card sets are uint64; counts, seats and indices int64.

No record makes a kernel read or write out of bounds (numba checks no index): every field a
kernel indexes with is masked into range where it is read (a seat ``& 3``, a bid clamped to
0..13), one instruction each, so a state changed from outside gives a wrong game, never a
crash. `step` also stops at a pending table whose seat or trick fields are out of range, so
that the engine names the field (``State.validate``); the other bounds are checked where a
state comes from outside.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env._jit import (
    JIT,
    ONE,
    U64,
    ZERO,
    bit,
    helper,
    kernel,
    lowest_bit,
    nth_bit,
    popcount,
)
from fourhundred_env.cards import FACE_SET, NUM_CARDS, REDEAL_ACTION, SUIT_SETS
from fourhundred_env.phases import Phase
from fourhundred_env.rules import Rules
from fourhundred_env.streams import DEALER_SALT, HAND_SALT

BID, PLAY, HAND_OVER, MATCH_OVER = (int(p) for p in Phase)  # plain ints for the kernels
BID_OFFSET = NUM_CARDS - 1  # action BID_OFFSET + b is a bid of b tricks
BID_BITS = U64((1 << 13) - 1)  # bits 0..12 of a bid-phase set: bids 1..13
REDEAL_BIT = U64(1 << 13)
HEARTS = SUIT_SETS[3]
FACES = U64(FACE_SET)
SUITS = SUIT_SETS.copy()

# -- the rules as one record ----------------------------------------------------------------
RULES_DTYPE = np.dtype(
    [
        ("values", np.int32, (2, 14)),  # value of a bid 0..13: row 1 from the thirty rule on
        ("weights", np.int32, (14,)),  # what a bid of 0..13 adds to the bids total
        ("thirty", np.int64),  # score from which row 1 of `values` applies (huge: off)
        ("min_bid_base", np.int64),
        ("min_total_bids", np.int64),
        ("target", np.int64),
        ("target_step", np.int64),
        ("finish", np.int64),  # simultaneous finish: 0 extend, 1 highest player, 2 team total
        ("no_face_redeal", np.uint8),
        ("min_bid_escalates", np.uint8),
        ("escalate_total", np.uint8),
        ("five_to_run", np.uint8),
        ("partner_must_be_positive", np.uint8),
        ("auto_claim", np.uint8),
    ],
    align=True,
)
_FINISH = {"extend": 0, "highest_player": 1, "highest_team_total": 2}
_NEVER = 1 << 62


def rules_record(rules: Rules) -> np.ndarray:
    """The rules as a (1,) record array of RULES_DTYPE, what the kernels read."""
    r = np.zeros(1, RULES_DTYPE)
    r["values"] = rules.value_table()
    r["weights"] = rules.total_weights()
    thirty = rules.five_six_face_value_from
    r["thirty"] = _NEVER if thirty is None else thirty
    r["min_bid_base"] = rules.min_bid_base
    r["min_total_bids"] = rules.min_total_bids
    r["target"] = rules.target
    r["target_step"] = rules.target_step
    r["finish"] = _FINISH[rules.simultaneous_finish]
    for name in ("no_face_redeal", "min_bid_escalates", "escalate_total", "five_to_run",
                 "partner_must_be_positive", "auto_claim"):  # fmt: skip
        r[name] = bool(getattr(rules, name))
    return r


# -- counter-based random numbers -----------------------------------------------------------
GOLDEN = U64(0x9E3779B97F4A7C15)
_M1 = U64(0xBF58476D1CE4E5B9)
_M2 = U64(0x94D049BB133111EB)
_MASK = (1 << 64) - 1

if JIT:

    @helper
    def mix64(x: np.uint64) -> np.uint64:
        """SplitMix64 finaliser of one uint64 (wraps modulo 2**64)."""
        z = x + GOLDEN
        z = (z ^ (z >> U64(30))) * _M1
        z = (z ^ (z >> U64(27))) * _M2
        return z ^ (z >> U64(31))

    @helper
    def to_u64(x: int) -> np.uint64:
        """An integer as uint64, modulo 2**64 (negative numbers wrap)."""
        return U64(x)

    @helper
    def wrapping_add(a: np.uint64, b: np.uint64) -> np.uint64:
        """`a` + `b` modulo 2**64."""
        return a + b

    @helper
    def wrapping_mul(a: np.uint64, b: np.uint64) -> np.uint64:
        """`a` * `b` modulo 2**64."""
        return a * b

else:  # numpy scalars refuse or warn on the wrap-around that is the point: Python ints here

    def mix64(x: np.uint64) -> np.uint64:
        """SplitMix64 finaliser of one uint64 (wraps modulo 2**64)."""
        z = (int(x) + int(GOLDEN)) & _MASK
        z = ((z ^ (z >> 30)) * int(_M1)) & _MASK
        z = ((z ^ (z >> 27)) * int(_M2)) & _MASK
        return U64(z ^ (z >> 31))

    def to_u64(x: int) -> np.uint64:
        """An integer as uint64, modulo 2**64 (negative numbers wrap)."""
        return U64(int(x) & _MASK)

    def wrapping_add(a: np.uint64, b: np.uint64) -> np.uint64:
        """`a` + `b` modulo 2**64."""
        return U64((int(a) + int(b)) & _MASK)

    def wrapping_mul(a: np.uint64, b: np.uint64) -> np.uint64:
        """`a` * `b` modulo 2**64."""
        return U64((int(a) * int(b)) & _MASK)


@helper
def match_key(seed_key: np.uint64, match_id: int) -> np.uint64:
    """Key of a match's deal stream from the seed's key (``mix64(seed)``) and the match id."""
    return mix64(seed_key ^ to_u64(match_id))


@helper
def first_dealer(seed_key: np.uint64, match_id: int) -> int:
    """First dealer of a match, drawn from (seed, match_id)."""
    return np.int64(mix64(match_key(seed_key, match_id) ^ DEALER_SALT) % U64(4))


@helper
def deal_hands(seed_key: np.uint64, match_id: int, hand_index: int, out: np.ndarray,
               keys: np.ndarray, cards: np.ndarray, counts: np.ndarray) -> None:  # fmt: skip
    """The seeded deal of hand `hand_index` of a match into out (4,) uint64, by seat.

    Card c gets the noise word ``mix64(key + (c + 1) * GOLDEN)``; sorted by noise, the cards
    go 13 by 13 to seats 0..3. (The words are distinct, so the order is a permutation.) The
    sort buckets the words by their top 6 bits and finishes with an insertion sort, three
    times faster than a general sort of 52 words. Scratch: keys (104,) uint64, cards (52,)
    int64, counts (65,) int64."""
    key = mix64(match_key(seed_key, match_id) ^ wrapping_mul(to_u64(hand_index), HAND_SALT))
    for b in range(65):
        counts[b] = 0
    step = key
    for c in range(NUM_CARDS):
        step = wrapping_add(step, GOLDEN)
        z = mix64(step)
        keys[NUM_CARDS + c] = z
        counts[np.int64(z >> U64(58)) + 1] += 1
    for b in range(64):
        counts[b + 1] += counts[b]
    for c in range(NUM_CARDS):
        z = keys[NUM_CARDS + c]
        b = np.int64(z >> U64(58))
        p = counts[b]
        counts[b] = p + 1
        keys[p] = z
        cards[p] = c
    for j in range(1, NUM_CARDS):
        z = keys[j]
        c = cards[j]
        m = j - 1
        while m >= 0 and keys[m] > z:
            keys[m + 1] = keys[m]
            cards[m + 1] = cards[m]
            m -= 1
        keys[m + 1] = z
        cards[m + 1] = c
    for seat in range(4):
        h = ZERO
        for j in range(13):
            h |= bit(cards[13 * seat + j])
        out[seat] = h


@helper
def deal_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch arrays for `deal_hands`."""
    return np.empty(2 * NUM_CARDS, np.uint64), np.empty(NUM_CARDS, np.int64), np.empty(65, np.int64)


# -- bidding helpers ------------------------------------------------------------------------
@helper
def min_bid_of(score: int, r: np.ndarray) -> int:
    """Minimum bid of a player whose score before the hand is `score`."""
    base = r["min_bid_base"]
    if not r["min_bid_escalates"]:
        return base
    m = score // 10
    return min(13, max(base, m))


@helper
def required_total_of(scores: np.ndarray, r: np.ndarray) -> int:
    """Required total of the bids from the four pre-hand scores."""
    total = r["min_total_bids"]
    if r["escalate_total"]:
        top = max(max(scores[0], scores[1]), max(scores[2], scores[3]))
        total += max(0, np.int64(top) // 10 - 2)
    return min(total, 32767)  # the int16 field; beyond 52 no bids reach it anyway


@helper
def bid_index(bid: int) -> int:
    """A bid as an index of the rules' tables, 0..13 (a bid a state holds is in range unless
    the state was changed from outside)."""
    return min(max(np.int64(bid), 0), 13)


@helper
def hand_is_played(bids: np.ndarray, required: int, r: np.ndarray) -> bool:
    """True if four bids (4,) play the hand, False if it is thrown in."""
    if r["five_to_run"]:
        return max(max(bids[0], bids[1]), max(bids[2], bids[3])) >= 5
    total = 0
    for s in range(4):
        total += r["weights"][bid_index(bids[s])]
    return total >= required


@helper
def bid_value(bid: int, score_before: int, r: np.ndarray) -> int:
    """Points a bid wins when made (and loses when missed), thirty rule applied."""
    return r["values"][1 if score_before >= r["thirty"] else 0, bid_index(bid)]


# -- dealing and new matches ----------------------------------------------------------------
@kernel
def deal(s: np.ndarray, index: np.ndarray, hands: np.ndarray, seeded: bool,
         seed_key: np.uint64, rules: np.ndarray) -> int:  # fmt: skip
    """Start the next hand at tables `index` (all in HAND_OVER): explicit `hands` (n, 4) or,
    when `seeded`, the deal of (seed, match_id, hand_index). Returns the position in `index`
    of the first table not between hands (nothing changed), or -1."""
    r = rules[0]
    for j in range(index.shape[0]):
        if s[index[j]]["phase"] != HAND_OVER:
            return j
    dealt = np.empty(4, np.uint64)
    keys, cards, counts = deal_scratch()
    for j in range(index.shape[0]):
        t = s[index[j]]
        if seeded:
            deal_hands(seed_key, t["match_id"], t["hand_index"], dealt, keys, cards, counts)
        else:
            for seat in range(4):
                dealt[seat] = hands[j, seat]
        scores = t["scores"]
        before = t["scores_before"]
        for seat in range(4):
            before[seat] = scores[seat]
            t["dealt_set"][seat] = dealt[seat]
            t["hand_set"][seat] = dealt[seat]
            t["bids"][seat] = 0
            t["min_bid"][seat] = min_bid_of(np.int64(scores[seat]), r)
            t["tricks_won"][seat] = 0
            t["trick_cards"][seat] = -1
            t["shown_void"][seat] = 0
            t["forfeit"][seat] = 0
            t["hand_points"][seat] = 0
        t["num_bids"] = 0
        t["required_total"] = required_total_of(scores, r)
        first = (t["dealer"] + 1) & 3
        t["to_play"] = first
        t["trick_leader"] = first
        t["trick_size"] = 0
        t["num_tricks"] = 0
        t["thrown_in"] = 0
        t["redeal_seat"] = -1
        t["claim_seat"] = -1
        t["hand_index"] += 1
        t["phase"] = BID
    return -1


@kernel
def new_match(s: np.ndarray, index: np.ndarray, match_ids: np.ndarray, seed_key: np.uint64,
              rules: np.ndarray) -> None:  # fmt: skip
    """Restart tables `index` as fresh matches with `match_ids` (phase HAND_OVER)."""
    r = rules[0]
    for j in range(index.shape[0]):
        t = s[index[j]]
        m = match_ids[j]
        t["match_id"] = m
        t["dealer"] = first_dealer(seed_key, m)
        for seat in range(4):
            t["scores"][seat] = 0
            t["scores_before"][seat] = 0
            t["hand_points"][seat] = 0
        t["target"] = r["target"]
        t["winner"] = -1
        t["hand_index"] = 0
        t["to_play"] = -1
        t["thrown_in"] = 0
        t["phase"] = HAND_OVER


@kernel
def first_dealers(seed_key: np.uint64, match_ids: np.ndarray, out: np.ndarray) -> None:
    """out[i] = the first dealer of match match_ids[i]."""
    for i in range(match_ids.shape[0]):
        out[i] = first_dealer(seed_key, match_ids[i])


@kernel
def deal_many(seed_key: np.uint64, match_ids: np.ndarray, hand_index: np.ndarray,
              out: np.ndarray) -> None:  # fmt: skip
    """out[i] (4,) = the seeded deal of hand hand_index[i] of match match_ids[i]."""
    keys, cards, counts = deal_scratch()
    for i in range(match_ids.shape[0]):
        deal_hands(seed_key, match_ids[i], hand_index[i], out[i], keys, cards, counts)


# -- legal actions --------------------------------------------------------------------------
@helper
def legal_set(t: np.ndarray, r: np.ndarray) -> np.uint64:
    """Legal actions of a table as one set in phase-local coordinates: cards (bit c = card c)
    while playing, else bit i = action 52 + i (bids 1..13, redeal); 0 with nothing pending."""
    phase = t["phase"]
    if phase == PLAY:
        hand = t["hand_set"][t["to_play"] & 3]
        if t["trick_size"] > 0:
            follow = hand & SUITS[t["led_suit"] & 3]
            if follow != ZERO:
                return follow
        return hand
    if phase == BID:
        seat = t["to_play"] & 3
        low = U64((t["min_bid"][seat] - 1) & 15)  # < 64 whatever the record holds
        bids = (BID_BITS >> low) << low
        if r["no_face_redeal"] and (t["hand_set"][seat] & FACES) == ZERO:
            bids |= REDEAL_BIT
        return bids
    return ZERO


@kernel
def legal_sets(s: np.ndarray, rules: np.ndarray, legal: np.ndarray, playing: np.ndarray) -> None:
    """Fill `legal` (B,) uint64 with each table's `legal_set` and `playing` (B,) bool with
    whether the table is in the play phase."""
    r = rules[0]
    for i in range(s.shape[0]):
        legal[i] = legal_set(s[i], r)
        playing[i] = s[i]["phase"] == PLAY


@helper
def write_mask(t: np.ndarray, r: np.ndarray, row: np.ndarray) -> None:
    """Write the legal-action mask (66,) of a table into `row` (0/1)."""
    for a in range(row.shape[0]):
        row[a] = 0
    legal = legal_set(t, r)
    offset = 0 if t["phase"] == PLAY else NUM_CARDS
    while legal != ZERO:
        row[offset + lowest_bit(legal)] = 1
        legal &= legal - ONE


@kernel
def legal_mask(s: np.ndarray, rules: np.ndarray, out: np.ndarray) -> None:
    """Fill `out` (B, 66) bool or int8 with each table's legal-action mask (1 legal, else 0)."""
    r = rules[0]
    for i in range(s.shape[0]):
        write_mask(s[i], r, out[i])


@kernel
def random_actions(s: np.ndarray, rules: np.ndarray, u: np.ndarray, max_bid: int,
                   out: np.ndarray) -> None:  # fmt: skip
    """`out` (B,) int64: the legal action of rank ``floor(u * n)`` among each table's n legal
    actions (`u` (B,) uniforms in [0, 1)), bids capped at `max_bid` (< 1: no cap); -1 where
    nothing is pending."""
    r = rules[0]
    cap = ((ONE << U64(max(1, min(13, max_bid)))) - ONE) | REDEAL_BIT
    for i in range(s.shape[0]):
        t = s[i]
        legal = legal_set(t, r)
        playing = t["phase"] == PLAY
        if max_bid >= 1 and not playing:
            capped = legal & cap
            if (capped & BID_BITS) == ZERO:
                capped |= legal & (~legal + ONE)
            legal = capped
        n = popcount(legal)
        if n == 0:
            out[i] = -1
        else:
            k = np.int64(u[i] * n)
            out[i] = nth_bit(legal, k) + (0 if playing else NUM_CARDS)


# -- stepping -------------------------------------------------------------------------------
@helper
def insane(t: np.ndarray) -> bool:
    """A pending table whose seat to play, leader, trick size or suit led is outside 0..3:
    changed from outside the engine (one test of four bytes)."""
    return ((t["to_play"] | t["trick_leader"] | t["trick_size"] | t["led_suit"]) & ~3) != 0


@kernel
def step(s: np.ndarray, actions: np.ndarray, active: np.ndarray, validate: bool,
         rules: np.ndarray, mask: np.ndarray) -> int:  # fmt: skip
    """Apply one action per table where `active` (B,) bool (B = 0: all) and a decision is
    pending. First checks every such action (with `validate`, that it is legal; without,
    only that it is a card id while playing and a bid or redeal id while bidding): returns
    the first table whose action fails (or whose record is out of range, see `insane`),
    changing nothing; else -1 - (the number of tables whose hand ended). `mask` (B, 66) bool or int8, unless it has no rows, receives every
    table's legal mask after the step (as `legal_mask`)."""
    r = rules[0]
    b = s.shape[0]
    all_active = active.shape[0] == 0
    if validate:
        for i in range(b):
            t = s[i]
            if t["phase"] > PLAY or not (all_active or active[i]):
                continue
            local = actions[i] - (0 if t["phase"] == PLAY else NUM_CARDS)
            if local < 0 or local > 63 or ((legal_set(t, r) >> U64(local)) & ONE) == ZERO:
                return i
            if insane(t):
                return i
    else:  # what keeps the kernel's reads in bounds: a card while playing, a bid while bidding
        for i in range(b):
            t = s[i]
            if t["phase"] > PLAY or not (all_active or active[i]):
                continue
            a = actions[i]
            if (a < 0 or a >= NUM_CARDS) if t["phase"] == PLAY else (a < 52 or a > 65):
                return i
            if insane(t):
                return i
    ended = 0
    masks = mask.shape[0] > 0
    for i in range(b):
        t = s[i]
        if all_active or active[i]:
            phase = t["phase"]
            if phase == BID:
                apply_bid(t, actions[i], r)
            elif phase == PLAY:
                apply_card(t, actions[i], r)
            if phase <= PLAY and t["phase"] >= HAND_OVER:
                ended += 1
        if masks:
            write_mask(t, r, mask[i])
    return -1 - ended


@helper
def throw_in(t: np.ndarray) -> None:
    """End table record `t`'s hand unplayed: no points for anyone, the deal passes to the
    right (the next seat), phase HAND_OVER."""
    t["thrown_in"] = 1
    for seat in range(4):
        t["hand_points"][seat] = 0
    t["dealer"] = (t["dealer"] + 1) & 3
    t["to_play"] = -1
    t["phase"] = HAND_OVER


@helper
def apply_bid(t: np.ndarray, action: int, r: np.ndarray) -> None:
    """Record the bid (action 52..64) or redeal request (65, which throws the hand in) of the
    seat to play at table `t`. After the fourth bid the hand is played (phase PLAY, then an
    auto-claim if the rules allow it) or thrown in (`hand_is_played`). The action must be
    legal: nothing is checked."""
    seat = t["to_play"] & 3
    redeal = action == REDEAL_ACTION
    t["bids"][seat] = 0 if redeal else action - BID_OFFSET
    t["num_bids"] += 1
    t["to_play"] = (seat + 1) & 3
    if redeal:
        t["redeal_seat"] = seat
        throw_in(t)
    elif t["num_bids"] == 4:
        if not hand_is_played(t["bids"], t["required_total"], r):
            throw_in(t)
        else:
            t["phase"] = PLAY
            if r["auto_claim"]:
                auto_claim(t)
                if t["num_tricks"] == 13:
                    score_hand(t, r)


@helper
def apply_card(t: np.ndarray, card: int, r: np.ndarray) -> None:
    """Play card id `card` (0..51) from the hand of the seat to play at table `t` into the
    trick, noting a failure to follow suit; the fourth card finishes the trick. The card
    must be legal: nothing is checked."""
    seat = t["to_play"] & 3
    t["hand_set"][seat] &= ~bit(card)
    suit = card // 13
    size = t["trick_size"]
    led = suit if size == 0 else np.int64(t["led_suit"]) & 3
    t["led_suit"] = led
    if suit != led:
        t["shown_void"][seat] |= 1 << led
    t["trick_cards"][seat] = card
    t["trick_size"] = size + 1
    t["to_play"] = (seat + 1) & 3
    if size + 1 == 4:
        finish_trick(t, r)


@helper
def finish_trick(t: np.ndarray, r: np.ndarray) -> None:
    """Give table `t`'s full trick to its highest heart, else highest card of the suit led;
    the winner leads next. Then an auto-claim if the rules allow it, and after the 13th
    trick the hand is scored (`score_hand`)."""
    led = t["led_suit"]
    cards = t["trick_cards"]
    winner = 0
    best = -1
    for seat in range(4):
        c = np.int64(cards[seat])
        suit = c // 13
        strength = c % 13 + (13 if suit == led else 0) + (26 if suit == 3 else 0)
        if strength > best:
            best = strength
            winner = seat
    t["tricks_won"][winner] += 1
    t["to_play"] = winner
    t["trick_leader"] = winner
    t["trick_size"] = 0
    for seat in range(4):
        cards[seat] = -1
    t["num_tricks"] += 1
    if t["num_tricks"] < 13 and r["auto_claim"]:
        auto_claim(t)
    if t["num_tricks"] == 13:
        score_hand(t, r)


@helper
def auto_claim(t: np.ndarray) -> None:
    """Give the rest of the hand to a leader who wins every trick however anyone plays: no
    other seat holds a heart, and in each side suit every card the leader holds outranks
    every card of that suit the others hold."""
    leader = t["trick_leader"] & 3
    hands = t["hand_set"]
    mine = hands[leader]
    others = (hands[0] | hands[1] | hands[2] | hands[3]) & ~mine
    if (others & HEARTS) != ZERO:
        return
    for suit in range(3):
        m = mine & SUITS[suit]
        o = others & SUITS[suit]
        if m != ZERO and o >= (m & (~m + ONE)):
            return
    t["tricks_won"][leader] += 13 - t["num_tricks"]
    t["num_tricks"] = 13
    for seat in range(4):
        hands[seat] = ZERO
    t["claim_seat"] = leader


@helper
def score_hand(t: np.ndarray, r: np.ndarray) -> None:
    """Score table `t`'s hand as it stands: each seat gains its bid's value if it took at
    least its bid in tricks and did not forfeit, else loses it. The deal passes to the right
    (the next seat) and `end_of_game` sets the winner and target: phase MATCH_OVER or
    HAND_OVER."""
    before = t["scores_before"]
    scores = t["scores"]
    for seat in range(4):
        bid = np.int64(t["bids"][seat])
        value = bid_value(bid, np.int64(before[seat]), r)
        made = t["tricks_won"][seat] >= bid and not t["forfeit"][seat]
        delta = value if made else -value
        scores[seat] = before[seat] + delta
        t["hand_points"][seat] = delta
    t["thrown_in"] = 0
    t["dealer"] = (t["dealer"] + 1) & 3
    t["to_play"] = -1
    winner, target = end_of_game(scores, np.int64(t["target"]), r)
    t["winner"] = winner
    t["target"] = target
    t["phase"] = MATCH_OVER if winner >= 0 else HAND_OVER


@helper
def qualifies(scores: np.ndarray, team: int, target: int, r: np.ndarray) -> bool:
    """A player of `team` has `target` and (if the rules say so) the partner is above 0."""
    a = np.int64(scores[team])
    b = np.int64(scores[team + 2])
    if r["partner_must_be_positive"]:
        return (a >= target and b > 0) or (b >= target and a > 0)
    return a >= target or b >= target


@helper
def end_of_game(scores: np.ndarray, target: int, r: np.ndarray) -> tuple[int, int]:
    """(winner: -1 play on, else team; the target for the next hand) after a played hand."""
    q0 = qualifies(scores, 0, target, r)
    q1 = qualifies(scores, 1, target, r)
    if q0 != q1:
        return (0 if q0 else 1), target
    if q0 and q1:
        finish = r["finish"]
        if finish == 0:
            return -1, target + r["target_step"]
        if finish == 1:
            a = max(np.int64(scores[0]), np.int64(scores[2]))
            b = max(np.int64(scores[1]), np.int64(scores[3]))
        else:
            a = np.int64(scores[0]) + np.int64(scores[2])
            b = np.int64(scores[1]) + np.int64(scores[3])
        return (-1 if a == b else (0 if a > b else 1)), target
    base = r["target"]
    if target == base:
        return -1, target
    q0 = qualifies(scores, 0, base, r)
    q1 = qualifies(scores, 1, base, r)
    if q0 != q1:
        return (0 if q0 else 1), target
    if q0:
        return -1, target
    return -1, base


@kernel
def end_of_games(scores: np.ndarray, targets: np.ndarray, rules: np.ndarray, winner: np.ndarray,
                 new_target: np.ndarray) -> None:  # fmt: skip
    """The end-of-game decision for (n, 4) new scores and (n,) targets in force."""
    r = rules[0]
    for i in range(scores.shape[0]):
        w, tg = end_of_game(scores[i], np.int64(targets[i]), r)
        winner[i] = w
        new_target[i] = tg


@kernel
def forfeit(s: np.ndarray, index: np.ndarray, seats: np.ndarray) -> None:
    """Score the contract of seats[j] at table index[j] as missed this hand."""
    for j in range(index.shape[0]):
        s[index[j]]["forfeit"][seats[j]] = 1


@kernel
def select_bits(x: np.ndarray, k: np.ndarray, out: np.ndarray) -> None:
    """out[i] = index of the k[i]-th set bit of x[i] (-1 if there are fewer)."""
    for i in range(x.shape[0]):
        out[i] = nth_bit(x[i], k[i]) if k[i] < popcount(x[i]) else -1


@kernel
def score_hands(s: np.ndarray, index: np.ndarray, rules: np.ndarray) -> None:
    """Score the hands at tables `index` as they stand (bids and tricks), then decide the game."""
    r = rules[0]
    for j in range(index.shape[0]):
        score_hand(s[index[j]], r)


@kernel
def sample_mask(mask: np.ndarray, u: np.ndarray, empty: int, out: np.ndarray) -> None:
    """`out[i]` = the index of the floor(u[i] * n)-th nonzero entry of row i of `mask` (K, A)
    (A <= 128, any integer or bool dtype), n its number of nonzero entries: a uniform draw
    over the row; `empty` for an empty row. `u` (K,) float64 in [0, 1), `out` (K,) int64.
    The row is packed into two uint64 words first (one pass over the mask)."""
    width = mask.shape[1]
    for i in range(mask.shape[0]):
        row = mask[i]
        lo = ZERO
        hi = ZERO
        for a in range(min(width, 64)):
            lo |= U64(row[a] != 0) << U64(a)
        for a in range(64, width):
            hi |= U64(row[a] != 0) << U64(a - 64)
        n_lo = popcount(lo)
        n = n_lo + popcount(hi)
        if n == 0:
            out[i] = empty
            continue
        k = np.int64(u[i] * n)
        out[i] = nth_bit(lo, k) if k < n_lo else 64 + nth_bit(hi, k - n_lo)
