"""The values of a decision's legal actions, with their errors, from an agent that can give them.

An agent *values actions* when it answers ``value_actions(view) -> ActionValues``
(:class:`ActionValuer`): for each legal action at each of the K views, the estimated chance
that the deciding seat's team wins the match after that action, its standard error, and the
number of worlds (play-outs) it rests on. :func:`make_valuer` builds one from an agent spec:

- ``search`` (any of its settings, ``search:strong``, ``search:worlds=64,bid_worlds=128``):
  the search's own values (:meth:`fourhundred_agents.search.agent.SearchAgent.world_values`): the cards
  the seat cannot see dealt in worlds consistent with its view and weighted by what the other
  seats did, every legal action played out to the end of the hand by the policy, each
  play-out valued by the match-win estimate of the scores after the hand (1 or 0 when it ends
  the match). No time budget: every world is scored, so the values depend on the position and
  the seed only.
- ``neural:PATH``: the same play-outs with that network as the policy (``search:model=PATH``).
  A network's value head is not used: it is trained on a return in points (``reward_scale``
  units, over the rest of the match), not on a match-win chance, and read at the state after
  an action it would be read where another seat is to act, from a view it was never trained
  on; play-outs by the network give its values in the same units as the search's.
- any bot that has ``value_actions`` itself (a plugin), or ``world_values`` as the search.

Other bots (``random``, ``heuristic``, ``heuristic-v1``, ``minbid``, ``pimc``, ``compose:``)
cannot value actions: :func:`make_valuer` refuses them naming those that can. To value actions
by heuristic-v1's play-outs, use ``search:models=heuristic-v1,own=heuristic-v1``.

A value's standard error is that of a weighted mean over the worlds (each world counted as
often as it was drawn; the effective number of worlds from the counts), as the search's
choice rule computes it (:mod:`fourhundred_agents.search.choice`); :meth:`ActionValues.difference` gives
the error of the difference of two actions paired world by world, far smaller than either
error, since both are played out in the same worlds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from fourhundred_env.errors import ConfigError
from fourhundred_env.registry import entry, make_agent, parse_spec, spec_settings
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

__all__ = ["VALUERS", "ActionValuer", "ActionValues", "SearchValuer", "make_valuer", "world_stats"]

VALUERS = ("search", "neural")
"""The bundled bots that value actions (see the module docstring)."""


@dataclass(frozen=True)
class ActionValues:
    """The values of the legal actions at K views.

    `value` and `stderr` are (K, 66) float64, NaN where the action is illegal; `worlds` (K,)
    int64 the distinct worlds each view's values rest on (play-outs per action). Where the
    valuer has them, `world_values` (K, W, 66) float64 holds every action's value in each world
    (NaN where illegal or not scored) and `world_weights` (K, W) float64 each world's weight
    (0 where not scored), from which :meth:`difference` pairs two actions. `unit` is
    ``"match-win"`` (a chance, 0 to 1) or ``"points"`` (search's ``value=points``).
    """

    value: np.ndarray
    stderr: np.ndarray
    worlds: np.ndarray
    world_values: np.ndarray | None = None
    world_weights: np.ndarray | None = None
    unit: str = "match-win"

    @property
    def size(self) -> int:
        """Number of views K."""
        return int(self.value.shape[0])

    def difference(self, k: int, a: int, b: int) -> tuple[float, float]:
        """(mean, standard error) of action a's value minus action b's at view k: paired world
        by world where the world values are known, else from the two errors alone."""
        mean = float(self.value[k, a] - self.value[k, b])
        if self.world_values is None or self.world_weights is None:
            return mean, float(np.hypot(self.stderr[k, a], self.stderr[k, b]))
        d = self.world_values[k, :, a] - self.world_values[k, :, b]
        m = np.where(np.isnan(d), 0.0, self.world_weights[k])
        _, se = world_stats(np.where(m > 0, d, 0.0)[None, :, None], m[None])
        return mean, float(se[0, 0])


def world_stats(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, standard error), each (K, A) float64, of values (K, W, A) over their worlds
    weighted by weights (K, W) (0: a world not scored; NaN values there are ignored). The
    error is that of a weighted mean with the effective number of worlds
    (sum w)^2 / sum w^2 (agents/search/choice.py's); NaN where no world has weight."""
    w = weights[:, :, None]
    v = np.where(w > 0, values, 0.0)
    total = weights.sum(axis=1)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (w * v).sum(axis=1) / total
        var = (w * (v - mean[:, None, :]) ** 2).sum(axis=1) / total
        n_eff = total**2 / (weights**2).sum(axis=1)[:, None]
        se = np.sqrt(var / np.maximum(n_eff - 1.0, 1.0))
    return mean, se


@runtime_checkable
class ActionValuer(Protocol):
    """What values actions: :meth:`value_actions` at K views."""

    def value_actions(self, view: SeatView) -> ActionValues:
        """The values of every legal action at each of the K views of `view`."""
        ...


class SearchValuer:
    """Values actions with a bot that has ``world_values(view)`` (the search)."""

    def __init__(self, agent, name: str) -> None:
        self.agent = agent
        self.name = name
        self.unit = "points" if getattr(agent, "points", False) else "match-win"

    def value_actions(self, view: SeatView) -> ActionValues:
        """The search's values of every legal action at the views (no time budget)."""
        values, weights = self.agent.world_values(view)
        legal = view.legal_mask
        mean, se = world_stats(values, weights)
        mean = np.where(legal, mean, np.nan)
        se = np.where(legal, se, np.nan)
        return ActionValues(mean, se, (weights > 0).sum(axis=1).astype(np.int64), values,
                            weights, self.unit)  # fmt: skip

    def __repr__(self) -> str:
        return f"SearchValuer({self.name!r})"


def make_valuer(spec: str, rules: Rules | None = None, seed: int = 0) -> ActionValuer:
    """The valuer of agent spec `spec` under `rules`, its worlds drawn from `seed` (see the
    module docstring). An unknown spec, or a bot that cannot value actions, raises
    ConfigError (a FourHundredError) naming those that can."""
    from fourhundred_agents.search.agent import SearchAgent, SearchSettings

    rules = rules if rules is not None else Rules()
    name, _ = parse_spec(spec)
    entry(name)  # an unknown name is refused here, listing the known ones
    if name == "search":
        return SearchValuer(SearchAgent(rules, seed, spec_settings(spec)), spec)
    if name == "neural":
        path = spec_settings(spec).path
        return SearchValuer(SearchAgent(rules, seed, SearchSettings(model=path)), spec)
    agent = make_agent(spec, rules, seed)
    if isinstance(agent, ActionValuer):
        return agent
    if callable(getattr(agent, "world_values", None)):
        return SearchValuer(agent, spec)
    close = getattr(agent, "close", None)
    if close is not None:
        close()
    raise ConfigError(
        f"agent {spec!r} cannot value actions: expected one that can, {' or '.join(VALUERS)} "
        "(search:SETTINGS, neural:PATH), or a bot with value_actions(view)"
    )
