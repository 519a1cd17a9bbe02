"""Bots in their own processes: the JSON-lines protocol (`cmd:`), hostile bots (crash, hang,
garbage, illegal moves, a wrong id, a flood of stderr, a wrong protocol version, a bot that
swallows the timeout, one that kills its interpreter), `fourhundred bot-check`, and the
reference bot in examples/bots/. Hard limits are small here, so that each test finishes
within a few seconds of them; a hanging bot costs one hard limit, then a restart."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.remote.external import PROTOCOL_VERSION, ExternalAgent, view_message
from fourhundred_agents.remote.isolated import IsolatedAgent
from fourhundred_cli import main as cli_main
from fourhundred_env import Engine, Rules
from fourhundred_env.cards import action_text
from fourhundred_env.errors import FourHundredError
from fourhundred_env.view import seat_view
from fourhundred_tournament.config import load_config
from fourhundred_tournament.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "bots" / "hostile_bot.py"
SIMPLE = ROOT / "examples" / "bots" / "simple_bot.py"
HARD = 1.0  # seconds: the hard limit of these tests


def _hostile(mode: str, tmp_path: Path) -> str:
    # unconfined: the bot's marker file is one a sandbox forbids (tests/test_bot_sandbox.py)
    return f"cmd:{sys.executable} {HOSTILE} {mode} {tmp_path / ('marker-' + mode)},sandbox=off"


def _play(tmp_path: Path, agents: list[str], **kw) -> tuple[list[tuple], list[tuple], float]:
    """A small timed tournament: (events, match rows, seconds it took)."""
    values = dict(agents=agents, matches=1, max_hands=3, workers=1, progress=False,
                  bootstrap=0, out_dir=str(tmp_path / "t"), move_hard_limit_s=HARD,
                  move_time_limit_s=HARD / 2)  # fmt: skip
    values.update(kw)
    cfg = load_config(None, values)
    t0 = time.monotonic()
    run_tournament(cfg)
    seconds = time.monotonic() - t0
    con = sqlite3.connect(cfg.db_path)
    try:
        events = con.execute("SELECT agent, kind, detail, seat, match_id, orientation, "
                             "hand_index FROM events").fetchall()  # fmt: skip
        matches = con.execute("SELECT num_hands, forfeits FROM matches").fetchall()
        for agent, kind, _, seat, m, o, h in events:  # each forfeit is in its hand's row
            if kind != "slow":
                flag, thrown_in = con.execute(
                    f"SELECT forfeit{seat}, thrown_in FROM hands WHERE match_id=? AND "
                    "orientation=? AND hand_index=?",
                    (m, o, h),
                ).fetchone()
                assert flag == 1 or thrown_in == 1, (agent, kind)  # (no contract to forfeit)
    finally:
        con.close()
    return events, matches, seconds


@pytest.mark.parametrize(
    "mode, kind, detail",
    [
        ("crash", "error", "exited with code 3; stderr: hostile bot: crash now"),
        ("hang", "timeout", "no answer in time"),
        ("garbage", "error", "answered 'I think I will play the ace': expected"),
        ("illegal", "illegal", "returned illegal action"),
        ("wrong_id", "error", 'expected {"type": "action", "id"'),
    ],
)
def test_a_hostile_protocol_bot_forfeits_once_and_the_games_go_on(
    mode: str, kind: str, detail: str, tmp_path: Path
) -> None:
    events, matches, seconds = _play(tmp_path, [_hostile(mode, tmp_path), "minbid"])
    faults = [e for e in events if e[1] != "slow"]
    assert len(faults) == 1, faults
    assert faults[0][0].endswith(f"{mode} {tmp_path / ('marker-' + mode)},sandbox=off")
    assert faults[0][1] == kind and detail in faults[0][2], faults[0]
    if mode in ("crash", "hang", "garbage", "wrong_id"):
        assert "the bot was restarted" in faults[0][2]
    assert len(matches) == 2 and sum(f for _, f in matches) == 1  # both games played out
    assert seconds < HARD + 60  # one hard limit lost at most, never hung


def test_a_bot_flooding_stderr_is_not_blocked_and_not_faulted(tmp_path: Path) -> None:
    events, matches, _ = _play(tmp_path, [_hostile("noisy", tmp_path), "minbid"], max_hands=1)
    assert [e for e in events if e[1] != "slow"] == []
    assert len(matches) == 2


@pytest.mark.parametrize(
    "mode, expect",
    [
        ("version2", "speaks protocol version 2: expected 1"),
        ("silent", "did not start: no answer in time"),
    ],
)
def test_a_bot_that_cannot_start_stops_the_tournament_before_it_begins(
    mode: str, expect: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr("fourhundred_agents.remote.process.MIN_START_S", HARD)  # (10 s by default)
    with pytest.raises(FourHundredError, match=expect):
        _play(tmp_path, [_hostile(mode, tmp_path), "minbid"])
    assert not (tmp_path / "t" / "results.sqlite").exists()


def test_a_bot_that_cannot_start_again_mid_run_stops_the_run_in_one_line(
    tmp_path: Path, capsys
) -> None:
    """It crashed at its first move and each of its 3 starts after failed: the run stops (exit
    code 2, one line naming the bot and why), keeping its finished games, instead of
    forfeiting every move the bot had left."""
    argv = ["tournament", "--agents", _hostile("gone", tmp_path), "minbid", "--matches", "3",
            "--max-hands", "3", "--workers", "1", "--no-progress", "--out", str(tmp_path / "t")]  # fmt: skip
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "failed to start 3 times in a row" in err[0], err
    assert "exited with code 4" in err[0] and "cannot start any more" in err[0], err
    assert "rerun the same command to resume" in err[0]
    con = sqlite3.connect(tmp_path / "t" / "results.sqlite")
    try:
        (errors,) = con.execute("SELECT COUNT(*) FROM events WHERE kind = 'error'").fetchone()
    finally:
        con.close()
    # the crash, then each failed start forfeits the move of every table of its call (the 6
    # games play in lockstep), never every move the bot had left (222 before)
    assert errors <= 1 + 2 * 6


def test_a_missing_program_is_one_line(tmp_path: Path, capsys) -> None:
    argv = ["tournament", "--agents", "cmd:no-such-program --flag", "random",
            "--out", str(tmp_path)]  # fmt: skip
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot find 'no-such-program'" in err[0]


def test_python_bots_that_swallow_the_timeout_or_kill_their_interpreter_are_restarted(
    tmp_path: Path, monkeypatch
) -> None:
    """Isolated by default (custom agents): the tournament kills the process past the hard
    limit, whatever the bot does with the signal, and starts a fresh one for the next move."""
    monkeypatch.setenv("FOURHUNDRED_TEST_MARKER", str(tmp_path / "marker"))
    module = str(ROOT / "tests" / "bots" / "swallowing_agent.py")
    events, matches, seconds = _play(tmp_path, ["swallower", "crasher", "minbid"],
                                     agent_modules=[module], max_hands=2)  # fmt: skip
    faults = {e[0]: e[1:3] for e in events if e[1] != "slow"}
    assert len([e for e in events if e[1] != "slow"]) == 2, events  # each misbehaved once
    kind, detail = faults["swallower"]
    assert kind == "timeout" and "killed and restarted" in detail, detail
    kind, detail = faults["crasher"]
    assert kind == "error" and "exited with code 7" in detail and "restarted" in detail, detail
    assert len(matches) == 6
    assert seconds < HARD + 120
    monkeypatch.setenv("FOURHUNDRED_TEST_MARKER", str(tmp_path / "again"))
    crasher = IsolatedAgent("crasher", Rules(), 0, [module])
    engine = Engine(Rules())
    state = engine.init(3, seed=1)
    engine.deal(state)
    reply = crasher.act_timed(seat_view(engine, state), HARD)
    assert sorted(reply.failures) == [0, 1, 2] and crasher.restarts == 1
    assert "exited with code 7" in reply.failures[0][1]
    again = crasher.act_timed(seat_view(engine, state), HARD)  # a fresh process
    assert not again.failures
    crasher.close()


def test_the_view_message_holds_what_the_seat_may_know() -> None:
    engine = Engine(Rules())
    state = engine.init(1, seed=3)
    engine.deal(state)
    agent = make_agent("heuristic", Rules(), seed=0)
    for _ in range(1000):  # to the middle of the third trick of a played hand
        if state.phase[0] == 1 and state.num_tricks[0] == 2 and state.trick_size[0] == 2:
            break
        if state.phase[0] >= 2:
            engine.deal(state)
        else:
            engine.step(state, agent.act(seat_view(engine, state)))
    assert state.trick_size[0] == 2
    view = seat_view(engine, state)
    message = view_message(view, 0, 7)
    json.dumps(message)  # plain JSON
    v = message["view"]
    seat = int(state.to_play[0])
    assert message["type"] == "act" and message["id"] == 7 and v["seat"] == seat
    assert v["phase"] == "play" and len(v["hand"]) == 11
    assert sum(len(p) for p in v["played"]) == 8 + len(v["trick"])
    assert [t["seat"] for t in v["trick"]] == [(int(state.trick_leader[0]) + k) % 4
                                               for k in range(2)]  # fmt: skip
    assert message["legal"] == [action_text(a) for a in np.flatnonzero(view.legal_mask[0])]
    assert set(message["legal"]) <= set(v["hand"])
    assert v["bids"] == state.bids[0].tolist() and v["tricks_won"] == [
        int(x) for x in state.tricks_won[0]
    ]


def test_the_reference_bot_plays_legal_moves_outside_a_tournament() -> None:
    rules = Rules()
    engine = Engine(rules)
    state = engine.init(5, seed=8)
    engine.deal(state)
    bot = ExternalAgent(f"{sys.executable} {SIMPLE}", rules, seed=1)
    try:
        for _ in range(120):  # bids and cards of a few hands at five tables
            over = np.flatnonzero(state.phase >= 2)
            if over.size:
                engine.deal(state, over)
            view = seat_view(engine, state)
            actions = bot.act(view)
            assert view.legal_mask[np.arange(5), actions].all()
            engine.step(state, actions)
        assert bot.bot_name == "simple_bot" and bot.restarts == 0
    finally:
        bot.close()
    with pytest.raises(FourHundredError, match="cannot find"):
        ExternalAgent("./not-here.sh", rules)
    assert PROTOCOL_VERSION == 1


def test_bot_check_reports_a_good_bot_and_a_bad_one(tmp_path: Path, capsys) -> None:
    transcript = tmp_path / "t.txt"
    good = ["bot-check", f"{sys.executable} {SIMPLE}", "--hands", "2", "--transcript",
            str(transcript)]  # fmt: skip
    assert cli_main(good) == 0
    out = capsys.readouterr().out
    assert "hello: answered by 'simple_bot'" in out and "errors: none" in out
    assert "result: OK" in out
    lines = transcript.read_text().splitlines()
    assert lines[0].startswith('seat 0 > {"type":"hello","protocol":"fourhundred-bot"')
    assert any(line.startswith('seat 2 < {"type": "action"') for line in lines)
    bad = ["bot-check", f"{sys.executable} {HOSTILE} crash {tmp_path / 'm'},sandbox=off",
           "--hands", "1",
           "--hard-limit", str(HARD), "--time-limit", str(HARD / 2)]  # fmt: skip
    assert cli_main(bad) == 1
    out = capsys.readouterr().out
    assert "errors: 1" in out and "exited with code 3" in out and "result: FAILED" in out
    assert cli_main(["bot-check", "no-such-program"]) == 2


def test_the_transcript_in_the_protocol_document_is_a_real_exchange(tmp_path: Path) -> None:
    """docs/bot-protocol.md shows lines of `bot-check --hands 1 --transcript`: they are
    produced again, verbatim (a changed protocol or view makes this fail: update the doc)."""
    doc = (ROOT / "docs" / "bot-protocol.md").read_text()
    shown = doc.split("## A real exchange")[1].split("```")[1].strip().splitlines()
    assert len(shown) >= 8
    transcript = tmp_path / "t.txt"
    argv = ["bot-check", f"{sys.executable} {SIMPLE}", "--hands", "1", "--transcript",
            str(transcript)]  # fmt: skip
    assert cli_main(argv) == 0
    real = transcript.read_text().splitlines()
    assert [line for line in shown if line not in real] == []
    for line in shown:
        message = json.loads(line.split(" ", 3)[3])
        assert message["type"] in ("hello", "ready", "act", "action", "bye")


def test_the_hard_limit_holds_outside_the_main_thread(tmp_path: Path, monkeypatch) -> None:
    """SIGALRM reaches the main thread only; a bot in its own process is waited for with a
    deadline, so a runner in any thread still stops a bot that swallows every interruption."""
    import threading

    monkeypatch.setenv("FOURHUNDRED_TEST_MARKER", str(tmp_path / "marker"))
    module = str(ROOT / "tests" / "bots" / "swallowing_agent.py")
    from fourhundred_agents.remote.modules import import_agent_modules

    import_agent_modules([module])
    engine = Engine(Rules())
    state = engine.init(2, seed=1)
    engine.deal(state)
    agent = IsolatedAgent("swallower", Rules(), 0, [module])
    replies = []
    worker = threading.Thread(target=lambda: replies.append(
        agent.act_timed(seat_view(engine, state), HARD)))  # fmt: skip
    worker.start()
    worker.join(timeout=HARD + 60)
    agent.close()
    assert not worker.is_alive() and replies
    assert {kind for kind, _ in replies[0].failures.values()} == {"timeout"}
    assert agent.restarts == 1


@pytest.mark.parametrize("name", ["aggressive_bot", "cautious_bot", "counting_bot"])
def test_the_example_bots_of_other_styles_pass_bot_check(name: str, capsys) -> None:
    """examples/bots' over-bidder, under-bidder and card counter (opponents none of our bots
    model) answer every request of a few hands with a legal action."""
    path = ROOT / "examples" / "bots" / f"{name}.py"
    assert cli_main(["bot-check", f"{sys.executable} {path}", "--hands", "3"]) == 0
    out = capsys.readouterr().out
    assert f"answered by '{name}'" in out and "errors: none" in out and "result: OK" in out
