"""Worlds for a search bot: the cards a seat cannot see, dealt out consistently with its view,
and how likely each world makes what the other seats did.

**Dealing** (:func:`deal_worlds`). The unseen cards go to the three other seats, each getting
as many as it holds and none of a suit it has shown void in, *uniformly* among all such
deals: a small dynamic programme over the suits counts the deals left for every way of
splitting the remaining suits between the seats (``count[suit][a][b]``: the first two
other seats still need a and b cards), and each world draws the split suit by suit in
proportion to those counts, then which cards of the suit go where. Exact uniformity is what
lets the policy likelihood below be used as an importance weight as it is.

Every draw is a hash of the agent's key, the position in the view (the game's stream and all
the seat sees: :func:`fourhundred_agents.draws.view_hash`) and the world's number: world w of a position
is the same whatever the batch, the order of calls or the number of worlds asked for.

**Weighting** (:func:`observed_rows`). The bids and plays of the other seats say something about
their hands: a world where the seat that bid 6 holds no heart honour is unlikely. For each
world and each action another seat was seen to make, the kernel rebuilds that seat's view at
the time in that world (its hand then, what it knew then) and writes its observation; the
policy network's probability of the action actually taken, multiplied over the actions, is
the world's likelihood (Rebstock et al. 2019's policy-based inference). What is rebuilt
from the seat's current view alone: every bid (bids are made with the dealt hand, in a known
order) and the plays already made to the current trick. Earlier tricks' plays are known as
sets, not in order, so their views cannot be rebuilt here; the voids they showed are hard
constraints of the deal instead.
"""

from __future__ import annotations

import numpy as np

from fourhundred_agents.draws import view_hash
from fourhundred_agents.scripted.heuristic_bid import NUM_FEATURES
from fourhundred_agents.scripted.heuristic_play import heuristic_one
from fourhundred_env import kernels as K
from fourhundred_env._jit import ONE, U64, ZERO, bit, helper, kernel, lowest_bit, popcount
from fourhundred_env.cards import FULL_DECK, NUM_CARDS
from fourhundred_env.observation import OBS_SCALE, encode_one
from fourhundred_env.streams import WORLD_SALT
from fourhundred_env.view import NO_MASK, copy_table, cut_view

GOLDEN = U64(0x9E3779B97F4A7C15)
_FACT = np.array([float(np.prod(np.arange(1, n + 1))) for n in range(14)])
MAX_OBSERVED = 6
"""Actions of other seats rebuilt per world: at most 3 bids and 3 plays to the trick."""


@helper
def next_draw(state: np.ndarray) -> np.uint64:
    """The next 64-bit draw of the counter-based stream in state (1,) uint64."""
    state[0] = K.wrapping_add(state[0], GOLDEN)
    return K.mix64(state[0])


@helper
def draw_below(state: np.ndarray, n: int) -> int:
    """A draw uniform in 0..n-1 (n >= 1)."""
    return np.int64(next_draw(state) % U64(n))


@helper
def draw_unit(state: np.ndarray) -> float:
    """A draw uniform in [0, 1)."""
    return np.float64(next_draw(state) >> U64(11)) * (1.0 / 9007199254740992.0)


@helper
def split_counts(need: np.ndarray, per_suit: np.ndarray, allowed: np.ndarray,
                 count: np.ndarray) -> None:  # fmt: skip
    """`count` (5, 14, 14) float64: count[suit][a][b] = the deals of suits suit..3 to the three
    other seats when they still need a, b and (the rest) cards, for need (3,), per_suit (4,)
    unseen cards by suit and allowed (3, 4) (seat may hold the suit)."""
    count[:] = 0.0
    count[4, 0, 0] = 1.0
    rest = 0
    for suit in range(3, -1, -1):
        n = per_suit[suit]
        rest += n
        for a in range(need[0] + 1):
            for b in range(need[1] + 1):
                c = rest - a - b
                if c < 0 or c > need[2]:
                    continue
                total = 0.0
                for x in range(min(a, n) + 1):
                    if x > 0 and not allowed[0, suit]:
                        break
                    for y in range(min(b, n - x) + 1):
                        if y > 0 and not allowed[1, suit]:
                            break
                        z = n - x - y
                        if z > c or (z > 0 and not allowed[2, suit]):
                            continue
                        ways = count[suit + 1, a - x, b - y]
                        if ways > 0.0:
                            total += _FACT[n] / (_FACT[x] * _FACT[y] * _FACT[z]) * ways
                count[suit, a, b] = total


@helper
def sample_split(need: np.ndarray, per_suit: np.ndarray, allowed: np.ndarray,
                 count: np.ndarray, suit_cards: np.ndarray, others: np.ndarray,
                 state: np.ndarray, hands: np.ndarray) -> None:  # fmt: skip
    """Deal one world: hands[others[i]] gets its cards (uniform among the deals `count`
    counts). suit_cards (4, 13) int64: the unseen cards of each suit (per_suit[s] of them)."""
    a = need[0]
    b = need[1]
    perm = np.empty(13, np.int64)
    for suit in range(4):
        n = per_suit[suit]
        rest_c = 0
        for s2 in range(suit, 4):
            rest_c += per_suit[s2]
        c = rest_c - a - b
        u = draw_unit(state) * count[suit, a, b]
        acc = 0.0
        px = -1
        py = -1
        for x in range(min(a, n) + 1):
            if x > 0 and not allowed[0, suit]:
                break
            for y in range(min(b, n - x) + 1):
                if y > 0 and not allowed[1, suit]:
                    break
                z = n - x - y
                if z > c or (z > 0 and not allowed[2, suit]):
                    continue
                ways = count[suit + 1, a - x, b - y]
                if ways > 0.0:
                    acc += _FACT[n] / (_FACT[x] * _FACT[y] * _FACT[z]) * ways
                    px = x
                    py = y
                    if u < acc:
                        break
            if px >= 0 and u < acc:
                break
        for j in range(n):
            perm[j] = suit_cards[suit, j]
        for j in range(n - 1, 0, -1):  # Fisher-Yates
            k = draw_below(state, j + 1)
            tmp = perm[j]
            perm[j] = perm[k]
            perm[k] = tmp
        for j in range(n):
            who = 0 if j < px else (1 if j < px + py else 2)
            hands[others[who]] |= bit(perm[j])
        a -= px
        b -= py


@kernel
def deal_worlds(views: np.ndarray, key: np.uint64, first: int, num: int,
                hands: np.ndarray) -> int:  # fmt: skip
    """`hands` (K * num, 4) uint64: worlds first..first+num-1 of each view record (row
    k * num + i is world first + i of view k): the viewer's own hand and the unseen cards dealt
    uniformly to the other seats (sizes and shown voids respected). Returns the number of
    views whose voids admitted no deal at all (then the voids were ignored for that view)."""
    count = np.zeros((5, 14, 14))
    need = np.zeros(3, np.int64)
    per_suit = np.zeros(4, np.int64)
    allowed = np.zeros((3, 4), np.bool_)
    suit_cards = np.zeros((4, 13), np.int64)
    others = np.zeros(3, np.int64)
    state = np.zeros(1, np.uint64)
    broken = 0
    for k in range(views.shape[0]):
        v = views[k]
        me = np.int64(v["seat"])
        played = ZERO
        for s in range(4):
            played |= v["played_set"][s]
        unseen = U64(FULL_DECK) & ~played & ~v["hand_set"]
        for suit in range(4):
            cards = unseen & K.SUITS[suit]
            per_suit[suit] = popcount(cards)
            j = 0
            while cards != ZERO:
                suit_cards[suit, j] = lowest_bit(cards)
                cards &= cards - ONE
                j += 1
        for i in range(3):
            s = (me + 1 + i) & 3
            others[i] = s
            need[i] = 13 - popcount(v["played_set"][s])
            for suit in range(4):
                allowed[i, suit] = ((np.int64(v["shown_void"][s]) >> suit) & 1) == 0
        split_counts(need, per_suit, allowed, count)
        if count[0, need[0], need[1]] <= 0.0:
            broken += 1
            allowed[:] = True
            split_counts(need, per_suit, allowed, count)
        base = view_hash(v, key, WORLD_SALT)
        for i in range(num):
            row = k * num + i
            for s in range(4):
                hands[row, s] = ZERO
            hands[row, me] = v["hand_set"]
            state[0] = K.mix64(base ^ K.wrapping_mul(U64(first + i + 1), GOLDEN))
            sample_split(need, per_suit, allowed, count, suit_cards, others, state, hands[row])
    return broken


@helper
def emit(t: np.ndarray, seat: int, action: int, owner: int, r: np.ndarray, v: np.ndarray,
         obs: np.ndarray, legal: np.ndarray, actions: np.ndarray, owners: np.ndarray,
         actors: np.ndarray, scripted: np.ndarray, known: np.ndarray, f: np.ndarray,
         n: int) -> int:  # fmt: skip
    """Write row n: the view of `seat` at table record t, its legal set, the action it took,
    and what each scripted model of `scripted` would have done there (known[n, m])."""
    cut_view(t, 0, seat, r, NO_MASK, v)
    encode_one(v, OBS_SCALE, obs[n])
    legal[n] = K.legal_set(t, r)
    actions[n] = action
    owners[n] = owner
    actors[n] = seat
    for m in range(scripted.shape[0]):
        known[n, m] = heuristic_one(v, r, scripted[m], f, ZERO)
    return n + 1


@kernel
def observed_rows(s: np.ndarray, viewer: np.ndarray, rules: np.ndarray, scratch: np.ndarray,
                  vscratch: np.ndarray, obs: np.ndarray, legal: np.ndarray,
                  actions: np.ndarray, owners: np.ndarray, actors: np.ndarray,
                  scripted: np.ndarray, known: np.ndarray) -> int:  # fmt: skip
    """For every world (table record of s, the viewer viewer[j]) and every bid or play to the
    current trick that another seat made, the view of that seat just before it, rebuilt in
    that world: its observation into obs[n], legal set (phase-local bits) into legal[n], the
    action taken into actions[n], the world into owners[n], the seat into actors[n], and the
    action each scripted model (heuristic parameter records `scripted` (M,)) would have
    taken there into known[n, :M]. Returns n (at most
    MAX_OBSERVED per world). The seat's shown voids in the rebuilt trick views drop the suit
    its play to this trick showed (the one fact of the past these views cannot know for sure)."""
    r = rules[0]
    t = scratch[0]
    v = vscratch[0]
    f = np.empty(NUM_FEATURES)
    n = 0
    for j in range(s.shape[0]):
        w = s[j]
        me = np.int64(viewer[j])
        first = (np.int64(w["dealer"]) + 1) & 3
        # the bids, each seat with its dealt hand and the bids before it
        copy_table(w, t)
        t["phase"] = K.BID
        t["trick_size"] = 0
        t["num_tricks"] = 0
        t["trick_leader"] = first
        for s2 in range(4):
            t["hand_set"][s2] = w["dealt_set"][s2]
            t["bids"][s2] = 0
            t["tricks_won"][s2] = 0
            t["trick_cards"][s2] = -1
            t["shown_void"][s2] = 0
        made = np.int64(w["num_bids"]) if w["phase"] == K.BID else 4
        for k in range(made):
            seat = (first + k) & 3
            t["num_bids"] = k
            t["to_play"] = seat
            bid = np.int64(w["bids"][seat])
            if seat != me and bid > 0:
                n = emit(t, seat, K.BID_OFFSET + bid, j, r, v, obs, legal, actions, owners, actors,
                         scripted, known, f, n)  # fmt: skip
            t["bids"][seat] = bid
        if w["phase"] != K.PLAY or w["trick_size"] == 0:
            continue
        # the plays to the current trick, undone from the last
        copy_table(w, t)
        leader = np.int64(w["trick_leader"])
        led = np.int64(w["led_suit"])
        size = np.int64(w["trick_size"])
        for p in range(size - 1, -1, -1):
            seat = (leader + p) & 3
            card = np.int64(t["trick_cards"][seat])
            t["trick_cards"][seat] = -1
            t["hand_set"][seat] |= bit(card)
            if card // 13 != led:
                t["shown_void"][seat] &= ~(1 << led)
            t["trick_size"] = p
            t["to_play"] = seat
            if seat != me:
                n = emit(t, seat, card, j, r, v, obs, legal, actions, owners, actors, scripted,
                         known, f, n)  # fmt: skip
    return n


@helper
def policy_prob(logits: np.ndarray, lg: np.uint64, a: int) -> tuple[float, int]:
    """The softmax probability of action a over the legal set lg (phase-local bits: cards, or
    bids from action 52) under one row of logits, and the size of the legal set."""
    offset = 0 if a < NUM_CARDS else NUM_CARDS
    top = -np.inf
    x = lg
    while x != ZERO:
        c = lowest_bit(x)
        x &= x - ONE
        top = max(top, np.float64(logits[c + offset]))
    total = 0.0
    x = lg
    n = 0
    while x != ZERO:
        c = lowest_bit(x)
        x &= x - ONE
        total += np.exp(np.float64(logits[c + offset]) - top)
        n += 1
    return np.exp(np.float64(logits[a]) - top) / total, n


@kernel
def add_log_likelihood(logits: np.ndarray, legal: np.ndarray, actions: np.ndarray,
                       owners: np.ndarray, eps: float, out: np.ndarray) -> None:  # fmt: skip
    """out[owners[j]] += log((1 - eps) * pi(actions[j]) + eps / n_legal), pi the softmax of
    logits[j] over the legal set legal[j] (phase-local bits: cards, or bids from action 52)."""
    for j in range(actions.shape[0]):
        p, n = policy_prob(logits[j], legal[j], actions[j])
        out[owners[j]] += np.log((1.0 - eps) * p + eps / n)


@kernel
def seat_log_likelihoods(logits: np.ndarray, legal: np.ndarray, actions: np.ndarray,
                         owners: np.ndarray, actors: np.ndarray, known: np.ndarray,
                         eps: float, out: np.ndarray) -> None:  # fmt: skip
    """`out` (worlds, 4, 1 + M): the log-likelihood of each seat's observed actions in each world
    under each model, added in: model 0 the policy (logits, as `add_log_likelihood`), model
    1 + m the scripted model m, which takes the action known[j, m] (deterministic), mixed
    with `eps` of a uniformly random legal action like the policy."""
    for j in range(actions.shape[0]):
        a = actions[j]
        p, n = policy_prob(logits[j], legal[j], a)
        w = owners[j]
        seat = actors[j]
        out[w, seat, 0] += np.log((1.0 - eps) * p + eps / n)
        for m in range(known.shape[1]):
            hit = 1.0 if known[j, m] == a else 0.0
            out[w, seat, 1 + m] += np.log((1.0 - eps) * hit + eps / n)
