"""The command line's details: every --help works, Ctrl-C in
`play` is a line, negative seeds are refused in one line before anything is written, bad agent
settings are refused, the leaderboard shows names in full under one word per column, and the
custom-bot route works from any folder without PYTHONPATH."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fourhundred_cli import COMMANDS, build_parser
from fourhundred_cli import main as cli_main
from fourhundred_tournament.config import load_config
from fourhundred_tournament.db import ReadOnlyResults
from fourhundred_tournament.report import build_report, format_report
from fourhundred_tournament.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]
FOURHUNDRED = str(Path(sys.executable).with_name("fourhundred"))


@pytest.mark.parametrize("command", [c.NAME for c in COMMANDS])
def test_every_subcommand_prints_its_help(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args([command, "--help"])
    assert done.value.code == 0
    assert "usage: fourhundred " + command in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["tournament", "--agents", "heuristic", "random", "--seed", "-3"],
        ["match", "--seed", "-3"],
        ["play", "--seed", "-3"],
        ["bid-eval", "heuristic", "--tables", "2", "--rounds", "1", "--seed", "-3"],
        ["bid-analyse", "heuristic", "--deal-seed", "1", "--worlds", "2", "--seed", "-3"],
        ["match", "--seed", str(2**70)],
    ],
)
def test_a_negative_seed_is_one_line_and_writes_nothing(
    argv, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_main([*argv, "--out", str(tmp_path / "t")] if argv[0] == "tournament" else argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and argv[-1] in err[0] and "expected a seed of 0 or more" in err[0], err
    assert not (tmp_path / "t" / "results.sqlite").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["tournament", "--agents", "heuristic", "random", "--matches", "1", "--workers", "1",
         "--no-progress", "--tensorboard", "{file}", "--out", "{dir}/t"],
        ["tournament", "--agents", "heuristic", "random", "--matches", "1", "--workers", "1",
         "--no-progress", "--plots", "{file}", "--out", "{dir}/t"],
        ["ladder", "add", "heuristic", "random", "--db", "{dir}/t/l.sqlite", "--matches", "1",
         "--workers", "1", "--no-progress", "--out", "{file}"],
        ["bid-eval", "heuristic", "--report", "--deals", "1", "--matches", "0", "--out", "{file}"],
        ["bid-analyse", "heuristic", "--deal-seed", "1", "--worlds", "2", "--plot", "{file}/x.png"],
        ["analyse", "examples/records/evening.400", "--agent", "heuristic", "--json", "{dir}"],
    ],
)  # fmt: skip
def test_an_output_that_cannot_be_written_is_one_line_before_the_work(
    argv, tmp_path: Path, capsys, monkeypatch
) -> None:
    """A file where a folder is expected (or a folder where a file is) is refused before any
    game is played or position analysed, and nothing is written."""
    monkeypatch.chdir(ROOT)
    (tmp_path / "afile").write_text("mine")
    argv = [a.replace("{file}", str(tmp_path / "afile")).replace("{dir}", str(tmp_path))
            for a in argv]  # fmt: skip
    assert cli_main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "expected a" in lines[0], lines
    assert "games played" not in out
    assert not any((tmp_path / "t" / name).exists() for name in ("results.sqlite", "l.sqlite"))
    assert (tmp_path / "afile").read_text() == "mine"


@pytest.mark.parametrize(
    "argv, expect",
    [
        (["match", "--max-bid", "0"], "--max-bid 0: expected a bid from 1 to 13"),
        (["match", "--max-bid", "14"], "--max-bid 14: expected a bid from 1 to 13"),
        (["match", "--max-hands", "0"], "--max-hands 0: expected at least 1"),
        (["play", "--seed", "1", "--max-hands", "-1"], "--max-hands -1: expected at least 1"),
    ],
)
def test_out_of_range_match_options_are_one_line(argv, expect, capsys) -> None:
    assert cli_main(argv) == 2
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [f"fourhundred: error: {expect}"] and "Score" not in out


@pytest.mark.parametrize(
    "spec, expect",
    [
        ("heuristic:epsilon=5", "epsilon=5.0: expected a probability 0 to 1"),
        ("random:-3", "max_bid=-3: expected a bid from 1 to 13"),
    ],
)
def test_out_of_range_agent_settings_are_refused(spec, expect, tmp_path: Path, capsys) -> None:
    argv = ["tournament", "--agents", spec, "random:any", "--out", str(tmp_path)]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expect in err[0]


def test_ctrl_c_in_play_is_one_line_without_a_traceback() -> None:
    # Ctrl-C as in a terminal: a test run in the background (nohup, `cmd &`) ignores SIGINT,
    # and its children would inherit that
    proc = subprocess.Popen(
        [FOURHUNDRED, "play", "--seed", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        seen = ""
        while "400: you are" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()  # the match has begun: play waits for the person
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "Traceback" not in err and err.strip().splitlines() == ["fourhundred: interrupted"]


def _ctrl_c(library: str) -> None:
    """Ctrl-C at this process, met by a library that lets it through ("raises"), turns it
    into another error ("converts", as numba does while compiling a kernel) or swallows it."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the handler raises here
    except KeyboardInterrupt:
        if library == "converts":
            raise RuntimeError("no compiled object yet for <Library 'deal_hands'>") from None
        if library == "raises":
            raise


@pytest.mark.parametrize("library", ["converts", "swallows"])
def test_ctrl_c_that_a_library_converts_or_swallows_is_still_an_interruption(
    library: str, monkeypatch, capsys
) -> None:
    """numba interrupted while compiling a kernel (a first run) raises RuntimeError from its
    cache code instead of KeyboardInterrupt; other code may swallow it. Either way the
    command ends as interrupted: one line, exit code 130, no traceback."""
    from fourhundred_cli import match

    def run(args) -> int:
        _ctrl_c(library)
        return 0

    monkeypatch.setattr(match, "run", run)
    # as in a terminal (CI may run the tests as a background job, where SIGINT is ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli_main(["match"]) == 130
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    finally:
        signal.signal(signal.SIGINT, before)
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["fourhundred: interrupted"]


def test_the_leaderboard_shows_long_names_by_short_labels_and_a_legend_in_120_columns(
    tmp_path: Path,
) -> None:
    """Names too long for 120 columns (and alike in their first 16 characters) are shown as
    A, B, C in every table, each explained in full in a legend above them."""
    a, b = "heuristic:epsilon=0.05,sigma=1.0", "heuristic:epsilon=0.05,sigma=1.3"
    assert a[:16] == b[:16]  # the two names a 16-character column could not tell apart
    cfg = load_config(None, dict(agents=[a, b, "random"], matches=2, max_hands=4, workers=1,
                                 progress=False, bootstrap=0, out_dir=str(tmp_path)))  # fmt: skip
    run_tournament(cfg)
    with ReadOnlyResults(cfg.db_path) as db:
        report = build_report(db, cfg)
    text = format_report(report)
    lines = text.splitlines()
    head = next(line for line in lines if line.lstrip().startswith("# agent"))
    rows = lines[lines.index(head) + 2 : lines.index(head) + 5]
    words = head.split()
    assert words == ["#", "agent", "Elo", "Elo-95%", "win%", "win-95%", "games", "pts/hand",
                     "made%", "avg-bid", "thrown/100", "ms/move", "forfeits"]  # fmt: skip
    assert max(map(len, lines)) <= 120
    legend = {line.split(" = ")[0].strip(): line.split(" = ")[1] for line in lines
              if re.fullmatch(r"  [A-C] = .*", line)}  # fmt: skip
    assert sorted(legend.values()) == sorted([a, b, "random"])  # in full, once each
    assert [r.split()[1] for r in rows] == ["A", "B", "C"]  # by rank
    assert [legend[k] for k in "ABC"] == [r["agent"] for r in report["leaderboard"]]
    tables = "\n".join(lines[lines.index(head) :])
    assert a not in tables and b not in tables
    assert len(re.findall(r"^  [A-C] v [A-C]: ", tables, re.M)) == 3  # the duplicate matches
    # each numeric column's values end where its heading ends
    for m in list(re.finditer(r"\S+", head))[2:]:
        for row in rows:
            assert row[m.end() - 1] != " " and (m.end() == len(row) or row[m.end()] == " "), (
                m.group(),
                row,
            )


def _write_module(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "my_bots_i15.py"
    path.write_text((ROOT / "examples" / "bots" / "my_agent.py").read_text())
    return path


def test_an_agent_module_runs_from_its_folder_and_by_path_from_any_other(tmp_path: Path) -> None:
    module = _write_module(tmp_path / "bots")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    common = ["tournament", "--agents", "greedy", "random", "--matches", "1", "--max-hands", "2",
              "--workers", "1", "--no-progress", "--bootstrap", "0"]  # fmt: skip
    runs = {
        "from its folder, by name": (tmp_path / "bots", ["--agent-module", "my_bots_i15"]),
        "from elsewhere, by path": (tmp_path, ["--agent-module", str(module)]),
        "relative path": (tmp_path, ["--agent-module", "bots/my_bots_i15.py"]),
    }
    for what, (cwd, extra) in runs.items():
        out = subprocess.run([FOURHUNDRED, *common, *extra, "--out", str(tmp_path / what)],
                             cwd=cwd, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert out.returncode == 0, (what, out.stderr)
        assert "greedy" in out.stdout and "2 games played" in out.stdout, what
    missing = subprocess.run([FOURHUNDRED, *common, "--agent-module", "my_bots_i15"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert missing.returncode == 2
    err = missing.stderr.strip().splitlines()
    assert len(err) == 1 and "cannot be found from" in err[0]
    assert "--agent-module path/to/my_bots_i15.py" in err[0]


@pytest.mark.parametrize("library", ["raises", "converts"])
def test_a_tournament_interrupted_anywhere_says_how_to_resume(
    library: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Ctrl-C during a tournament, however it arrives (KeyboardInterrupt, or an error a
    library turned it into: sqlite, numba, a worker pool), ends in one line that says where
    the finished games are and that the same command resumes them; exit code 130."""
    from fourhundred_tournament import tournament

    def run_tournament(cfg, overwrite=False, **options):
        _ctrl_c(library)

    monkeypatch.setattr(tournament, "run_tournament", run_tournament)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        argv = ["tournament", "--agents", "random", "minbid", "--matches", "1", "--out",
                str(tmp_path / "t"), "--no-progress"]  # fmt: skip
        assert cli_main(argv) == 130
    finally:
        signal.signal(signal.SIGINT, before)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("fourhundred: interrupted: finished games are saved in ")
    assert line.endswith("results.sqlite; rerun the same command to resume"), line
