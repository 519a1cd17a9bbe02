"""Stable-Baselines3 and sb3-contrib with the defaults (the ``sb3`` extra, installed by the
Makefile): both checkers, make_vec_env, masks through SB3's vector envs, the batched adapter
and a short MaskablePPO run on it. CI (CI=true) fails rather than skips without the extra."""

from __future__ import annotations

import os
import warnings

import gymnasium as gym
import numpy as np
import pytest

if not os.environ.get("CI"):
    pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

import fourhundred_env.envs  # noqa: F401 - registers the ids
from fourhundred_env import FourHundredError
from fourhundred_env.envs import FourHundredVectorEnv
from fourhundred_env.envs.sb3 import FourHundredSB3VecEnv, make_sb3_vec_env
from tests.envs_common import assert_same_data, pick_actions


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One intra-op thread, as the examples use (two on a busy machine are many times
    slower for these small networks); the process's setting is restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("env_id", ["FourHundred-v0", "FourHundredBid-v0"])
def test_sb3_check_env_passes_with_the_defaults(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id).unwrapped)
        check_env(gym.make(env_id))


def test_make_vec_env_with_sb3s_defaults_renders_and_masks() -> None:
    venv = make_vec_env("FourHundred-v0")  # SB3 asks for render_mode="rgb_array"
    assert venv.render_mode == "rgb_array" and is_masking_supported(venv)
    obs = venv.reset()
    for step in range(30):
        masks = get_action_masks(venv)
        assert masks.shape == (1, 66) and np.array_equal(masks, obs["action_mask"].astype(bool))
        obs, *_ = venv.step(pick_actions(obs["action_mask"], step, np.zeros(1)))
    image = venv.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    human = make_vec_env("FourHundred-v0", env_kwargs={"render_mode": "human"})
    assert human.render_mode == "human" and human.reset()["action_mask"].any()


def test_masks_through_dummy_and_subprocess_vec_envs() -> None:
    dummy = DummyVecEnv([lambda: gym.make("FourHundredBid-v0")] * 2)
    assert is_masking_supported(dummy)
    obs = dummy.reset()
    assert np.array_equal(get_action_masks(dummy), obs["action_mask"].astype(bool))
    # a worker process imports the package through the id's module prefix
    subproc = SubprocVecEnv([lambda: gym.make("fourhundred_env.envs:FourHundred-v0")] * 2)
    try:
        assert is_masking_supported(subproc)
        obs = subproc.reset()
        assert np.array_equal(get_action_masks(subproc), obs["action_mask"].astype(bool))
    finally:
        subproc.close()


def test_the_adapter_is_the_native_env_in_sb3s_terms() -> None:
    options = {"episode": "hand", "opponents": "heuristic", "illegal_action": "end"}
    adapter = make_sb3_vec_env("FourHundred-v0", num_envs=6, seed=3, **options)
    native = FourHundredVectorEnv(6, autoreset_mode="same_step", learner_seats=0, **options)
    assert is_masking_supported(adapter)
    obs = adapter.reset()
    ref, _ = native.reset(seed=3)
    ended = 0
    for step in range(120):
        assert_same_data(obs, ref, f"step {step}")
        assert np.array_equal(get_action_masks(adapter), ref["action_mask"].astype(bool))
        actions = pick_actions(ref["action_mask"], step, np.arange(6))
        actions[step % 6] = 65 if step % 17 == 0 else actions[step % 6]  # sometimes illegal
        obs, reward, dones, infos = adapter.step(actions)
        ref, r_ref, term, trunc, info = native.step(actions)
        assert reward.dtype == np.float32 and np.array_equal(reward, r_ref.astype(np.float32))
        assert np.array_equal(dones, term | trunc)
        for i in np.flatnonzero(dones):
            ended += 1
            final = infos[i]["terminal_observation"]
            assert np.array_equal(final["observation"], info["final_obs"]["observation"][i])
            assert infos[i]["outcome"] == info["outcome"][i]
            assert infos[i]["is_success"] == (info["outcome"][i] == 1)
            assert infos[i]["TimeLimit.truncated"] is False
        for i in np.flatnonzero(~dones):
            assert "terminal_observation" not in infos[i] and "outcome" not in infos[i]
    assert ended >= 6


def test_the_adapter_refuses_what_sb3_cannot_learn() -> None:
    with pytest.raises(FourHundredError, match="one seat or a partnership"):
        FourHundredSB3VecEnv(FourHundredVectorEnv(2, autoreset_mode="same_step"))
    with pytest.raises(FourHundredError, match="SAME_STEP"):
        FourHundredSB3VecEnv(FourHundredVectorEnv(2, learner_seats=0))
    with pytest.raises(FourHundredError, match="env_id='CartPole-v1'"):
        make_sb3_vec_env("CartPole-v1")


def test_a_short_maskable_ppo_run_on_the_adapter() -> None:
    """Some 2,000 decisions: MaskablePPO steps, masks and learns through the adapter, the
    episodes' results reach its logs (success rate), and it only ever picks legal actions."""
    env = VecMonitor(make_sb3_vec_env("FourHundred-v0", num_envs=16, seed=0, episode="hand"))
    model = MaskablePPO(
        "MultiInputPolicy", env, n_steps=32, batch_size=256, n_epochs=2, seed=0, device="cpu"
    )
    model.learn(2048)
    assert model.num_timesteps >= 2048
    assert len(model.ep_info_buffer) > 0 and len(model.ep_success_buffer) > 0
    obs = env.reset()
    for _ in range(20):
        masks = get_action_masks(env)
        actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
        assert masks[np.arange(16), actions].all()
        obs, *_ = env.step(actions)
