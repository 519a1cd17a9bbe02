"""The report's numbers, read from a results database: win rates with Wilson intervals, the
pairwise matrix and duplicate matches, Bradley-Terry Elo with bootstrap intervals, hand
statistics, times per decision and conduct events (definitions in :mod:`fourhundred_tournament.report`),
as one JSON-ready dict."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.registry import with_name
from fourhundred_tournament.config import TournamentConfig, config_from_mapping
from fourhundred_tournament.db import (
    DatabaseMismatchError,
    ReadOnlyResults,
    ResultsDB,
    check_values,
    read_fingerprint,
    read_names,
    time_bin_edge,
)
from fourhundred_tournament.db.ladder import recorded_pairings
from fourhundred_tournament.ratings import ELO_PER_NAT, RATING_METHOD, rate_agents, wilson_interval

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


def build_report(
    db: ResultsDB,
    cfg: TournamentConfig,
    seed: int | None = None,
    pairings: Mapping[tuple[str, str], int] | None = None,
) -> dict[str, Any]:
    """Everything the tournament measured so far, as a JSON-ready dict (see :mod:`fourhundred_tournament.report`).

    `seed`: of the Elo bootstrap (default: the tournament's seed). `pairings`: the duplicate
    matches planned per pairing (a ladder's differ); default `cfg.matches` for each of
    `cfg.pairings()`.
    """
    check_values(db)  # a row out of range is refused in one line, not reported
    labels = sorted(cfg.labels)
    if pairings is None:
        pairings = {p: cfg.matches for p in cfg.pairings()}
    pairs = set(pairings)
    limit = max(pairings.values(), default=cfg.matches)  # no pairing holds a higher match id
    matches = _finished_games(db, limit, pairs)
    games = _tally_games(matches, labels)
    hand_stats = _hand_stats(db, limit, labels, pairs)
    move_times = _move_times(db, labels, pairs)
    for a in labels:
        hand_stats[a].update(move_times[a])
    conduct = _conduct(db, limit, pairs)
    pairwise, mirror, matrix = _pairwise(labels, games, pairings)
    elo = _ratings(cfg, labels, games.pair_games, seed)
    report = {
        "config": _config_summary(cfg, pairings),
        "games": len(matches),
        "games_expected": 2 * sum(pairings.values()),
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
        "elo_method": RATING_METHOD.format(
            prior=cfg.bt_prior, per_nat=ELO_PER_NAT, bootstrap=cfg.bootstrap
        ),
    }
    return _named(report, {label: cfg.display(label) for label in labels})


def _named(report: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """`report`, worked out by label (the database's), with every agent shown by its display
    name (`names`, by label: its ``name=``, else the label). A leaderboard row keeps its label
    as ``spec``; the config summary's ``names`` is `names`."""

    def show(label: str) -> str:
        return names.get(label, label)

    for row in report["leaderboard"]:
        row["spec"] = row["agent"]
        row["agent"] = show(row["agent"])
    for entry in report["pairwise"]:
        entry["agent"], entry["opponent"] = show(entry["agent"]), show(entry["opponent"])
    for entry in report["mirror"]:
        entry["agent"] = show(entry["agent"])
    report["matrix"] = {
        show(a): {show(b): v for b, v in row.items()} for a, row in report["matrix"].items()
    }
    conduct = report["conduct"]
    for key in ("forfeits_by_agent", "slow_by_agent", "events_by_agent"):
        conduct[key] = {show(a): v for a, v in conduct[key].items()}
    for e in conduct["examples"]:
        e["agent"], e["pairing"] = show(e["agent"]), [show(a) for a in e["pairing"]]
    report["config"]["names"] = dict(names)
    return report


def _config_summary(
    cfg: TournamentConfig, pairings: Mapping[tuple[str, str], int]
) -> dict[str, Any]:
    """What the report says of its tournament's config (`matches`: the fewest and the most
    duplicate matches planned for a pairing)."""
    counts = sorted(pairings.values()) or [cfg.matches]
    return {
        "agents": list(cfg.agents),
        "matches": counts[-1],
        "matches_fewest": counts[0],
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
    db: ResultsDB, limit: int, pairs: set[tuple[str, str]]
) -> list[tuple[Any, ...]]:
    """(pair_a, pair_b, match_id, orientation, finished, winner_team, first_dealer) of the
    games with a match row, of these pairings and match ids below `limit`."""
    rows = db.query(
        "SELECT pair_a, pair_b, match_id, orientation, finished, winner_team, first_dealer "
        "FROM matches WHERE match_id < ?",
        (limit,),
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
    labels: list[str], games: _Games, pairings: Mapping[tuple[str, str], int]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, float | None]]]:
    """(pairwise entries, mirror entries, matrix of the row agent's win rate against the
    column agent's); each entry says how many games its pairing holds and how many were
    planned (`games_expected`)."""
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
            "unfinished": sum(x == 0.5 for _, x in results),  # draws: stopped at max_hands
            "games_expected": 2 * pairings.get((a, b), 0),
        }  # fmt: skip
        pairwise.append(entry)
        matrix[a][b] = entry["rate"]
        matrix[b][a] = 1.0 - entry["rate"]
    mirror = []
    for a, scores in sorted(games.mirror_games.items()):
        entry = {"agent": a, **_rate(sum(scores), len(scores))}
        entry["unfinished"] = sum(x == 0.5 for x in scores)
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
    """Bradley-Terry Elo of each agent with its 95% interval (:func:`rate_agents`)."""
    return rate_agents(
        labels, pair_games, prior=cfg.bt_prior, bootstrap=cfg.bootstrap,
        seed=cfg.seed if seed is None else seed, anchor=cfg.elo_anchor,
    )  # fmt: skip


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
    db: ResultsDB, limit: int, labels: list[str], pairs: set[tuple[str, str]]
) -> dict[str, dict[str, float | int]]:
    """Per agent, its hand statistics (see :mod:`fourhundred_tournament.report`) over the hands of finished
    games against other agents."""
    rows = [r for r in db.query(_HAND_SQL, (limit,)) if (r[0], r[1]) in pairs and r[0] != r[1]]
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


def _conduct(db: ResultsDB, limit: int, pairs: set[tuple[str, str]]) -> dict[str, Any]:
    """Conduct events counted by agent (forfeits, slow moves, by kind) and the first ten
    forfeits as examples."""
    rows = [
        r
        for r in db.query(
            "SELECT pair_a, pair_b, match_id, orientation, hand_index, seat, agent, kind, detail, "
            "seconds FROM events WHERE match_id < ? ORDER BY id",
            (limit,),
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
    max_hands (the fingerprint; a ladder's bots, all its versions), the agents' display
    names (``names`` in the meta: the last run's ``name=``), `matches` up to the
    highest match id played, `mirror` if any mirror game was played, a ladder's Elo anchor;
    everything else at its default."""
    meta = db.meta()
    if "fingerprint" not in meta:
        raise DatabaseMismatchError(
            f"database {str(db.path)!r} has no tournament fingerprint: expected one written by "
            "`fourhundred tournament`"
        )
    fp = read_fingerprint(db.path, meta)
    names = read_names(db.path, meta)
    (top,) = db.query("SELECT MAX(match_id) FROM matches")[0]
    (mirror,) = db.query("SELECT COUNT(*) FROM matches WHERE pair_a = pair_b")[0]
    anchor = json.loads(meta["ladder"]).get("anchor") if "ladder" in meta else None
    return config_from_mapping(
        {
            "agents": [with_name(a, names.get(a)) for a in fp["agents"]],
            "rules": dict(fp["rules"]),
            "seed": int(fp["seed"]),
            "max_hands": int(fp["max_hands"]),
            "matches": int(top) + 1 if top is not None else 1,
            "mirror": bool(mirror),
            "db": str(db.path),
            "progress": False,
            "elo_anchor": anchor,
        }
    )


def load_report(
    db_path: str | Path, cfg: TournamentConfig | None = None
) -> tuple[TournamentConfig, dict[str, Any]]:
    """(config, :func:`build_report` dict) of a results database (a tournament's or a
    ladder's, whose pairings it reads from the database)."""
    with ReadOnlyResults(db_path) as db:
        cfg = cfg if cfg is not None else config_from_db(db)
        return cfg, build_report(db, cfg, pairings=recorded_pairings(db))
