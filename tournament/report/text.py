"""The report (a :func:`~fourhundred_tournament.report.statistics.build_report` dict) as text tables:
leaderboard, pairwise matrix, duplicate matches, times, mirror and seat checks, conduct."""

from __future__ import annotations

import textwrap
from typing import Any


def _pct(x: float) -> str:
    return "   -" if x != x else f"{100 * x:5.1f}"


def _num(x: float, fmt: str) -> str:
    return "-" if x != x else format(x, fmt)


def format_report(report: dict[str, Any]) -> str:
    """The report as text: leaderboard, pairwise matrix, mirror and seat checks, conduct."""
    c = report["config"]
    fewest = c.get("matches_fewest", c["matches"])
    per_pairing = f"{c['matches']}" if fewest == c["matches"] else f"{fewest} to {c['matches']}"
    lines = [
        f"Tournament: {len(c['agents'])} agents, {per_pairing} duplicate matches per pairing "
        f"({report['games']} of {report['games_expected']} games played), rules {c['rules_name']}, "
        f"seed {c['seed']}",
        *_format_names(report),
        "",
        *_format_leaderboard(report),
        *_format_pairwise(report),
        *_format_checks(report),
        *_format_conduct(report),
        f"Elo: {report['elo_method']}.",
    ]
    return "\n".join(lines)


def _format_names(report: dict[str, Any]) -> list[str]:
    """A line per agent shown by a name (``name=``) saying which spec it stands for."""
    named = sorted((n, label) for label, n in report["config"].get("names", {}).items()
                   if n != label)  # fmt: skip
    return [f"  {n} = {label}" for n, label in named]


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
        lines.append(
            f"{r['rank']:>2} {r['agent']:<{width}} {_num(r['elo'], '6.0f'):>6} {ci:>13}  "
            f"{_pct(r['win_rate'])} {wil:>13} {r['games']:>6} "
            f"{_num(r['points_per_hand'], '+8.2f'):>8} {_pct(r['bid_success']):>6} "
            f"{_num(r['mean_bid'], '7.2f'):>7} {_num(r['thrown_in_per_100'], '10.1f'):>10} "
            f"{_num(r['ms_per_move'], '7.3f'):>7} {r['forfeits']:>8}"
        )
    lines += textwrap.wrap(_LEGEND, 100)
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
        for r in board:
            vals = [report["matrix"][r["agent"]][b] for b in order]
            cells = "".join(f"{'-' if v is None else format(100 * v, '.1f'):>7}" for v in vals)
            lines.append(f"{r['rank']:>2} {r['agent']:<{width}}{cells}")
    if report["pairwise"]:
        lines += [
            "",
            "Duplicate matches (same deals, partnerships swapped): sweeps / splits / swept",
        ]
        for p in report["pairwise"]:
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


def _games_of(p: dict[str, Any]) -> str:
    """The pairing's games as text: "N games", and of how many planned when incomplete."""
    planned = p.get("games_expected", p["games"])
    return f"{p['games']} games" + (f" (of {planned} planned)" if planned != p["games"] else "")


def _format_checks(report: dict[str, Any]) -> list[str]:
    """The mirror games (50% expected), the seat balance and the unfinished matches."""
    lines = []
    for m in report["mirror"]:
        ok = "consistent with 50%" if m["consistent_with_half"] else "NOT consistent with 50%"
        lines.append(
            f"Mirror {m['agent']} v {m['agent']}: first side {100 * m['rate']:.1f}% "
            f"[{100 * m['low']:.1f}, {100 * m['high']:.1f}] of {m['games']} games ({ok})"
        )
    sb = report["seat_balance"]
    if sb["team0"]["games"]:
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
        lines.append(
            f"  e.g. {e['agent']} seat {e['seat']}, match {e['match_id']}/{e['orientation']} "
            f"hand {e['hand_index']}: {e['kind']}: {e['detail'][:160]}"
        )
    return lines
