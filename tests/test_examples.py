"""The examples under examples/ run: a few updates each, from a fresh directory."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One intra-op thread, as the examples use (two on a busy machine are many times
    slower for these small networks); the process's setting is restored after."""
    torch = pytest.importorskip("torch")

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def test_cleanrl_ppo_trains_on_the_native_vector_env(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    example = load_example("cleanrl_ppo")
    args = example.parse_args(
        ["--total-timesteps", "1024", "--num-envs", "32", "--num-steps", "16", "--seed", "3"]
    )
    assert args.num_envs == 32 and args.tensorboard
    stats = example.main(args)
    assert 0.0 <= stats["win_rate"] <= 1.0 and stats["return"] != 0.0
    assert list((tmp_path / "runs").glob("cleanrl_ppo__3__*/events.out.tfevents.*"))


def test_sb3_maskable_ppo_trains_saves_and_evaluates(tmp_path: Path) -> None:
    if not os.environ.get("CI"):
        pytest.importorskip("sb3_contrib")
    example = load_example("sb3_maskable_ppo")
    args = example.parse_args(
        ["--total-timesteps", "1024", "--num-envs", "16", "--n-steps", "32", "--batch-size",
         "256", "--eval-matches", "6", "--eval-max-hands", "2", "--runs-dir", str(tmp_path), "--learner-seats", "0", "2"]
    )  # fmt: skip
    assert args.learner_seats == [0, 2]
    results = example.main(args)
    assert {"win_rate_vs_random", "win_rate_vs_heuristic"} <= results.keys()
    assert all(0.0 <= results[k] <= 1.0 for k in ("win_rate_vs_random", "win_rate_vs_heuristic"))
    assert list(tmp_path.glob("sb3_maskable_ppo__1__*/model.zip"))
