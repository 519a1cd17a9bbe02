"""How the environments are found: import boundaries and Gymnasium registration."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np

from fourhundred_env.envs import FourHundredVectorEnv, register_envs


def run_python(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True)


def test_rules_core_imports_neither_gymnasium_nor_torch() -> None:
    run_python(
        "import sys, fourhundred_env, fourhundred_env.observation;"
        "bad = [m for m in ('torch', 'gymnasium', 'pettingzoo') if m in sys.modules];"
        "assert not bad, bad"
    )


def test_envs_import_neither_torch_nor_pettingzoo() -> None:
    run_python(
        "import sys, fourhundred_env.envs;"
        "bad = [m for m in ('torch', 'pettingzoo') if m in sys.modules];"
        "assert not bad, bad"
    )


def test_make_with_the_module_prefix_needs_no_import() -> None:
    run_python(
        "import gymnasium as gym;"
        "env = gym.make('fourhundred_env.envs:FourHundred-v0');"
        "obs, info = env.reset(seed=0); assert info['seat'] == 0;"
        "env = gym.make('fourhundred_env.envs:FourHundredBid-v0'); env.reset(seed=0)"
    )


def test_make_and_make_vec_after_import() -> None:
    register_envs()  # idempotent
    env = gym.make("FourHundred-v0")
    assert env.spec is not None and env.spec.id == "FourHundred-v0"
    vec = gym.make_vec("FourHundred-v0", num_envs=5, vectorization_mode="vector_entry_point")
    assert isinstance(vec, FourHundredVectorEnv) and vec.num_envs == 5
    assert vec.config.learner_seats == (0,)  # the same defaults as gym.make
    obs, info = vec.reset(seed=0)
    assert (info["seat"] == 0).all() and obs["observation"].shape == (5, 588)
    selfplay = gym.make_vec(
        "FourHundred-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        learner_seats=(0, 1, 2, 3),
        episode="hand",
    )
    assert selfplay.config.self_play and selfplay.config.episode == "hand"
    sync = gym.make_vec("FourHundred-v0", num_envs=2, vectorization_mode="sync")
    obs, _ = sync.reset(seed=0)
    assert obs["action_mask"].shape == (2, 66)
    obs, *_ = sync.step(np.argmax(obs["action_mask"], axis=1))
