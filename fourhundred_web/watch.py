"""Watching a tournament or a ladder: its results database, read-only, as lists of matches
and replays.

:class:`Watch` opens the one database the server was started with (never a path from a
browser) and answers four questions: what tournament is this (:meth:`Watch.summary`), which
duplicate matches are there, filtered by pairing and sorted by score difference or by how
surprising they are (:meth:`Watch.matches`), how did a match go, both twins hand by hand
and, where :func:`fourhundred_tournament.replay.replay_game` can replay them exactly, card by card
(:meth:`Watch.match`), and, for a ladder (:mod:`fourhundred_tournament.ladder`), what are the ratings now
and after each event, and how many matches has each pairing (:meth:`Watch.ladder`).

A bot that names files (a checkpoint, a ``cmd:`` bot's program) is replayed only while they
are the ones the database fingerprinted; the files' sizes and times are part of every cached
answer, so a file changed while the server runs is noticed at the next request, and the
reason names the file.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fourhundred_env.cards import (
    TRUMP,
    card_rank,
    card_suit,
    card_text,
    parse_card,
    parse_hand,
    sorted_for_display,
)
from fourhundred_env.game_records.files import RecordedHand
from fourhundred_env.game_records.hands import HandRecord
from fourhundred_tournament.config import spec_files
from fourhundred_tournament.db import GameKey, HandRow, ReadOnlyResults
from fourhundred_tournament.ladder.history import ladder_report
from fourhundred_tournament.replay import (
    ReplayedGame,
    TournamentInfo,
    label_blockers,
    replay_game,
    tournament_info,
)

__all__ = ["SORTS", "Watch", "game_json", "ladder_json"]

SORTS = {
    "match": "match id",
    "margin": "largest score difference first",
    "close": "smallest score difference first",
    "surprise": "most surprising first (highest bid, then largest swing of one hand)",
}
_REPLAY_CACHE = 32

_GAMES_SQL = """
SELECT m.pair_a, m.pair_b, m.match_id, m.orientation, m.team0, m.team1, m.finished,
       m.winner_team, m.num_hands, m.score0, m.score1, m.score2, m.score3, m.forfeits,
       h.max_bid, h.max_swing, h.big_bids
FROM matches m LEFT JOIN (
    SELECT pair_a, pair_b, match_id, orientation,
           MAX(MAX(bid0, bid1, bid2, bid3)) AS max_bid,
           MAX(MAX(ABS(points0), ABS(points1), ABS(points2), ABS(points3))) AS max_swing,
           SUM((bid0 >= 7) + (bid1 >= 7) + (bid2 >= 7) + (bid3 >= 7)) AS big_bids
    FROM hands GROUP BY pair_a, pair_b, match_id, orientation
) h USING (pair_a, pair_b, match_id, orientation)
"""


@dataclass(frozen=True)
class _Listing:
    """Every duplicate match of the database, summarised (rebuilt when games are added)."""

    num_games: int
    matches: list[dict[str, Any]]


Stamp = tuple[tuple[str, int, int], ...]
"""The files some agents name, each (path, size, modification time in ns)."""


class Watch:
    """The results database `path`, opened read-only (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self._open() as db:  # one connection per request: sqlite3 keeps to its thread
            self.info = tournament_info(db)
        self._lock = threading.Lock()
        self._listing: _Listing | None = None
        self._replays: OrderedDict[tuple[GameKey, Stamp], ReplayedGame] = OrderedDict()
        self._blockers: tuple[tuple[tuple[str, ...], Stamp], dict[str, str | None]] | None = None
        self._ladder: tuple[tuple[int, ...], dict[str, Any]] | None = None

    def _open(self) -> ReadOnlyResults:
        return ReadOnlyResults(self.path)

    def _info(self) -> TournamentInfo:
        """The tournament's fingerprint now (a ladder gains bots while it is watched)."""
        with self._open() as db:
            info = tournament_info(db)
        self.info = info
        return info

    def _stamp(self, info: TournamentInfo, labels: tuple[str, ...]) -> Stamp:
        """The files the agents `labels` name, as they are now (see Stamp)."""
        out = []
        for label in labels:
            for path in spec_files(info.spec(label)):
                try:
                    st = path.stat()
                except OSError:  # gone since spec_files looked: its absence is the stamp
                    continue
                out.append((str(path), st.st_size, st.st_mtime_ns))
        return tuple(out)

    # -- the tournament ---------------------------------------------------------------------
    def pairs(self) -> list[tuple[str, str]]:
        """The pairings that have finished games, sorted."""
        with self._open() as db:
            rows = db.query("SELECT DISTINCT pair_a, pair_b FROM matches ORDER BY 1, 2")
        return [(a, b) for a, b in rows]

    def blockers(self) -> dict[str, str | None]:
        """Per agent, why its games cannot be replayed card by card (None: they can)."""
        info = self._info()
        key = (info.agents, self._stamp(info, info.agents))
        with self._lock:
            if self._blockers is not None and self._blockers[0] == key:
                return dict(self._blockers[1])
        with self._open() as db:
            blockers = dict(label_blockers(db))
        with self._lock:
            self._blockers = (key, blockers)
        return dict(blockers)

    def summary(self) -> dict[str, Any]:
        """The tournament: file name, agents, rules, seed, pairings, games, replayability,
        whether it is a ladder (then :meth:`ladder` tells more)."""
        replay = self.blockers()
        info = self.info
        with self._open() as db:
            (games,) = db.query("SELECT COUNT(*) FROM matches")[0]
            is_ladder = "ladder" in db.meta()
        return {
            "file": self.path.name,
            "ladder": is_ladder,
            "agents": list(info.agents),
            "names": {a: info.display(a) for a in info.agents},  # what the page shows
            "rules": info.rules.name,
            "target": info.rules.target,
            "seed": info.agents_seed,  # the public seed, never the deals' secret
            "max_hands": info.max_hands,
            "games": int(games),
            "pairs": [list(p) for p in self.pairs()],
            "replay": replay,
            "sorts": SORTS,
        }

    # -- the ladder -------------------------------------------------------------------------
    def ladder(self) -> dict[str, Any] | None:
        """The ladder's ratings now and after each event and its pairings (:func:`ladder_json`
        of :func:`fourhundred_tournament.ladder.history.ladder_report`); None for a tournament database.
        Cached until a game is added or an event recorded."""
        with self._open() as db:
            if "ladder" not in db.meta():
                return None
            (games,) = db.query("SELECT COUNT(*) FROM matches")[0]
            events = db.query(
                "SELECT COUNT(*), COUNT(finished), COALESCE(MAX(event), 0) FROM ladder_events"
            )[0]
            key = (int(games), *(int(x) for x in events))
            with self._lock:
                if self._ladder is not None and self._ladder[0] == key:
                    return self._ladder[1]
            report = ladder_report(db)
        answer = ladder_json(report, self.pairs())
        with self._lock:
            self._ladder = (key, answer)
        return answer

    # -- the list of matches ----------------------------------------------------------------
    def _all_matches(self) -> list[dict[str, Any]]:
        with self._open() as db:
            (n,) = db.query("SELECT COUNT(*) FROM matches")[0]
            with self._lock:
                if self._listing is not None and self._listing.num_games == n:
                    return self._listing.matches
            rows = db.query(_GAMES_SQL)
        by_match: dict[tuple[str, str, int], dict[str, Any]] = {}
        for r in rows:
            pair_a, pair_b, match_id, orientation = r[0], r[1], int(r[2]), int(r[3])
            entry = by_match.setdefault(
                (pair_a, pair_b, match_id),
                {"pair_a": pair_a, "pair_b": pair_b, "match_id": match_id, "games": [None, None]},
            )
            scores = [int(x) for x in r[9:13]]
            a_team = orientation  # pair_a holds team 0 in orientation 0, team 1 in 1
            a_total = scores[a_team] + scores[a_team + 2]
            b_total = scores[1 - a_team] + scores[3 - a_team]
            winner_team = int(r[7])
            entry["games"][orientation] = {
                "orientation": orientation, "team0": r[4], "team1": r[5],
                "finished": bool(r[6]), "winner_team": winner_team,
                "a_won": None if winner_team < 0 else winner_team == a_team,
                "num_hands": int(r[8]), "scores": scores, "forfeits": int(r[13]),
                "a_margin": a_total - b_total, "max_bid": int(r[14] or 0),
                "max_swing": int(r[15] or 0), "big_bids": int(r[16] or 0),
            }  # fmt: skip
        matches = []
        for entry in by_match.values():
            games = [g for g in entry["games"] if g is not None]
            entry["margin"] = sum(g["a_margin"] for g in games)
            entry["max_bid"] = max(g["max_bid"] for g in games)
            entry["max_swing"] = max(g["max_swing"] for g in games)
            entry["big_bids"] = sum(g["big_bids"] for g in games)
            wins = [g["a_won"] for g in games]
            entry["split"] = len(games) == 2 and wins[0] is not None and wins[0] != wins[1]
            matches.append(entry)
        matches.sort(key=lambda m: (m["pair_a"], m["pair_b"], m["match_id"]))
        with self._lock:
            self._listing = _Listing(int(n), matches)
        return matches

    def matches(
        self, pair: tuple[str, str] | None, sort: str, min_bid: int, offset: int, limit: int
    ) -> dict[str, Any]:
        """A page of duplicate matches of `pair` (None: all) whose highest bid is at least
        `min_bid`, in the order `sort` (one of SORTS)."""
        rows = [
            m
            for m in self._all_matches()
            if (pair is None or (m["pair_a"], m["pair_b"]) == pair) and m["max_bid"] >= min_bid
        ]
        if sort == "margin":
            rows = sorted(rows, key=lambda m: -abs(m["margin"]))
        elif sort == "close":
            rows = sorted(rows, key=lambda m: abs(m["margin"]))
        elif sort == "surprise":
            rows = sorted(rows, key=lambda m: (-m["max_bid"], -m["big_bids"], -m["max_swing"]))
        return {"total": len(rows), "offset": offset, "matches": rows[offset : offset + limit]}

    # -- one match, both twins --------------------------------------------------------------
    def game(self, key: GameKey) -> ReplayedGame:
        """Game `key` replayed (cached while the files its agents name are unchanged: a
        replay costs a fraction of a second, more with a ``cmd:`` bot's process)."""
        cache = (key, self._stamp(self._info(), key[:2]))
        with self._lock:
            if cache in self._replays:
                self._replays.move_to_end(cache)
                return self._replays[cache]
        with self._open() as db:
            game = replay_game(db, key)
        with self._lock:
            self._replays[cache] = game
            while len(self._replays) > _REPLAY_CACHE:
                self._replays.popitem(last=False)
        return game

    def match(self, pair: tuple[str, str], match_id: int) -> dict[str, Any]:
        """Both games of duplicate match `match_id` of `pair` (a missing twin is None)."""
        with self._open() as db:
            found = {
                int(o)
                for (o,) in db.query(
                    "SELECT orientation FROM matches WHERE pair_a = ? AND pair_b = ? "
                    "AND match_id = ?",
                    (*pair, match_id),
                )
            }
        twins = [game_json(self.game((*pair, match_id, o))) if o in found else None for o in (0, 1)]
        return {"pair": list(pair), "match_id": match_id, "twins": twins}


def trick_winner(trick: list[tuple[int, str]]) -> int:
    """The seat that wins a trick of (seat, card) in the order played: the highest heart,
    else the highest card of the suit led."""
    cards = [(seat, parse_card(c)) for seat, c in trick]
    led = card_suit(cards[0][1])
    suit = TRUMP if any(card_suit(c) == TRUMP for _, c in cards) else led
    return max((card_rank(c), seat) for seat, c in cards if card_suit(c) == suit)[1]


def _row_values(row: HandRow, name: str) -> list[int]:
    return [int(getattr(row, f"{name}{s}")) for s in range(4)]


def deal_json(hands: Sequence[str]) -> list[list[str]]:
    """The four hands as dealt (text, as a HandRecord keeps them), each sorted for display."""
    return [[card_text(c) for c in sorted_for_display(parse_hand(text))] for text in hands]


def calls_json(first: int, bids: Sequence[str]) -> list[dict[str, Any]]:
    """Bids in order from seat `first` (a record's text: "2".."13" or "redeal") as
    {seat, bid}, the bid an int or "redeal"."""
    return [{"seat": (first + k) % 4, "bid": b if b == "redeal" else int(b)}
            for k, b in enumerate(bids)]  # fmt: skip


def played_json(r: HandRecord) -> dict[str, Any]:
    """What a finished hand's cards show in the viewer: the deal, the bids in order, every
    card in order, each trick's winner and the claim."""
    return {
        "deal": deal_json(r.hands),
        "calls": calls_json((r.dealer + 1) % 4, RecordedHand.from_hand_record(r).bids),
        "plays": [{"seat": s, "card": c} for s, c in r.plays],
        "trick_winners": [
            trick_winner(list(r.plays[k : k + 4])) for k in range(0, len(r.plays) - 3, 4)
        ],
        "claim": None if r.claim is None else {"seat": r.claim[0], "tricks": r.claim[1]},
    }


def game_json(game: ReplayedGame) -> dict[str, Any]:
    """A replayed game for the browser: per hand the stored row and, where the replay is
    exact, the deal, the bids in order and the cards in order."""
    m = game.match
    hands = []
    for h in game.hands:
        row = h.row
        scores = _row_values(row, "score")
        points = _row_values(row, "points")
        item: dict[str, Any] = {
            "index": int(row.hand_index), "dealer": int(row.dealer),
            "required_total": int(row.required_total), "thrown_in": bool(row.thrown_in),
            "redeal_seat": None if row.redeal_seat < 0 else int(row.redeal_seat),
            "claim_seat": None if row.claim_seat < 0 else int(row.claim_seat),
            "bids": _row_values(row, "bid"), "tricks": _row_values(row, "tricks"),
            "points": points, "scores": scores,
            "scores_before": [s - p for s, p in zip(scores, points, strict=True)],
            "forfeits": [s for s in range(4) if getattr(row, f"forfeit{s}")],
            "replayed": h.exact, "problem": h.problem,
        }  # fmt: skip
        if h.exact:
            assert h.record is not None
            item.update(played_json(h.record))
        hands.append(item)
    return {
        "key": list(game.key), "orientation": game.key[3], "team0": m.team0, "team1": m.team1,
        "first_dealer": int(m.first_dealer), "finished": bool(m.finished),
        "winner_team": int(m.winner_team), "winner": m.winner, "num_hands": int(m.num_hands),
        "scores": [int(getattr(m, f"score{s}")) for s in range(4)], "target": int(m.target),
        "exact": game.exact, "reason": game.reason, "hands": hands,
    }  # fmt: skip


def _finite(x: Any) -> float | None:
    """A rating's number for JSON: NaN (no games yet) is None."""
    return None if x is None or x != x else float(x)


def ladder_json(report: dict[str, Any], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """A ladder's report (:func:`~fourhundred_tournament.ladder.history.ladder_report`) for the browser.

    Bots are a list (the rating list, best first; each event's ``ratings`` is aligned with
    it, None where a bot was not on the ladder yet), so that two labels sharing a public
    name stay apart; a pairing names its bots by index into that list and its pairing by
    index into `pairs` (:meth:`Watch.pairs`, the match list's filter; None: no game yet).
    Numbers that are NaN in the report (a bot without games) are None; the file is its name.
    """
    bots = report["bots"]
    index = {b["label"]: i for i, b in enumerate(bots)}
    pair_index = {p: k for k, p in enumerate(pairs)}
    return {
        "file": Path(report["file"]).name,
        "rules": report["rules"], "seed": report["seed"], "max_hands": report["max_hands"],
        "anchor": report["anchor"], "method": report["method"],
        "bots": [{
            "rank": b["rank"], "label": b["label"], "version": b["version"],
            "active": b["active"], "added": b["added"], "retired": b["retired"],
            "replaced": b["replaced"], "elo": _finite(b["elo"]), "low": _finite(b["low"]),
            "high": _finite(b["high"]), "games": b["games"], "score": b["score"],
            "win_rate": _finite(b["win_rate"]), "info": b["info"],
        } for b in bots],
        "events": [{
            "event": e["event"], "kind": e["kind"], "labels": e["labels"],
            "retired": e["retired"], "matches": e["matches"], "started": e["started"],
            "finished": e["finished"], "pairings": e["pairings"],
            "ratings": [
                None if b["label"] not in e["ratings"] else {
                    k: _finite(e["ratings"][b["label"]][k]) for k in ("elo", "low", "high")
                } for b in bots
            ],
        } for e in report["events"]],
        "pairings": [{
            "a": index[p["pair_a"]], "b": index[p["pair_b"]],
            "pair": pair_index.get((p["pair_a"], p["pair_b"])), "event": p["event"],
            "matches": p["matches"], "games": p["games"], "games_expected": p["games_expected"],
            "score_a": p["score_a"], "rate": _finite(p["rate"]), "low": _finite(p["low"]),
            "high": _finite(p["high"]),
        } for p in report["pairings"]],
    }  # fmt: skip
