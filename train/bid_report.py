"""The bidding benchmark (``fourhundred bid-eval BIDDER --report``): one bidder against
``heuristic-v1``'s and ``minbid``'s bidding, with identical card play.

Two parts, both seeded and the same for every bidder:

- **Hands**: fixed match situations (:data:`SITUATIONS`, scores by seat; the bidder's
  partnership holds seats 0 and 2), each with every dealer and `deals` seeded deals. The
  bidder bids for seats 0 and 2, the play agent bids for seats 1 and 3 and plays every card.
  Per bidder: points per hand of a bidding seat, contracts made, hands thrown in, and the
  change of the team's match-win estimate per hand (agents/value/match_value.py), with 95%
  intervals; differences to the other bidders are paired (the same deals).
- **Matches**: duplicate tournaments to 41 of ``compose:bid=BIDDER,play=PLAY`` against
  ``compose:bid=heuristic-v1,play=PLAY`` and ``compose:bid=minbid,play=PLAY``: win rates with
  Wilson intervals (the tournament runner's own).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.engine import Engine
from fourhundred_env.loop import GameLoop
from fourhundred_env.rules import Rules

BASELINES = ("heuristic-v1", "minbid")
BIDDER_SEATS = (0, 2)


@dataclass(frozen=True)
class Situation:
    """A match situation: the four scores before the hand, by seat (the bidder: 0 and 2)."""

    name: str
    scores: tuple[int, int, int, int]


SITUATIONS = (
    Situation("start", (0, 0, 0, 0)),
    Situation("ahead", (33, 12, 24, 6)),
    Situation("behind", (12, 33, 6, 24)),
    Situation("close race", (36, 34, 27, 31)),
    Situation("partner below zero", (38, 14, -6, 20)),
    Situation("thirty rule", (31, 18, 22, 15)),
    Situation("opponent at 41, partner not positive", (10, 45, 12, -4)),
)
"""The fixed situations of the hands part; each is played with every dealer."""


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else float("nan")


def situation_tables(deals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores (n, 4) int64, dealer (n,) int64, situation (n,) int64) for n = situations x
    4 dealers x `deals` tables, in that order."""
    per = 4 * deals
    scores = np.repeat(np.array([s.scores for s in SITUATIONS], np.int64), per, axis=0)
    dealer = np.tile(np.repeat(np.arange(4), deals), len(SITUATIONS))
    situation = np.repeat(np.arange(len(SITUATIONS)), per)
    return scores, dealer, situation


def bid_hands(bidder: str, play: str, deals: int, seed: int, rules: Rules) -> dict[str, np.ndarray]:
    """The hands part for one bidder: per table, the points of the bidding seats (n, 2), the
    contracts they bid and made (n, 2) bool, thrown in (n,), their team's change of match-win
    estimate (n,), their bids (n, 2) and the situation index (n,)."""
    from fourhundred_agents.bid_analysis import play_hand
    from fourhundred_agents.registry import make_agent
    from fourhundred_agents.value.match_value import hand_value_change
    from fourhundred_agents.value.matchwin import MatchWin

    engine = Engine(rules)
    scores, dealer, situation = situation_tables(deals)
    n = scores.shape[0]
    state = engine.init(n, seed=seed, dealer=dealer, scores=scores)
    # seat seeds as the tournament's: one agent instance per seat, fed only that seat's view
    bid_agents = [make_agent(bidder, rules, seed + s, decides="bid") if s in BIDDER_SEATS
                  else make_agent(play, rules, seed + s) for s in range(4)]  # fmt: skip
    play_agents = [make_agent(play, rules, seed + 10 + s) for s in range(4)]
    for agent in (*bid_agents, *play_agents):
        agent.reset(n)
    GameLoop(engine, state).deal()
    play_hand(engine, state, bid_agents, play_agents)
    seats = list(BIDDER_SEATS)
    thrown = state.thrown_in.copy()
    bids = state.bids[:, seats].astype(np.int64)
    made = (state.tricks_won[:, seats] >= bids) & ~thrown[:, None]
    target = np.full(n, rules.target)  # every situation is below the target
    change = hand_value_change(engine, MatchWin.for_rules(rules), scores, state.hand_points,
                               target, dealer, ~thrown)  # fmt: skip
    return {
        "points": state.hand_points[:, seats].astype(np.float64),
        "made": made,
        "thrown_in": thrown,
        "value_change": change[:, BIDDER_SEATS[0]],
        "bids": bids,
        "situation": situation,
    }


def mean_interval(x: np.ndarray) -> tuple[float, float, float]:
    """Mean and its 95% normal interval."""
    x = np.asarray(x, np.float64)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def _wilson(k: float, n: float) -> tuple[float, float, float]:
    """Share k/n and its Wilson 95% interval."""
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(p), float(centre - half), float(centre + half)


def hands_summary(h: dict[str, np.ndarray]) -> dict[str, Any]:
    """Points per hand (per bidding seat), contracts made, thrown in and match-value change,
    each with its 95% interval."""
    played = ~h["thrown_in"]
    contracts = int(played.sum()) * len(BIDDER_SEATS)
    return {
        "hands": int(h["thrown_in"].size),
        "points_per_hand": mean_interval(h["points"].mean(axis=1)),
        "made": _wilson(float(h["made"].sum()), contracts),
        "thrown_in": _wilson(float(h["thrown_in"].sum()), h["thrown_in"].size),
        "value_change": mean_interval(h["value_change"]),
        "mean_bid": float(h["bids"][played].mean()) if played.any() else float("nan"),
    }


def bid_report(
    bidder: str,
    play: str = "heuristic-v1",
    deals: int = 256,
    matches: int = 200,
    seed: int = 0,
    rules: Rules | str = "wiki",
    out_dir: str | Path = "runs/bid-eval",
    workers: int = 1,
) -> dict[str, Any]:
    """The whole report (see the module docstring) as a dict; tournaments' files in
    `out_dir`. ``matches=0`` skips the matches part."""
    from fourhundred_train.evaluate import evaluate_pair

    rules = Rules.preset(rules) if isinstance(rules, str) else rules
    hands = {spec: bid_hands(spec, play, deals, seed, rules) for spec in (bidder, *BASELINES)}
    report: dict[str, Any] = {
        "bidder": bidder, "play": play, "seed": seed, "deals": deals, "matches": matches,
        "situations": [s.name for s in SITUATIONS],
        "hands": {spec: hands_summary(h) for spec, h in hands.items()},
        "differences": {}, "by_situation": {}, "match_win": {},
    }  # fmt: skip
    mine = hands[bidder]
    for base in BASELINES:
        other = hands[base]
        report["differences"][base] = {
            "points_per_hand": mean_interval(
                mine["points"].mean(axis=1) - other["points"].mean(axis=1)
            ),
            "value_change": mean_interval(mine["value_change"] - other["value_change"]),
        }
    for k, s in enumerate(SITUATIONS):
        rows = mine["situation"] == k
        report["by_situation"][s.name] = {
            spec: {
                "points_per_hand": float(h["points"][rows].mean()),
                "value_change": float(h["value_change"][rows].mean()),
                "thrown_in": float(h["thrown_in"][rows].mean()),
                "mean_bid": _mean(h["bids"][rows & ~h["thrown_in"]]),  # NaN: every hand thrown in
            }
            for spec, h in hands.items()
        }
    if matches > 0:
        me = f"compose:bid={bidder},play={play}"
        for base in BASELINES:
            them = f"compose:bid={base},play={play}"
            if them == me:  # the same bids: nothing to measure
                continue
            folder = Path(out_dir) / f"vs-{base}"
            r = evaluate_pair(me, them, matches, seed, rules, folder, workers=workers)
            report["match_win"][base] = {
                "rate": r["eval/win_rate"], "low": r["eval/win_rate_low"],
                "high": r["eval/win_rate_high"], "games": int(r["eval/games"]),
            }  # fmt: skip
    return report


class BidEval:
    """The hands part of the report as a trainer's ``eval/bid_*`` scalars: a bidder (bidding
    for seats 0 and 2) against ``heuristic-v1``'s bids on the same hands (`deals` per
    situation and dealer, seeded by `seed`, the same at every evaluation), the cards (and the
    other seats' bids) by `play`. ``heuristic-v1``'s hands are played once and kept. Its own
    seeds only: it draws nothing from a trainer's generators. `off` says why it is off
    (these rules have no match-win estimate), else None."""

    BASELINE = "heuristic-v1"

    def __init__(self, play: str, deals: int, seed: int, rules: Rules | str) -> None:
        from fourhundred_agents.value.matchwin import MatchWin
        from fourhundred_env.errors import FourHundredError

        self.play, self.deals, self.seed = play, deals, seed
        self.rules = Rules.preset(rules) if isinstance(rules, str) else rules
        self._baseline: dict[str, np.ndarray] | None = None
        self.off: str | None = None
        try:  # dP(win) needs the match-win estimate of these rules
            MatchWin.for_rules(self.rules)
        except FourHundredError as e:
            self.off = str(e)

    def __call__(self, bidder: str) -> dict[str, float]:
        """The ``eval/bid_*`` scalars of `bidder` (an agent spec asked for its bids only):
        dP(win) (pp) and points per hand over heuristic-v1's bids with their paired 95%
        intervals, and the bidder's own contracts made, hands thrown in, points per hand and
        mean bid; {} when `off`."""
        if self.off is not None:
            return {}
        if self._baseline is None:
            self._baseline = bid_hands(self.BASELINE, self.play, self.deals, self.seed, self.rules)
        mine = bid_hands(bidder, self.play, self.deals, self.seed, self.rules)
        return bid_eval_scalars(mine, self._baseline)


def bid_eval_scalars(mine: dict[str, np.ndarray], base: dict[str, np.ndarray]) -> dict[str, float]:
    """``eval/bid_*`` scalars of a bidder's hands (`bid_hands`) against a baseline's on the
    same hands: what ``bid-eval --report`` prints of them (see `BidEval`)."""
    s = hands_summary(mine)
    dwin = mean_interval(100 * (mine["value_change"] - base["value_change"]))
    gain = mean_interval(mine["points"].mean(axis=1) - base["points"].mean(axis=1))
    out = {"eval/bid_hands": float(s["hands"]),
           "eval/bid_points_per_hand": s["points_per_hand"][0],
           "eval/bid_made_rate": s["made"][0], "eval/bid_thrown_in_rate": s["thrown_in"][0],
           "eval/bid_mean_bid": s["mean_bid"]}  # fmt: skip
    for tag, (m, lo, hi) in (("eval/bid_dwin_pp", dwin), ("eval/bid_points_gain", gain)):
        out.update({tag: m, f"{tag}_low": lo, f"{tag}_high": hi})
    return out


def format_report(report: dict[str, Any]) -> str:
    """The report as text: one table of the hands, the paired differences, the situations and
    the match win rates."""

    def iv(t: tuple[float, float, float], fmt: str = "+.3f", scale: float = 1.0) -> str:
        m, lo, hi = (scale * v for v in t)
        return f"{m:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"

    bidder, play = report["bidder"], report["play"]
    first = next(iter(report["hands"].values()))
    lines = [
        f"Bidding report: {bidder}  (cards played by {play}, seed {report['seed']})",
        "",
        f"Hands: {len(report['situations'])} match situations x 4 dealers x {report['deals']} "
        f"deals = {first['hands']:,} hands, the same for every bidder; the bidder bids for "
        "seats 0 and 2,",
        f"{play} for seats 1 and 3. Points per hand of a bidding seat; dP(win): change of the "
        "team's match-win estimate per hand, in percentage points (95% intervals).",
        "",
        f"  {'bidder':<44} {'pts/hand':>24} {'made %':>22} {'thrown in %':>22} "
        f"{'dP(win) pp':>24} {'mean bid':>8}",
    ]
    for spec, s in report["hands"].items():
        lines.append(
            f"  {spec[:44]:<44} {iv(s['points_per_hand']):>24} {iv(s['made'], '.1f', 100):>22} "
            f"{iv(s['thrown_in'], '.1f', 100):>22} {iv(s['value_change'], '+.2f', 100):>24} "
            f"{s['mean_bid']:>8.2f}"
        )
    lines.append("")
    for base, d in report["differences"].items():
        lines.append(
            f"  bidder - {base:<13} points per hand {iv(d['points_per_hand'])}   "
            f"dP(win) {iv(d['value_change'], '+.2f', 100)} pp"
        )
    lines += ["", "  By situation (pts/hand | dP(win) pp | thrown in % | mean bid):"]
    specs = list(report["hands"])
    lines.append(f"  {'situation':<38}" + "".join(f" {s[:30]:>30}" for s in specs))
    for name, row in report["by_situation"].items():
        cells = "".join(
            f" {row[s]['points_per_hand']:+6.2f} |{100 * row[s]['value_change']:+6.2f} |"
            f"{100 * row[s]['thrown_in']:5.1f} |{row[s]['mean_bid']:5.2f}"
            for s in specs
        )
        lines.append(f"  {name:<38}{cells}")
    if report["match_win"]:
        lines += [
            "",
            f"Matches to 41, duplicate, identical card play ({play}): "
            f"{report['matches']} duplicate matches per pairing, seed {report['seed']}",
        ]
        for base, m in report["match_win"].items():
            lines.append(
                f"  bids of {bidder} against {base}'s bids: won {100 * m['rate']:.1f}% "
                f"[{100 * m['low']:.1f}, {100 * m['high']:.1f}] of {m['games']} games"
            )
    return "\n".join(lines)


def _wrap_spec(spec: str, width: int = 100, lines: int = 2) -> str:
    """An agent spec on at most `lines` lines of `width` characters, broken after commas
    where it can be (it has no spaces), "…" at the end of the last line if it is longer."""
    out: list[str] = []
    while spec and len(out) < lines:
        cut = len(spec) if len(spec) <= width else spec.rfind(",", 0, width) + 1 or width
        out.append(spec[:cut])
        spec = spec[cut:]
    if spec:
        out[-1] = out[-1][: width - 1] + "…"
    return "\n".join(out)


def plot_bid_analysis(a: Any, path: str | Path) -> Path:
    """Draw an `fourhundred_agents.bid_analysis.BidAnalysis`: the bidder's probability of each legal bid,
    and each bid's play-out value (the seat's points and its team's match-win change, +-1
    standard error); for a search bidder also the value it maximizes, for a fitted-Q network
    its value of each bid (each bid's gap to the best). Returns the PNG's path."""
    from fourhundred_tournament.figures import new_figure, save_figure

    labels = a.labels()
    y = np.arange(len(labels))
    own = []  # the bidder's own value of each bid, where it has one: (values, its name)
    if a.search_value is not None:  # what the search maximizes (pp of match-win chance)
        own.append((100 * a.search_value, "search's own value, minus its best (pp)"))
    if a.net_value is not None:  # a fitted-Q network's values
        unit = "pts" if a.net_value_unit.startswith("points") else "pp"
        own.append((a.net_value, f"network's value, minus its best ({unit})"))
    fig = new_figure(10.5 + 3.0 * len(own), 0.5 * len(labels) + 2.0)
    axes = fig.subplots(1, 3 + len(own), sharey=True)
    colours = ["#c44e52" if act == a.chosen else "#4c72b0" for act in a.actions]
    axes[0].barh(y, 100 * a.probs, color=colours)
    axes[0].set_xlabel("policy probability (%)")
    axes[0].set_xlim(0, 100)
    axes[1].barh(y, a.points, xerr=a.points_se, color=colours, ecolor="#444444")
    axes[1].set_xlabel("seat's points (play-outs)")
    axes[2].barh(y, 100 * a.value_change, xerr=100 * a.value_change_se, color=colours,
                 ecolor="#444444")  # fmt: skip
    axes[2].set_xlabel("team's match-win change (pp)")
    for ax, (values, name) in zip(axes[3:], own, strict=True):  # only the gaps count
        gaps = values - values.max()
        ax.barh(y, gaps, color=colours)
        ax.plot(np.zeros(1), y[a.actions == a.chosen], "o", color="#c44e52")
        ax.set_xlim(1.05 * gaps.min() - 0.1, -0.05 * gaps.min() + 0.1)
        ax.set_xlabel(name)
    for ax in axes[1:]:
        ax.axvline(0, color="black", linewidth=0.8)
    for ax in axes:
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, labels)
    axes[0].set_ylabel("bid")
    axes[0].invert_yaxis()
    pos = a.position
    from fourhundred_env.cards import hand_text

    fig.suptitle(
        f"{_wrap_spec(a.bidder)}\nseat {pos.seat}, dealer {pos.dealer}, scores {list(pos.scores)}, "
        f"bids so far {list(pos.bids) or 'none'}; hand {hand_text(pos.hands[pos.seat])}\n"
        f"red: the bid it makes; {a.worlds} worlds per bid, cards by {a.play}",
        fontsize=9,
    )
    return save_figure(fig, path)
