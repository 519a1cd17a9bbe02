"""The tournament runner: duplicate deals, determinism, resuming, refusing other databases,
forfeits under the conduct rules, configs, the report and the command line."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import ClassVar

import numba
import numpy as np
import pytest

from fourhundred_agents import register_agent
from fourhundred_agents.protocol import Agent
from fourhundred_agents.scripted.random import RandomAgent
from fourhundred_cli import main as cli_main
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView
from fourhundred_tournament.config import (
    TournamentConfig,
    TournamentConfigError,
    load_config,
    spec_files,
)
from fourhundred_tournament.db import DatabaseMismatchError, ResultsDB
from fourhundred_tournament.planning import plan_jobs
from fourhundred_tournament.report import build_report, format_report, write_report
from fourhundred_tournament.runner import LockstepRunner, Records
from fourhundred_tournament.tournament import GameProgress, run_tournament


# -- misbehaving agents -------------------------------------------------------------------------
class IllegalAgent(Agent):
    """Always plays action 0 (the 2 of clubs): illegal in every bidding turn."""

    def act(self, view: SeatView) -> np.ndarray:
        return np.zeros(view.size, np.int64)


class RaisingAgent(Agent):
    def act(self, view: SeatView) -> np.ndarray:
        raise RuntimeError("boom")


class WrongShapeAgent(Agent):
    def act(self, view: SeatView) -> np.ndarray:
        return np.zeros((view.size, 2), np.int64)


class SleepyAgent(RandomAgent):
    """Sleeps `seconds` on its first call only, then plays like `random`."""

    seconds = 0.5

    def __init__(self, rules: Rules, seed: int) -> None:
        super().__init__(rules, seed)
        self.calls = 0

    def act(self, view: SeatView) -> np.ndarray:
        self.calls += 1
        if self.calls == 1:
            time.sleep(self.seconds)
        return super().act(view)


class SpyAgent(RandomAgent):
    """Random play that logs (seat, hand) at each of its bids into a shared list."""

    log: ClassVar[list[tuple[int, int]]] = []

    def act(self, view: SeatView) -> np.ndarray:
        for i in np.flatnonzero(view.phase == 0):
            SpyAgent.log.append((int(view.seat[i]), int(view.hand_set[i])))
        return super().act(view)


for _name, _cls in (("test-illegal", IllegalAgent), ("test-raising", RaisingAgent),
                    ("test-shape", WrongShapeAgent)):  # fmt: skip
    register_agent(_name, lambda r, s, a, c=_cls: c(r, s), "test agent")


def _cfg(tmp_path: Path, **kw) -> TournamentConfig:
    # public deals: the cards these tests were written for (secret deals: test_tournament_safety)
    values = dict(agents=["heuristic", "minbid"], matches=6, seed=3, workers=1, out_dir=str(tmp_path),
                  progress=False, bootstrap=50, chunk_matches=3, table_batch=4, deals="public")  # fmt: skip
    values.update(kw)
    return load_config(None, values)


def _rows(db: Path, table: str) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        cols = {"matches": "pair_a, pair_b, match_id, orientation", "hands": "pair_a, pair_b, "
                "match_id, orientation, hand_index"}[table]  # fmt: skip
        rows = con.execute(f"SELECT * FROM {table} ORDER BY {cols}").fetchall()
    finally:
        con.close()
    # drop timing columns: they are the only thing allowed to differ between runs (and the
    # rows' digests, which cover them)
    con_cols = [d for d in _columns(db, table)]
    keep = [i for i, c in enumerate(con_cols) if "seconds" not in c and c != "digest"]
    return [tuple(r[i] for i in keep) for r in rows]


def _columns(db: Path, table: str) -> list[str]:
    con = sqlite3.connect(db)
    try:
        return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    finally:
        con.close()


def _runner(agents: list[list[Agent]], rules: Rules, max_hands: int = 3, batch: int = 4):
    out = Records()

    def sink(rec: Records) -> None:
        out.hands.extend(rec.hands)
        out.matches.extend(rec.matches)
        out.events.extend(rec.events)

    runner = LockstepRunner(rules, ("a", "b"), agents, seed=5, max_hands=max_hands,
                            table_batch=batch, sink=sink)  # fmt: skip
    return runner, out


# -- duplicate deals ----------------------------------------------------------------------------
def test_duplicate_games_deal_the_same_cards_by_seat_with_partnerships_swapped() -> None:
    rules = Rules(no_face_redeal=False)  # every seat bids once per hand: the k-th bid is hand k
    logs = {}
    for orientation in (0, 1):
        SpyAgent.log = []
        agents = [[SpyAgent(rules, 10 * side + seat) for seat in range(4)] for side in (0, 1)]
        runner, out = _runner(agents, rules, max_hands=6, batch=1)
        runner.run([(7, orientation)])
        logs[orientation] = [[h for s, h in SpyAgent.log if s == seat] for seat in range(4)]
        assert len(out.matches) == 1 and out.matches[0][3] == orientation
        team0 = out.matches[0][4]
        assert team0 == ("a" if orientation == 0 else "b")
    for seat in range(4):
        assert len(logs[0][seat]) == 6
        assert logs[0][seat] == logs[1][seat]  # same cards at the same seat, hand by hand
        assert len(set(logs[0][seat])) == 6  # and a new deal every hand
    # all four hands of a deal are disjoint 13-card sets
    first = [logs[0][seat][0] for seat in range(4)]
    assert [bin(h).count("1") for h in first] == [13] * 4
    assert len(set(first)) == 4 and sum(first) == (1 << 52) - 1


def test_hand_rows_of_both_orientations_share_deal_ids_and_dealers(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, agents=["heuristic", "random"], matches=4)
    run_tournament(cfg)
    con = sqlite3.connect(cfg.db_path)
    rows = con.execute(
        "SELECT a.dealer, b.dealer, a.required_total, b.required_total FROM hands a JOIN hands b "
        "ON a.pair_a = b.pair_a AND a.pair_b = b.pair_b AND a.match_id = b.match_id AND "
        "a.hand_index = b.hand_index AND a.orientation = 0 AND b.orientation = 1"
    ).fetchall()
    assert rows and all(r[0] == r[1] for r in rows)  # same dealer sequence
    assert rows[0][2] == rows[0][3] == 11
    teams = con.execute("SELECT DISTINCT orientation, team0, team1 FROM matches").fetchall()
    assert sorted(teams) == [(0, "heuristic", "random"), (1, "random", "heuristic")]


# -- determinism ------------------------------------------------------------------------------
def test_same_seed_same_results_whatever_the_workers(tmp_path: Path) -> None:
    kw = dict(agents=["heuristic", "random", "minbid"], matches=3, chunk_matches=3,
              max_hands=15, table_batch=6)  # fmt: skip
    a = _cfg(tmp_path / "a", **kw)
    b = _cfg(tmp_path / "b", **kw)
    c = _cfg(tmp_path / "c", **kw, workers=2)
    for cfg in (a, b, c):
        s = run_tournament(cfg)
        assert s.games_played == 3 * 3 * 2
    for table in ("matches", "hands"):
        assert _rows(a.db_path, table) == _rows(b.db_path, table) == _rows(c.db_path, table)
    d = _cfg(tmp_path / "d", **{**kw, "seed": 4})
    run_tournament(d)
    assert _rows(d.db_path, "hands") != _rows(a.db_path, "hands")


def test_the_progress_bar_moves_with_the_hands_of_games_in_play(tmp_path: Path) -> None:
    """Games of a batch end together: their hands move the bar before any game ends, never
    past the games that could have ended, and the bar ends at the total."""
    cfg = _cfg(tmp_path, matches=4, chunk_matches=4, table_batch=8, flush_seconds=0.0)
    records: list[Records] = []
    run_tournament(cfg, on_records=records.append)
    bar = GameProgress(total=8, initial=0, desc="test")
    finished, seen = 0, []
    for rec in records:
        bar.update(rec)
        finished += len(rec.matches)
        seen.append((finished, bar.games))
        assert finished <= bar.games + 1e-9
        assert bar.games <= finished + GameProgress.HAND_CAP * (8 - finished) + 1e-9
    bar.close()
    assert [n for _, n in seen] == sorted(n for _, n in seen)
    assert any(n > 0.5 for f, n in seen if f == 0)  # hands counted while no game had ended
    assert seen[-1] == (8, pytest.approx(8.0))


def test_the_progress_bar_eta_is_the_remaining_games_at_the_average_rate(tmp_path: Path) -> None:
    """Jobs end in bursts: the ETA is the remaining games at the rate since the start, not a
    rate smoothed over the latest updates."""
    cfg = _cfg(tmp_path, matches=4, chunk_matches=4, table_batch=8, flush_seconds=0.0)
    records: list[Records] = []
    run_tournament(cfg, on_records=records.append)
    bar = GameProgress(total=8, initial=0, desc="test")
    clock = [0.0]
    bar._bar._time = lambda: clock[0]
    bar._bar.start_t = bar._bar.last_print_t = 0.0
    for i, rec in enumerate(records[:-1]):  # a burst at the start, then one a minute
        clock[0] = 1.0 + i if i < len(records) // 2 else 60.0 * i
        bar.update(rec)
    state = bar._bar.format_dict
    shown = bar._bar.format_meter(**state)
    assert 0 < state["n"] < 8
    left = state["elapsed"] / state["n"] * (8 - state["n"])
    assert f"<{bar._bar.format_interval(left)}," in shown
    bar.close()


# -- resuming ---------------------------------------------------------------------------------
def test_an_interrupted_run_resumes_without_replaying_finished_games(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path / "r", matches=6, chunk_matches=3, table_batch=3, flush_seconds=0.0)
    batches = []

    def stop_after_two(rec: Records) -> None:
        batches.append(rec)
        if sum(len(r.matches) for r in batches) >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg, on_records=stop_after_two)
    con = sqlite3.connect(cfg.db_path)
    done_before = con.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    first_rows = _rows(cfg.db_path, "matches")
    orphans = con.execute(
        "SELECT COUNT(*) FROM hands h WHERE NOT EXISTS (SELECT 1 FROM matches m WHERE "
        "m.pair_a = h.pair_a AND m.match_id = h.match_id AND m.orientation = h.orientation)"
    ).fetchone()[0]
    con.close()
    assert 3 <= done_before < 12
    assert orphans > 0  # hands of games in flight were written as they were produced

    resumed = run_tournament(cfg)
    assert resumed.games_resumed == done_before
    assert resumed.games_played == 12 - done_before  # nothing finished is played again
    assert resumed.hands_dropped == orphans
    after = _rows(cfg.db_path, "matches")
    assert set(first_rows) <= set(after)  # finished rows kept as they were

    fresh = _cfg(tmp_path / "f", matches=6, chunk_matches=3, table_batch=3)
    run_tournament(fresh)  # deterministic bots: the resumed tournament equals a fresh one
    assert _rows(cfg.db_path, "matches") == _rows(fresh.db_path, "matches")
    assert _rows(cfg.db_path, "hands") == _rows(fresh.db_path, "hands")
    again = run_tournament(cfg)
    assert again.games_played == 0 and again.games_resumed == 12


def test_more_matches_extend_a_finished_tournament(tmp_path: Path) -> None:
    run_tournament(_cfg(tmp_path, matches=2))
    s = run_tournament(_cfg(tmp_path, matches=5))
    assert (s.games_resumed, s.games_played) == (4, 6)


# -- refusing other databases -------------------------------------------------------------------
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"agents": ["heuristic", "random"]}, "agents"),
        ({"seed": 99}, "seed"),
        ({"rules": "pagat"}, "rules"),
        ({"max_hands": 50}, "max_hands"),
        ({"move_hard_limit_s": 5.0}, "rules"),
    ],
)
def test_a_database_of_another_tournament_is_refused_unchanged(
    tmp_path: Path, change: dict, message: str
) -> None:
    cfg = _cfg(tmp_path, matches=1)
    run_tournament(cfg)
    before = _digest(cfg.db_path)
    other = _cfg(tmp_path, matches=1, **change)
    with pytest.raises(DatabaseMismatchError, match=message):
        run_tournament(other)
    with pytest.raises(DatabaseMismatchError):
        ResultsDB(other.db_path, other.fingerprint())
    assert _digest(cfg.db_path) == before
    assert not Path(str(cfg.db_path) + "-wal").exists()
    assert run_tournament(other, overwrite=True).games_played == 2  # explicit overwrite works


def test_a_search_bots_checkpoints_are_in_the_fingerprint(tmp_path: Path) -> None:
    """The search's model and bidder, and a compose's parts, are hashed: a tournament notices
    a changed one on resume; a database written before they were hashed still resumes."""
    assert [p.name for p in spec_files("search:fast")] == ["exit.pt", "bidder.pt"]
    assert [p.name for p in spec_files("search:strong")] == ["selfplay.pt"]
    both = "compose:bid=search:fast,play=neural:agents/pretrained/selfplay.pt"
    assert [p.name for p in spec_files(both)] == ["exit.pt", "bidder.pt", "selfplay.pt"]
    model = tmp_path / "model.pt"
    model.write_bytes(Path("agents/pretrained/selfplay.pt").read_bytes())
    spec = f"search:model={model}"
    assert spec_files(spec) == [model]
    cfg = _cfg(tmp_path, agents=[spec, "random"], matches=1)
    with ResultsDB(cfg.db_path, cfg.fingerprint()):
        pass
    legacy = {**cfg.fingerprint(), "agent_files": {}}
    model.write_bytes(model.read_bytes() + b"\0")  # the checkpoint changes
    with pytest.raises(DatabaseMismatchError, match="agent_files"):
        ResultsDB(cfg.db_path, cfg.fingerprint())
    with ResultsDB(tmp_path / "legacy.sqlite", legacy):
        pass
    with ResultsDB(tmp_path / "legacy.sqlite", cfg.fingerprint()):  # nothing to check against
        pass


def test_a_bundled_checkpoint_is_hashed_from_any_directory(tmp_path: Path, monkeypatch) -> None:
    """``neural:agents/pretrained/NAME`` loads the installed copy from any directory: the
    fingerprint hashes that copy there too."""
    here = spec_files("neural:agents/pretrained/exit.pt")
    monkeypatch.chdir(tmp_path)
    elsewhere = spec_files("neural:agents/pretrained/exit.pt")
    assert len(here) == len(elsewhere) == 1
    assert elsewhere[0].read_bytes() == (Path(__file__).parents[1] / here[0]).read_bytes()


def test_a_file_that_is_not_a_results_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    before = _digest(path)
    with pytest.raises(DatabaseMismatchError, match="not a fourhundred tournament database"):
        run_tournament(_cfg(tmp_path, db=str(path)))
    assert _digest(path) == before


def test_unknown_agents_fail_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(FourHundredError, match="unknown agent 'nosuchbot'"):
        run_tournament(_cfg(tmp_path, agents=["heuristic", "nosuchbot"]))
    assert not (tmp_path / "results.sqlite").exists()


# -- conduct: forfeits ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "kind", "detail"),
    [
        (IllegalAgent, "illegal", "illegal action 0 (2C)"),
        (RaisingAgent, "error", "boom"),
        (WrongShapeAgent, "illegal", "shape"),
    ],
)
def test_a_misbehaving_agent_forfeits_and_the_match_goes_on(cls, kind: str, detail: str) -> None:
    rules = Rules()
    bad = [cls(rules, 0) for _ in range(4)]
    good = [RandomAgent(rules, s) for s in range(4)]
    runner, out = _runner([bad, good], rules, max_hands=3, batch=2)
    runner.run([(0, 0), (0, 1)])
    assert len(out.matches) == 2 and {m[10] for m in out.matches} == {3}  # 3 hands each
    assert out.events and {e[7] for e in out.events} == {kind}
    assert all(e[6] == "a" and detail in e[8] for e in out.events)
    cols = {c: i for i, c in enumerate(_hand_cols())}
    for h in out.hands:
        bad_seats = [s for s in range(4) if (s % 2) == h[cols["orientation"]]]
        good_seats = [s for s in range(4) if s not in bad_seats]
        assert all(h[cols[f"forfeit{s}"]] == 1 for s in bad_seats)
        assert all(h[cols[f"forfeit{s}"]] == 0 for s in good_seats)
        if not h[cols["thrown_in"]]:  # played: a forfeited contract is scored as missed
            assert all(h[cols[f"points{s}"]] < 0 for s in bad_seats)
    assert all(m[MATCH_FORFEITS] > 0 for m in out.matches)


def _hand_cols() -> tuple[str, ...]:
    from fourhundred_tournament.db import HAND_COLUMNS

    return HAND_COLUMNS


MATCH_FORFEITS = __import__(
    "fourhundred_tournament.db", fromlist=["MATCH_COLUMNS"]
).MATCH_COLUMNS.index("forfeits")


def test_row_types_name_the_columns_of_their_tables(tmp_path: Path) -> None:
    from fourhundred_tournament.db import EventRow, HandRow, MatchRow

    with ResultsDB(tmp_path / "r.sqlite", {"agents": []}) as db:
        for table, row in (("hands", HandRow), ("matches", MatchRow), ("events", EventRow)):
            columns = [r[1] for r in db.query(f"PRAGMA table_info({table})")]
            # the digest is the writer's (fourhundred_tournament.db.digests), not the row's
            assert [c for c in columns if c not in ("id", "digest")] == list(row._fields)


def test_a_move_over_the_hard_limit_is_interrupted_and_forfeited() -> None:
    rules = Rules(move_time_limit_s=0.01, move_hard_limit_s=0.05)
    sleepy = [SleepyAgent(rules, s) for s in range(4)]
    sleepy[0].seconds = 30.0  # would hang the test if the alarm did not interrupt it
    good = [RandomAgent(rules, s) for s in range(4)]
    runner, out = _runner([sleepy, good], rules, max_hands=1, batch=1)
    runner.run([(0, 0)])
    kinds = [e[7] for e in out.events]
    assert "timeout" in kinds
    timeout = next(e for e in out.events if e[7] == "timeout")
    assert timeout[5] == 0 and "interrupted" in timeout[8]
    assert out.hands[0][_hand_cols().index("forfeit0")] == 1


def test_a_slow_move_under_the_hard_limit_is_recorded_but_not_forfeited() -> None:
    rules = Rules(move_time_limit_s=0.01, move_hard_limit_s=5.0)
    sleepy = [SleepyAgent(rules, s) for s in range(4)]
    for a in sleepy:
        a.seconds = 0.03
    good = [RandomAgent(rules, s) for s in range(4)]
    runner, out = _runner([sleepy, good], rules, max_hands=1, batch=1)
    runner.run([(0, 0)])
    assert out.events and {e[7] for e in out.events} == {"slow"}
    cols = _hand_cols()
    assert all(out.hands[0][cols.index(f"forfeit{s}")] == 0 for s in range(4))


class _FakeClock:
    """The runner's clock, moved only by agents that say what their moves cost."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class CostlyBidder(RandomAgent):
    """Plays like `random`; each table it bids at costs `bid_s` seconds on a fake clock (a
    batched call of k bids costs k times that), its card play nothing; its first bid costs
    nothing if `first_free`. Logs how many tables it bid at in each call."""

    def __init__(self, rules: Rules, seed: int, clock: _FakeClock, bid_s: float,
                 first_free: bool = False) -> None:  # fmt: skip
        super().__init__(rules, seed)
        self.clock, self.bid_s, self.bid_calls = clock, bid_s, []
        self.first_free = first_free

    def act(self, view: SeatView) -> np.ndarray:
        n_bid = int(np.count_nonzero(view.phase == 0))
        if n_bid:
            self.bid_calls.append(n_bid)
        if not (self.first_free and len(self.bid_calls) == 1):
            self.clock.now += self.bid_s * n_bid
        return super().act(view)


def _costly_run(rules: Rules, bid_s: float, games: int, batch: int, max_hands: int = 2,
                first_free: bool = False):  # fmt: skip
    """(bidders of side 0, rows) of `games` duplicate games of CostlyBidder against random."""
    clock = _FakeClock()
    costly = [CostlyBidder(rules, s, clock, bid_s, first_free) for s in range(4)]
    runner, out = _runner([costly, [RandomAgent(rules, 10 + s) for s in range(4)]], rules,
                          max_hands=max_hands, batch=batch)  # fmt: skip
    runner.clock = clock
    runner.run([(m // 2, m % 2) for m in range(games)])
    return costly, out


def _outcomes(rows: list) -> list[tuple]:
    """Rows without their time columns, in game order."""
    return sorted(
        tuple(v for f, v in zip(r._fields, r, strict=True) if "seconds" not in f) for r in rows
    )


@pytest.mark.parametrize("first_free", [False, True])
def test_a_slow_bidder_at_many_tables_is_judged_by_its_move_not_by_the_batch(
    first_free: bool,
) -> None:
    # 64 tables bidding at once at half a second each would take 32 s in one call, past the
    # 20 s hard limit: the runner asks one table first, then parts of 10 s / 4 / 0.5 s = 5
    # (growing twofold at most: a first bid that cost nothing does not open the door to 63)
    rules = Rules()
    costly, out = _costly_run(rules, bid_s=0.5, games=64, batch=64, first_free=first_free)
    assert out.events == []
    calls = [c for a in costly for c in a.bid_calls]
    assert all(a.bid_calls[0] == 1 for a in costly) and max(calls) == 5
    assert sum(r.decision_seconds for r in out.matches) > rules.move_hard_limit_s
    _, quick = _costly_run(rules, bid_s=0.0, games=64, batch=64)  # asked in one piece
    assert _outcomes(out.hands) == _outcomes(quick.hands)
    assert _outcomes(out.matches) == _outcomes(quick.matches)


def test_after_a_part_passes_the_hard_limit_the_rest_of_the_call_is_not_asked() -> None:
    rules = Rules()
    costly, out = _costly_run(rules, bid_s=25.0, games=8, batch=8, max_hands=1)
    assert all(size == 1 for a in costly for size in a.bid_calls)  # one table a step, timed out
    assert out.events and {e.kind for e in out.events} == {"timeout"}
    details = [e.detail for e in out.events]
    assert sum(d == "took 25.000 s (hard limit 20.0 s)" for d in details) == sum(
        len(a.bid_calls) for a in costly
    )
    assert all(d.startswith("not asked: it passed the hard limit earlier in this call")
               for d in details if not d.startswith("took"))  # fmt: skip
    cols = _hand_cols()
    for h in out.hands:  # every contract of the costly side forfeited (or the hand thrown in)
        seats = [s for s in range(4) if (s % 2) == h[cols.index("orientation")]]
        assert h[cols.index("thrown_in")] or all(h[cols.index(f"forfeit{s}")] for s in seats)


def _numeric_body(x: np.ndarray) -> float:
    s = 0.0
    for i in range(x.size):
        s += np.sin(x[i]) * np.cos(x[i])
    return np.sort(x)[::-1].sum() + s + np.argsort(x)[0]


class CompilingAgent(RandomAgent):
    """Compiles a numba function of its own at its first call, as a search bot does on a
    machine whose numba cache is empty, then plays like `random`."""

    def __init__(self, rules: Rules, seed: int) -> None:
        super().__init__(rules, seed)
        self.compile_s: float | None = None

    def act(self, view: SeatView) -> np.ndarray:
        if self.compile_s is None:
            t0 = time.perf_counter()
            numba.njit(cache=False)(_numeric_body)(np.arange(10.0))  # a new dispatcher
            self.compile_s = time.perf_counter() - t0
        return super().act(view)


def test_compiling_is_not_a_moves_time_and_is_not_interrupted() -> None:
    rules = Rules(move_time_limit_s=0.01, move_hard_limit_s=0.05)
    compilers = [CompilingAgent(rules, s) for s in range(4)]
    runner, out = _runner([compilers, [RandomAgent(rules, 10 + s) for s in range(4)]], rules,
                          max_hands=1, batch=1)  # fmt: skip
    runner.run([(0, 0)])
    took = [a.compile_s for a in compilers if a.compile_s is not None]
    assert took and min(took) > rules.move_hard_limit_s  # each would have been a forfeit
    assert out.events == []
    assert all(h.seconds0 + h.seconds2 < rules.move_hard_limit_s for h in out.hands)


def test_forfeits_reach_the_database_and_the_report(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, agents=["test-raising", "random"], matches=1, max_hands=2)
    run_tournament(cfg)
    with ResultsDB(cfg.db_path, cfg.fingerprint()) as db:
        report = build_report(db, cfg)
    row = next(r for r in report["leaderboard"] if r["agent"] == "test-raising")
    assert row["forfeits"] > 0 and row["bid_success"] == 0.0
    assert "raised RuntimeError: boom" in format_report(report)


# -- configs ------------------------------------------------------------------------------------
def test_yaml_config_with_overrides_and_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("agents: [heuristic, random]\nmatches: 7\nrules: {preset: pagat}\nseed: 4\n")
    cfg = load_config(path, {"matches": 9, "workers": None})
    assert (cfg.agents, cfg.matches, cfg.seed, cfg.workers) == (("heuristic", "random"), 9, 4, 2)
    assert cfg.rules == Rules.preset("pagat")
    path.write_text("agents: [heuristic, random]\nmatchez: 7\n")
    with pytest.raises(
        TournamentConfigError, match=r"tournament config: unknown key\(s\) \['matchez'\]"
    ):
        load_config(path)
    path.write_text("agents: [heuristic, random]\nrules: {preset: wiki, no_such_flag: 1}\n")
    with pytest.raises(FourHundredError, match="no_such_flag"):
        load_config(path)
    with pytest.raises(TournamentConfigError, match="listed twice"):
        load_config(None, {"agents": ["random", "random"]})
    with pytest.raises(TournamentConfigError, match="matches=0"):
        load_config(None, {"agents": ["random", "heuristic"], "matches": 0})
    assert load_config(None, {"agents": ["random"], "mirror": True}).pairings() == [
        ("random", "random")
    ]
    cfg = load_config(None, {"agents": ["random", "heuristic"], "mirror": ["heuristic"]})
    assert cfg.pairings() == [("heuristic", "heuristic"), ("heuristic", "random")]
    with pytest.raises(TournamentConfigError, match="not among the agents"):
        load_config(None, {"agents": ["random", "heuristic"], "mirror": ["minbid"]})


def test_bundled_configs_load() -> None:
    root = Path(__file__).resolve().parents[1] / "configs"
    names = sorted(p.name for p in root.glob("tournament*.yaml"))
    assert "tournament_default.yaml" in names
    for name in names:
        cfg = load_config(root / name)
        assert len(cfg.agents) >= 2 and cfg.matches >= 1


def test_job_plan_depends_on_the_config_only() -> None:
    cfg = load_config(None, {"agents": ["b", "a", "c"], "matches": 5, "chunk_matches": 2})
    jobs = plan_jobs(cfg)
    assert [j.pair for j in jobs[:3]] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert sum(len(j.games) for j in jobs) == 3 * 5 * 2
    assert jobs[0].games == ((0, 0), (0, 1), (1, 0), (1, 1))
    # an agent's seed hangs on the pairing, side and seat, never on the chunk of games
    seeds = {(j.pair, j.agent_seed(0, 0)) for j in jobs}
    assert len(seeds) == len({j.pair for j in jobs}) == 3
    assert len({jobs[0].agent_seed(side, seat) for side in (0, 1) for seat in range(4)}) == 8
    done = {("a", "b", 0, 0), ("a", "b", 1, 1)}
    assert plan_jobs(cfg, done)[0].games == ((0, 1), (1, 0))


@pytest.mark.parametrize("agents", [["heuristic", "random"], ["heuristic", "heuristic-v1"]])
def test_every_seat_has_an_agent_instance_of_its_own(agents) -> None:
    """RULES.md: two seats are never served by one instance that could pass hidden
    information, partners included, and the same spec on both sides is two sets of four."""
    from fourhundred_tournament.runner import close_agents, make_job_agents

    cfg = load_config(None, {"agents": agents, "matches": 1})
    job = plan_jobs(cfg)[0]
    made = make_job_agents(job)
    try:
        assert [len(side) for side in made] == [4, 4]
        assert len({id(agent) for side in made for agent in side}) == 8
    finally:
        close_agents(made)


# -- report and command line ----------------------------------------------------------------
def test_report_numbers_and_files(tmp_path: Path) -> None:
    # two worker processes: the rows, the time histogram included, cross a process boundary
    cfg = _cfg(tmp_path, agents=["heuristic", "random", "minbid"], matches=3, mirror=True,
               max_hands=30, table_batch=6, chunk_matches=3, workers=2)  # fmt: skip
    run_tournament(cfg)
    with ResultsDB(cfg.db_path, cfg.fingerprint()) as db:
        report = build_report(db, cfg)
    assert report["games"] == report["games_expected"] == 6 * 3 * 2
    board = {r["agent"]: r for r in report["leaderboard"]}
    assert board["heuristic"]["games"] == 12  # two opponents x 3 duplicate matches x 2
    assert (
        board["heuristic"]["win_low"]
        <= board["heuristic"]["win_rate"]
        <= board["heuristic"]["win_high"]
    )
    assert board["heuristic"]["elo"] > board["random"]["elo"]
    assert 0 < board["heuristic"]["bid_success"] <= 1
    mirror = {m["agent"]: m for m in report["mirror"]}
    assert mirror["heuristic"]["rate"] == 0.5  # deterministic copies: each deal won once
    p = next(
        x for x in report["pairwise"] if x["agent"] == "heuristic" and x["opponent"] == "random"
    )
    assert p["sweeps"] + p["splits"] + p["swept"] == p["duplicate_matches"] == 3
    assert report["matrix"]["random"]["heuristic"] == pytest.approx(1 - p["rate"])
    # the time histogram holds every decision of the agents' games with others
    with ResultsDB(cfg.db_path, cfg.fingerprint()) as db:
        for a, row in board.items():
            (n,) = db.query(
                "SELECT SUM(decisions) FROM move_times WHERE agent = ? AND pair_a != pair_b", (a,)
            )[0]
            assert n == row["decisions"] > 0
            assert row["ms_p50"] <= row["ms_p90"] <= row["ms_p99"] <= row["ms_max"]
            assert row["ms_per_move"] <= row["ms_max"]
    paths = write_report(report, tmp_path / "out")
    assert json.loads(paths["json"].read_text())["games"] == 36
    header = paths["leaderboard"].read_text().splitlines()[0]
    assert header.startswith("rank,agent,elo,elo_low,elo_high,win_rate")
    text = format_report(report)
    assert "Pairwise win rate" in text and "Mirror heuristic v heuristic" in text
    assert "Time per decision, ms" in text


def test_cli_tournament_prints_the_board_and_resumes(tmp_path: Path, capsys) -> None:
    args = ["tournament", "--agents", "heuristic", "random", "--matches", "2", "--workers", "1",
            "--out", str(tmp_path), "--no-progress", "--bootstrap", "20", "--set", "seed=5"]  # fmt: skip
    assert cli_main(args) == 0
    out = capsys.readouterr().out
    assert "4 games played" in out and "heuristic" in out and "Elo" in out
    assert (tmp_path / "report.json").exists() and (tmp_path / "leaderboard.csv").exists()
    assert cli_main([*args, "--plots", str(tmp_path / "plots")]) == 0
    out = capsys.readouterr().out
    assert "0 games played" in out and "plots: " in out
    assert (tmp_path / "plots" / "leaderboard.png").stat().st_size > 10_000
    assert cli_main([*args[:-2], "--set", "seed=6"]) == 2  # another seed: refused
    assert "different tournament" in capsys.readouterr().err
    assert cli_main(["tournament", "--agents", "heuristic", "nobot", "--out", str(tmp_path / "x"),
                     "--no-progress"]) == 2  # fmt: skip
    assert "unknown agent 'nobot'" in capsys.readouterr().err


def test_tensorboard_logging_writes_event_files(tmp_path: Path) -> None:
    pytest.importorskip("torch.utils.tensorboard")
    from fourhundred_tournament.report import log_tensorboard

    cfg = _cfg(
        tmp_path, agents=["heuristic", "random"], matches=1, tensorboard=str(tmp_path / "tb")
    )
    run_tournament(cfg)
    with ResultsDB(cfg.db_path, cfg.fingerprint()) as db:
        report = build_report(db, cfg)
    log_tensorboard(report, cfg.tensorboard)
    assert list((tmp_path / "tb").glob("events.out.tfevents.*"))


class _PlainBot:
    """A plugin's bot that is no Agent: only reset and act (fourhundred_env.registry.AgentLike)."""

    def __init__(self, seed: int) -> None:
        self.inner = RandomAgent(Rules(), seed)

    def reset(self, num_tables: int) -> None:
        self.inner.reset(num_tables)

    def act(self, view: SeatView) -> np.ndarray:
        return self.inner.act(view)


register_agent("test-plain", lambda r, s, a: _PlainBot(s), "a bot of no Agent class")


def test_plugin_bot_of_no_agent_class_plays_a_tournament_and_a_compose(tmp_path):
    from fourhundred_agents.registry import make_agent

    bot = make_agent("test-plain", Rules(), seed=1)
    assert isinstance(bot, Agent) and bot.stateless and not bot.replayable
    assert not bot.times_itself
    cfg = _cfg(tmp_path, agents=["test-plain", "compose:bid=test-plain,play=heuristic"],
               matches=2, chunk_matches=2)  # fmt: skip
    run_tournament(cfg)
    assert len(_rows(cfg.db_path, "matches")) == 4  # 2 matches, both orientations
