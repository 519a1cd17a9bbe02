"""An exact endgame solver for 400: alpha-beta over the last tricks of one world, all hands seen.

Bridge solvers maximise a side's tricks; 400 pays each player against their own bid, so what
a position is worth depends only on which of the four contracts end up made. The solver
takes, per table, the value to the searching seat's team of each of the 16 made/missed
patterns (``leaf[pattern]``, bit s of the pattern: seat s makes its contract), computed once
from the bids, the scores and the match situation (:func:`fourhundred_agents.search.agent` passes the
match-win estimate of the resulting scores), and finds the value of every legal card of the
seat to play when all four seats play perfectly with all hands in view (double dummy): the
team of the searching seat maximises, the other minimises.

What keeps it cheap:

- **Decided contracts.** A seat whose tricks reach its bid has made; one that needs more tricks
  than are left (or was forfeited) has missed. Of the 16 patterns only those agreeing with
  the decided seats remain possible: when their values are all equal the node is solved
  without looking further, and their minimum and maximum bound the node for alpha-beta.
- **Transposition table** at the start of each trick, over what the rest of the hand depends
  on: the cards each seat still holds, the leader, and the tricks each seat still needs
  (``max(bid - won, 0)``: extra tricks count for nothing, so positions that differ only there
  are the same).
- **Equivalent cards.** Two cards of one suit in one hand with no card of that suit between
  them left in play (in another hand or on the table) do the same; one of them is searched.
- **Move order**: the cheapest card that wins the trick so far, then the others low to high.

Everything is compiled (numba); one kernel call solves every world of a batch.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import ONE, U64, ZERO, bit, helper, highest_bit, kernel, lowest_bit
from fourhundred_env.cards import NUM_CARDS

TT_BITS = 16
_TT_SIZE = 1 << TT_BITS
_EMPTY = U64(0)
LEAF_PATTERNS = 16


@helper
def pattern_bounds(leaf: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """lo, hi (256,): for made (bits 0-3) | missed << 4 (bits 4-7) seats, the min and max of
    leaf over the patterns that agree (made seats in, missed seats out)."""
    for key in range(256):
        made = key & 15
        missed = key >> 4
        a = np.inf
        b = -np.inf
        if made & missed == 0:
            for p in range(LEAF_PATTERNS):
                if (p & made) == made and (p & missed) == 0:
                    a = min(a, leaf[p])
                    b = max(b, leaf[p])
        lo[key] = a
        hi[key] = b


@helper
def strength(card: int, led: int) -> int:
    """How a card ranks in a trick led in suit `led`: hearts over the led suit over the rest."""
    suit = card // 13
    return card % 13 + (13 if suit == led else 0) + (26 if suit == 3 else 0)


@helper
def trick_winner(trick: np.ndarray, led: int) -> int:
    """The seat whose card wins a full trick (4,) led in suit `led`."""
    winner = 0
    top = -1
    for s in range(4):
        st = strength(np.int64(trick[s]), led)
        if st > top:
            top = st
            winner = s
    return winner


@helper
def position_key(hands: np.ndarray, leader: int, need: np.ndarray) -> np.uint64:
    """A uint64 hash of a position between tricks: the hands (4,) uint64, the seat to lead
    and need (4,) int64, the tricks each seat still needs."""
    h = K.mix64(hands[0])
    h = K.mix64(h ^ hands[1])
    h = K.mix64(h ^ hands[2])
    packed = U64(leader)
    for s in range(4):
        packed |= U64(need[s]) << U64(4 + 4 * s)
    h = K.mix64(h ^ hands[3] ^ (packed << U64(52)) ^ (packed >> U64(12)))
    return h


@helper
def order_moves(hands: np.ndarray, trick: np.ndarray, seat: int, size: int, led: int,
                moves: np.ndarray) -> int:  # fmt: skip
    """The cards `seat` searches, into moves[:n] (returns n): its legal cards less the
    equivalent ones, the cheapest card winning the trick so far first."""
    hand = hands[seat]
    legal = hand
    if size > 0:
        follow = hand & K.SUITS[led]
        if follow != ZERO:
            legal = follow
    live = hands[0] | hands[1] | hands[2] | hands[3]
    for s in range(4):
        if trick[s] >= 0:
            live |= bit(trick[s])
    others = live & ~hand
    # drop a card when the next live card above it in its suit is ours (same run)
    reduced = ZERO
    x = legal
    while x != ZERO:
        c = lowest_bit(x)
        x &= x - ONE
        suit_set = K.SUITS[c // 13]
        higher_live = live & suit_set & ~((bit(c) << ONE) - ONE)
        nxt = lowest_bit(higher_live)
        if nxt >= 0 and ((legal >> U64(nxt)) & ONE) == ONE and ((others >> U64(nxt)) & ONE) == ZERO:
            continue  # the next live card of the suit is ours too: the same as that one
        reduced |= bit(c)
    best = -1
    if size > 0:
        for s in range(4):
            if trick[s] >= 0:
                best = max(best, strength(np.int64(trick[s]), led))
    n = 0
    # winners, cheapest first
    x = reduced
    lead = size == 0
    while x != ZERO:
        c = lowest_bit(x)
        x &= x - ONE
        if not lead and strength(c, led) > best:
            moves[n] = c
            n += 1
    if lead:  # leading: high cards first (masters cash, trumps draw)
        y = reduced
        while y != ZERO:
            c = highest_bit(y)
            y &= ~bit(c)
            moves[n] = c
            n += 1
        return n
    x = reduced
    while x != ZERO:
        c = lowest_bit(x)
        x &= x - ONE
        if strength(c, led) <= best:
            moves[n] = c
            n += 1
    return n


@helper
def status_key(need: np.ndarray, tricks_left: int, forfeit: np.ndarray) -> int:
    """The bits made | missed << 4 of the seats decided now (bit s: seat s): made when it
    needs no more tricks, missed when forfeit or needing more than `tricks_left`."""
    made = 0
    missed = 0
    for s in range(4):
        if forfeit[s]:
            missed |= 1 << s
        elif need[s] == 0:
            made |= 1 << s
        elif need[s] > tricks_left:
            missed |= 1 << s
    return made | (missed << 4)


@helper
def search(hands: np.ndarray, trick: np.ndarray, leader: int, size: int, led: int,
           need: np.ndarray, tricks_left: int, team: int, forfeit: np.ndarray,
           lo: np.ndarray, hi: np.ndarray, salt: np.uint64, tt_key: np.ndarray,
           tt_lo: np.ndarray, tt_hi: np.ndarray, moves: np.ndarray, alpha: float, beta: float,
           nodes: np.ndarray) -> float:  # fmt: skip
    """The double-dummy value of the position for `team` (whose seats maximise; seat & 1 is
    the team) within (alpha, beta): exact inside the window, a bound outside. lo, hi: see
    `pattern_bounds`; salt: xored into the transposition keys (one per leaf table); moves
    (52 * 13,) scratch, 13 per depth."""
    nodes[0] += 1
    key = status_key(need, tricks_left, forfeit)
    low = lo[key]
    high = hi[key]
    if low >= high or low >= beta or high <= alpha:
        return low if low >= beta or low >= high else high
    if alpha < low:
        alpha = low
    if beta > high:
        beta = high
    tkey = _EMPTY
    slot = 0
    a0 = alpha
    b0 = beta
    if size == 0:
        tkey = (position_key(hands, leader, need) ^ salt) | ONE
        slot = np.int64(tkey & U64(_TT_SIZE - 1))
        if tt_key[slot] == tkey:
            if tt_lo[slot] >= beta:
                return tt_lo[slot]
            if tt_hi[slot] <= alpha:
                return tt_hi[slot]
            if tt_lo[slot] > alpha:
                alpha = tt_lo[slot]
            if tt_hi[slot] < beta:
                beta = tt_hi[slot]
            if alpha >= beta:
                return alpha
    seat = (leader + size) & 3
    maximise = (seat & 1) == team
    depth = 4 * (13 - tricks_left) + size
    base = depth * 13
    n = order_moves(hands, trick, seat, size, led, moves[base : base + 13])
    best = -np.inf if maximise else np.inf
    for i in range(n):
        c = moves[base + i]
        hands[seat] &= ~bit(c)
        trick[seat] = c
        new_led = c // 13 if size == 0 else led
        if size == 3:
            winner = trick_winner(trick, new_led)
            c0, c1, c2, c3 = trick[0], trick[1], trick[2], trick[3]
            for s in range(4):
                trick[s] = -1
            took = need[winner] > 0
            if took:
                need[winner] -= 1
            v = search(hands, trick, winner, np.int64(0), np.int64(-1), need, tricks_left - 1, team, forfeit, lo,
                       hi, salt, tt_key, tt_lo, tt_hi, moves, alpha, beta, nodes)  # fmt: skip
            if took:
                need[winner] += 1
            trick[0], trick[1], trick[2], trick[3] = c0, c1, c2, c3
        else:
            v = search(hands, trick, leader, size + 1, new_led, need, tricks_left, team, forfeit,
                       lo, hi, salt, tt_key, tt_lo, tt_hi, moves, alpha, beta, nodes)  # fmt: skip
        trick[seat] = -1
        hands[seat] |= bit(c)
        if maximise:
            if v > best:
                best = v
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    if size == 0:
        tt_key[slot] = tkey
        if best <= a0:
            tt_lo[slot] = -np.inf
            tt_hi[slot] = best
        elif best >= b0:
            tt_lo[slot] = best
            tt_hi[slot] = np.inf
        else:
            tt_lo[slot] = best
            tt_hi[slot] = best
    return best


@helper
def play_root(hands: np.ndarray, trick: np.ndarray, leader: int, size: int, led: int,
              need: np.ndarray, tricks_left: int, team: int, forfeit: np.ndarray,
              lo: np.ndarray, hi: np.ndarray, salt: np.uint64, tt_key: np.ndarray,
              tt_lo: np.ndarray, tt_hi: np.ndarray, moves: np.ndarray, c: int,
              nodes: np.ndarray) -> float:  # fmt: skip
    """The exact value of card c played by the seat to play at the root."""
    seat = (leader + size) & 3
    hands[seat] &= ~bit(c)
    trick[seat] = c
    new_led = c // 13 if size == 0 else led
    if size == 3:
        winner = trick_winner(trick, new_led)
        c0, c1, c2, c3 = trick[0], trick[1], trick[2], trick[3]
        for k in range(4):
            trick[k] = -1
        took = need[winner] > 0
        if took:
            need[winner] -= 1
        v = search(hands, trick, winner, np.int64(0), np.int64(-1), need, tricks_left - 1, team, forfeit, lo, hi,
                   salt, tt_key, tt_lo, tt_hi, moves, -np.inf, np.inf, nodes)  # fmt: skip
        if took:
            need[winner] += 1
        trick[0], trick[1], trick[2], trick[3] = c0, c1, c2, c3
    else:
        v = search(hands, trick, leader, size + 1, new_led, need, tricks_left, team, forfeit, lo,
                   hi, salt, tt_key, tt_lo, tt_hi, moves, -np.inf, np.inf, nodes)  # fmt: skip
    trick[seat] = -1
    hands[seat] |= bit(c)
    return v


@kernel
def solve(s: np.ndarray, viewer: np.ndarray, leaf_of: np.ndarray, leaves: np.ndarray,
          out: np.ndarray, nodes: np.ndarray) -> None:  # fmt: skip
    """`out` (n, 52) float64: for each world (table record j of s, in card play; viewer[j] the
    searching seat; leaves[leaf_of[j]] (16,) its team's value of each made/missed pattern),
    the exact double-dummy value of each legal card of the seat to play, NaN for the others.
    nodes (n,): the positions searched (for benchmarks). Worlds with the same leaf_of share
    the transposition table (their positions are worth the same)."""
    lo = np.empty(256)
    hi = np.empty(256)
    tt_key = np.zeros(_TT_SIZE, np.uint64)
    tt_lo = np.zeros(_TT_SIZE)
    tt_hi = np.zeros(_TT_SIZE)
    hands = np.zeros(4, np.uint64)
    trick = np.zeros(4, np.int64)
    need = np.zeros(4, np.int64)
    forfeit = np.zeros(4, np.bool_)
    moves = np.zeros(NUM_CARDS * 13, np.int64)
    count = np.zeros(1, np.int64)
    current = -1
    salt = ZERO
    for j in range(s.shape[0]):
        t = s[j]
        team = np.int64(viewer[j]) & 1
        if leaf_of[j] != current:
            current = leaf_of[j]
            pattern_bounds(leaves[current], lo, hi)
            salt = K.mix64(U64(current + 1) ^ (U64(team) << U64(40)) ^ U64(j))
        for k in range(4):
            hands[k] = t["hand_set"][k]
            trick[k] = t["trick_cards"][k]
            need[k] = max(np.int64(t["bids"][k]) - np.int64(t["tricks_won"][k]), 0)
            forfeit[k] = t["forfeit"][k] != 0
        for c in range(NUM_CARDS):
            out[j, c] = np.nan
        size = np.int64(t["trick_size"])
        leader = np.int64(t["trick_leader"])
        led = np.int64(t["led_suit"]) if size > 0 else -1
        seat = (leader + size) & 3
        tricks_left = 13 - np.int64(t["num_tricks"])
        hand = hands[seat]
        legal = hand
        if size > 0 and (hand & K.SUITS[led]) != ZERO:
            legal = hand & K.SUITS[led]
        live = hands[0] | hands[1] | hands[2] | hands[3]
        for k in range(4):
            if trick[k] >= 0:
                live |= bit(trick[k])
        count[0] = 0
        x = legal
        while x != ZERO:  # high to low: a card whose next live card above is ours is worth that
            c = highest_bit(x)
            x &= ~bit(c)
            higher_live = live & K.SUITS[c // 13] & ~((bit(c) << ONE) - ONE)
            nxt = lowest_bit(higher_live)
            if nxt >= 0 and ((legal >> U64(nxt)) & ONE) == ONE:
                out[j, c] = out[j, nxt]
                continue
            out[j, c] = play_root(hands, trick, leader, size, led, need, tricks_left, team,
                                  forfeit, lo, hi, salt, tt_key, tt_lo, tt_hi, moves, c, count)  # fmt: skip
        nodes[j] = count[0]
