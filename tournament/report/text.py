"""The report (a :func:`~fourhundred_tournament.report.statistics.build_report` dict) as text tables:
leaderboard, pairwise matrix, duplicate matches, times, mirror and seat checks, conduct.

Every line fits in :data:`MAX_WIDTH` columns where the names allow: notes are wrapped, and
tables whose agents' names would make them wider show each agent by a short label (A, B, ...
in leaderboard order) explained in a legend above them. A rate over games that all stopped
at ``max_hands`` (draws) is no win rate: those say "drawn" instead."""

from __future__ import annotations

import copy
import textwrap
from typing import Any

MAX_WIDTH = 120
"""The widest line the report's tables aim for, in columns (a terminal's width)."""
NOTE_WIDTH = 100
"""Where the notes below a table are wrapped."""


def _pct(x: float) -> str:
    return "   -" if x != x else f"{100 * x:5.1f}"


def _num(x: float, fmt: str) -> str:
    return "-" if x != x else format(x, fmt)


def format_report(report: dict[str, Any]) -> str:
    """The report as text: leaderboard, pairwise matrix, mirror and seat checks, conduct."""
    c = report["config"]
    fewest = c.get("matches_fewest", c["matches"])
    per_pairing = f"{c['matches']}" if fewest == c["matches"] else f"{fewest} to {c['matches']}"
    names = _format_names(report)
    tables = [*_format_leaderboard(report), *_format_pairwise(report)]
    if max(map(len, tables), default=0) > MAX_WIDTH:  # long names: short labels and a legend
        short = {r["agent"]: _short_label(i) for i, r in enumerate(report["leaderboard"])}
        names = _format_legend(report, short)
        report = _relabelled(report, short)
        tables = [*_format_leaderboard(report), *_format_pairwise(report)]
    lines = [
        f"Tournament: {len(c['agents'])} agents, {per_pairing} duplicate matches per pairing "
        f"({report['games']} of {report['games_expected']} games played), rules {c['rules_name']}, "
        f"seed {c['seed']}",
        *_format_all_drawn(report),
        *names,
        "",
        *tables,
        *_format_checks(report),
        *_format_conduct(report),
        *textwrap.wrap(f"Elo: {report['elo_method']}.", NOTE_WIDTH),
    ]
    return "\n".join(lines)


def _format_names(report: dict[str, Any]) -> list[str]:
    """A line per agent shown by a name (``name=``) saying which spec it stands for."""
    named = sorted((n, label) for label, n in report["config"].get("names", {}).items()
                   if n != label)  # fmt: skip
    return [f"  {n} = {label}" for n, label in named]


def _short_label(index: int) -> str:
    """A, B, ..., Z, then A2, B2, ...: the `index`-th agent's label in a table too narrow for
    its name."""
    letter, lap = chr(ord("A") + index % 26), index // 26
    return letter if lap == 0 else f"{letter}{lap + 1}"


def _format_legend(report: dict[str, Any], short: dict[str, str]) -> list[str]:
    """What each short label stands for: the agent's name (and, for a ``name=``, its spec)."""
    specs = {n: label for label, n in report["config"].get("names", {}).items()}
    lines = ["Agents (their names are too long for the tables):"]
    for agent, label in short.items():
        spec = specs.get(agent, agent)
        lines.append(f"  {label} = {agent}" + (f" = {spec}" if spec != agent else ""))
    return lines


def _relabelled(report: dict[str, Any], short: dict[str, str]) -> dict[str, Any]:
    """A copy of `report` whose agents are shown by their short labels (`short`, by name)."""
    out = copy.deepcopy(report)
    for row in out["leaderboard"]:
        row["agent"] = short[row["agent"]]
    for entry in out["pairwise"]:
        entry["agent"], entry["opponent"] = short[entry["agent"]], short[entry["opponent"]]
    for entry in out["mirror"]:
        entry["agent"] = short[entry["agent"]]
    out["matrix"] = {
        short[a]: {short[b]: v for b, v in row.items()} for a, row in report["matrix"].items()
    }
    events = out["conduct"]["events_by_agent"]
    out["conduct"]["events_by_agent"] = {short.get(a, a): v for a, v in events.items()}
    for e in out["conduct"]["examples"]:
        e["agent"] = short.get(e["agent"], e["agent"])
    return out


def _all_drawn(entry: dict[str, Any]) -> bool:
    """Every game of `entry` (a row, pairing or mirror) stopped at max_hands: draws, no rate."""
    return entry["games"] > 0 and entry.get("unfinished", 0) == entry["games"]


def _format_all_drawn(report: dict[str, Any]) -> list[str]:
    """A line saying that no game was decided, when every game stopped at max_hands."""
    if not (report["games"] and report["unfinished"] == report["games"]):
        return []
    return [
        f"Every game stopped at {_hands(report['config']['max_hands'])} unfinished: all "
        f"{report['games']} are draws, so there are no win rates (raise --max-hands)."
    ]


_LEGEND = (
    "Elo with its 95% interval (see the last line); win% with its Wilson 95% interval; pts/hand: points "
    "per hand played; made%: contracts made; avg-bid: mean bid; thrown/100: hands thrown in "
    "that the agent caused, per 100; ms/move: agent time per decision; forfeits: contracts "
    "forfeited (conduct)."
)


def _format_leaderboard(report: dict[str, Any]) -> list[str]:
    """The leaderboard table: its head (one word per column), a rule, a line per agent with
    its name in full, and a legend of the columns."""
    width = max([5, *(len(r["agent"]) for r in report["leaderboard"])])
    head = (
        f"{'#':>2} {'agent':<{width}} {'Elo':>6} {'Elo-95%':>13}  {'win%':>5} {'win-95%':>13} "
        f"{'games':>6} {'pts/hand':>8} {'made%':>6} {'avg-bid':>7} {'thrown/100':>10} "
        f"{'ms/move':>7} {'forfeits':>8}"
    )
    lines = [head, "-" * len(head)]
    for r in report["leaderboard"]:
        ci = f"[{_num(r['elo_low'], '.0f')}, {_num(r['elo_high'], '.0f')}]"
        wil = f"[{_pct(r['win_low']).strip()}, {_pct(r['win_high']).strip()}]"
        win = _pct(r["win_rate"])
        if _all_drawn(r):
            win, wil = _pct(float("nan")), "all drawn"
        lines.append(
            f"{r['rank']:>2} {r['agent']:<{width}} {_num(r['elo'], '6.0f'):>6} {ci:>13}  "
            f"{win:>5} {wil:>13} {r['games']:>6} "
            f"{_num(r['points_per_hand'], '+8.2f'):>8} {_pct(r['bid_success']):>6} "
            f"{_num(r['mean_bid'], '7.2f'):>7} {_num(r['thrown_in_per_100'], '10.1f'):>10} "
            f"{_num(r['ms_per_move'], '7.3f'):>7} {r['forfeits']:>8}"
        )
    lines += textwrap.wrap(_LEGEND, NOTE_WIDTH)
    return lines


def _format_pairwise(report: dict[str, Any]) -> list[str]:
    """The win-rate matrix in leaderboard order (columns by rank, so that long names fit),
    then each pairing's duplicate matches."""
    lines = []
    board = report["leaderboard"]
    order = [r["agent"] for r in board]
    if order:
        lines += ["", "Pairwise win rate, row against column (%; columns by leaderboard #):"]
        width = max([5, *(len(a) for a in order)])
        lines.append(f"{'':>2} {'':<{width}}" + "".join(f"{r['rank']:>7}" for r in board))
        drawn = {
            frozenset((p["agent"], p["opponent"])) for p in report["pairwise"] if _all_drawn(p)
        }
        drawn |= {frozenset((m["agent"],)) for m in report["mirror"] if _all_drawn(m)}
        for r in board:
            vals = [report["matrix"][r["agent"]][b] for b in order]
            cells = "".join(
                f"{_cell(v, frozenset((r['agent'], b)) in drawn):>7}"
                for v, b in zip(vals, order, strict=True)
            )
            lines.append(f"{r['rank']:>2} {r['agent']:<{width}}{cells}")
    if report["pairwise"]:
        lines += [
            "",
            "Duplicate matches (same deals, partnerships swapped): sweeps / splits / swept",
        ]
        for p in report["pairwise"]:
            if _all_drawn(p):
                lines.append(
                    f"  {p['agent']} v {p['opponent']}: all {_games_of(p)} drawn (stopped at "
                    f"{_hands(report['config']['max_hands'])})"
                )
                continue
            lines.append(
                f"  {p['agent']} v {p['opponent']}: {100 * p['rate']:.1f}% "
                f"[{100 * p['low']:.1f}, {100 * p['high']:.1f}] of {_games_of(p)}; "
                f"{p['sweeps']} / {p['splits']} / {p['swept']} of {p['duplicate_matches']}"
            )
    timed = [r for r in report["leaderboard"] if r.get("ms_p50") == r.get("ms_p50")]
    if timed:
        lines += ["", "Time per decision, ms (mean; median, 90th, 99th percentile, maximum):"]
        for r in timed:
            lines.append(
                f"  {r['agent']}: {r['ms_per_move']:.3f}; {r['ms_p50']:.3g}, {r['ms_p90']:.3g}, "
                f"{r['ms_p99']:.3g}, {r['ms_max']:.3g}"
            )
    return lines


def _hands(n: int) -> str:
    return f"{n} hand" + ("s" if n != 1 else "")


def _cell(rate: float | None, drawn: bool) -> str:
    """A cell of the win-rate matrix: the rate in %, "-" without games, "drawn" when every
    game stopped at max_hands."""
    if rate is None:
        return "-"
    return "drawn" if drawn else format(100 * rate, ".1f")


def _games_of(p: dict[str, Any]) -> str:
    """The pairing's games as text: "N games", and of how many planned when incomplete."""
    planned = p.get("games_expected", p["games"])
    return f"{p['games']} games" + (f" (of {planned} planned)" if planned != p["games"] else "")


def _format_checks(report: dict[str, Any]) -> list[str]:
    """The mirror games (50% expected), the seat balance and the unfinished matches."""
    lines = []
    for m in report["mirror"]:
        if _all_drawn(m):
            lines.append(f"Mirror {m['agent']} v {m['agent']}: all {m['games']} games drawn")
            continue
        ok = "consistent with 50%" if m["consistent_with_half"] else "NOT consistent with 50%"
        lines.append(
            f"Mirror {m['agent']} v {m['agent']}: first side {100 * m['rate']:.1f}% "
            f"[{100 * m['low']:.1f}, {100 * m['high']:.1f}] of {m['games']} games ({ok})"
        )
    sb = report["seat_balance"]
    if sb["team0"]["games"] and report["unfinished"] < report["games"]:
        lines.append(
            f"Seat balance: team 0 (seats 0+2) won {100 * sb['team0']['rate']:.1f}% "
            f"[{100 * sb['team0']['low']:.1f}, {100 * sb['team0']['high']:.1f}]; the first "
            f"dealer's team {100 * sb['first_dealer_team']['rate']:.1f}% "
            f"[{100 * sb['first_dealer_team']['low']:.1f}, {100 * sb['first_dealer_team']['high']:.1f}]"
        )
    lines.append(
        f"Unfinished matches (stopped at {report['config']['max_hands']} hands, counted as "
        f"draws): {report['unfinished']}"
    )
    return lines


def _format_conduct(report: dict[str, Any]) -> list[str]:
    """Conduct events by agent, with a few examples, or a line saying there were none."""
    cond = report["conduct"]
    if not cond["events_by_agent"]:
        return ["Conduct: no forfeits, no slow moves."]
    lines = ["Conduct events (forfeits: contract scored as missed, fallback move played):"]
    for agent, kinds in sorted(cond["events_by_agent"].items()):
        lines.append(f"  {agent}: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    for e in cond["examples"][:3]:
        lines += textwrap.wrap(
            f"  e.g. {e['agent']} seat {e['seat']}, match {e['match_id']}/{e['orientation']} "
            f"hand {e['hand_index']}: {e['kind']}: {e['detail'][:160]}",
            MAX_WIDTH, subsequent_indent="    ", drop_whitespace=False,
        )  # fmt: skip
    return lines
