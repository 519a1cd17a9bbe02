"""Human play: the `human` agent's prompts and messages, and `fourhundred play` driven by
scripted standard input."""

from __future__ import annotations

import io

import numpy as np
import pytest

from fourhundred_agents.human import HumanAgent, QuitGame, hand_line, play_match, render_view
from fourhundred_cli import main as cli_main
from fourhundred_env.cards import BID_OFFSET, cards_to_set, parse_card, parse_hand
from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_records.files import read_record
from fourhundred_env.rules import Rules
from fourhundred_env.table import Table
from fourhundred_env.view import seat_view

DEAL = [
    "AS 3S 2S 3H 2H AD KD QD JD AC KC QC JC",
    "KS 4S AH KH QH 4D 3D 2D 10C 9C 8C 7C 6C",
    "QS 6S 5S 6H 5H 4H 7D 6D 5D 5C 4C 3C 2C",
    "JS 10S 9S 8S 7S JH 10H 9H 8H 7H 10D 9D 8D",
]


def _scripted(lines: list[str]) -> tuple[HumanAgent, list[str]]:
    said: list[str] = []
    feed = iter(lines)

    def ask(prompt: str) -> str:
        said.append(prompt)
        return next(feed)

    return HumanAgent(Rules(), 0, ask, said.append), said


def test_bidding_prompts_and_messages() -> None:
    t = Table(dealer=3)
    t.deal(hands=DEAL)
    view = seat_view(t.engine, t.state, np.array([0]))
    agent, said = _scripted(["", "ZZ", "1", "AH", "help", "legal", "hint", "hand", " 3 "])
    assert agent.act(view).tolist() == [BID_OFFSET + 3]
    text = "\n".join(said)
    assert "Your bid (minimum 2): " in said
    assert "'ZZ' is not understood" in text
    assert "'1' is not legal now: your minimum bid is 2" in text
    assert "'AH' is not legal now: that is a card, but this is the bidding" in text
    assert "Bidding: type how many tricks you alone will take, a number from 2 to 13" in text
    assert "must add up to at least 11" in text and "Card play" not in text
    assert "legal: 2 3 4 5 6 7 8 9 10 11 12 13" in text
    assert "hint: " in text
    assert text.count("your hand: ♥ 3 2 | ♠ A 3 2 | ♦ A K Q J | ♣ A K Q J") == 2


def test_card_play_messages() -> None:
    t = Table(dealer=3)
    t.deal(hands=DEAL)
    for bid in ("4", "3", "2", "2"):
        t.act(bid)
    t.act("2S")  # S0 leads a spade; S1 must follow
    view = seat_view(t.engine, t.state, np.array([0]))
    agent, said = _scripted(["2C", "AH", "?", "4s"])
    assert agent.act(view).tolist() == [parse_card("4S")]
    text = "\n".join(said)
    assert "Card play: type a card" in text and "♠ was led: follow with one" in text
    assert "Legal now: 4S KS" in text and "Bidding" not in text
    assert "'2C' is not legal now: you do not hold 2C" in text
    assert "'AH' is not legal now: you must follow suit: ♠ was led" in text
    assert "trick 1: S0 2S" in text and "Your card: " in said


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        (Rules(five_to_run=True), "played only if someone bids 5 or more"),
        (Rules.preset("pagat"), "(bids of 7 or more count double)"),
    ],
)
def test_bidding_help_follows_the_rules(rules: Rules, expected: str) -> None:
    t = Table(rules=rules, dealer=3)
    t.deal(hands=DEAL)
    view = seat_view(t.engine, t.state, np.array([0]))
    said: list[str] = []
    feed = iter(["help", str(t.min_bid(0))])
    HumanAgent(rules, 0, lambda prompt: next(feed), said.append).act(view)
    assert expected in "\n".join(said)


def test_quit_and_end_of_input() -> None:
    t = Table(dealer=3)
    t.deal(hands=DEAL)
    view = seat_view(t.engine, t.state, np.array([0]))
    agent, _ = _scripted(["quit"])
    with pytest.raises(QuitGame):
        agent.act(view)
    agent, _ = _scripted([])
    with pytest.raises(QuitGame):  # StopIteration is not EOFError: use a real EOF below
        agent.input_fn = lambda prompt: (_ for _ in ()).throw(EOFError)
        agent.act(view)


def test_render_shows_only_the_viewers_cards() -> None:
    t = Table(dealer=3)
    t.deal(hands=DEAL)
    text = render_view(seat_view(t.engine, t.state, np.array([0]), np.int8(2)))
    assert "You are S2" in text and hand_line(t.state.hand_set[0, 2]) in text
    for seat in (0, 1, 3):
        assert hand_line(t.state.hand_set[0, seat]) not in text
    assert hand_line(cards_to_set(parse_hand("AH 2C", expected=None))) == "♥ A | ♠ - | ♦ - | ♣ 2"


def _answers_for(seed: int, seat: int, max_hands: int) -> list[str]:
    """Play a match once, answering each question with its first legal action; return answers."""
    answers: list[str] = []
    last: list[str] = []
    pending = {"asked": False}

    def out(text: str) -> None:
        last.append(text)

    def ask(prompt: str) -> str:
        if not pending["asked"]:
            pending["asked"] = True
            return "legal"
        pending["asked"] = False
        first = last[-1].removeprefix("legal: ").split()[0]
        answers.append(first)
        return first

    play_match(seat, ["heuristic"], Rules(), seed, max_hands, ask, out)
    return answers


def test_play_command_driven_by_stdin(monkeypatch, capsys) -> None:
    answers = _answers_for(seed=5, seat=1, max_hands=2)
    assert len(answers) >= 2
    script = ["nonsense", "help", *answers]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(script) + "\n"))
    assert cli_main(["play", "--seed", "5", "--seat", "1", "--max-hands", "2"]) == 0
    out = capsys.readouterr().out
    assert "you are S1, partner S3 (heuristic)" in out
    assert "'nonsense' is not understood" in out
    assert "=== Hand 1:" in out and "=== Hand 2:" in out
    assert "S2 (heuristic) bids" in out or "S2 (heuristic) asks for a redeal" in out
    assert "Score sheet" in out
    assert "(stopped unfinished after 2 hands)" in out or "You win" in out or "You lose" in out


def test_play_writes_a_game_record_that_replays(monkeypatch, capsys, tmp_path) -> None:
    answers = _answers_for(seed=5, seat=1, max_hands=2)
    path = tmp_path / "match.400"
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(answers) + "\n"))
    args = ["play", "--seed", "5", "--seat", "1", "--max-hands", "2", "--record", str(path)]
    assert cli_main(args) == 0
    assert f"record: {path}" in capsys.readouterr().out
    record = read_record(path)
    assert record.seats == ("heuristic", "you", "heuristic", "heuristic")
    table = Table.from_record(record)
    assert table.hand_number == 2 and table.phase in ("hand_over", "match_over")
    # quitting mid-hand keeps the hand in progress, up to the last move made
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(answers[:3]) + "\nquit\n"))
    assert cli_main(args) == 0
    assert Table.from_record(read_record(path)).phase in ("bid", "play")
    missing = tmp_path / "no" / "match.400"
    assert cli_main(["play", "--seed", "5", "--record", str(missing)]) == 2
    assert "the folder" in capsys.readouterr().err
    # a file that is not a record is refused before the first hand, and left as it was
    db = tmp_path / "results.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + bytes(100))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli_main(["play", "--seed", "5", "--record", str(db)]) == 2
    out, err = capsys.readouterr()
    assert "exists and is not a game record" in err and "Your bid" not in out
    assert db.read_bytes() == b"SQLite format 3\x00" + bytes(100)
    assert cli_main(["play", "--seed", "5", "--record", str(tmp_path)]) == 2
    assert "it is a folder" in capsys.readouterr().err


def test_play_quits_cleanly_and_rejects_bad_setups(monkeypatch, capsys) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert cli_main(["play", "--seed", "1", "--seat", "0"]) == 0
    assert "Game abandoned." in capsys.readouterr().out
    with pytest.raises(FourHundredError, match="seat=4"):
        play_match(4)
    with pytest.raises(FourHundredError, match="three specs"):
        play_match(0, ["heuristic", "random"])
    assert cli_main(["play", "--bots", "nobot", "--seed", "1"]) == 2
    assert "unknown agent 'nobot'" in capsys.readouterr().err


def test_a_person_in_a_tournament_plays_in_process_and_quit_stops_the_run(
    monkeypatch, capsys, tmp_path
) -> None:
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.planning import plan_jobs

    cfg = load_config(None, {"agents": ["human", "random"], "matches": 2, "workers": 2})
    assert cfg.interactive and {j.table_batch for j in plan_jobs(cfg)} == {1}
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    args = ["tournament", "--agents", "human", "random", "--matches", "1", "--out", str(tmp_path),
            "--no-progress"]  # fmt: skip
    assert cli_main(args) == 130
    captured = capsys.readouterr()
    assert "You are S" in captured.out and "rerun the same command to resume" in captured.err
