"""fourhundred_tournament.replay: games of a results database played again card by card, and checked."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fourhundred_env.cards import parse_hand
from fourhundred_env.engine import deal_sets
from fourhundred_tournament.db import ReadOnlyResults
from fourhundred_tournament.replay import (
    ReplayError,
    label_blockers,
    replay_blocker,
    replay_game,
    tournament_info,
)
from tests.dbedit import to_schema_1


def _keys(path: Path) -> list[tuple[str, str, int, int]]:
    with ReadOnlyResults(path) as db:
        return db.query(
            "SELECT pair_a, pair_b, match_id, orientation FROM matches ORDER BY 1, 2, 3, 4"
        )


def _without_moves(path: Path) -> None:
    """Make `path` a database of schema 1, which keeps no moves: its games are replayed by
    their bots."""
    to_schema_1(path)


def test_every_game_of_a_tournament_replays_exactly(results_db: Path) -> None:
    keys = _keys(results_db)
    assert len(keys) == 12  # 3 pairings x 2 matches x 2 orientations
    with ReadOnlyResults(results_db) as db:
        info = tournament_info(db)
        for key in keys:
            game = replay_game(db, key)
            assert game.exact, (key, game.reason)
            assert len(game.hands) == game.match.num_hands
            for k, hand in enumerate(game.hands):
                record = hand.record
                assert hand.exact and record is not None
                # the deals are the tournament's: (seed, match, hand)
                dealt = deal_sets(info.seed, np.array([key[2]]), np.array([k]))[0]
                assert [
                    sum(1 << c for c in parse_hand(h.replace("|", " "))) for h in record.hands
                ] == [int(x) for x in dealt]
                if not record.thrown_in:
                    cards = [c for _, c in record.plays]
                    assert len(cards) == 52 and len(set(cards)) == 52


def test_a_row_that_differs_stops_the_replay_there_and_says_what(
    results_db: Path, tmp_path: Path
) -> None:
    path = tmp_path / "tampered.sqlite"
    shutil.copy(results_db, path)
    _without_moves(path)
    key = _keys(path)[0]
    con = sqlite3.connect(path)
    with con:
        con.execute(
            "UPDATE hands SET score0 = score0 + 5 WHERE pair_a = ? AND pair_b = ? AND "
            "match_id = ? AND orientation = ? AND hand_index = 1",
            key,
        )
    con.close()
    with ReadOnlyResults(path) as db:
        game = replay_game(db, key)
    assert not game.exact
    assert game.reason is not None and game.reason.startswith("hand 2 replays differently")
    assert "scores: database" in game.reason
    assert game.hands[0].exact
    assert game.hands[1].problem is not None and not game.hands[1].exact
    assert all(h.record is None for h in game.hands[2:])


def test_a_database_of_the_earlier_seeding_scheme_says_so_when_a_game_diverges(
    results_db: Path, tmp_path: Path
) -> None:
    """A database that records no seeding was made when seeds hung on the job split: its
    games are replayed with today's seeds, and one that diverges says why it may."""
    path = tmp_path / "old.sqlite"
    shutil.copy(results_db, path)
    _without_moves(path)
    key = next(k for k in _keys(path) if "random" in k[:2])
    con = sqlite3.connect(path)
    with con:
        con.execute("DELETE FROM meta WHERE key = 'seeding'")
        con.execute(
            "UPDATE hands SET tricks1 = tricks1 + 1 WHERE pair_a = ? AND pair_b = ? AND "
            "match_id = ? AND orientation = ? AND hand_index = 0",
            key,
        )
    con.close()
    with ReadOnlyResults(path) as db:
        assert tournament_info(db).scheme == "job-chunk"
        game = replay_game(db, key)
        others = [replay_game(db, k) for k in _keys(path) if k != key]
    assert not game.exact and "earlier scheme 'job-chunk'" in (game.reason or "")
    assert all(g.exact for g in others)  # deterministic and per-position draws replay anyway


def test_games_that_cannot_be_replayed_say_why(results_db: Path, tmp_path: Path) -> None:
    with ReadOnlyResults(results_db) as db:
        info = tournament_info(db)
        assert label_blockers(db) == {"heuristic": None, "minbid": None, "random": None}
    assert "not replayable" in (replay_blocker(info, "pimc") or "")
    assert "not replayable" in (
        replay_blocker(info, "neural:agents/pretrained/selfplay.pt,sample=true") or ""
    )
    assert "cannot be made" in (replay_blocker(info, "no-such-bot") or "")
    checkpoint = tmp_path / "policy.pt"
    shutil.copy(Path(__file__).parents[1] / "agents/pretrained/selfplay.pt", checkpoint)
    spec = f"neural:{checkpoint}"
    changed = dataclasses.replace(info, agent_files={spec: "0" * 64})
    assert "changed since the tournament" in (replay_blocker(changed, spec) or "")
    checkpoint.unlink()
    assert "is not there any more" in (replay_blocker(changed, spec) or "")


def test_a_game_not_in_the_database_is_a_clear_error(results_db: Path) -> None:
    with ReadOnlyResults(results_db) as db, pytest.raises(ReplayError, match="no finished game"):
        replay_game(db, ("heuristic", "minbid", 99, 0))
