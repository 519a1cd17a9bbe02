"""Seeding: the native vector env and Gymnasium's SyncVectorEnv of FourHundred-v0 play the
same trajectories for the same seed (observations, rewards, ends and infos, dtypes
included) with every kind of opponent, because every opponent draws per table."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import fourhundred_env.envs  # noqa: F401 - registers the ids
from tests.envs_common import assert_same_data, pick_actions

NEURAL = "neural:agents/pretrained/selfplay.pt"


def run_both(steps: int, num_envs: int = 4, **options: object) -> int:
    """Step the native env and the sync one with the same actions; returns episodes ended."""
    kind = {"num_envs": num_envs, **options}
    native = gym.make_vec("FourHundred-v0", vectorization_mode="vector_entry_point", **kind)
    sync = gym.make_vec("FourHundred-v0", vectorization_mode="sync", **kind)
    a, info_a = native.reset(seed=7)
    b, info_b = sync.reset(seed=7)
    assert_same_data(a, b, "reset obs")
    assert_same_data(info_a, info_b, "reset info")
    ended = 0
    for step in range(steps):
        actions = pick_actions(a["action_mask"], step, np.arange(num_envs))
        out_a, out_b = native.step(actions), sync.step(actions)
        for name, x, y in zip(
            ("obs", "reward", "terminated", "truncated", "info"), out_a, out_b, strict=True
        ):
            assert_same_data(x, y, f"step {step} {name}")
        a = out_a[0]
        ended += int((out_a[2] | out_a[3]).sum())
    return ended


@pytest.mark.parametrize(
    "opponents", ["random", "random:any", "heuristic", "heuristic:epsilon=0.2", "heuristic-v1",
                  "minbid", ("heuristic", "random", "minbid", "heuristic:epsilon=0.5")],
)  # fmt: skip
def test_native_and_sync_agree_with_scripted_opponents(opponents: object) -> None:
    assert run_both(400, opponents=opponents, max_hands=2) >= 4


@pytest.mark.parametrize(
    "spec", [NEURAL, NEURAL + ",sample=true", "neural-bid:agents/pretrained/bidder.pt"]
)
def test_native_and_sync_agree_with_a_neural_opponent(spec: str) -> None:
    pytest.importorskip("torch")
    assert run_both(32, num_envs=2, opponents=spec, episode="hand") >= 2


def test_native_and_sync_agree_for_the_bidding_env_and_a_partnership() -> None:
    assert run_both(200, learner_seats=(0, 2), reward="team_points", max_hands=2) >= 4
    kind = {"num_envs": 3, "policy": "heuristic:epsilon=0.3"}
    native = gym.make_vec("FourHundredBid-v0", vectorization_mode="vector_entry_point", **kind)
    sync = gym.make_vec("FourHundredBid-v0", vectorization_mode="sync", **kind)
    # the native bidding env restarts in the same step; compare episode by episode
    a, _ = native.reset(seed=11)
    b, _ = sync.reset(seed=11)
    for step in range(40):
        assert_same_data(a, b, f"episode {step}")
        actions = pick_actions(a["action_mask"], step, np.arange(3))
        a, r_a, t_a, _, _ = native.step(actions)
        _, r_b, t_b, _, _ = sync.step(actions)
        assert t_a.all() and t_b.all() and np.array_equal(r_a, r_b) and r_a.dtype == r_b.dtype
        b, *_ = sync.step(actions)  # NEXT_STEP's restart


def test_different_seeds_differ() -> None:
    kind = {"num_envs": 2, "vectorization_mode": "vector_entry_point", "opponents": "heuristic"}
    a, _ = gym.make_vec("FourHundred-v0", **kind).reset(seed=1)
    b, _ = gym.make_vec("FourHundred-v0", **kind).reset(seed=2)
    assert not np.array_equal(a["observation"], b["observation"])
