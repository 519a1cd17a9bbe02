"""The per-view random streams of the bots.

A bot's random draws are a hash of its seed (:func:`agent_key`), a salt naming the draw, the
game's stream key (``view.stream``, set by whoever runs the games) and the position the seat
sees (:func:`view_uniform`): a pure function of what the agent knows. So a bot makes the same
choice in the same position whatever the batch, the order in which tables are played, the
number of workers or a resume, and the compiled play-outs (:mod:`fourhundred_agents.scripted.playout`)
draw exactly what `act` draws. Bots that need many numbers per decision (the deals of `pimc`,
a sampled neural policy) draw them the same way: from a key per position (:func:`view_keys`)
and counters (:func:`key_uniforms`), never from a stream shared across the batch.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import U64, helper, kernel
from fourhundred_env.cards import BID_OFFSET, NUM_ACTIONS
from fourhundred_env.engine import mix64, sample_legal_actions
from fourhundred_env.streams import AGENT_SALT
from fourhundred_env.view import SeatView

_BYTE = 0xFF
_WORD = 0xFFFFFFFF


def agent_key(seed: int) -> np.uint64:
    """The key of an agent's random draws, from its seed."""
    return mix64(np.array([(int(seed) ^ int(AGENT_SALT)) & (2**64 - 1)], np.uint64))[0]


@helper
def _packed4(values: np.ndarray, bits: int, mask: int) -> np.uint64:
    """Four small integers of a record field packed into one word."""
    w = U64(0)
    for k in range(4):
        w |= U64(np.int64(values[k]) & mask) << U64(bits * k)
    return w


@helper
def view_hash(v: np.ndarray, key: np.uint64, salt: np.uint64) -> np.uint64:
    """A 64-bit hash of an agent's key, a salt, the game's stream key and the position in the
    view record `v` (the seat, its hand, the cards played by each seat, the trick, the bids,
    the scores, the phase and counters): the same position, the same hash."""
    h = K.mix64(key ^ salt ^ v["stream"])
    h = K.mix64(h ^ v["hand_set"])
    for k in range(4):
        h = K.mix64(h ^ v["played_set"][k])
    h = K.mix64(
        h ^ _packed4(v["trick_cards"], 8, _BYTE) ^ (_packed4(v["bids"], 8, _BYTE) << U64(32))
    )
    h = K.mix64(h ^ _packed4(v["scores_before"], 16, 0xFFFF))
    counters = (
        (np.int64(v["seat"]) & _BYTE)
        | (np.int64(v["phase"]) & _BYTE) << 8
        | (np.int64(v["num_bids"]) & _BYTE) << 16
        | (np.int64(v["num_tricks"]) & _BYTE) << 24
        | (np.int64(v["trick_size"]) & _BYTE) << 32
        | (np.int64(v["dealer"]) & _BYTE) << 40
    )
    return K.mix64(h ^ U64(counters) ^ (U64(np.int64(v["target"]) & _WORD) << U64(48)))


@helper
def view_uniform(v: np.ndarray, key: np.uint64, salt: np.uint64) -> float:
    """A uniform in [0, 1) fixed by an agent's key, a salt, the game's stream key and the
    position in the view record `v` (see `view_hash`): the same position, the same draw."""
    return np.float64(view_hash(v, key, salt) >> U64(11)) * (1.0 / 9007199254740992.0)


@kernel
def view_uniforms(views: np.ndarray, key: np.uint64, salt: np.uint64, out: np.ndarray) -> None:
    """`out` (K,) float64: `view_uniform` of each view record."""
    for j in range(views.shape[0]):
        out[j] = view_uniform(views[j], key, salt)


def view_keys(view: SeatView, key: np.uint64, salt: np.uint64) -> np.ndarray:
    """(K,) uint64: a key per row of `view`, fixed by the agent's key, a salt, the game's
    stream key and the position (as `view_uniform`): the seed of that decision's own
    random numbers (see `key_uniforms`)."""
    u = np.empty(view.size, np.float64)
    view_uniforms(view.records, key, salt, u)
    return mix64((u * 9007199254740992.0).astype(np.uint64))  # u * 2**53: exact 53-bit ints


def key_uniforms(keys: np.ndarray, m: int) -> np.ndarray:
    """(n, m) float64 uniforms in [0, 1): the first `m` counter-based draws of each of the
    (n,) uint64 `keys`, so a row's numbers depend on its key alone, never on the batch."""
    counters = mix64(np.arange(1, m + 1, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03))
    h = mix64(np.asarray(keys, np.uint64)[:, None] ^ counters[None, :])
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


@helper
def nth_true(row: np.ndarray, k: int) -> int:
    """Index of the k-th (0-based) nonzero entry of `row`; needs k < its count."""
    for a in range(row.shape[0]):
        if row[a]:
            if k == 0:
                return a
            k -= 1
    return -1


def sample_masked(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(K,) int64: a uniformly random legal action per row of a (K, 66) mask, drawn by the
    engine's sampler (:func:`fourhundred_env.engine.sample_legal_actions`); an empty row is
    an error."""
    out = sample_legal_actions(mask, rng, empty=-1)
    if (out < 0).any():
        raise ValueError("sample_masked: a row of the legal mask is empty")
    return out


@helper
def random_one(row: np.ndarray, u: float, cut: int, allowed: np.ndarray) -> int:
    """The legal action of rank ``floor(u * n)`` among the n legal actions of a (66,) mask row
    once bids above `cut` are removed (bids 1..cut stay; where that leaves no bid, the lowest
    legal bid stays); -1 if there is none. `allowed` (66,) is scratch."""
    first = BID_OFFSET + 1
    lowest = -1
    for a in range(first, first + 13):
        if row[a]:
            lowest = a
            break
    keep_lowest = lowest >= first + cut  # the cap removes every legal bid
    n = 0
    for a in range(NUM_ACTIONS):
        ok = row[a] != 0 and (a < first + cut or a >= first + 13 or (keep_lowest and a == lowest))
        allowed[a] = ok
        if ok:
            n += 1
    if n == 0:
        return -1
    return nth_true(allowed, np.int64(u * n))
