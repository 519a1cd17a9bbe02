"""The sandbox of cmd: bots (agents/remote/sandbox.py): a hostile bot reads no database, no
out dir, no other process's /proc entry and reaches no socket, and still plays; every process
a bot starts dies with it (setsid included); 2 MB of stderr a move costs no timeout; without a
mechanism, one warning line (or a refusal under sandbox=require).

A mechanism this machine lacks is skipped with the reason; FOURHUNDRED_REQUIRE_SANDBOX=1
(.ci/run, which installs bubblewrap and runs as root) turns either skip into a failure, so the
unshare fallback, tested with bubblewrap off the PATH, runs in CI too."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fourhundred_agents.remote import sandbox
from fourhundred_agents.remote.external import ExternalAgent, game_key, split_command
from fourhundred_cli import main as cli_main
from fourhundred_env import Engine, Rules
from fourhundred_env.errors import ConfigError
from fourhundred_env.view import seat_view
from fourhundred_tournament.config import load_config
from fourhundred_tournament.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "tests" / "bots" / "sandbox_bot.py"
SIMPLE = ROOT / "examples" / "bots" / "simple_bot.py"


def _available(kind: str) -> None:
    """Skip unless a sandbox of `kind` works here (bubblewrap's skip fails in CI)."""
    if sandbox._works(kind):
        return
    why = {"bwrap": "bubblewrap (bwrap) is not installed or cannot run here",
           "unshare": "unprivileged user namespaces (unshare --user) are not allowed here"}[kind]  # fmt: skip
    if os.environ.get("FOURHUNDRED_REQUIRE_SANDBOX") == "1":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(params=["bwrap", "unshare"])
def kind(request, monkeypatch) -> str:
    """Each mechanism in turn, forced."""
    _available(request.param)
    monkeypatch.setattr(sandbox, "mechanism", lambda: request.param)
    return request.param


def _probe(bot: ExternalAgent, seconds: float = 30.0) -> str:
    """The bot's "probe ..." stderr line, waited for: a thread reads the bot's stderr, and on a
    loaded machine it may not yet have read a line the bot wrote before its first answer."""
    deadline = time.monotonic() + seconds
    while "probe " not in (tail := bot.stderr_tail()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return tail.rpartition("probe ")[2]


def _play_moves(bot: ExternalAgent, steps: int, hard: float | None = None, tables: int = 2):
    """`steps` decisions at `tables` tables; asserts every action legal and no failure."""
    engine = Engine(Rules())
    state = engine.init(tables, seed=4)
    engine.deal(state)
    for _ in range(steps):
        over = np.flatnonzero(state.phase >= 2)
        if over.size:
            engine.deal(state, over)
        view = seat_view(engine, state)
        if hard is None:
            actions = bot.act(view)
        else:
            reply = bot.act_timed(view, hard)
            assert not reply.failures, reply.failures
            actions = reply.actions
        assert view.legal_mask[np.arange(tables), actions].all()
        engine.step(state, actions)


def _strays(token: str) -> list[int]:
    """Pids of live processes whose command line holds `token`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    cmdline = f.read()
                with open(f"/proc/{name}/stat", "rb") as f:
                    zombie = f.read().rpartition(b")")[2].split()[0] == b"Z"
            except OSError:
                continue
            if token.encode() in cmdline and not zombie:
                found.append(int(name))
    return found


def _no_strays(token: str, wait_s: float = 3.0) -> list[int]:
    deadline = time.monotonic() + wait_s
    while (left := _strays(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_a_prying_bot_sees_no_database_out_dir_parent_or_network(
    kind: str, tmp_path: Path, monkeypatch
) -> None:
    """The bot's own folder holds the tournament's database and out dir (the worst case:
    a bot in the folder the tournament runs in); protect_paths hides them there."""
    folder = tmp_path / "here"
    out_dir = folder / "runs"
    out_dir.mkdir(parents=True)
    (out_dir / "report.json").write_text("{}")
    db = folder / "results.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE meta (seed INTEGER)").connection.commit()
    script = folder / "bot.py"
    script.write_text(BOT.read_text())
    monkeypatch.setenv(sandbox.HIDE_ENV, "")
    sandbox.protect_paths([out_dir, db])
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    command = f"{sys.executable} {script} pry {db} {out_dir} {os.getpid()} {port}"
    bot = ExternalAgent(command, Rules(), seed=1)
    assert bot.sandbox_kind == kind
    try:
        _play_moves(bot, 20)
        probe = _probe(bot)
    finally:
        bot.close()
        listener.close()
    # listing=denied: the bot's folder does not even name the database; procs: its PID
    # namespace (bwrap's init, bot)
    expected = "db=denied out=denied parent=denied net=denied listing=denied procs="
    assert probe in [f"{expected}{n}" for n in (1, 2)], probe
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"  # (it was readable outside)


def test_the_same_bot_unconfined_sees_everything(tmp_path: Path) -> None:
    """The probe can fail: with sandbox=off the bot reads the database and the parent."""
    db = tmp_path / "results.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE meta (seed INTEGER)").connection.commit()
    listener = socket.create_server(("127.0.0.1", 0))
    (tmp_path / "report.json").write_text("{}")
    command = (f"{sys.executable} {BOT} pry {db} {tmp_path} {os.getpid()} "
               f"{listener.getsockname()[1]},sandbox=off")  # fmt: skip
    bot = ExternalAgent(command, Rules(), seed=1)
    try:
        _play_moves(bot, 2)
        probe = _probe(bot)
    finally:
        bot.close()
        listener.close()
    assert probe.startswith("db=ok out=ok parent=pytest net=ok listing=ok procs="), probe
    assert int(probe.rpartition("=")[2]) > 2


def test_a_child_that_calls_setsid_dies_with_its_bot_after_a_match(
    kind: str, tmp_path: Path
) -> None:
    token = f"fourhundred-stray-{tmp_path.name}-{kind}"
    cfg = load_config(None, dict(
        agents=[f"cmd:{sys.executable} {BOT} fork {token}", "minbid"], matches=1, max_hands=1,
        workers=1, progress=False, bootstrap=0, out_dir=str(tmp_path / "t"),
        move_hard_limit_s=5.0, move_time_limit_s=5.0))  # fmt: skip
    run_tournament(cfg)
    con = sqlite3.connect(cfg.db_path)
    try:
        assert con.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 2
        assert con.execute("SELECT COUNT(*) FROM events WHERE kind != 'slow'").fetchone()[0] == 0
    finally:
        con.close()
    assert _no_strays(token) == []


def test_a_bot_that_exits_first_leaves_no_children_even_unconfined(tmp_path: Path) -> None:
    """sandbox=off: the kill path kills the bot's process group although the bot has exited."""
    token = f"fourhundred-stray-{tmp_path.name}-off"
    bot = ExternalAgent(f"{sys.executable} {BOT} fork-exit {token},sandbox=off", Rules())
    engine = Engine(Rules())
    state = engine.init(1, seed=2)
    engine.deal(state)
    try:
        reply = bot.act_timed(seat_view(engine, state), 5.0)
        assert reply.failures[0][0] == "error" and "exited with code 5" in reply.failures[0][1]
        assert bot.restarts == 1
    finally:
        bot.close()
    assert _no_strays(token) == []


def test_two_megabytes_of_stderr_a_move_answer_within_one_second(kind: str) -> None:
    bot = ExternalAgent(f"{sys.executable} {BOT} log", Rules(), seed=0)
    try:
        _play_moves(bot, 4, hard=1.0, tables=1)  # 8 MB in all
        assert bot._bot is not None and bot._bot.stderr_tail(1) == "x" * 300
    finally:
        bot.close()


def test_without_a_mechanism_one_warning_line_and_the_bot_plays(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    empty = tmp_path / "bin"  # a PATH without bwrap or unshare
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(sandbox.MODE_ENV, raising=False)
    monkeypatch.setattr(sandbox, "_WARNED", False)
    assert sandbox.mechanism() is None
    command = f"{sys.executable} {SIMPLE}"
    bots = [ExternalAgent(command, Rules(), seed=s) for s in range(2)]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "cmd: bots run without a sandbox" in err[0], err
    assert bots[0].sandbox_kind is None
    try:
        _play_moves(bots[0], 3)
    finally:
        for bot in bots:
            bot.close()
    with pytest.raises(ConfigError, match="sandbox=require, but neither bubblewrap"):
        ExternalAgent(command + ",sandbox=require", Rules())
    monkeypatch.setenv(sandbox.MODE_ENV, "require")
    with pytest.raises(ConfigError, match="sandbox=require"):
        ExternalAgent(command, Rules())
    assert ExternalAgent(command, Rules(), sandbox="off").sandbox_kind is None
    assert capsys.readouterr().err == ""  # said once per process
    with pytest.raises(ConfigError, match="expected one of auto, require, off"):
        ExternalAgent(command + ",sandbox=maybe", Rules())


def test_the_setting_and_the_game_key() -> None:
    assert split_command("python b.py --x=1,sandbox=off") == ("python b.py --x=1", "off")
    assert split_command("python b.py a,b") == ("python b.py a,b", None)
    stream = 0x1234_5678_9ABC_DEF0
    assert game_key(stream) == "123456789abcdef0"  # no secret: the stream key (see the docs)
    keyed = {game_key(stream, b"secret-a"), game_key(stream, b"secret-b"),
             game_key(stream + 1, b"secret-a")}  # fmt: skip
    assert len(keyed) == 3 and all(len(k) == 16 for k in keyed)
    assert game_key(stream, b"secret-a") == game_key(stream, b"secret-a")


def test_the_plan_binds_the_program_and_its_folder_only(tmp_path: Path) -> None:
    p = sandbox.plan([sys.executable, str(SIMPLE)], cwd=str(tmp_path), hidden=[str(tmp_path)])
    assert str(SIMPLE.parent) in p.read_only and str(ROOT) not in p.read_only
    assert any(Path(sys.executable).resolve().is_relative_to(f) for f in p.read_only)
    assert p.make_cwd and p.cwd == str(tmp_path) and p.listed == ()
    module = sandbox.plan([sys.executable, "-m", "my_bot"], cwd=str(tmp_path),
                          hidden=[str(tmp_path / "runs")])  # fmt: skip
    # the folder holds a hidden name (runs, not made yet): listed, so it never shows up
    assert module.listed == (str(tmp_path),) and not module.make_cwd


def test_a_version_managers_shim_gets_the_managers_tree(tmp_path: Path, monkeypatch) -> None:
    """`python bot.py` found on PATH as a pyenv (or rbenv) shim: the shim runs the manager's
    libexec and versions, so the plan binds the manager's whole tree."""
    manager = tmp_path / "pyenv"
    (manager / "libexec").mkdir(parents=True)
    (manager / "shims").mkdir()
    shim = manager / "shims" / "python"
    shim.write_text('#!/bin/sh\nexec "$0" "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{manager / 'shims'}{os.pathsep}{os.environ['PATH']}")
    p = sandbox.plan(["python", str(SIMPLE)], cwd=str(tmp_path / "out"), hidden=[])
    assert str(manager) in p.read_only and str(SIMPLE.parent) in p.read_only


def _probe_after(bot: ExternalAgent, count: int, seconds: float = 30.0) -> list[str]:
    """The words of the `look` bot's probe of its `count`-th act, waited for."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        words = _probe(bot, seconds).split()
        if words and words[0] == f"n={count}":
            return words[1:]
        time.sleep(0.05)
    raise AssertionError(f"no probe n={count}: {bot.stderr_tail()!r}")


def test_a_bot_reads_no_journal_made_after_it_started_nor_a_protected_file(
    kind: str, tmp_path: Path, monkeypatch
) -> None:
    """The database lives in the bot's own folder (--db there); it does not exist when the
    bot starts, and its journals appear later, as SQLite writes: hidden by name all the same.
    So is any other protected file there (an owner's secret). The folder, shown entry by entry,
    stays read-only."""
    folder = tmp_path / "bot"
    folder.mkdir()
    script = folder / "bot.py"
    script.write_text(BOT.read_text())
    db = folder / "results.sqlite"
    key = folder / "deal.key"
    key.write_bytes(b"k" * 32)
    monkeypatch.setenv(sandbox.HIDE_ENV, "")
    sandbox.protect_paths([db, key])
    late = [db, *(Path(f"{db}{s}") for s in ("-journal", "-wal", "-shm"))]
    looked = [*late, key, script]
    bot = ExternalAgent(f"{sys.executable} {script} look {' '.join(map(str, looked))}", Rules(),
                        seed=1)  # fmt: skip
    assert bot.sandbox_kind == kind
    try:
        _play_moves(bot, 1, tables=1)
        assert _probe_after(bot, 1)[:-1] == ["denied"] * 5 + ["ok", "write=denied"]
        for path in late:  # made after the bot started, as a rollback journal is
            path.write_bytes(b"secret deals " * 10_000)
        _play_moves(bot, 1, tables=1)
        assert _probe_after(bot, 2)[:-1] == ["denied"] * 5 + ["ok", "write=denied"]
    finally:
        bot.close()
    assert not (folder / "written").exists()  # its folder is read-only


def test_a_bot_gets_an_allow_list_of_the_runners_environment(tmp_path: Path, monkeypatch) -> None:
    """Unconfined or not, a token in the runner's environment never reaches the bot."""
    monkeypatch.setenv("FOURHUNDRED_TEST_TOKEN", "hunter2")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    script = tmp_path / "bot.py"  # unconfined, it writes a file beside itself
    script.write_text(BOT.read_text())
    bot = ExternalAgent(f"{sys.executable} {script} look,sandbox=off", Rules(), seed=1)
    try:
        _play_moves(bot, 1, tables=1)
        names = set(_probe_after(bot, 1)[-1].removeprefix("env=").split(","))
    finally:
        bot.close()
    assert "FOURHUNDRED_TEST_TOKEN" not in names and "LC_ALL" in names and "PATH" in names
    assert names <= {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "LC_CTYPE"} | {
        n for n in names if n.startswith("LC_")
    }, names


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch) -> None:
    """A PATH without bubblewrap: only unshare, so the fallback is what the code picks (the
    bot's commands name their interpreter by its full path)."""
    _available("unshare")
    folder = tmp_path / "no-bwrap-bin"
    folder.mkdir()
    unshare = shutil.which("unshare")
    assert unshare is not None
    (folder / "unshare").symlink_to(unshare)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv(sandbox.HIDE_ENV, "")
    monkeypatch.delenv(sandbox.MODE_ENV, raising=False)
    assert sandbox.mechanism() == "unshare"


@pytest.mark.parametrize("db", [None, "results.sqlite", "runs/other.sqlite"])
def test_the_documented_layout_plays_under_the_unshare_fallback(
    no_bwrap: None, tmp_path: Path, monkeypatch, db: str | None
) -> None:
    """`cmd:python my_bot.py` with the bot in the working folder, the default --out, --db
    anywhere (in the bot's folder too): every move is the bot's."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_bot.py").write_text(SIMPLE.read_text())
    monkeypatch.chdir(work)
    argv = ["tournament", "--agents", f"cmd:{sys.executable} my_bot.py,sandbox=require",
            "random", "--matches", "1", "--max-hands", "2", "--workers", "1", "--no-progress",
            "--bootstrap", "0", *(["--db", db] if db else [])]  # fmt: skip
    assert cli_main(argv) == 0
    con = sqlite3.connect(work / (db or "runs/tournament/results.sqlite"))
    try:
        kinds = con.execute("SELECT kind, detail FROM events WHERE kind != 'slow'").fetchall()
        (hands,) = con.execute("SELECT count(*) FROM hands").fetchone()
    finally:
        con.close()
    assert kinds == [] and hands > 0, kinds
    if db is None:  # bot-check, in the same sandbox, agrees
        assert cli_main(["bot-check", f"{sys.executable} my_bot.py", "--hands", "1"]) == 0


def test_a_bot_that_cannot_start_in_the_sandbox_is_a_failed_run(
    no_bwrap: None, tmp_path: Path, monkeypatch, capsys
) -> None:
    """A bot whose program lies in the hidden out dir starts in no sandbox: the run stops in
    one line with a non-zero exit code, and bot-check, in the same sandbox, says so too."""
    work = tmp_path / "work"
    (work / "runs" / "tournament").mkdir(parents=True)
    (work / "runs" / "tournament" / "bot.py").write_text(SIMPLE.read_text())
    monkeypatch.chdir(work)
    command = f"{sys.executable} runs/tournament/bot.py"
    argv = ["tournament", "--agents", f"cmd:{command}", "random", "--matches", "1",
            "--max-hands", "2", "--workers", "1", "--no-progress", "--bootstrap", "0"]  # fmt: skip
    assert cli_main(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not start" in err[0], err
    assert cli_main(["bot-check", command, "--hands", "1"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not start" in err[0], err


def test_the_plan_lists_the_folders_that_hold_hidden_names(tmp_path: Path) -> None:
    """A hidden name, made yet or not, lists every folder from the bot's down to it (the entries
    then, less the hidden ones); a missing folder or a link ends the chain."""
    bot = tmp_path / "bot"
    (bot / "runs" / "tournament").mkdir(parents=True)
    (bot / "b.py").write_text("")
    (bot / "results.sqlite-wal").write_text("")
    (tmp_path / "elsewhere" / "sub").mkdir(parents=True)
    (bot / "link").symlink_to(tmp_path / "elsewhere")
    hidden = [bot / "results.sqlite", bot / "runs" / "tournament", bot / "link" / "sub" / "db",
              bot / "later" / "deal.key"]  # fmt: skip
    p = sandbox.plan(
        [sys.executable, str(bot / "b.py")], cwd=str(bot), hidden=list(map(str, hidden))
    )
    assert p.listed == (str(bot), str(bot / "runs"))
    assert set(p.binds) == {str(bot / "b.py")} and p.links == (
        (str(bot / "link"), str(tmp_path / "elsewhere")),
    )
    assert not p.make_cwd and str(bot) not in p.read_only
