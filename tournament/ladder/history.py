"""A ladder's report, from its database alone: the rating list now, the ratings after every
event, each pairing's games, as a JSON-ready dict (:func:`ladder_report`) and as text
(:func:`format_ladder`).

The ratings after event k are the Bradley-Terry fit (:func:`fourhundred_tournament.ratings.rate_agents`) of
the games of the pairings planned by events 1 to k, whatever their numbers of matches: a
pairing of 10 matches weighs 20 games, one of 100 weighs 200, and each interval is the wider of
the bootstrap over duplicate matches and the posterior's normal approximation, so a pairing of
few matches, a sweep above all, leaves the interval wide. Retired bots keep their games and
their rating (marked retired); the scale's zero is the ladder's anchor (1500) when it has one
and that bot is on the list by then, else the mean of the bots rated. Bots are keyed by
label; each is shown by its display name (``name``: its ``name=``, else the label).
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from typing import Any

from fourhundred_env.rules import Rules
from fourhundred_tournament.db import ResultsDB, check_values, read_names
from fourhundred_tournament.db.ladder import Ladder, read_ladder
from fourhundred_tournament.ratings import ELO_PER_NAT, RATING_METHOD, rate_agents, wilson_interval

__all__ = ["format_ladder", "game_scores", "ladder_report"]

_HISTORY_COLUMNS = 8  # events shown in the text's history table (all are in the JSON)


def game_scores(db: ResultsDB) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """Per pairing of two different bots, (match_id, score of pair_a) of every finished game
    (1 won, 0.5 unfinished at max_hands, 0 lost)."""
    out: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    rows = db.query(
        "SELECT pair_a, pair_b, match_id, orientation, finished, winner_team FROM matches "
        "WHERE pair_a != pair_b ORDER BY pair_a, pair_b, match_id, orientation"
    )
    for a, b, m, o, finished, wteam in rows:
        out[(a, b)].append((int(m), 0.5 if not finished else float(wteam == o)))
    return out


def ladder_report(
    db: ResultsDB,
    bootstrap: int = 1000,
    prior: float = 1.0,
    anchor: str | None = None,
) -> dict[str, Any]:
    """Everything the ladder `db` holds (see the module docstring). `anchor`: the bot pinned
    at 1500 (default: the ladder's own, else the mean is 1500)."""
    ladder = read_ladder(db)
    check_values(db)  # a damaged or edited row: one line, nothing reported
    given = read_names(db.path, db.meta())
    names = {b.label: given.get(b.label, b.label) for b in ladder.bots}
    scores = game_scores(db)
    anchor = anchor if anchor is not None else ladder.settings.get("anchor")
    by_name = {name: label for label, name in names.items()}
    anchor = anchor if anchor in names else by_name.get(anchor, anchor)  # a name: its bot
    seed = int(ladder.settings["seed"])
    events = []
    for e in ladder.events:
        labels = [b.label for b in ladder.bots if _added_by(ladder, b.label) <= e.event]
        pairs = ladder.pairings_upto(e.event)
        games = {p: scores.get(p, []) for p in pairs if p[0] != p[1]}
        ratings = rate_agents(labels, games, prior=prior, bootstrap=bootstrap, seed=seed,
                              anchor=anchor if anchor in labels else None)  # fmt: skip
        events.append({
            "event": e.event, "kind": e.kind, "labels": list(e.labels), "retired": list(e.retired),
            "matches": e.matches, "started": e.started, "finished": e.finished, "note": e.note,
            "pairings": sum(1 for p, (ev, _) in ladder.pairings.items() if ev == e.event),
            "on_ladder": ladder.active(e.event),
            "ratings": {a: {"elo": ratings["elo"][a], "low": ratings["low"][a],
                            "high": ratings["high"][a]} for a in labels},
        })  # fmt: skip
    return {
        "file": str(ladder.path),
        "is_ladder": ladder.is_ladder,
        "rules": Rules.from_dict(ladder.settings["rules"]).name,
        "seed": seed,
        "max_hands": int(ladder.settings["max_hands"]),
        "anchor": anchor,
        "names": names,
        "bots": _bots(ladder, scores, events[-1]["ratings"] if events else {}, names),
        "events": events,
        "pairings": _pairings(ladder, scores),
        "method": RATING_METHOD.format(prior=prior, per_nat=ELO_PER_NAT, bootstrap=bootstrap),
    }


def _added_by(ladder: Ladder, label: str) -> int:
    return min(e.event for e in ladder.events if label in e.labels and e.kind != "remove")


def _bots(
    ladder: Ladder,
    scores: dict[tuple[str, str], list[tuple[int, float]]],
    now: dict[str, Any],
    names: dict[str, str],
) -> list[dict[str, Any]]:
    """The rating list after the last event: bots on the ladder first, best first."""
    active = ladder.active()
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (a, b), games in scores.items():
        if (a, b) not in ladder.pairings:
            continue
        s = sum(x for _, x in games)
        totals[a][0] += s
        totals[a][1] += len(games)
        totals[b][0] += len(games) - s
        totals[b][1] += len(games)
    rows = []
    for bot in ladder.bots:
        score, n = totals[bot.label]
        low, high = wilson_interval(score, n)
        r = now.get(bot.label, {"elo": float("nan"), "low": float("nan"), "high": float("nan")})
        replaced = [e.event for e in ladder.events if bot.label in e.retired]
        rows.append({
            "label": bot.label, "name": names[bot.label], "spec": bot.spec,
            "version": bot.version, "files": bot.files,
            "added": bot.added, "active": bot.label in active,
            "retired": ladder.retired_at(bot.label), "replaced": bool(replaced), "info": bot.info,
            **r, "games": int(n), "score": score, "win_rate": score / n if n else float("nan"),
            "win_low": low, "win_high": high,
        })  # fmt: skip

    def order(r: dict[str, Any]) -> tuple:
        elo = r["elo"]
        return (not r["active"], elo != elo, -elo if elo == elo else 0.0, r["label"])

    rows.sort(key=order)
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def _pairings(
    ladder: Ladder, scores: dict[tuple[str, str], list[tuple[int, float]]]
) -> list[dict[str, Any]]:
    out = []
    for (a, b), (event, matches) in sorted(ladder.pairings.items(), key=lambda x: (x[1][0], x[0])):
        games = scores.get((a, b), [])
        s = sum(x for _, x in games)
        low, high = wilson_interval(s, len(games))
        out.append({
            "pair_a": a, "pair_b": b, "event": event, "matches": matches, "games": len(games),
            "games_expected": 2 * matches, "score_a": s,
            "rate": s / len(games) if games else float("nan"), "low": low, "high": high,
        })  # fmt: skip
    return out


# -- text ---------------------------------------------------------------------------------------
def _elo(x: float) -> str:
    return "-" if x != x else f"{x:.0f}"


def _status(b: dict[str, Any], report: dict[str, Any]) -> str:
    if b["active"]:
        return f"on since #{b['added']}" + (f", version {b['version']}" if b["version"] > 1 else "")
    why = "files changed" if b["replaced"] else "removed"
    return f"retired at #{b['retired']} ({why})"


def _shown(report: dict[str, Any], label: str) -> str:
    """What the report shows for the bot `label`: its display name, else the label."""
    return report.get("names", {}).get(label, label)


def format_ladder(report: dict[str, Any]) -> str:
    """The report as text: the rating list, the ratings after each event (the last few), the
    events, each pairing's games, and how the ratings are made."""
    bots = report["bots"]
    on = sum(b["active"] for b in bots)
    games = sum(p["games"] for p in report["pairings"])
    planned = sum(p["games_expected"] for p in report["pairings"])
    anchor = report["anchor"]
    zero = f"{_shown(report, anchor)} pinned at 1500" if anchor else "the mean is 1500"
    kind = "Ladder" if report["is_ladder"] else "Tournament (read as a ladder of one event)"
    lines = [
        f"{kind} {report['file']}: {on} bots on it ({len(bots)} versions in all), "
        f"{len(report['events'])} events, {games} of {planned} games; rules {report['rules']}, "
        f"seed {report['seed']}, max_hands {report['max_hands']}; Elo: {zero}",
        "",
    ]
    width = max([3, *(len(_shown(report, b["label"])) for b in bots)])
    head = f"{'#':>3}  {'bot':<{width}}  {'Elo':>5}  {'95% interval':>13}  {'games':>5}  {'score':>6}  status"
    lines += [head, "-" * len(head)]
    for b in bots:
        ci = f"[{_elo(b['low'])}, {_elo(b['high'])}]"
        score = "-" if b["games"] == 0 else f"{100 * b['win_rate']:.1f}%"
        name = _shown(report, b["label"])
        lines.append(
            f"{b['rank']:>3}  {name:<{width}}  {_elo(b['elo']):>5}  {ci:>13}  "
            f"{b['games']:>5}  {score:>6}  {_status(b, report)}"
        )
    lines += _format_history(report, width)
    lines += ["", "Events:"]
    for e in report["events"]:
        what = {"add": "added", "remove": "retired", "tournament": "tournament of"}[e["kind"]]
        tail = "" if e["kind"] == "remove" else (
            f": {e['pairings']} pairings of {e['matches']} duplicate matches"
            + ("" if e["finished"] else ", NOT FINISHED (rerun the same add to resume)")
        )  # fmt: skip
        retired = (
            f"; retired {', '.join(_shown(report, a) for a in e['retired'])}"
            if e["retired"]
            else ""
        )
        when = f"{e['started']} " if e["started"] else ""
        added = ", ".join(_shown(report, a) for a in e["labels"])
        lines.append(f"  #{e['event']} {when}{what} {added}{tail}{retired}")
    lines += ["", "Pairings (games held / planned; score of the first, Wilson 95%):"]
    for p in report["pairings"]:
        rate = "-" if not p["games"] else (
            f"{100 * p['rate']:.1f}% [{100 * p['low']:.1f}, {100 * p['high']:.1f}]"
        )  # fmt: skip
        lines.append(
            f"  {_shown(report, p['pair_a'])} v {_shown(report, p['pair_b'])}: "
            f"{p['games']}/{p['games_expected']} games, "
            f"{rate} (#{p['event']})"
        )
    lines += ["", *textwrap.wrap(f"Elo: {report['method']}.", 100)]
    return "\n".join(lines)


def _format_history(report: dict[str, Any], width: int) -> list[str]:
    """Elo of every bot after each of the last events (a column per event)."""
    events = report["events"][-_HISTORY_COLUMNS:]
    if len(report["events"]) < 2:
        return []
    shown = "" if len(events) == len(report["events"]) else f" (the last {len(events)})"
    lines = ["", f"Elo after each event{shown}:"]
    lines.append(f"     {'':<{width}}" + "".join(f"{'#' + str(e['event']):>7}" for e in events))
    for b in report["bots"]:
        cells = []
        for e in events:
            r = e["ratings"].get(b["label"])
            cells.append(f"{_elo(r['elo']) if r else '':>7}")
        lines.append(f"     {_shown(report, b['label']):<{width}}" + "".join(cells))
    return lines
