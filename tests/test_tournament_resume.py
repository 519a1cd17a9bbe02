"""A tournament's results depend on its config alone: not on the batch, the chunking, the
workers or a resume. Every stochastic bundled bot draws per game and position; an interrupted
run, resumed, gives every row of the straight run (in process here; killed for real with
SIGKILL and SIGINT in tests/test_tournament_kill.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.neural.agent import sample_from_probs
from fourhundred_env import Engine, Rules
from fourhundred_env.view import seat_view
from fourhundred_tournament.config import TournamentConfig, load_config
from fourhundred_tournament.runner import Records
from fourhundred_tournament.tournament import run_tournament

STOCHASTIC = ["heuristic:epsilon=0.3", "random", "pimc:worlds=2",
              "neural:agents/pretrained/selfplay.pt,sample=true"]  # fmt: skip


def _cfg(tmp_path: Path, name: str, **kw) -> TournamentConfig:
    # public deals: separate runs deal alike only from the seed (each secret-dealt tournament
    # draws its own secret; its resume: tests/test_fair_strangers.py)
    values = dict(agents=STOCHASTIC, matches=2, seed=11, max_hands=3, workers=1, progress=False,
                  out_dir=str(tmp_path / name), bootstrap=0, chunk_matches=2, table_batch=8,
                  deals="public")  # fmt: skip
    values.update(kw)
    return load_config(None, values)


def table_rows(db: Path, table: str) -> list[tuple]:
    """Every row of `table` in key order, without the columns that may differ between runs:
    timings (seconds), the rows' digests (which cover the timings) and the events' own ids."""
    con = sqlite3.connect(db)
    try:
        cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        keep = [c for c in cols if "seconds" not in c and c not in ("id", "digest")]
        order = "pair_a, pair_b, match_id, orientation" + (
            ", hand_index" if "hand_index" in cols else ""
        )
        if table == "events":
            order += ", seat, kind, detail"
        return con.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY {order}").fetchall()
    finally:
        con.close()


def same_rows(a: Path, b: Path) -> None:
    """The two databases hold the same hands (their moves too), matches and events, row for
    row."""
    for path in (a, b):  # every hand keeps its moves, which the rows compared include
        con = sqlite3.connect(path)
        try:
            (unstored,) = con.execute("SELECT count(*) FROM hands WHERE moves IS NULL").fetchone()
        finally:
            con.close()
        assert unstored == 0, path
    for table in ("matches", "hands", "events"):
        ra, rb = table_rows(a, table), table_rows(b, table)
        assert len(ra) == len(rb), table
        diff = [i for i, (x, y) in enumerate(zip(ra, rb, strict=True)) if x != y]
        assert not diff, f"{table}: {len(diff)} rows differ, first {ra[diff[0]]} vs {rb[diff[0]]}"


def test_stochastic_bots_give_the_same_rows_whatever_the_batch_chunks_and_resume(
    tmp_path: Path,
) -> None:
    straight = _cfg(tmp_path, "straight")
    run_tournament(straight)
    assert len(table_rows(straight.db_path, "matches")) == 6 * 2 * 2
    # one table at a time, one duplicate match per job
    small = _cfg(tmp_path, "small", table_batch=1, chunk_matches=1)
    run_tournament(small)
    same_rows(straight.db_path, small.db_path)

    # stopped after its first rows (a Ctrl-C as the rows arrive), then resumed twice
    resumed = _cfg(tmp_path, "resumed", table_batch=3, flush_seconds=0.0)
    seen = []

    def interrupt(rec: Records) -> None:
        seen.append(len(rec.matches))
        if sum(seen) >= 5:
            raise KeyboardInterrupt

    for _ in range(2):
        seen.clear()
        with pytest.raises(KeyboardInterrupt):
            run_tournament(resumed, on_records=interrupt)
    assert 0 < len(table_rows(resumed.db_path, "matches")) < 24
    summary = run_tournament(resumed)
    assert summary.games_resumed > 0
    same_rows(straight.db_path, resumed.db_path)


def test_the_search_bidder_bids_the_same_whatever_the_batch(tmp_path: Path) -> None:
    # the runner cuts a slow agent's calls into parts by its timing (Refereed.turn in
    # tournament/conduct.py):
    # that is only sound because no agent's moves depend on which tables share a call
    agents = ["compose:bid=search:bidder,worlds=4,candidates=32,play=heuristic-v1",
              "heuristic-v1"]  # fmt: skip
    batched = _cfg(tmp_path, "batched", agents=agents, matches=3, max_hands=4)
    run_tournament(batched)
    alone = _cfg(tmp_path, "alone", agents=agents, matches=3, max_hands=4, table_batch=1)
    run_tournament(alone)
    same_rows(batched.db_path, alone.db_path)


def test_sampled_policy_draws_each_position_alone() -> None:
    rules = Rules()
    engine = Engine(rules)
    state = engine.init(12, seed=4)
    engine.deal(state)
    state.stream[:] = np.arange(12, dtype=np.uint64) * np.uint64(977)
    view = seat_view(engine, state)
    spec = "neural:agents/pretrained/selfplay.pt,sample=true"
    whole = make_agent(spec, rules, seed=3).act(view)
    alone = [make_agent(spec, rules, seed=3).act(view.select([i]))[0] for i in range(12)]
    np.testing.assert_array_equal(whole, alone)
    assert view.legal_mask[np.arange(12), whole].all()
    # the inverse of the cumulative distribution: never an action of probability 0
    u = np.array([0.0, 0.2, 0.5, 0.999999])
    probs = np.zeros((4, 66))
    probs[:, [3, 7, 9]] = [0.2, 0.0, 0.8]
    mask = np.zeros((4, 66), bool)
    mask[:, [3, 7, 9]] = True
    assert sample_from_probs(probs, mask, u).tolist() == [3, 9, 9, 9]
