"""Small real data for the plot and notebook tests, made once per test session.

- two training runs: a tiny PPO run (`fourhundred_train.ppo.Trainer`, 4 updates, no evaluation) and a
  synthetic run written with `SummaryWriter` that also has eval/* scalars (Wilson bounds);
- a tiny tournament (random bots and the heuristic, 3 duplicate matches per pairing).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

TINY_TRAIN = [
    "name=tiny", "num_tables=16", "rollout_steps=64", "total_decisions=4096", "hidden=32",
    "layers=1", "opponent=random", "eval_every=0", "checkpoint_every=4", "snapshot_every=2",
    "num_minibatches=1", "update_epochs=1", "torch_threads=1",
]  # fmt: skip
# num_minibatches=1: with 2, an odd number of samples leaves a minibatch of one, whose
# advantage std is NaN (train/ppo.py normalises per minibatch); not what these tests are about.
# torch_threads=1: two intra-op threads on a busy machine make 4 tiny updates take seconds.
SYNTHETIC_UPDATES = 40
EVAL_EVERY = 5


@dataclass(frozen=True)
class PlotData:
    real_run: Path  # tiny Trainer run: charts/* and losses/*, no eval/*
    synthetic_run: Path  # charts/*, losses/* and eval/* (with Wilson bounds)
    db: Path  # tournament results
    tournament_config: object  # fourhundred_tournament.config.TournamentConfig


_CACHE: dict[str, PlotData] = {}


def write_synthetic_run(run_dir: Path, seed: int = 0) -> Path:
    """A run folder with every scalar train/ppo.py logs, eval/* every EVAL_EVERY updates."""
    from torch.utils.tensorboard import SummaryWriter

    from fourhundred_tournament.ratings import wilson_interval

    rng = np.random.default_rng(seed)
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(
        f"name: synthetic\nseed: {seed}\neval_opponent: heuristic-v1\n"
    )
    writer = SummaryWriter(str(run_dir))
    for u in range(1, SYNTHETIC_UPDATES + 1):
        progress = u / SYNTHETIC_UPDATES
        scalars = {
            "losses/policy_loss": rng.normal(0, 0.01),
            "losses/value_loss": 2.0 * np.exp(-3 * progress) + rng.normal(0, 0.05),
            "losses/entropy": 1.2 - 0.4 * progress + rng.normal(0, 0.02),
            "losses/approx_kl": abs(rng.normal(0.01, 0.003)),
            "losses/clipfrac": abs(rng.normal(0.1, 0.02)),
            "losses/explained_variance": 0.6 * progress + rng.normal(0, 0.05),
            "charts/points_per_hand": -15 + 20 * progress + rng.normal(0, 2),
            "charts/bid_success_rate": 0.2 + 0.5 * progress + rng.normal(0, 0.03),
            "charts/thrown_in_rate": abs(rng.normal(0.05, 0.02)),
            "charts/decisions_per_s": 5000 + rng.normal(0, 100),
            "charts/learning_rate": 3e-4 * (1 - progress),
            "charts/decisions": 1024.0 * u,
        }
        if u % EVAL_EVERY == 0:
            games = 200
            wins = rng.binomial(games, 0.2 + 0.5 * progress)
            low, high = wilson_interval(wins, games)
            scalars |= {"eval/win_rate": wins / games, "eval/win_rate_low": low,
                        "eval/win_rate_high": high}  # fmt: skip
        for tag, value in scalars.items():
            writer.add_scalar(tag, float(value), 1024 * u)  # the step: learner decisions
    writer.close()
    return run_dir


def make_plot_data(base: Path) -> PlotData:
    from fourhundred_tournament.config import load_config as load_tournament_config
    from fourhundred_tournament.tournament import run_tournament
    from fourhundred_train.config import load_config
    from fourhundred_train.ppo import Trainer

    real = base / "runs" / "tiny__1"
    Trainer(load_config(None, TINY_TRAIN), real).train(progress=False)
    synthetic = write_synthetic_run(base / "runs" / "synthetic__0")
    cfg = load_tournament_config(
        None,
        {"agents": ["random", "random:3", "heuristic"], "matches": 3, "max_hands": 40,
         "workers": 1, "table_batch": 64, "bootstrap": 50, "progress": False,
         "out_dir": str(base / "tournament")},
    )  # fmt: skip
    run_tournament(cfg)
    return PlotData(real, synthetic, cfg.db_path, cfg)


def plot_data(tmp_path_factory: pytest.TempPathFactory) -> PlotData:
    """The session's data (made on first use; test modules share it)."""
    if "data" not in _CACHE:
        _CACHE["data"] = make_plot_data(tmp_path_factory.mktemp("plot_data"))
    return _CACHE["data"]
