"""Engine analysis of a game (agents/analysis/, `fourhundred analyse`): the values of every
legal action, what the action taken lost against the best, per seat. Small searches, few
decisions: the sense test (heuristic-v1 loses more than the search) plays a few hands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.analysis import (
    ActionValues,
    analyse_decisions,
    analyse_record,
    make_valuer,
    world_stats,
)
from fourhundred_cli import main
from fourhundred_env.cards import parse_action
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.game_records.files import decisions, parse_record, read_record, write_record
from fourhundred_env.table import Table
from fourhundred_env.view import SeatView, seat_view

SMALL = "search:worlds=8,candidates=32,bid_worlds=8"
"""The analyser of most tests: a few worlds."""
PLAYER = "search:worlds=4,candidates=16,bid_worlds=16,bid_candidates=4,top_actions=3," \
         "time_per_move=60"  # fmt: skip
"""The search that plays heuristic-v1 in the sense test (a budget that never binds: the same
game on any machine)."""
SENSE_HANDS, SENSE_SEED = 3, 2
"""The sense test's game: this many hands, dealt and played from this seed. (Its card play
analysed by SMALL: heuristic-v1 14.5 points of match-win chance lost per hand, the search 6.7;
on 3 hands of seeds 1 and 3 it was 10.1 against 12.5 and 36.3 against 26.6, on 6 hands of
seeds 1 and 2 17.3 against 11.2 and 20.4 against 10.1.)"""

# Trick 11 of a hand: S0 (bid 4, 2 tricks won) leads holding AS KS 2C; every heart and every
# other spade has been played, and the clubs left are AC KC QC (S1's). AS or KS wins both
# spade tricks (nobody can follow or ruff): the bid made. 2C gives the lead away for good
# (S0 keeps only spades, which it can win only on its own lead): the bid missed, in every
# world the search can deal. The record stops at S0's 2C.
ENDGAME = """\
fourhundred-record 1
dealer: S3
hand 1
S0: QH 7C 9C JS 8H 9S 3C 10C JD 2S AS KS 2C
S1: 3H 6H 8S JC 5C 6S 4S 3S AH 2H AC KC QC
S2: 7H 5H QS AD 9D 10S 5S 6C 2D KD 3D 4D 5D
S3: JH 4C 4H 10H 7S 10D KH 8C 9H QD 6D 7D 8D
bids: 4 3 2 2
play: 9S 4S 10S 7S  QS JH JS 6S  KH 8H 2H 7H  10H QH AH 5H  6H 9D 4H 7C
play: 3S 5S 9H 2S  10D JD 8S 2D  3C JC 6C 8C  3H AD 4C 9C  5C KD QD 10C
play: {lead}
"""
# the hand to its end after 2C: S1 wins the last three tricks; its last trick is forced
FINISH = "AC 3D 6D  KC 4D 7D KS  QC 5D 8D AS"


@pytest.fixture(scope="module")
def valuer():
    return make_valuer(SMALL, seed=3)


def _last(text: str):
    """The last decision of a record written as text."""
    return list(decisions(parse_record(text)))[-1]


def test_values_are_the_searchs_and_deterministic_for_a_seed(valuer) -> None:
    """The values are the search's own (SearchAgent.action_values: the mean over its worlds);
    the same seed gives the same values, another seed other worlds."""
    d = list(decisions(parse_record(ENDGAME.format(lead="2C"))))[4]  # S0 leads to trick 1
    assert (d.move, d.seat, d.action) == (5, 0, "9S")
    view = seat_view(d.table.engine, d.table.state)
    first = valuer.value_actions(view)
    legal = view.legal_mask
    assert np.isfinite(first.value[legal]).all() and np.isnan(first.value[~legal]).all()
    np.testing.assert_allclose(first.value[legal], valuer.agent.action_values(view)[legal])
    again = make_valuer(SMALL, seed=3).value_actions(view)
    np.testing.assert_array_equal(again.value, first.value)
    np.testing.assert_array_equal(again.stderr, first.stderr)
    other = make_valuer(SMALL, seed=4).value_actions(view)
    assert not np.array_equal(other.world_values, first.world_values, equal_nan=True)
    assert first.unit == "match-win" and 0 < first.worlds[0] <= 8


def test_the_obviously_winning_card_is_best_and_another_loses(valuer) -> None:
    """At the cash-out, AS and KS (alike) are best; 2C loses the bid in every world: a loss of
    many standard errors. Playing AS loses nothing."""
    wrong = analyse_decisions([_last(ENDGAME.format(lead="2C"))], valuer)
    d = wrong.decisions[0]
    assert (d.hand, d.seat, d.phase, d.taken) == (1, 0, "play", "2C")
    assert d.best in ("AS", "KS")
    assert d.value_of("AS") == d.value_of("KS") > d.value_of("2C")
    assert d.loss > 0.02 and d.loss > 3 * d.loss_stderr and d.lost == d.loss
    assert wrong.seats[0].lost == d.lost and wrong.seats[0].mistakes == (d,)
    right = analyse_decisions([_last(ENDGAME.format(lead="AS"))], valuer).decisions[0]
    assert right.taken == right.best == "AS" and right.loss == right.lost == 0.0


def test_a_forced_move_loses_nothing_and_is_not_valued() -> None:
    """The last trick: one legal card each. Nothing is asked of the valuer."""

    class Refuses:
        name = "refuses"

        def value_actions(self, view: SeatView) -> ActionValues:
            raise AssertionError("a forced decision was valued")

    record = parse_record(ENDGAME.format(lead="2C " + FINISH))
    last = [d for d in decisions(record) if d.move > 52]
    analysis = analyse_decisions(last, Refuses())
    assert [d.taken for d in analysis.decisions] == ["QC", "5D", "8D", "AS"]
    for d in analysis.decisions:
        assert d.forced and d.loss == d.lost == 0.0 and d.worlds == 0
        assert d.best == d.taken and d.actions[0].value is None
    assert all(s.lost == 0 for s in analysis.seats)


def test_world_stats_weigh_the_worlds_by_their_counts() -> None:
    """A world drawn twice counts twice; the error uses the effective number of worlds."""
    values = np.array([[[1.0], [3.0], [5.0], [np.nan]]])
    mean, se = world_stats(values, np.array([[2.0, 1.0, 1.0, 0.0]]))
    assert mean[0, 0] == pytest.approx(2.5)
    var = (2 * 1.5**2 + 0.5**2 + 2.5**2) / 4
    assert se[0, 0] == pytest.approx(np.sqrt(var / (16 / 6 - 1)))


def _play(specs: list[str], hands: int, seed: int):
    """A few hands played through a Table by `specs` (seat by seat), as a record."""
    table = Table(seed=seed)
    bots = [make_agent(s, table.rules, seed=seed + i) for i, s in enumerate(specs)]
    for _ in range(hands):
        if table.phase == "match_over":
            break
        table.deal()
        while table.phase in ("bid", "play"):
            table.act(int(bots[table.to_play].act(seat_view(table.engine, table.state))[0]))
    return table.record(seats=specs)


def test_heuristic_v1_loses_more_per_hand_than_the_search(tmp_path) -> None:
    """The sense test: heuristic-v1 (seats 0 and 2) against a small search (1 and 3), a few
    hands, written as a record and read back; its card play analysed by a search (the bids
    lose little on either side and cost the most to value), heuristic-v1's seats lose more
    value per hand than the search's."""
    specs = ["heuristic-v1", PLAYER, "heuristic-v1", PLAYER]
    record = _play(specs, SENSE_HANDS, SENSE_SEED)
    path = write_record(record, tmp_path / "game.400")
    seen: list[tuple[int, int]] = []
    analysis = analyse_record(read_record(path), SMALL, seed=0, phases=("play",),
                              progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert seen[0] == (0, len(analysis.decisions)) and seen[-1][0] == seen[-1][1] > 100
    assert {d.phase for d in analysis.decisions} == {"play"}
    heuristic = analysis.seats[0].lost_per_hand + analysis.seats[2].lost_per_hand
    search = analysis.seats[1].lost_per_hand + analysis.seats[3].lost_per_hand
    assert heuristic > search > 0
    assert [s.label for s in analysis.seats] == specs
    text = analysis.table()
    assert "lost/hand" in text and "heuristic-v1" in text


def test_analysis_is_the_same_for_the_same_seed_and_writes_json(tmp_path, capsys) -> None:
    """`fourhundred analyse` on the endgame record: the table and a JSON file holding every
    decision's values; the same seed twice gives the same file."""
    path = tmp_path / "end.400"
    path.write_text(ENDGAME.format(lead="2C " + FINISH))
    outs = []
    for k in range(2):
        out = tmp_path / f"a{k}.json"
        code = main(["analyse", str(path), "--agent", SMALL, "--seed", "3", "--cards-only",
                     "--json", str(out), "--no-progress", "--top", "2"])  # fmt: skip
        assert code == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    printed = capsys.readouterr().out
    assert "largest mistakes" in printed
    data = json.loads(outs[0])
    assert data["agent"] == SMALL and data["unit"] == "match-win"
    assert len(data["decisions"]) == 52
    mistake = next(d for d in data["decisions"] if d["taken"] == "2C" and d["seat"] == 0)
    assert mistake["lost"] > 0 and mistake["best"] in ("AS", "KS")
    assert {"hand": 1, "move": mistake["move"]} in data["seats"][0]["mistakes"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "nobody"], "unknown agent 'nobody'"),
        (["--agent", "random"], "agent 'random' cannot value actions: expected one that can, "
                                "search or neural"),
        (["--hand", "9"], "--hand 9: expected a hand of the record, 1 to 1"),
        (["--seed", "-1"], "--seed -1: expected a seed of 0 or more"),
        (["--max-decisions", "0"], "--max-decisions 0: expected at least 1"),
        (["--max-decisions", "10"], "decisions to analyse: expected at most 10 (a hand"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message) -> None:
    path = tmp_path / "end.400"
    path.write_text(ENDGAME.format(lead="2C"))
    assert main(["analyse", str(path), "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_malformed_record_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    path = tmp_path / "bad.400"
    path.write_text(ENDGAME.format(lead="2C 2C"))  # S1 cannot play S0's card
    assert main(["analyse", str(path), "--agent", "random", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"fourhundred: error: {path}: record hand 1, move 46")
        and err.count("\n") == 1
    )
    assert main(["analyse", str(tmp_path / "none.400"), "--no-progress"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_network_values_actions_by_its_own_play_outs() -> None:
    """neural:PATH is the search's play-outs with that network (search:model=PATH)."""
    path = "agents/pretrained/exit.pt"
    valuer = make_valuer(f"neural:{path}", seed=3)
    assert valuer.agent.settings.model == path
    d = _last(ENDGAME.format(lead="2C"))
    values = valuer.value_actions(seat_view(d.table.engine, d.table.state))
    assert values.value[0, parse_action("AS")] > values.value[0, parse_action("2C")]


def test_a_valuer_refuses_what_cannot_value_and_bad_settings() -> None:
    with pytest.raises(ConfigError, match="'heuristic-v1' cannot value actions"):
        make_valuer("heuristic-v1")
    with pytest.raises(FourHundredError, match="worlds=0"):
        make_valuer("search:worlds=0")
    d = _last(ENDGAME.format(lead="2C"))
    with pytest.raises(FourHundredError, match="phases"):
        analyse_decisions([d], "random", phases=("cards",))
