"""Engine analysis of a game: every decision's legal actions valued, and where value was lost.

:func:`analyse_record` takes a game record (``fourhundred_env.game_records.data.GameRecord``;
``decisions(record)`` of :mod:`fourhundred_env.game_records.files` gives each decision's hand,
move, seat, table and the action played) and an agent that values actions
(:mod:`fourhundred_agents.analysis.values`). At each decision with a choice,
every legal action is valued from the deciding seat's view only (what that seat knew then);
the *best* is the action of highest value, and the *loss* of the action taken is the best's
value minus its own, with the standard error of that difference (paired world by world).

A loss within `noise` standard errors of zero (default one) counts as none: the values are
means over a few dozen play-outs, and the best of several noisy means is biased upwards (the
winner's curse), so a raw loss is seldom exactly 0 even for the best play. The per-seat sums
(value lost per hand) and the largest mistakes are of the counted losses; every decision
keeps its raw loss and error too. A forced decision (one legal action) is not valued and
loses nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fourhundred_agents.analysis.values import ActionValuer, ActionValues, make_valuer
from fourhundred_env.cards import action_text, parse_action
from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_records.files import decisions
from fourhundred_env.phases import Phase, phase_name
from fourhundred_env.view import SeatView, seat_view

__all__ = [
    "NOISE",
    "Analysis",
    "DecisionAnalysis",
    "SeatSummary",
    "ValuedAction",
    "analyse_decisions",
    "analyse_record",
]

NOISE = 1.0
"""Standard errors within which a loss counts as none (see the module docstring)."""
BATCH = 8
"""Decisions valued in one call (the search's worlds do not depend on the batch)."""


class DecisionLike(Protocol):
    """A decision of a game, as :func:`fourhundred_env.game_records.files.decisions` gives it:
    the table (a Table at the decision: ``engine`` and ``state``), who decided and what was
    played (action text)."""

    hand: int
    move: int
    seat: int
    table: Any
    action: str


@dataclass(frozen=True)
class ValuedAction:
    """One legal action and its value (match-win chance of the deciding team, or points),
    with its standard error; None for a forced decision, which is not valued."""

    action: str
    value: float | None
    stderr: float | None


@dataclass(frozen=True)
class DecisionAnalysis:
    """One decision analysed (see the module docstring)."""

    hand: int
    """The hand of the match (as the record numbers it)."""
    move: int
    """The decision's number within its hand (as the record numbers it)."""
    seat: int
    """The deciding seat (0-3)."""
    phase: str
    """``"bid"`` or ``"play"``."""
    taken: str
    """The action played (``"4"``, ``"redeal"``, ``"AH"``)."""
    best: str
    """The legal action of highest value (the one taken where it ties)."""
    actions: tuple[ValuedAction, ...]
    """Every legal action with its value, in action-id order (cards, then bids)."""
    loss: float
    """Value of the best minus that of the action taken (0 or more)."""
    loss_stderr: float
    """Standard error of `loss` (paired world by world)."""
    lost: float
    """`loss` where it is more than `noise` standard errors, else 0: what the sums count."""
    worlds: int
    """Worlds (play-outs per action) the values rest on; 0 for a forced decision."""

    @property
    def forced(self) -> bool:
        """Only one legal action: nothing to choose, nothing lost."""
        return len(self.actions) == 1

    def value_of(self, action: str) -> float | None:
        """The value of a legal action given as text; FourHundredError for another."""
        for a in self.actions:
            if a.action == action:
                return a.value
        raise FourHundredError(
            f"hand {self.hand}, move {self.move}: action {action!r} is not legal there: "
            f"expected one of {[a.action for a in self.actions]}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The decision as plain JSON values (NaN as None)."""
        return {
            "hand": self.hand, "move": self.move, "seat": self.seat, "phase": self.phase,
            "taken": self.taken, "best": self.best, "loss": _num(self.loss),
            "loss_stderr": _num(self.loss_stderr), "lost": _num(self.lost),
            "worlds": self.worlds, "forced": self.forced,
            "actions": [{"action": a.action, "value": _num(a.value), "stderr": _num(a.stderr)}
                        for a in self.actions],
        }  # fmt: skip


@dataclass(frozen=True)
class SeatSummary:
    """What one seat lost over the decisions analysed."""

    seat: int
    """The seat (0-3)."""
    label: str | None
    """Who played it, as the record names it (None if it does not)."""
    hands: int
    """Hands in which the seat made a decision analysed."""
    decisions: int
    """Its decisions analysed (forced ones included)."""
    lost: float
    """Sum of its counted losses (`DecisionAnalysis.lost`)."""
    mistakes: tuple[DecisionAnalysis, ...]
    """Its decisions with a counted loss, the largest first (at most `top`)."""

    @property
    def lost_per_hand(self) -> float:
        """`lost` / `hands` (0 without hands)."""
        return self.lost / self.hands if self.hands else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON values; mistakes as (hand, move) pairs."""
        return {
            "seat": self.seat, "label": self.label, "hands": self.hands,
            "decisions": self.decisions, "lost": self.lost, "lost_per_hand": self.lost_per_hand,
            "mistakes": [{"hand": d.hand, "move": d.move} for d in self.mistakes],
        }  # fmt: skip


@dataclass(frozen=True)
class Analysis:
    """A game's decisions analysed by one agent (see the module docstring)."""

    agent: str
    """The agent spec that valued the actions."""
    seed: int
    """The seed of its worlds."""
    unit: str
    """``"match-win"`` (values are the deciding team's chance to win the match) or ``"points"``."""
    noise: float
    """Standard errors within which a loss counted as none."""
    decisions: tuple[DecisionAnalysis, ...]
    """Every decision analysed, in the game's order."""
    seats: tuple[SeatSummary, ...]
    """Seats 0-3."""

    @property
    def hands(self) -> int:
        """Distinct hands among the decisions."""
        return len({d.hand for d in self.decisions})

    def mistakes(self, top: int = 10) -> list[DecisionAnalysis]:
        """The `top` decisions with the largest counted losses, over all seats."""
        return _largest(self.decisions, top)

    def to_dict(self) -> dict[str, Any]:
        """The analysis as plain JSON values."""
        return {
            "agent": self.agent, "seed": self.seed, "unit": self.unit, "noise": self.noise,
            "hands": self.hands, "seats": [s.to_dict() for s in self.seats],
            "decisions": [d.to_dict() for d in self.decisions],
        }  # fmt: skip

    def to_json(self, indent: int | None = 1) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def table(self, top: int = 5) -> str:
        """A readable summary: per seat the value lost per hand, then the `top` largest
        mistakes with the taken and best actions' values. Match-win values are shown as
        percentages, losses as percentage points."""
        pct = self.unit == "match-win"
        scale, unit = (100.0, "pp") if pct else (1.0, "points")

        def val(x: float | None) -> str:
            return "-" if x is None or math.isnan(x) else (f"{x * 100:.1f}%" if pct else f"{x:.2f}")

        hands = f"{self.hands} hand{'s' if self.hands != 1 else ''}"
        labels = [s.label if s.label is not None else "-" for s in self.seats]
        width = min(max(len("player"), *map(len, labels)), 40) + 2
        lines = [
            f"analysis by {self.agent} (seed {self.seed}): {len(self.decisions)} decisions in "
            f"{hands}; losses in {unit} of {'match-win chance' if pct else 'points'}, a loss "
            f"within {self.noise:g} standard error(s) counted as none",
            "",
            f"{'seat':<5}{'player':<{width}}{'hands':>6}{'decisions':>10}{'lost':>9}"
            f"{'lost/hand':>10}{'mistakes':>9}",
        ]
        for s, label in zip(self.seats, labels, strict=True):
            mistakes = sum(1 for d in self.decisions if d.seat == s.seat and d.lost > 0)
            lines.append(f"{s.seat:<5}{label[: width - 2]:<{width}}{s.hands:>6}{s.decisions:>10}"
                         f"{s.lost * scale:>9.2f}{s.lost_per_hand * scale:>10.2f}"
                         f"{mistakes:>9}")  # fmt: skip
        worst = self.mistakes(top)
        lines += ["", f"largest mistakes ({len(worst)} of at most {top}):"]
        if worst:
            lines.append(f"{'hand':>5}{'move':>6}{'seat':>6}  {'phase':<6}{'taken':>7}{'value':>8}"
                         f"{'best':>7}{'value':>8}  loss ± error")  # fmt: skip
        for d in worst:
            lines.append(
                f"{d.hand:>5}{d.move:>6}{d.seat:>6}  {d.phase:<6}{d.taken:>7}"
                f"{val(d.value_of(d.taken)):>8}{d.best:>7}{val(d.value_of(d.best)):>8}  "
                f"{d.loss * scale:.2f} ± {d.loss_stderr * scale:.2f} {unit}"
            )
        return "\n".join(lines)


def analyse_record(
    record: Any,
    agent: str | ActionValuer,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    hand: int | None = None,
    phases: Sequence[str] = ("bid", "play"),
    top: int = 5,
    noise: float = NOISE,
    max_decisions: int | None = None,
) -> Analysis:
    """The analysis of a game record (``GameRecord``) by `agent` (an agent spec, made under
    the record's rules with `seed`, or a valuer); see :func:`analyse_decisions`."""
    labels = getattr(record, "seats", None)
    return analyse_decisions(decisions(record), agent, seed, progress, labels, hand, phases,
                             top, noise, max_decisions)  # fmt: skip


def analyse_decisions(
    decisions: Iterable[DecisionLike],
    agent: str | ActionValuer,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    labels: Sequence[str | None] | None = None,
    hand: int | None = None,
    phases: Sequence[str] = ("bid", "play"),
    top: int = 5,
    noise: float = NOISE,
    max_decisions: int | None = None,
) -> Analysis:
    """The analysis of a game's decisions (``decisions(record)`` of
    :mod:`fourhundred_env.game_records.files`, or any objects with hand, move, seat, table and
    action) by `agent`: an agent spec (made by
    :func:`~fourhundred_agents.analysis.values.make_valuer` under the first decision's rules,
    its worlds from `seed`) or a valuer. Only the decisions of hand `hand` (if given) in `phases` ("bid",
    "play") are analysed. `progress(done, total)` is called as decisions are valued; `labels`
    names the seats' players; `top` bounds each seat's list of mistakes. A decision whose
    action is not legal at its table raises FourHundredError, and so do more than
    `max_decisions` decisions to analyse (None: no bound), before any is valued."""
    unknown = set(phases) - {"bid", "play"}
    if unknown or not phases:
        raise FourHundredError(f"phases={list(phases)}: expected some of 'bid', 'play'")
    if not noise >= 0:
        raise FourHundredError(f"noise={noise}: expected 0 or more standard errors")
    wanted = {Phase.BID: "bid" in phases, Phase.PLAY: "play" in phases}
    items = [d for d in decisions if hand is None or d.hand == hand]
    views = [_view(d) for d in items]
    keep = [j for j, v in enumerate(views) if wanted.get(Phase(int(v.phase[0])), False)]
    items, views = [items[j] for j in keep], [views[j] for j in keep]
    if hand is not None and not items:
        raise FourHundredError(f"hand {hand}: no decision of the game in it to analyse")
    if max_decisions is not None and len(items) > max_decisions:
        raise FourHundredError(
            f"{len(items):,} decisions to analyse: expected at most {max_decisions:,} (a hand "
            "or one phase analyses fewer; the bound can be raised)"
        )
    if isinstance(agent, str):
        spec = agent
        rules = items[0].table.rules if items else None
        valuer = make_valuer(agent, rules, seed)
    else:
        spec = str(getattr(agent, "name", type(agent).__name__))
        valuer = agent
    unit = str(getattr(valuer, "unit", "match-win"))
    out: list[DecisionAnalysis] = []
    total = len(items)
    if progress is not None:
        progress(0, total)
    for lo in range(0, total, BATCH):
        chunk = range(lo, min(lo + BATCH, total))
        choice = [j for j in chunk if views[j].legal_mask[0].sum() > 1]
        values = None
        if choice:
            values = valuer.value_actions(SeatView.concat([views[j] for j in choice]))
        for j in chunk:
            k = choice.index(j) if j in choice else None
            out.append(_analysed(items[j], views[j], values, k, noise))
        if progress is not None:
            progress(len(out), total)
    closer = getattr(getattr(valuer, "agent", valuer), "close", None)
    if isinstance(agent, str) and closer is not None:
        closer()
    return Analysis(spec, seed, unit, float(noise), tuple(out), _summaries(out, labels, top))


def _view(d: DecisionLike) -> SeatView:
    """The deciding seat's view at the decision, checked against the record's facts."""
    table = d.table
    state = table.state
    phase = int(state.phase[0])
    where = f"hand {d.hand}, move {d.move}"
    if phase not in (Phase.BID, Phase.PLAY):
        raise FourHundredError(f"{where}: the table is in phase {phase_name(phase)}: "
                               "expected a bid or a card to play")  # fmt: skip
    if int(state.to_play[0]) != d.seat:
        raise FourHundredError(f"{where}: seat {d.seat} decides but seat "
                               f"{int(state.to_play[0])} is to play")  # fmt: skip
    view = seat_view(table.engine, state)
    a = parse_action(d.action)
    if not view.legal_mask[0, a]:
        legal = [action_text(int(x)) for x in np.flatnonzero(view.legal_mask[0])]
        raise FourHundredError(f"{where}: seat {d.seat} played {d.action!r}, which is not "
                               f"legal there: expected one of {legal}")  # fmt: skip
    return view


def _analysed(d: DecisionLike, view: SeatView, values: ActionValues | None, k: int | None,
              noise: float) -> DecisionAnalysis:  # fmt: skip
    """One decision's analysis from its row k of `values` (None: forced, not valued)."""
    legal = np.flatnonzero(view.legal_mask[0])
    taken = parse_action(d.action)
    phase = phase_name(int(view.phase[0]))
    if values is None or k is None:
        acts = tuple(ValuedAction(action_text(int(a)), None, None) for a in legal)
        return DecisionAnalysis(d.hand, d.move, d.seat, phase, action_text(taken),
                                action_text(taken), acts, 0.0, 0.0, 0.0, 0)  # fmt: skip
    v = values.value[k]
    best = int(legal[int(np.argmax(np.where(np.isnan(v[legal]), -np.inf, v[legal])))])
    if v[best] == v[taken]:
        best = taken  # a tie keeps the action taken
    if best == taken:
        loss, se = 0.0, 0.0
    else:
        loss, se = values.difference(k, best, taken)
    lost = loss if loss > noise * se else 0.0
    acts = tuple(ValuedAction(action_text(int(a)), float(v[a]), float(values.stderr[k, a]))
                 for a in legal)  # fmt: skip
    return DecisionAnalysis(d.hand, d.move, d.seat, phase, action_text(taken), action_text(best),
                            acts, loss, se, lost, int(values.worlds[k]))  # fmt: skip


def _largest(decisions: Iterable[DecisionAnalysis], top: int) -> list[DecisionAnalysis]:
    """The `top` decisions of largest counted loss (> 0), largest first, ties in game order."""
    lossy = [d for d in decisions if d.lost > 0]
    return sorted(lossy, key=lambda d: -d.lost)[: max(top, 0)]


def _summaries(out: list[DecisionAnalysis], labels: Sequence[str | None] | None,
               top: int) -> tuple[SeatSummary, ...]:  # fmt: skip
    """Seats 0-3's summaries of the decisions analysed."""
    names = list(labels) if labels is not None else [None] * 4
    if len(names) != 4:
        raise FourHundredError(f"seat labels {names!r}: expected 4, one per seat")
    seats = []
    for seat in range(4):
        mine = [d for d in out if d.seat == seat]
        seats.append(SeatSummary(seat, names[seat], len({d.hand for d in mine}), len(mine),
                                 float(sum(d.lost for d in mine)), tuple(_largest(mine, top))))  # fmt: skip
    return tuple(seats)


def _num(x: float | None) -> float | None:
    """`x`, or None for None and NaN (JSON has no NaN)."""
    return None if x is None or math.isnan(x) else float(x)
