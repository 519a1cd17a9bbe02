"""The guide "Train a bidding policy" (docs/bidding.md): each of its commands, as written
there, runs at a small size (the same command with size overrides added)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")

from fourhundred_cli import main

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "bidding.md").read_text()
RUN = "runs/bidding_q_short__1__<time>"
SMALL_Q = ["positions=400", "num_tables=64", "hidden=32", "epochs=1", "batch_size=128",
           "worlds=4", "candidates=8", "eval_deals=1"]  # fmt: skip
SMALL_PPO = ["num_tables=32", "total_decisions=2048", "kickstart_decisions=512",
             "average_from=1024", "hidden=32", "eval_every=1", "eval_matches=1",
             "eval_bid_deals=1"]  # fmt: skip


def _guide(command: str) -> list[str]:
    """The guide's command (it must be in the guide as written), split, without the program."""
    assert command in GUIDE, command
    return shlex.split(command)[1:]


def test_the_guide_s_commands_run_at_a_small_size(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)  # the guide's paths (examples/...) are the repository's
    runs = tmp_path / "runs"
    argv = _guide("fourhundred train bidding_q_short")
    assert main([*argv, *SMALL_Q, f"runs_dir={runs}"]) == 0
    (run,) = runs.iterdir()
    policy = f"neural-bid:{run}/policy.pt"

    def ours(command: str) -> list[str]:
        return [a.replace(RUN, str(run)) for a in _guide(command)]

    assert main(ours(f"fourhundred plot {RUN}")) == 0
    assert (run / "plots" / "bid_eval.png").is_file()
    argv = ours(f"fourhundred bid-eval neural-bid:{RUN}/policy.pt --report --deals 128 --matches 0")
    argv[argv.index("--deals") + 1] = "1"
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "report")]) == 0
    assert "bidder - heuristic-v1" in capsys.readouterr().out
    argv = ours(
        f"fourhundred tournament --agents neural-bid:{RUN}/policy.pt heuristic-v1 --matches 100"
    )
    argv[argv.index("--matches") + 1] = "1"
    assert main([*argv, "--workers", "1", "--no-progress", "--out", str(tmp_path / "t")]) == 0
    assert policy in (tmp_path / "t" / "report.json").read_text()
    # going further: your own reward, and PPO bidding
    argv = _guide("fourhundred train bidding_q_short reward=examples/bid_reward.py:big_bid_bonus")
    assert main([*argv, *SMALL_Q, f"runs_dir={tmp_path / 'reward'}"]) == 0
    assert "fourhundred train bidding_short" in GUIDE
    assert main(["train", "bidding_short", *SMALL_PPO, f"runs_dir={tmp_path / 'ppo'}"]) == 0


def test_the_guide_s_own_features_commands_run_at_a_small_size(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """Going further, your own bid features: the run, then its bidder judged with them."""
    monkeypatch.chdir(ROOT)
    runs = tmp_path / "runs"
    feature = "features=examples/bid_features.py:honours_and_partner"
    argv = _guide(f"fourhundred train bidding_q_short {feature}")
    assert main([*argv, *SMALL_Q, f"runs_dir={runs}"]) == 0
    (run,) = runs.iterdir()
    argv = [
        a.replace(RUN, str(run))
        for a in _guide(
            f'fourhundred bid-eval "neural-bid:{RUN}/policy.pt,{feature}" --report --deals 128 '
            "--matches 0"
        )
    ]
    argv[argv.index("--deals") + 1] = "1"
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "report")]) == 0
    assert "bidder - heuristic-v1" in capsys.readouterr().out
    # PPO bidding takes the same function; its own evaluation (the last update) names it
    argv = _guide(f"fourhundred train bidding_short {feature}")
    ppo = tmp_path / "ppo"
    assert main([*argv, *SMALL_PPO, "eval_every=1000", f"runs_dir={ppo}"]) == 0
    (run,) = ppo.iterdir()
    assert "eval/bid_dwin_pp" in capsys.readouterr().out
    assert main(["evaluate-run", str(run), "--matches", "1", "--workers", "1", "--features",
                 feature.removeprefix("features=")]) == 0  # fmt: skip
