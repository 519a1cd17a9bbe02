"""`fourhundred train` in a newcomer's first minutes (issue 70): a run stopped mid-way by your
reward answering NaN keeps what it did and says how to go on, or leaves no folder; the
progress bar ends before the error's line; every trainer says and records the device it
learns on (`device=auto`'s choice); an agent spec misspelt on the command line is blamed on
the override."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from fourhundred_cli import main

PPO_BID = ["mode=bidding", "num_tables=64", "rollout_steps=8", "total_decisions=1024",
           "hidden=32", "layers=1", "eval_every=0", "checkpoint_every=1", "num_minibatches=2",
           "update_epochs=1", "play_policy=heuristic-v1"]  # fmt: skip
"""Two updates of PPO bidding, each checkpointed (the commands below end in --no-eval, which
the fitted-Q bidder takes too)."""
BID_Q = ["bidding_q", "positions=3000", "num_tables=128", "hidden=32", "layers=1", "epochs=4",
         "batch_size=256", "net=mlp", "bid_head=value", "worlds=0", "workers=1", "per_point=0",
         "iterations=2", "eval_every=0"]  # fmt: skip
"""Two iterations of the fitted-Q bidder."""


def write_late_reward(folder: Path, runs: Path) -> Path:
    """late.py in `folder`: rewards that pass the check at the start and answer NaN later,
    while the file `folder`/poison exists: `after(outcome)` once a run under `runs` has
    saved something to resume from (PPO's latest.pt, the fitted-Q bidder's iter_0.pt),
    `at_once` once a run folder is made (the first rollout or iteration)."""
    (folder / "poison").write_text("")
    path = folder / "late.py"
    path.write_text(
        textwrap.dedent(f"""
        from pathlib import Path

        import numpy as np

        RUNS, POISON = Path({str(runs)!r}), Path({str(folder / "poison")!r})

        def after(outcome):
            saved = any(RUNS.rglob("latest.pt")) or any(RUNS.rglob("iter_0.pt"))
            return outcome.value * (np.nan if saved and POISON.exists() else 1.0)

        def at_once(outcome):
            started = any(RUNS.rglob("config.yaml"))  # the run folder is made
            return outcome.value * (np.nan if started and POISON.exists() else 1.0)
    """)
    )
    return path


def _error_last(capsys) -> tuple[str, str]:
    """(stdout, the error line), asserting that the error is stderr's last line: no progress
    bar drawn after it (tqdm's carriage returns count as line ends here)."""
    out, err = capsys.readouterr()
    last = err.rstrip().splitlines()[-1]
    assert last.startswith("fourhundred: error: ") and "not finite" in last, err
    assert err.count("fourhundred: error:") == 1, err
    return out, last


@pytest.mark.parametrize("argv", [PPO_BID, BID_Q], ids=["ppo", "bid_q"])
def test_a_reward_answering_nan_mid_run_keeps_the_run_and_says_how_to_resume(
    argv: list[str], tmp_path: Path, capsys
) -> None:
    runs = tmp_path / "runs"
    late = write_late_reward(tmp_path, runs)
    assert main(["train", *argv, f"reward={late}:after", f"runs_dir={runs}", "--no-eval"]) == 2
    out, line = _error_last(capsys)
    (run,) = runs.iterdir()
    assert f"run folder: {run}" in out
    assert f"the run so far is kept in {run}" in line
    resume = line.partition(f"kept in {run}: ")[2].removesuffix(" continues it)")
    words = shlex.split(resume)
    assert words[:4] == ["fourhundred", "train", "--resume", str(run)], line
    assert f"reward={late}:after" in words  # a run folder is data: named again
    (tmp_path / "poison").unlink()  # the reward mended: the line goes on from the checkpoint
    assert main([*words[1:], "--no-eval"]) == 0
    out = capsys.readouterr().out
    if "mode=bidding" in argv:
        assert "done: 2 updates" in out
    else:
        assert '"iteration": 1' in out and '"iteration": 0' not in out  # iteration 0 kept
    assert (run / "policy.pt").is_file()


@pytest.mark.parametrize("argv", [PPO_BID, BID_Q], ids=["ppo", "bid_q"])
def test_a_reward_answering_nan_before_anything_to_resume_leaves_no_folder(
    argv: list[str], tmp_path: Path, capsys
) -> None:
    runs = tmp_path / "runs" / "mine"
    late = write_late_reward(tmp_path, runs)
    assert main(["train", *argv, f"reward={late}:at_once", f"runs_dir={runs}", "--no-eval"]) == 2
    out, line = _error_last(capsys)
    assert "run folder: " in out and "is removed" in line
    assert not (tmp_path / "runs").exists()  # the folders this command made, all of them


def test_a_run_in_a_folder_that_was_there_already_is_left_there(tmp_path: Path, capsys) -> None:
    """Only what the command made is removed: runs_dir, there before, stays."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "theirs.txt").write_text("keep")
    late = write_late_reward(tmp_path, runs)
    argv = ["train", *PPO_BID, f"reward={late}:at_once", f"runs_dir={runs}", "--no-eval"]
    assert main(argv) == 2
    _error_last(capsys)
    assert [p.name for p in runs.iterdir()] == ["theirs.txt"]


def _device_texts(run: Path) -> list[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run), size_guidance={"tensors": 0})
    events.Reload()
    return [e.tensor_proto.string_val[0].decode() for e in events.Tensors("device/text_summary")]


@pytest.mark.parametrize(
    "argv",
    [["tiny", "total_decisions=1024"], [*BID_Q[:-2], "iterations=1", "eval_every=0"]],
    ids=["ppo", "bid_q"],
)
def test_the_device_is_said_beside_the_run_folder_and_recorded(
    argv: list[str], tmp_path: Path, capsys
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("what device=auto chooses on a machine with a GPU: tested on the CPU")
    assert main(["train", *argv, f"runs_dir={tmp_path}", "device=auto", "--no-eval"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (run,) = tmp_path.iterdir()
    at = next(i for i, x in enumerate(lines) if x.startswith("run folder: "))
    assert lines[at + 1] == "device: cpu (device=auto: no CUDA GPU found)"
    assert _device_texts(run) == ["cpu (device=auto: no CUDA GPU found)"]
    # a resume records where it learnt this time; a device named is said as it is
    resume = ["train", "--resume", str(run), "device=cpu"]
    more = ["total_decisions=2048"] if argv[0] == "tiny" else ["iterations=2"]
    assert main([*resume, *more, "--no-eval"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[at + 1] == "device: cpu"
    assert _device_texts(run) == ["cpu (device=auto: no CUDA GPU found)", "cpu"]


def test_an_exit_trainer_knows_its_device(tmp_path: Path) -> None:
    from fourhundred_train.exit import ExitTrainer, load_exit_config

    config = load_exit_config("exit", ["bidder=", "device=cpu", "progress=false"])
    assert ExitTrainer(config, tmp_path / "run").device_used == "cpu"


def test_an_agent_misspelt_on_the_command_line_is_blamed_on_it(tmp_path: Path, capsys) -> None:
    assert main(["train", "tiny", "opponent=heuristc", f"runs_dir={tmp_path}", "--no-eval"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(
        "fourhundred: error: opponent=heuristc (command line): unknown agent 'heuristc': "
        "did you mean 'heuristic'"
    ), err
    assert err.count("\n") == 1 and "run folder" not in out
    assert list(tmp_path.iterdir()) == []


def test_an_agent_of_the_config_file_is_still_blamed_on_its_key(tmp_path: Path, capsys) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text("opponent: heuristc\n")
    assert main(["train", str(mine), f"runs_dir={tmp_path / 'runs'}", "--no-eval"]) == 2
    err = capsys.readouterr().err
    assert "fourhundred: error: opponent: unknown agent 'heuristc'" in err, err
    assert "(command line)" not in err
