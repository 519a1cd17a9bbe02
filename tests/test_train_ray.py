"""Self-play rollouts on Ray actors (`backend: ray`, train/ray_rollouts.py), on the shared
local Ray instance (conftest.py's `ray_instance`, 2 CPUs): one actor gives the local run bit
for bit; N actors give each the part of the tables the design assigns it, so a run is fixed
by its seed and N whatever the timing."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_env.engine import Engine  # noqa: E402
from fourhundred_train.config import ConfigError, load_config  # noqa: E402
from fourhundred_train.ppo import Collector, Rollout, Trainer  # noqa: E402
from fourhundred_train.ray_rollouts import join_rollouts  # noqa: E402

# Snapshot tables play the pool from update 2 on; the oracle critic's weights are broadcast
# too; the match bonus and the teacher's labels are recorded by the actors' objectives.
TINY = [
    "num_tables=12", "rollout_steps=48", "total_decisions=2304", "hidden=16", "layers=1",
    "opponent=random", "eval_every=0", "checkpoint_every=4", "snapshot_every=1",
    "num_minibatches=2", "update_epochs=1", "torch_threads=1", "oracle_critic=true",
    "match_bonus=20", "teacher=heuristic", "kickstart_coef=0.5",
]  # fmt: skip


def _same_rollouts(a: Rollout, b: Rollout) -> None:
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if x is None or y is None:
            assert x is None and y is None, f.name
        else:
            np.testing.assert_array_equal(x, y, err_msg=f.name)


def _weights(trainer: Trainer) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in trainer.params]


def test_one_actor_trains_the_local_run_bit_for_bit(ray_instance, tmp_path: Path) -> None:
    local = Trainer(load_config(None, TINY), tmp_path / "local")
    local_history = local.train(progress=False)
    ray_run = Trainer(load_config(None, [*TINY, "backend=ray", "rollout_actors=1"]), tmp_path / "r")
    ray_history = ray_run.train(progress=False)
    assert len(ray_history) == len(local_history) == 4
    # every update's rollout was played with the weights of that update (a stale copy would
    # change the samples and the losses from update 2 on), and the learner learnt the same
    for a, b in zip(_weights(local), _weights(ray_run), strict=True):
        np.testing.assert_array_equal(a, b)
    for h_local, h_ray in zip(local_history, ray_history, strict=True):
        same = {k: v for k, v in h_local.items() if "per_s" not in k}
        assert same == {k: h_ray[k] for k in same}
    assert ray_run.rollout_actors is None  # closed at the end of train


def test_two_actors_play_their_parts_and_are_reproducible(ray_instance, tmp_path: Path) -> None:
    config = load_config(None, [*TINY, "backend=ray", "rollout_actors=2", "checkpoint_every=1"])
    first = Trainer(config, tmp_path / "two")
    first.train(progress=False, stop_at=2)  # the pool has snapshots from update 1 on
    assert first.rollout_actors is None  # train stops the actors when it ends
    trainer = Trainer(config, tmp_path / "two", resume=True)  # new actors, the same run
    try:
        assert len(trainer.pool) == 2
        joined = trainer.collect()
        # each actor's part is what a collector of that part plays here, with these weights
        parts = []
        for part in range(2):
            c = Collector(config, Engine(trainer.rules), trainer.net, trainer.critic,
                          _objectives(trainer), part, 2)  # fmt: skip
            parts.append(c.collect(trainer.update, trainer.decisions, trainer.pool))
        _same_rollouts(joined, join_rollouts(parts))
        assert joined.action.shape == (48, 12)
        assert [p.action.shape[1] for p in parts] == [6, 6]
        # not the one-part rollout: other deals per table
        one = trainer.collector.collect(trainer.update, trainer.decisions, trainer.pool)
        assert not np.array_equal(one.obs, joined.obs)
        # and again, whatever the timing: the same bits
        _same_rollouts(joined, trainer.collect())
    finally:
        trainer.close()


def _objectives(trainer: Trainer):
    from fourhundred_train.objectives import make_objectives

    return make_objectives(
        trainer.config, Engine(trainer.rules), trainer.net, trainer.critic, trainer.teacher
    )


def test_joined_rollout_values_keep_their_rows() -> None:
    def part(q_rows: int, b: int, rows: list[tuple[int, int]]) -> Rollout:
        t = 3
        z = np.zeros((t, b))
        r = Rollout(obs=np.zeros((t, b, 1)), mask=z, action=z, logp=z, value=z, seat=z,
                    seat_rewards=np.zeros((t, b, 4)), done=z, thrown_in=z,
                    learner=np.zeros((b, 4)))  # fmt: skip
        r.rollout_row = np.full((t, b), -1)
        for i, (step, table) in enumerate(rows):
            r.rollout_row[step, table] = i
        r.rollout_q = np.arange(q_rows * 66, dtype=np.float32).reshape(q_rows, 66) + 1000 * b
        r.rollout_own = np.arange(q_rows)
        return r

    a, b = part(2, 2, [(0, 1), (2, 0)]), part(1, 3, [(1, 2)])
    j = join_rollouts([a, b])
    assert j.obs.shape == (3, 5, 1) and j.learner.shape == (5, 4)
    for r, offset in ((a, 0), (b, 2)):
        for step, table in zip(*np.nonzero(r.rollout_row >= 0), strict=True):
            row = j.rollout_row[step, table + offset]
            np.testing.assert_array_equal(j.rollout_q[row], r.rollout_q[r.rollout_row[step, table]])
    assert (j.rollout_row >= 0).sum() == 3


def test_bad_ray_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="rollout_actors=20: expected at most num_tables=12"):
        load_config(None, [*TINY, "backend=ray", "rollout_actors=20"])
    with pytest.raises(ConfigError, match="ray_address='x:1': expected backend 'ray'"):
        load_config(None, [*TINY, "ray_address=x:1"])
    with pytest.raises(ConfigError, match="backend"):
        load_config(None, [*TINY, "backend=spark"])
