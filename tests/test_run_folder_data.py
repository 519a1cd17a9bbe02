"""A run folder is data (issue 67): what its config.yaml (or its latest.pt) names that would
start a program (a ``cmd:`` bot, alone or inside ``compose:``) or import code (bid features, a
reward function of your own) is never started or imported by a command that reads the run
(`evaluate-run`, its `--ladder`, `train --resume` of each trainer, `plot`), unless the
command line names it again. The refusal is one line naming the field and how to name it
again; named again, it runs. docs/security.md, "What data can do"."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from fourhundred_cli import main
from fourhundred_env.configs import load_yaml, save_yaml
from tests import test_train_bad_input as _bad_input

SIMPLE_BOT = Path(__file__).resolve().parents[1] / "examples" / "bots" / "simple_bot.py"

# the fixtures of a finished tiny run (a module's own copy) and of a copy of it for each case
finished_run = _bad_input.finished_run
run_copy = _bad_input.run_copy


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """The file a planted program or module creates: it must never appear (in a folder of its
    own: a ``cmd:`` bot's digest covers its program's folder)."""
    (tmp_path / "out").mkdir()
    return tmp_path / "out" / "ran"


@pytest.fixture
def program(tmp_path: Path, marker: Path) -> str:
    """A ``cmd:`` spec, unconfined, whose program writes `marker` and then plays as the
    protocol's simple bot (so that, named again, it plays)."""
    (tmp_path / "bot").mkdir()
    payload = tmp_path / "bot" / "payload.py"
    payload.write_text(
        "import runpy\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
        f"runpy.run_path({str(SIMPLE_BOT)!r}, run_name='__main__')\n"
    )
    return f"cmd:{sys.executable} {payload},sandbox=off"


@pytest.fixture
def module(tmp_path: Path, marker: Path) -> str:
    """A ``FILE.py:function`` spec (bid features, a reward) whose import writes `marker`."""
    (tmp_path / "code").mkdir()
    planted = tmp_path / "code" / "planted.py"
    planted.write_text(
        f"open({str(marker)!r}, 'a').write('imported\\n')\ndef f(x):\n    return x\n"
    )
    return f"{planted}:f"


def _plant(run: Path, **fields: object) -> None:
    """Write `fields` into the run's config.yaml, as someone handing the folder over might."""
    path = run / "config.yaml"
    values = load_yaml(path) if path.is_file() else {}
    values.update(fields)
    save_yaml(values, path)


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _refused(capsys, argv: list[str], *expected: str) -> str:
    """Run the command; assert exit 2 and one `fourhundred: error:` line holding each of
    `expected`. Returns that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fourhundred: error: "), err
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


# -- evaluate-run ------------------------------------------------------------------------------
@pytest.mark.parametrize("ladder", [False, True])
def test_evaluate_run_never_starts_the_runs_eval_opponent(
    ladder: bool, run_copy: Path, program: str, marker: Path, tmp_path: Path, capsys
) -> None:
    _plant(run_copy, eval_opponent=program)
    before = _tree(run_copy)
    flags = ["--ladder", str(tmp_path / "ladder.sqlite")] if ladder else []
    _refused(capsys, ["evaluate-run", str(run_copy), "--matches", "1", "--workers", "1", *flags],
             "the run's eval_opponent 'cmd:", "starts a program", "--opponent")  # fmt: skip
    assert not marker.exists()
    assert _tree(run_copy) == before
    assert not (tmp_path / "ladder.sqlite").exists()


def test_evaluate_run_never_starts_a_nested_program(
    run_copy: Path, program: str, marker: Path, capsys
) -> None:
    _plant(run_copy, eval_opponent=f"compose:bid=heuristic-v1,play={program}")
    _refused(capsys, ["evaluate-run", str(run_copy), "--matches", "1", "--workers", "1"],
             "the run's eval_opponent 'compose:", "--opponent")  # fmt: skip
    assert not marker.exists()


def test_evaluate_run_of_one_model_never_starts_the_runs_eval_opponent(
    finished_run: Path, program: str, marker: Path, tmp_path: Path, capsys
) -> None:
    """A run without snapshots (another library's, a bidder's): its one model is evaluated."""
    run = tmp_path / "one"
    run.mkdir()
    shutil.copy(finished_run / "policy.pt", run / "policy.pt")
    shutil.copy(finished_run / "config.yaml", run / "config.yaml")
    _plant(run, eval_opponent=program)
    _refused(capsys, ["evaluate-run", str(run), "--matches", "1", "--workers", "1"],
             "the run's eval_opponent", "--opponent")  # fmt: skip
    assert not marker.exists()


def test_evaluate_run_plays_the_program_named_again(
    run_copy: Path, program: str, marker: Path, capsys
) -> None:
    _plant(run_copy, eval_opponent=program)
    argv = ["evaluate-run", str(run_copy), "--matches", "1", "--workers", "1"]
    assert main([*argv, "--opponent", program]) == 0, capsys.readouterr().err
    assert marker.exists()


def test_evaluate_run_plays_a_runs_bot_that_starts_nothing(run_copy: Path, capsys) -> None:
    """heuristic-v1 and checkpoints are data: a run's eval_opponent of those still plays."""
    _plant(run_copy, eval_opponent=f"neural:{run_copy / 'policy.pt'}")
    argv = ["evaluate-run", str(run_copy), "--matches", "1", "--workers", "1"]
    assert main(argv) == 0, capsys.readouterr().err


# -- train --resume ----------------------------------------------------------------------------
PPO_AGENT_FIELDS = ["opponent", "eval_opponent", "play_policy", "teacher"]


@pytest.mark.parametrize("key", PPO_AGENT_FIELDS)
def test_a_resume_never_starts_a_program_the_run_names(
    key: str, run_copy: Path, program: str, marker: Path, capsys
) -> None:
    _plant(run_copy, **{key: program})
    before = _tree(run_copy)
    # --no-eval: the evaluations' spec is made all the same (checked at the start)
    _refused(capsys, ["train", "--no-eval", "--resume", str(run_copy), "total_decisions=4096"],
             f"the run's {key} 'cmd:", "starts a program", f"{key}=SPEC")  # fmt: skip
    assert not marker.exists()
    assert _tree(run_copy) == before


def test_a_resume_never_starts_a_program_inside_compose(
    run_copy: Path, program: str, marker: Path, capsys
) -> None:
    _plant(run_copy, opponent=f"compose:bid=heuristic,play={program}")
    _refused(capsys, ["train", "--no-eval", "--resume", str(run_copy)],
             "the run's opponent 'compose:", "opponent=SPEC")  # fmt: skip
    assert not marker.exists()


@pytest.mark.parametrize("key", ["features", "reward"])
def test_a_bidding_resume_never_imports_code_the_run_names(
    key: str, module: str, marker: Path, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "bidding"
    run.mkdir()
    _plant(run, name="bidding", mode="bidding", **{key: module})
    _refused(capsys, ["train", "--no-eval", "--resume", str(run)],
             f"the run's {key} '", "imports code", f"{key}=")  # fmt: skip
    assert not marker.exists()


def test_a_resume_runs_the_program_named_again(
    run_copy: Path, program: str, marker: Path, capsys
) -> None:
    _plant(run_copy, opponent=program)
    # one more update: the scripted tables' seats play it
    argv = ["train", "--no-eval", "--resume", str(run_copy), "total_decisions=3072"]
    assert main([*argv, f"opponent={program}"]) == 0, capsys.readouterr().err
    assert marker.exists()


def test_a_resume_never_plays_a_snapshot_that_names_code(
    run_copy: Path, module: str, marker: Path, capsys
) -> None:
    """latest.pt's opponent pool is played as ``neural:ENTRY``: an entry that names features
    to import is refused, like any spec read from data."""
    import torch

    latest = run_copy / "checkpoints" / "latest.pt"
    data = torch.load(latest, weights_only=False)
    data["pool"] = [f"{data['pool'][0]},features={module}"]
    torch.save(data, latest)
    _refused(capsys, ["train", "--no-eval", "--resume", str(run_copy), "total_decisions=8192"],
             "latest.pt", "opponent pool", "features=")  # fmt: skip
    assert not marker.exists()


@pytest.mark.parametrize("key", ["play", "reward", "features"])
def test_a_bid_q_resume_never_starts_or_imports_what_the_run_names(
    key: str, program: str, module: str, marker: Path, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "bid_q"
    run.mkdir()
    _plant(run, mode="bid_q", **{key: program if key == "play" else module})
    _refused(capsys, ["train", "--resume", str(run)], f"the run's {key} '", f"{key}=")
    assert not marker.exists()


def test_an_exit_resume_never_starts_the_runs_eval_opponent(
    program: str, marker: Path, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "exit"
    run.mkdir()
    _plant(run, mode="exit", eval_opponent=program)
    _refused(capsys, ["train", "--resume", str(run)],
             "the run's eval_opponent 'cmd:", "eval_opponent=SPEC")  # fmt: skip
    assert not marker.exists()


# -- plot --------------------------------------------------------------------------------------
def test_plot_reads_a_planted_run_as_data(
    run_copy: Path, program: str, module: str, marker: Path, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    _plant(run_copy, opponent=program, eval_opponent=program, teacher=program)
    main(["plot", str(run_copy), "--out", str(tmp_path / "plots")])
    assert not marker.exists()
