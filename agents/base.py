"""The agent protocol: every bot, scripted, neural or human, is an `Agent`.

An agent only ever receives a seat's :class:`~fourhundred_env.view.SeatView`: that seat's
own hand and the public facts. Environments, tournaments and the terminal game give each
seat its own instance, so partners cannot share hidden information through one. An instance
may serve several seats only where it cannot carry anything from one seat's view to
another's: rollouts and search play-outs (:mod:`agents.rollout`) reuse one instance of a
*stateless* bot, whose every decision is a function of the view in hand (and its seed), as
every bundled bot's is; a bot that remembers across calls sets ``stateless = False`` and is
refused there.

Random draws of the scripted bots (``random``, ``heuristic:epsilon=...``) are a hash of the
agent's seed, the game's stream key (``view.stream``, set by whoever runs the games) and the
position the seat sees (:func:`view_uniform`): a pure function of what the agent knows. So a
bot makes the same choice in the same position whatever the batch, the order in which tables
are played, the number of workers or a resume, and the compiled play-outs
(:mod:`agents.playout`) draw exactly what `act` draws. Bots that need many numbers per
decision (the deals of `pimc`, a sampled neural policy) draw them the same way: from a key
per position (:func:`view_keys`) and counters (:func:`key_uniforms`), never from a stream
shared across the batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import U64, helper, kernel
from fourhundred_env.cards import BID_OFFSET, NUM_ACTIONS
from fourhundred_env.engine import mix64, sample_legal_actions
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

_AGENT_SALT = 0x2545F4914F6CDD1D
RANDOM_SALT = U64(0x9FB21C651E98DF25)
"""Salts of the draws: a random bot's pick, a heuristic's explore flip and its pick."""
EXPLORE_SALT = U64(0xD6E8FEB86659FD93)
PICK_SALT = U64(0xC2B2AE3D27D4EB4F)
_BYTE = 0xFF
_WORD = 0xFFFFFFFF


def agent_key(seed: int) -> np.uint64:
    """The key of an agent's random draws, from its seed."""
    return mix64(np.array([(int(seed) ^ _AGENT_SALT) & (2**64 - 1)], np.uint64))[0]


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
    """out (K,) float64: `view_uniform` of each view record."""
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


POLICY_RANDOM = 1
POLICY_HEURISTIC = 2


@dataclass(frozen=True)
class CompiledPolicy:
    """How a scripted bot plays inside a compiled play-out (:mod:`agents.playout`): it
    decides exactly as its `act` does, but without a Python call per decision."""

    kind: int  # POLICY_RANDOM or POLICY_HEURISTIC
    key: np.uint64  # the agent's random-stream key (agent_key(seed))
    cut: int = 13  # random: bids 1..cut kept (see RandomAgent)
    params: Any = None  # heuristic: (1,) record of agents.heuristic.PARAMS_DTYPE

    @property
    def player(self) -> Any:
        """The class that plays policies like this one in compiled play-outs (a
        :class:`agents.playout.Playout`, built from a {seat: policy} mapping)."""
        from agents.playout import Playout

        return Playout


class Agent:
    """Base class of all bots.

    Subclasses implement `act` (and may override `act_with_probs` and `reset`). Batched:
    `view` describes K tables where this agent's seat is to act.
    """

    name: str = "agent"
    stateless: bool = True
    """Each decision depends on the view in hand alone (and the seed), nothing remembered
    from earlier calls: one instance may then play several seats in a play-out."""
    replayable: bool = False
    """Each decision is a function of the view, the seed and the game's stream key alone (no
    generator advanced by earlier calls): a game of a tournament can then be played again,
    card for card, from its database (:mod:`tournament.replay`). False unless a bot says so."""

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        self.rules = rules if rules is not None else Rules()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.key = agent_key(seed)

    def compiled_policy(self) -> CompiledPolicy | None:
        """The bot as a policy the compiled play-outs can run (scripted bots), or None."""
        return None

    def reset(self, num_tables: int) -> None:
        """Called at the start of matches, with the size of the batch of tables it will see."""

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 legal actions, one per table in `view`."""
        raise NotImplementedError

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """Actions and, where the agent has them, action probabilities (K, 66) float32."""
        return self.act(view), None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"


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


@kernel
def random_legal(views: np.ndarray, key: np.uint64, cut: int, out: np.ndarray) -> int:
    """out (K,) int64: for each record of `views` (SeatView.DTYPE), `random_one` of its mask
    with the agent's draw for that position. Returns the first record with no legal action,
    or -1."""
    allowed = np.zeros(NUM_ACTIONS, np.bool_)
    for i in range(views.shape[0]):
        v = views[i]
        out[i] = random_one(v["legal_mask"], view_uniform(v, key, RANDOM_SALT), cut, allowed)
        if out[i] < 0:
            return i
    return -1


class RandomAgent(Agent):
    """Uniformly random legal actions; bids capped at `max_bid` (None: any legal bid).

    Uniformly random bids up to 13 are mostly missed, and four such bots never reach 41, so
    the default caps bids at 4 (a seat whose minimum is higher bids its minimum).
    """

    name = "random"
    replayable = True  # its draws hash the seed, the stream and the position

    def __init__(self, rules: Rules | None = None, seed: int = 0, max_bid: int | None = 4) -> None:
        super().__init__(rules, seed)
        self.max_bid = max_bid
        # bids kept: 1..cut, as the slice [:max_bid] of bids 1..13 (a negative max_bid counts
        # from 13 down, as it did when the cap was that slice of the mask)
        self._cut = 13 if max_bid is None else len(range(13)[:max_bid])

    def act(self, view: SeatView) -> np.ndarray:
        out = np.empty(view.size, np.int64)
        if random_legal(view.records, self.key, self._cut, out) >= 0:
            raise ValueError("RandomAgent: a row of the legal mask is empty")
        return out

    def compiled_policy(self) -> CompiledPolicy:
        return CompiledPolicy(POLICY_RANDOM, self.key, cut=self._cut)

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        actions = self.act(view)
        mask = view.legal_mask.astype(np.float32)
        return actions, mask / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)


assert NUM_ACTIONS == 66
