"""`pimc`: a search bot, one step of rollout improvement over a base agent.

At each decision with a choice, the seat deals the cards it cannot see at random into
`worlds` complete tables consistent with what it has seen (the cards played, each seat's
number of cards, the suits each seat has shown void in), plays every legal action out to the
end of the hand in every world with the base agent at all four seats, each from its own view
(agents/search/rollout.py), and takes the action worth most to its team on average over the worlds.
Ties go to the base agent's own action. This is Perfect Information Monte Carlo search
(Ginsberg's GIB) with play-outs by an imperfect-information policy, so the play-outs do not
cheat; the deals ignore what the bids say about the hands.

The deals of a decision are drawn from that decision's own key (`fourhundred_agents.draws.view_keys`: the
agent's seed, the game's stream key and the position), so the bot plays the same move in the
same position whatever the batch, the other tables or a resume.

Specs: ``pimc`` (base `heuristic-v1`, 16 worlds, card play only: bids by the base agent),
``pimc:worlds=32,bids=1,base=heuristic``. It costs about worlds x legal actions x the rest of
the hand in base-agent decisions per move, so it is a yardstick for what one step of policy
improvement over the base agent is worth, not a fast bot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fourhundred_agents.draws import key_uniforms, view_keys
from fourhundred_agents.protocol import Agent
from fourhundred_agents.search.rollout import rollout_values
from fourhundred_agents.search.settings import MAX_WORLDS
from fourhundred_env.cards import FULL_DECK, NUM_CARDS
from fourhundred_env.configs import check_fields
from fourhundred_env.engine import Engine, Phase, State, mix64, unpack_sets
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.registry import make_agent, register_agent
from fourhundred_env.rules import Rules
from fourhundred_env.streams import DEAL_TRY_SALT, HAND_SALT
from fourhundred_env.view import SeatView, world_state

_ONE = np.uint64(1)
_SUIT = np.arange(NUM_CARDS) // 13


def _deal(
    cards: np.ndarray, need: np.ndarray, void: np.ndarray, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Deal the (n, 52) bool `cards` to seats with (n, 4) `need` cards each, avoiding the
    (n, seat, suit) `void` suits, each row with the numbers of its own (n,) uint64 key:
    (n, 4) uint64 hands and (n,) bool rows that hit a dead end (where a card had to go to a
    seat void in its suit)."""
    n = len(cards)
    u = key_uniforms(keys, 2 * NUM_CARDS)  # a card order, then where each card goes
    # most constrained suits first (fewest seats that may hold them), random within
    choices = ((need[:, :, None] > 0) & (void == 0)).sum(1)[:, _SUIT]  # (n, 52)
    key = np.where(cards, choices + u[:, :NUM_CARDS], np.inf)
    order = np.argsort(key, axis=1)
    count = cards.sum(1)
    hands = np.zeros((n, 4), np.uint64)
    left = need.copy()
    stuck = np.zeros(n, bool)
    rows = np.arange(n)
    for j in range(int(count.max()) if n else 0):
        live = j < count
        card = order[:, j]
        allowed = (left > 0) & (void[rows, :, _SUIT[card]] == 0)
        dead = live & ~allowed.any(1)
        stuck |= dead
        allowed[dead] = left[dead] > 0  # the voids give way
        cum = np.where(allowed, left, 0).astype(np.float64).cumsum(1)
        to = np.minimum(((u[:, NUM_CARDS + j] * cum[:, -1])[:, None] >= cum).sum(1), 3)
        r = rows[live]
        hands[r, to[live]] |= _ONE << card[live].astype(np.uint64)
        left[r, to[live]] -= 1
    return hands, stuck


def determinize(
    engine: Engine, view: SeatView, worlds: int, keys: np.ndarray, tries: int = 50
) -> State:
    """A State of K * worlds tables (world w of table k at row k * worlds + w): the public
    facts and the viewer's hand of `view`, the other hands dealt at random from the unseen
    cards, each seat getting as many as it holds and none of a suit it has shown void in.
    The worlds of table k are drawn from its key, `keys[k]` ((K,) uint64), alone. A deal
    that runs into a dead end is dealt again (up to `tries` times, then the voids give
    way)."""
    k = view.size
    n = k * worlds
    rep = np.repeat(np.arange(k), worlds)
    seat = view.seat.astype(np.intp)[rep]
    played = view.played_set[rep]  # (n, 4)
    held = view.hand_set[rep]
    unseen = FULL_DECK & ~held & ~np.bitwise_or.reduce(played, axis=1)
    need = 13 - np.bitwise_count(played).astype(np.int64)  # (n, 4) cards each seat holds
    need[np.arange(n), seat] = 0
    void = (view.shown_void[rep][:, :, None] >> np.arange(4, dtype=np.uint8)) & 1  # (n, 4, 4)
    cards = unpack_sets(unseen, NUM_CARDS).astype(bool)  # (n, 52)
    world_keys = mix64(
        np.asarray(keys, np.uint64)[rep]
        ^ mix64(np.arange(n, dtype=np.uint64) % np.uint64(worlds) + HAND_SALT)
    )
    hands, stuck = _deal(cards, need, void, world_keys)
    for attempt in range(1, tries + 1):
        if not stuck.any():
            break
        again = np.flatnonzero(stuck)
        retry_keys = mix64(
            world_keys[again] ^ mix64(np.array([attempt], np.uint64) ^ DEAL_TRY_SALT)
        )
        hands[again], stuck[again] = _deal(cards[again], need[again], void[again], retry_keys)
    hands[np.arange(n), seat] = held
    return world_state(engine, view, hands, rep)


class PimcAgent(Agent):
    """See the module docstring."""

    name = "pimc"
    replayable = False  # its worlds come from self.rng, which every call advances

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int = 0,
        base: str = "heuristic-v1",
        worlds: int = 16,
        bids: bool = False,
    ) -> None:
        super().__init__(rules, seed)
        if not 1 <= worlds <= MAX_WORLDS:
            raise FourHundredError(f"pimc worlds={worlds}: expected 1 to {MAX_WORLDS:,}")
        self.base = make_agent(base, self.rules, seed)
        self.engine = Engine(self.rules)
        self.worlds = int(worlds)
        self.bids = bool(bids)

    def reset(self, num_tables: int) -> None:
        """Resets the base agent."""
        self.base.reset(num_tables)

    def act(self, view: SeatView) -> np.ndarray:
        """The base agent's actions, except at decisions with a choice (card play only,
        unless `bids`): there the action of best mean play-out value over `worlds` dealt
        worlds, the base agent's own where it ties."""
        actions = np.asarray(self.base.act(view), np.int64).copy()
        search = view.legal_mask.sum(1) > 1
        if not self.bids:
            search &= view.phase == Phase.PLAY
        rows = np.flatnonzero(search)
        if rows.size == 0:
            return actions
        searched = view.select(rows)
        keys = view_keys(searched, self.key, HAND_SALT)
        states = determinize(self.engine, searched, self.worlds, keys)
        values = rollout_values(self.engine, states, self.base)
        mean = values.reshape(rows.size, self.worlds, -1).mean(axis=1)
        own = mean[np.arange(rows.size), actions[rows]]
        better = own < mean.max(axis=1)
        actions[rows] = np.where(better, mean.argmax(axis=1), actions[rows])
        return actions


@dataclass(frozen=True)
class PimcSettings:
    """``pimc:worlds=32,bids=true,base=heuristic``."""

    worlds: int = 16
    """Random deals of the unseen cards per decision."""
    bids: bool = False
    """Search the bids too (False: the base agent bids)."""
    base: str = "heuristic-v1"
    """Agent spec of the bot that plays every seat in the play-outs."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not 1 <= self.worlds <= MAX_WORLDS:
            raise ConfigError(f"worlds={self.worlds}: expected 1 to {MAX_WORLDS:,}")


register_agent(
    "pimc",
    lambda rules, seed, s: PimcAgent(rules, seed, base=s.base, worlds=s.worlds, bids=s.bids),
    "search: rollouts of heuristic-v1 over random deals of the unseen cards (pimc:worlds=N,bids=1)",
    settings=PimcSettings,
)
