"""Bad input to `fourhundred train` and `fourhundred evaluate-run`: one line naming the key or
flag, its value and what was expected; exit 2; and nothing written (no run folder for a
refused config, no config.yaml rewritten on a refused resume, no events file added to a run
that evaluate-run refuses). Every case is refused before any training or game starts."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")

from fourhundred_cli import main
from fourhundred_train.bid_q.config import load_bid_q_config
from fourhundred_train.config import ConfigError, load_config
from fourhundred_train.exit.config import load_exit_config
from fourhundred_train.ppo import Trainer


def _refused(capsys, argv: list[str], *expected: str) -> str:
    """Run the command; assert exit 2 and one `fourhundred: error:` line holding each of
    `expected`, with nothing on stdout (no "run folder: ..." line). Returns that line."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fourhundred: error: "), err
    for text in expected:
        assert text in lines[0], lines[0]
    assert "run folder" not in out
    return lines[0]


def _tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` with its sha256: what a refused command must leave as it was."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    "override, expected",
    [
        ("opponent=nosuch", ["opponent=nosuch (command line): unknown agent 'nosuch'", "expected one of"]),
        ("opponent=neural:missing.pt", ["opponent=neural:missing.pt (command line)", "'missing.pt' does not exist"]),
        ("eval_opponent=nosuch", ["eval_opponent=nosuch (command line): unknown agent 'nosuch'"]),  # even with --no-eval
        ("play_policy=nosuch", ["play_policy=nosuch (command line): unknown agent 'nosuch'"]),
        ("teacher=nosuch", ["teacher=nosuch (command line): unknown agent 'nosuch'"]),
        ("seed=-1", ["seed=-1: expected a seed of 0 or more, below 2**63"]),
        (f"seed={2**63}", [f"seed={2**63}: expected a seed of 0 or more, below 2**63"]),
        ("gamma=2", ["gamma=2.0: expected a number from 0 to 1"]),
        ("gamma=nan", ["gamma=nan: expected a number from 0 to 1"]),
        ("gae_lambda=-0.5", ["gae_lambda=-0.5: expected a number from 0 to 1"]),
        ("clip_coef=-1", ["clip_coef=-1.0: expected a number > 0"]),
        ("learning_rate=-1", ["learning_rate=-1.0: expected a number > 0"]),
        ("learning_rate=0", ["learning_rate=0.0: expected a number > 0"]),
        ("learning_rate=inf", ["learning_rate=inf: expected a finite number"]),
        ("max_grad_norm=0", ["max_grad_norm=0.0: expected a number > 0"]),
        ("ent_coef=-0.01", ["ent_coef=-0.01: expected a number >= 0"]),
        ("target_kl=0", ["target_kl=0.0: expected a number > 0, or null"]),
        ("match_bonus=nan", ["match_bonus=nan: expected a finite number"]),
        ("hidden=100000000", ["network too big: hidden=100,000,000: expected at most 4096"]),
        ("layers=1000", ["network too big: layers=1000: expected at most 32"]),
    ],
)  # fmt: skip
def test_a_bad_override_is_refused_before_the_run_folder(
    override: str, expected: list[str], tmp_path: Path, capsys
) -> None:
    runs = tmp_path / "runs"
    _refused(capsys, ["train", "--no-eval", "tiny", f"runs_dir={runs}", override], *expected)
    assert not runs.exists()


def test_the_configs_refuse_ranges_themselves() -> None:
    """The same checks in the loader, for code that builds configs without the command line."""
    with pytest.raises(ConfigError, match=r"gamma=nan: expected a number from 0 to 1"):
        load_config("tiny", ["gamma=nan"])
    with pytest.raises(ConfigError, match=r"hidden=100,000,000: expected at most 4096"):
        load_config("tiny", ["hidden=100000000"])
    for override, message in [
        ("learning_rate=inf", r"learning_rate=inf: expected a finite number"),
        ("learning_rate=-1", r"learning_rate=-1\.0: expected a value > 0"),
        ("temperature=inf", r"temperature=inf: expected a finite number"),
        ("value_coef=nan", r"value_coef=nan: expected a finite number"),
        ("seed=-1", r"seed=-1: expected a seed of 0 or more"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_exit_config("exit", [override])
    for override, message in [
        ("learning_rate=inf", r"learning_rate=inf: expected a finite number"),
        ("learning_rate=0", r"learning_rate=0\.0: expected a number > 0"),
        ("clip=nan", r"clip=nan: expected a finite number"),
        ("seed=-1", r"seed=-1: expected a seed of 0 or more"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_bid_q_config("bidding_q", [override])


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished 2-update tiny run (snapshot at update 2), to copy for each case."""
    run = tmp_path_factory.mktemp("finished") / "run"
    config = load_config("tiny", ["eval_every=0", "total_decisions=2048"])
    Trainer(config, run).train(progress=False)
    return run


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished_run, copy)
    return copy


@pytest.mark.parametrize(
    "override, expected",
    [
        ("mode=bidding", ["mode='bidding' differs from the run's 'selfplay'"]),
        ("hidden=64", ["hidden=64 differs from the run's 32"]),
        ("layers=2", ["layers=2 differs from the run's 1"]),
        ("total_decisions=1024", ["total_decisions=1,024: expected at least the 2,048 decisions"]),
        ("gamma=nan", ["gamma=nan: expected a number from 0 to 1"]),
        ("opponent=nosuch", ["opponent=nosuch (command line): unknown agent 'nosuch'"]),
    ],
)
def test_a_resume_that_would_change_what_the_run_is_is_refused(
    override: str, expected: list[str], run_copy: Path, capsys
) -> None:
    before = _tree(run_copy)
    _refused(capsys, ["train", "--no-eval", "--resume", str(run_copy), override], *expected)
    assert _tree(run_copy) == before  # config.yaml as it was, no new events file


def test_a_finished_run_still_resumes_with_nothing_to_do(run_copy: Path, capsys) -> None:
    """The checks refuse changes, not the resume itself (a total already reached is fine)."""
    assert main(["train", "--no-eval", "--resume", str(run_copy), "total_decisions=2048"]) == 0
    assert "done: 2 updates" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--opponent", "nosuch"], ["--opponent: unknown agent 'nosuch'", "expected one of"]),
        (["--opponent", "neural:missing.pt"],
         ["--opponent 'neural:missing.pt'", "'missing.pt' does not exist"]),
        (["--opponent", "search:worlds=0"], ["--opponent: agent 'search:worlds=0'", "expected 1 to 65,536"]),
        (["--matches", "0"], ["--matches 0: expected at least 1"]),
        (["--matches", "-2"], ["--matches -2: expected at least 1"]),
        (["--every", "0"], ["--every 0: expected at least 1"]),
        (["--every", "-1"], ["--every -1: expected at least 1"]),
        (["--workers", "0"], ["--workers 0: expected at least 1"]),
    ],
)  # fmt: skip
def test_evaluate_run_refuses_bad_flags_before_logging(
    flags: list[str], expected: list[str], run_copy: Path, capsys
) -> None:
    before = _tree(run_copy)
    _refused(capsys, ["evaluate-run", str(run_copy), "--workers", "1", *flags], *expected)
    assert _tree(run_copy) == before  # no new events file, no eval/ folder


def test_evaluate_run_refuses_an_unreadable_snapshot_before_playing_any(
    run_copy: Path, capsys
) -> None:
    (snap,) = (run_copy / "checkpoints").glob("policy_*.pt")
    snap.write_bytes(snap.read_bytes()[:1000])
    before = _tree(run_copy)
    _refused(capsys, ["evaluate-run", str(run_copy), "--matches", "1"],
             "snapshot policy_00002.pt:", "truncated or corrupt")  # fmt: skip
    assert _tree(run_copy) == before
