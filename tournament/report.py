"""The tournament report: leaderboard, pairwise matrix, Bradley-Terry Elo, conduct; text, JSON, CSV.

:func:`build_report` reads a results database (:mod:`tournament.db`) and returns a plain dict
(the JSON written by :func:`write_report`); :func:`load_report` does so from the database file
alone (:func:`config_from_db`). Definitions:

- *win rate*: (wins + 0.5 unfinished) / games over the agent's games against other agents
  (mirror games excluded), with a Wilson 95% interval.
- *points per hand*: mean score change of the agent's seats over the hands that were played.
- *bid success*: contracts made (tricks >= bid, not forfeited) / contracts played.
- *thrown in caused*: hands thrown in because the agent asked for a redeal, or because it was
  the dealer (who bids last and can make the total) and the total fell short; per 100 hands.
- *ms per move*: agent time per decision (a batched call's time split over its tables).
- *Elo*: Bradley-Terry fit of all game results (unfinished = draw) on the Elo scale, with
  percentile intervals from bootstrap resamples of duplicate matches within each pairing.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tournament.config import TournamentConfig, config_from_mapping
from tournament.db import DatabaseMismatchError, ReadOnlyResults, ResultsDB, time_bin_edge
from tournament.ratings import (
    ELO_PER_NAT,
    bootstrap_bradley_terry,
    elo_from_theta,
    fit_bradley_terry,
    wilson_interval,
)

FORFEIT_KINDS = ("timeout", "error", "illegal")


def _rate(score: float, n: int) -> dict[str, float | int]:
    """A win rate of `score` out of `n` games with its Wilson 95% interval."""
    lo, hi = wilson_interval(score, n)
    return {
        "games": n,
        "score": score,
        "rate": score / n if n else float("nan"),
        "low": lo,
        "high": hi,
    }


def build_report(db: ResultsDB, cfg: TournamentConfig, seed: int | None = None) -> dict[str, Any]:
    """Everything the tournament measured so far, as a JSON-ready dict (see the module docstring).

    `seed`: of the Elo bootstrap (default: the tournament's seed).
    """
    labels = sorted(cfg.agents)
    pairs = set(cfg.pairings())
    matches = _finished_games(db, cfg, pairs)
    games = _tally_games(matches, labels)
    hand_stats = _hand_stats(db, cfg, labels, pairs)
    move_times = _move_times(db, labels, pairs)
    for a in labels:
        hand_stats[a].update(move_times[a])
    conduct = _conduct(db, cfg, pairs)
    pairwise, mirror, matrix = _pairwise(labels, games)
    elo = _ratings(cfg, labels, games.pair_games, seed)
    return {
        "config": _config_summary(cfg),
        "games": len(matches),
        "games_expected": len(pairs) * cfg.matches * 2,
        "unfinished": games.unfinished,
        "leaderboard": _leaderboard(labels, games, hand_stats, conduct, elo),
        "pairwise": pairwise,
        "matrix": matrix,
        "mirror": mirror,
        "seat_balance": {
            "team0": _rate(games.team0_score, games.num_non_mirror),
            "first_dealer_team": _rate(games.first_dealer_score, games.num_non_mirror),
        },
        "conduct": conduct,
        "elo_method": (
            f"Bradley-Terry MLE with {cfg.bt_prior} virtual draw(s) per pairing, "
            f"{ELO_PER_NAT:.1f} Elo per nat; {cfg.bootstrap} bootstrap resamples of duplicate "
            "matches within pairings (2.5/97.5 percentiles)"
        ),
    }


def _config_summary(cfg: TournamentConfig) -> dict[str, Any]:
    """What the report says of its tournament's config."""
    return {
        "agents": list(cfg.agents),
        "matches": cfg.matches,
        "rules": cfg.effective_rules.to_dict(),
        "rules_name": cfg.effective_rules.name,
        "seed": cfg.seed,
        "max_hands": cfg.max_hands,
        "mirror": cfg.mirror if isinstance(cfg.mirror, bool) else list(cfg.mirror),
        "bootstrap": cfg.bootstrap,
        "bt_prior": cfg.bt_prior,
        "elo_anchor": cfg.elo_anchor,
    }


def _finished_games(
    db: ResultsDB, cfg: TournamentConfig, pairs: set[tuple[str, str]]
) -> list[tuple[Any, ...]]:
    """(pair_a, pair_b, match_id, orientation, finished, winner_team, first_dealer) of the
    games with a match row, of this config's pairings and match ids."""
    rows = db.query(
        "SELECT pair_a, pair_b, match_id, orientation, finished, winner_team, first_dealer "
        "FROM matches WHERE match_id < ?",
        (cfg.matches,),
    )
    return [r for r in rows if (r[0], r[1]) in pairs]


@dataclass
class _Games:
    """Game results tallied for the report (a game scores 1 won, 0.5 unfinished, 0 lost)."""

    per_agent: dict[str, dict[str, int]]  # games, wins, losses, unfinished against the others
    pair_games: dict[tuple[str, str], list[tuple[int, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # per pairing of two agents: (match_id, pair_a's score) of each game
    mirror_games: dict[str, list[float]] = field(
        default_factory=lambda: defaultdict(list)
    )  # per mirrored agent: the first side's score in each game
    team0_score: float = 0.0  # of the games between two different agents
    first_dealer_score: float = 0.0
    num_non_mirror: int = 0
    unfinished: int = 0  # mirror games included


def _tally_games(matches: list[tuple[Any, ...]], labels: list[str]) -> _Games:
    """The results of `matches` (rows of :func:`_finished_games`) by agent, pairing and team."""
    games = _Games({a: {"games": 0, "wins": 0, "losses": 0, "unfinished": 0} for a in labels})
    for a, b, m, o, finished, wteam, first_dealer in matches:
        side_a_team = o  # pair_a holds team 0 at orientation 0, team 1 at orientation 1
        if not finished:
            games.unfinished += 1
            score_a = 0.5
        else:
            score_a = 1.0 if wteam == side_a_team else 0.0
        if a == b:
            games.mirror_games[a].append(score_a)
            continue
        games.num_non_mirror += 1
        games.pair_games[(a, b)].append((m, score_a))
        games.team0_score += 0.5 if not finished else float(wteam == 0)
        games.first_dealer_score += 0.5 if not finished else float(wteam == first_dealer % 2)
        for label, s in ((a, score_a), (b, 1.0 - score_a)):
            st = games.per_agent[label]
            st["games"] += 1
            st["wins"] += s == 1.0
            st["losses"] += s == 0.0
            st["unfinished"] += s == 0.5
    return games


def _pairwise(
    labels: list[str], games: _Games
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, float | None]]]:
    """(pairwise entries, mirror entries, matrix of the row agent's win rate against the
    column agent's)."""
    pairwise = []
    matrix: dict[str, dict[str, float | None]] = {a: {b: None for b in labels} for a in labels}
    for (a, b), results in sorted(games.pair_games.items()):
        n = len(results)
        s = sum(x for _, x in results)
        by_match: dict[int, list[float]] = defaultdict(list)
        for m, x in results:
            by_match[m].append(x)
        whole = [sum(v) for v in by_match.values() if len(v) == 2]  # both halves played
        entry = {
            "agent": a, "opponent": b, **_rate(s, n),
            "duplicate_matches": len(whole),
            "sweeps": sum(v == 2.0 for v in whole),
            "splits": sum(0.0 < v < 2.0 for v in whole),
            "swept": sum(v == 0.0 for v in whole),
        }  # fmt: skip
        pairwise.append(entry)
        matrix[a][b] = entry["rate"]
        matrix[b][a] = 1.0 - entry["rate"]
    mirror = []
    for a, scores in sorted(games.mirror_games.items()):
        entry = {"agent": a, **_rate(sum(scores), len(scores))}
        entry["consistent_with_half"] = bool(entry["low"] <= 0.5 <= entry["high"])
        mirror.append(entry)
        matrix[a][a] = entry["rate"]
    return pairwise, mirror, matrix


def _leaderboard(
    labels: list[str],
    games: _Games,
    hand_stats: dict[str, dict[str, float | int]],
    conduct: dict[str, Any],
    elo: dict[str, dict[str, float]],
) -> list[dict[str, Any]]:
    """One row per agent, best Elo first (agents without games last), ranked from 1."""
    board = []
    for a in labels:
        st = games.per_agent[a]
        score = st["wins"] + 0.5 * st["unfinished"]
        board.append(
            {
                "agent": a,
                "elo": elo["elo"][a],
                "elo_low": elo["low"][a],
                "elo_high": elo["high"][a],
                "win_rate": score / st["games"] if st["games"] else float("nan"),
                "win_low": wilson_interval(score, st["games"])[0],
                "win_high": wilson_interval(score, st["games"])[1],
                **st,
                **hand_stats[a],
                "forfeits": conduct["forfeits_by_agent"].get(a, 0),
                "slow_moves": conduct["slow_by_agent"].get(a, 0),
            }
        )
    board.sort(key=lambda r: (-r["elo"] if r["elo"] == r["elo"] else 0, r["agent"]))
    for rank, row in enumerate(board, 1):
        row["rank"] = rank
    return board


def _ratings(
    cfg: TournamentConfig,
    labels: list[str],
    pair_games: dict[tuple[str, str], list[tuple[int, float]]],
    seed: int | None,
) -> dict[str, dict[str, float]]:
    """Bradley-Terry Elo of each agent ("elo") with its bootstrap interval ("low", "high");
    NaN for an agent without games."""
    index = {a: i for i, a in enumerate(labels)}
    n = len(labels)
    wins = np.zeros((n, n))
    games = np.zeros((n, n))
    groups = []
    for (a, b), results in pair_games.items():
        i, j = index[a], index[b]
        s = sum(x for _, x in results)
        wins[i, j] += s
        wins[j, i] += len(results) - s
        games[i, j] += len(results)
        games[j, i] += len(results)
        by_match: dict[int, list[float]] = defaultdict(list)
        for m, x in results:
            by_match[m].append(x)
        groups.append(
            (
                i,
                j,
                np.array([sum(v) for v in by_match.values()]),
                np.array([len(v) for v in by_match.values()], np.float64),
            )
        )
    anchor = index[cfg.elo_anchor] if cfg.elo_anchor is not None else None
    played = games.sum(axis=1) > 0
    theta = fit_bradley_terry(wins, games, prior=cfg.bt_prior)
    elo = elo_from_theta(theta, anchor)
    low = np.full(n, np.nan)
    high = np.full(n, np.nan)
    if cfg.bootstrap > 0 and groups:
        rng = np.random.default_rng([cfg.seed if seed is None else seed, 0xE10])
        boot = bootstrap_bradley_terry(groups, n, cfg.bootstrap, rng, prior=cfg.bt_prior)
        boot_elo = elo_from_theta(boot, anchor)
        low = np.percentile(boot_elo, 2.5, axis=0)
        high = np.percentile(boot_elo, 97.5, axis=0)
    nan = float("nan")
    return {
        "elo": {a: float(elo[i]) if played[i] else nan for a, i in index.items()},
        "low": {a: float(low[i]) if played[i] else nan for a, i in index.items()},
        "high": {a: float(high[i]) if played[i] else nan for a, i in index.items()},
    }


_HAND_SQL = (
    "SELECT h.pair_a, h.pair_b, h.team0, h.team1, h.dealer, h.thrown_in, h.redeal_seat, "
    + ", ".join(
        f"h.{c}{s}"
        for c in ("bid", "tricks", "points", "forfeit", "decisions", "seconds")
        for s in range(4)
    )
    + " FROM hands h JOIN matches m ON m.pair_a = h.pair_a AND m.pair_b = h.pair_b "
    "AND m.match_id = h.match_id AND m.orientation = h.orientation WHERE h.match_id < ?"
)


def _hand_stats(
    db: ResultsDB, cfg: TournamentConfig, labels: list[str], pairs: set[tuple[str, str]]
) -> dict[str, dict[str, float | int]]:
    """Per agent, its hand statistics (see the module docstring) over the hands of finished
    games against other agents."""
    rows = [
        r for r in db.query(_HAND_SQL, (cfg.matches,)) if (r[0], r[1]) in pairs and r[0] != r[1]
    ]
    out: dict[str, dict[str, float | int]] = {}
    if not rows:
        for a in labels:
            out[a] = {"hands": 0, "contracts": 0, "points_per_hand": float("nan"),
                      "bid_success": float("nan"), "mean_bid": float("nan"),
                      "thrown_in_caused": 0, "thrown_in_per_100": float("nan"),
                      "decisions": 0, "ms_per_move": float("nan")}  # fmt: skip
        return out
    team0 = np.array([r[2] for r in rows], dtype=object)
    team1 = np.array([r[3] for r in rows], dtype=object)
    dealer = np.array([r[4] for r in rows], np.int64)
    thrown = np.array([r[5] for r in rows], bool)
    redeal = np.array([r[6] for r in rows], np.int64)
    num = np.array([r[7:] for r in rows], np.float64)  # (N, 24)
    bid, tricks, points, forfeit, decs, secs = (num[:, 4 * k : 4 * k + 4] for k in range(6))
    played = ~thrown
    made = (tricks >= bid) & (forfeit == 0)
    blame = np.where(redeal >= 0, redeal, dealer)  # seat that threw the hand in
    for a in labels:
        seat_mask = np.stack([team0 == a, team1 == a, team0 == a, team1 == a], axis=1).astype(bool)
        in_game = seat_mask.any(axis=1)
        contracts = seat_mask & played[:, None]
        n_contracts = int(contracts.sum())
        caused = thrown & seat_mask[np.arange(len(rows)), blame]
        n_hands = int(in_game.sum())
        d = decs[seat_mask].sum()
        out[a] = {
            "hands": n_hands,
            "contracts": n_contracts,
            "points_per_hand": float(points[contracts].mean()) if n_contracts else float("nan"),
            "bid_success": float(made[contracts].mean()) if n_contracts else float("nan"),
            "mean_bid": float(bid[contracts].mean()) if n_contracts else float("nan"),
            "thrown_in_caused": int(caused.sum()),
            "thrown_in_per_100": 100.0 * caused.sum() / n_hands if n_hands else float("nan"),
            "decisions": int(d),
            "ms_per_move": 1000.0 * float(secs[seat_mask].sum()) / d if d else float("nan"),
        }
    return out


def _move_times(
    db: Any, labels: list[str], pairs: set[tuple[str, str]]
) -> dict[str, dict[str, float]]:
    """Per agent: the median, 90th and 99th percentile and maximum time per decision in ms,
    from the histogram (the upper edge of the bin a percentile falls in; NaN without one,
    as in a database written before the histogram existed)."""
    counts: dict[str, dict[int, int]] = {a: defaultdict(int) for a in labels}
    try:
        rows = db.query("SELECT pair_a, pair_b, agent, bin, decisions FROM move_times")
    except sqlite3.OperationalError:  # no such table: an older database
        rows = []
    for a, b, agent, bin_, n in rows:
        if (a, b) in pairs and a != b and agent in counts:
            counts[agent][bin_] += n
    out = {}
    for a in labels:
        bins = sorted(counts[a])
        n = np.array([counts[a][b] for b in bins], np.float64)
        stats = {"ms_p50": float("nan"), "ms_p90": float("nan"), "ms_p99": float("nan"),
                 "ms_max": float("nan")}  # fmt: skip
        if n.sum() > 0:
            cum = np.cumsum(n) / n.sum()
            for key, q in (("ms_p50", 0.5), ("ms_p90", 0.9), ("ms_p99", 0.99)):
                stats[key] = 1000.0 * time_bin_edge(bins[int(np.searchsorted(cum, q))])
            stats["ms_max"] = 1000.0 * time_bin_edge(bins[-1])
        out[a] = stats
    return out


def _conduct(db: ResultsDB, cfg: TournamentConfig, pairs: set[tuple[str, str]]) -> dict[str, Any]:
    """Conduct events counted by agent (forfeits, slow moves, by kind) and the first ten
    forfeits as examples."""
    rows = [
        r
        for r in db.query(
            "SELECT pair_a, pair_b, match_id, orientation, hand_index, seat, agent, kind, detail, "
            "seconds FROM events WHERE match_id < ? ORDER BY id",
            (cfg.matches,),
        )
        if (r[0], r[1]) in pairs
    ]
    forfeits: dict[str, int] = defaultdict(int)
    slow: dict[str, int] = defaultdict(int)
    by_kind: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    examples = []
    for a, b, m, o, h, seat, agent, kind, detail, secs in rows:
        by_kind[agent][kind] += 1
        if kind in FORFEIT_KINDS:
            forfeits[agent] += 1
        else:
            slow[agent] += 1
        if len(examples) < 10 and kind in FORFEIT_KINDS:
            examples.append(
                {"pairing": [a, b], "match_id": m, "orientation": o, "hand_index": h,
                 "seat": seat, "agent": agent, "kind": kind, "detail": detail, "seconds": secs}
            )  # fmt: skip
    return {
        "forfeits_by_agent": dict(forfeits),
        "slow_by_agent": dict(slow),
        "events_by_agent": {a: dict(k) for a, k in by_kind.items()},
        "examples": examples,
    }


# -- a database alone ---------------------------------------------------------------------------
def config_from_db(db: ResultsDB) -> TournamentConfig:
    """The tournament config as far as the database records it: its agents, rules, seed and
    max_hands (the fingerprint), `matches` up to the highest match id played, `mirror` if any
    mirror game was played; everything else at its default."""
    meta = db.meta()
    if "fingerprint" not in meta:
        raise DatabaseMismatchError(
            f"database {str(db.path)!r} has no tournament fingerprint: expected one written by "
            "`fourhundred tournament`"
        )
    fp = json.loads(meta["fingerprint"])
    (top,) = db.query("SELECT MAX(match_id) FROM matches")[0]
    (mirror,) = db.query("SELECT COUNT(*) FROM matches WHERE pair_a = pair_b")[0]
    return config_from_mapping(
        {
            "agents": list(fp["agents"]),
            "rules": dict(fp["rules"]),
            "seed": int(fp["seed"]),
            "max_hands": int(fp["max_hands"]),
            "matches": int(top) + 1 if top is not None else 1,
            "mirror": bool(mirror),
            "db": str(db.path),
            "progress": False,
        }
    )


def load_report(
    db_path: str | Path, cfg: TournamentConfig | None = None
) -> tuple[TournamentConfig, dict[str, Any]]:
    """(config, :func:`build_report` dict) of a results database."""
    with ReadOnlyResults(db_path) as db:
        cfg = cfg if cfg is not None else config_from_db(db)
        return cfg, build_report(db, cfg)


# -- output ------------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return "   -" if x != x else f"{100 * x:5.1f}"


def _num(x: float, fmt: str) -> str:
    return "-" if x != x else format(x, fmt)


def format_report(report: dict[str, Any]) -> str:
    """The report as text: leaderboard, pairwise matrix, mirror and seat checks, conduct."""
    c = report["config"]
    lines = [
        f"Tournament: {len(c['agents'])} agents, {c['matches']} duplicate matches per pairing "
        f"({report['games']} of {report['games_expected']} games played), rules {c['rules_name']}, "
        f"seed {c['seed']}",
        "",
        *_format_leaderboard(report),
        *_format_pairwise(report),
        *_format_checks(report),
        *_format_conduct(report),
        f"Elo: {report['elo_method']}.",
    ]
    return "\n".join(lines)


_LEGEND = (
    "Elo with its bootstrap 95% interval; win% with its Wilson 95% interval; pts/hand: points "
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
                f"[{100 * p['low']:.1f}, {100 * p['high']:.1f}] of {p['games']} games; "
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


def write_report(report: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write report.json, leaderboard.csv and pairwise.csv into `out_dir`; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / "report.json",
        "leaderboard": out / "leaderboard.csv",
        "pairwise": out / "pairwise.csv",
    }
    paths["json"].write_text(
        json.dumps(report, indent=2, sort_keys=False, default=_json_default) + "\n"
    )
    board = report["leaderboard"]
    cols = ["rank", "agent", "elo", "elo_low", "elo_high", "win_rate", "win_low", "win_high",
            "games", "wins", "losses", "unfinished", "hands", "contracts", "points_per_hand",
            "bid_success", "mean_bid", "thrown_in_caused", "thrown_in_per_100", "decisions",
            "ms_per_move", "ms_p50", "ms_p90", "ms_p99", "ms_max", "forfeits",
            "slow_moves"]  # fmt: skip
    with paths["leaderboard"].open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(board)
    with paths["pairwise"].open("w", newline="") as f:
        cols = ["agent", "opponent", "games", "score", "rate", "low", "high",
                "duplicate_matches", "sweeps", "splits", "swept"]  # fmt: skip
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(report["pairwise"])
    return paths


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def log_tensorboard(report: dict[str, Any], log_dir: str | Path, step: int | None = None) -> None:
    """Write the leaderboard as TensorBoard scalars (``tournament/<metric>/<agent>``) and text.

    Imports torch.utils.tensorboard (or tensorboardX) only when called.
    """
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        try:
            from tensorboardX import SummaryWriter
        except ImportError:
            from fourhundred_env.errors import FourHundredError

            raise FourHundredError(
                "TensorBoard logging needs torch (pip install 'fourhundred[train]') or tensorboardX"
            ) from None
    step = report["games"] if step is None else step
    writer = SummaryWriter(log_dir=str(log_dir))
    try:
        for r in report["leaderboard"]:
            a = r["agent"]
            for key in ("elo", "win_rate", "points_per_hand", "bid_success", "thrown_in_per_100",
                        "ms_per_move", "forfeits"):  # fmt: skip
                v = r[key]
                if v == v:  # not NaN
                    writer.add_scalar(f"tournament/{key}/{a}", float(v), step)
        writer.add_text("tournament/report", "```\n" + format_report(report) + "\n```", step)
    finally:
        writer.close()
