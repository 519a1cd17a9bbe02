"""The RULES.md tables of tests/rules_tables.py run against the functions of fourhundred_env.rules.

The same rows test the oracle (tests/test_oracle.py), so both implementations are held to the
same expectations.
"""

from __future__ import annotations

from typing import Any

import pytest

from fourhundred_env import rules as R
from fourhundred_env.errors import RulesError
from fourhundred_env.rules import Rules
from tests.rules_tables import (
    DELTA_ROWS,
    END_ROWS,
    MIN_BID_ROWS,
    PAGAT,
    PLAYED_ROWS,
    TEAM_ROWS,
    TOTAL_ROWS,
    VALUE_ROWS,
    DeltaRow,
    EndRow,
    MinBidRow,
    PlayedRow,
    TeamRow,
    TotalRow,
    ValueRow,
    row_id,
)


# -- tables -------------------------------------------------------------------------------------
@pytest.mark.parametrize("row", VALUE_ROWS, ids=row_id)
def test_bid_value(row: ValueRow) -> None:
    assert R.bid_value(row.bid, row.score_before, Rules(**row.flags)) == row.value, row.quote


@pytest.mark.parametrize("row", VALUE_ROWS, ids=row_id)
def test_value_table(row: ValueRow) -> None:
    """`value_table()[1]` applies from `five_six_face_value_from` on, `[0]` below it."""
    rules = Rules(**row.flags)
    thirty = rules.five_six_face_value_from
    applies = thirty is not None and row.score_before >= thirty
    table = rules.value_table()
    assert table.shape == (2, 14)
    assert int(table[1 if applies else 0, row.bid]) == row.value, row.quote


@pytest.mark.parametrize("bid", [0, 14, -1])
def test_bid_value_out_of_range(bid: int) -> None:
    with pytest.raises(RulesError):
        R.bid_value(bid, 0, Rules())


@pytest.mark.parametrize("row", MIN_BID_ROWS, ids=row_id)
def test_min_bid(row: MinBidRow) -> None:
    assert R.min_bid(row.score, Rules(**row.flags)) == row.expected, row.quote


@pytest.mark.parametrize("row", TOTAL_ROWS, ids=row_id)
def test_required_total(row: TotalRow) -> None:
    assert R.required_total(row.scores, Rules(**row.flags)) == row.expected, row.quote


@pytest.mark.parametrize("row", PLAYED_ROWS, ids=row_id)
def test_bids_total_and_hand_is_played(row: PlayedRow) -> None:
    rules = Rules(**row.flags)
    assert R.bids_total(row.bids, rules) == row.total, row.quote
    weights = rules.total_weights()
    assert sum(int(weights[b]) for b in row.bids) == row.total, row.quote
    assert R.hand_is_played(row.bids, row.scores, rules) is row.played, row.quote


@pytest.mark.parametrize("row", DELTA_ROWS, ids=row_id)
def test_scoring_examples(row: DeltaRow) -> None:
    value = R.bid_value(row.bid, row.score_before, Rules(**row.flags))
    delta = value if row.tricks >= row.bid else -value
    assert delta == row.delta, row.quote
    assert row.score_before + delta == row.after, row.quote


@pytest.mark.parametrize("row", TEAM_ROWS, ids=row_id)
def test_team_qualifies(row: TeamRow) -> None:
    got = R.team_qualifies(row.scores, row.team, row.target, Rules(**row.flags))
    assert got is row.expected, row.quote


@pytest.mark.parametrize("row", END_ROWS, ids=row_id)
def test_end_of_game(row: EndRow) -> None:
    winner, next_target = R.end_of_game(row.scores, row.target_before, Rules(**row.flags))
    assert winner == row.winner, row.quote
    if winner is None:
        assert next_target == row.next_target, row.quote


# -- presets and construction -------------------------------------------------------------------
def test_wiki_is_the_default() -> None:
    """'"wiki" (default): everything above.' The flag defaults named in RULES.md."""
    rules = Rules.preset("wiki")
    assert rules == Rules()
    assert rules.name == "wiki"
    expected = {
        "no_face_redeal": True,
        "min_bid_base": 2,
        "min_bid_escalates": True,
        "min_total_bids": 11,
        "escalate_total": True,
        "total_counted_in": "tricks",
        "five_to_run": False,
        "score_table": "wiki",
        "five_six_face_value_from": 30,
        "target": 41,
        "target_step": 10,
        "partner_must_be_positive": True,
        "simultaneous_finish": "extend",
        "auto_claim": False,
        "move_time_limit_s": 10,
        "move_hard_limit_s": 20,
    }
    assert {k: getattr(rules, k) for k in expected} == expected


def test_pagat_preset() -> None:
    """'"pagat": minimum bid 1 with no escalation; required total 11 counted in points (bids of
    7+ count double); value = bid for 1-6 and double the bid from 7 up; no thirty rule; on a
    simultaneous finish the higher team total wins.' Everything else as the default."""
    rules = Rules.preset("pagat")
    assert rules.name == "pagat"
    for flag, value in PAGAT.items():
        assert getattr(rules, flag) == value, flag
    assert rules.min_total_bids == 11
    unchanged = ("no_face_redeal", "five_to_run", "target", "target_step",
                 "partner_must_be_positive", "auto_claim")  # fmt: skip
    for flag in unchanged:
        assert getattr(rules, flag) == getattr(Rules(), flag), flag


def test_preset_overrides() -> None:
    rules = Rules.preset("pagat", target=51)
    assert rules.target == 51
    assert rules.score_table == "pagat"
    assert rules.name == "custom"


def test_unknown_preset() -> None:
    with pytest.raises(RulesError, match="bridge"):
        Rules.preset("bridge")
    with pytest.raises(RulesError, match="bridge"):
        Rules.from_dict({"preset": "bridge"})


def test_from_dict() -> None:
    assert Rules.from_dict({}) == Rules()
    assert Rules.from_dict({"preset": "pagat"}) == Rules.preset("pagat")
    assert Rules.from_dict({"preset": "pagat", "target": 51}) == Rules.preset("pagat", target=51)
    assert Rules.from_dict({"five_to_run": True}).five_to_run is True
    for rules in (Rules(), Rules.preset("pagat"), Rules(five_six_face_value_from=None)):
        assert Rules.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize("key", ["targt", "trump", "min_bid"])
def test_unknown_key_names_itself(key: str) -> None:
    with pytest.raises(RulesError, match=key):
        Rules.from_dict({key: 1})
    with pytest.raises(RulesError, match=key):
        Rules.from_dict({"preset": "pagat", key: 1})
    with pytest.raises(RulesError, match=key):
        Rules.preset("wiki", **{key: 1})
    with pytest.raises(RulesError, match=key):
        Rules().replace(**{key: 1})


def test_unknown_key_in_constructor() -> None:
    with pytest.raises(RulesError, match="targt"):
        Rules(targt=41)  # type: ignore[call-arg]


BAD_VALUES: list[tuple[str, Any]] = [
    ("no_face_redeal", "yes"),
    ("no_face_redeal", 1),
    ("no_face_redeal", None),
    ("min_bid_base", 0),
    ("min_bid_base", 14),
    ("min_bid_base", 2.0),
    ("min_bid_base", True),
    ("min_bid_base", "2"),
    ("min_bid_escalates", "on"),
    ("min_total_bids", 3),
    ("min_total_bids", 105),
    ("min_total_bids", 11.5),
    ("escalate_total", 0),
    ("total_counted_in", "trick"),
    ("total_counted_in", None),
    ("five_to_run", "no"),
    ("score_table", "Wiki"),
    ("score_table", "41"),
    ("five_six_face_value_from", "30"),
    ("five_six_face_value_from", 30.0),
    ("five_six_face_value_from", True),
    ("target", 0),
    ("target", "41"),
    ("target", 41.0),
    ("target_step", 0),
    ("target_step", -10),
    ("partner_must_be_positive", 1),
    ("simultaneous_finish", "highest"),
    ("simultaneous_finish", None),
    ("auto_claim", "off"),
    ("move_time_limit_s", 0),
    ("move_time_limit_s", -1.0),
    ("move_time_limit_s", "10"),
    ("move_hard_limit_s", 5),
]


@pytest.mark.parametrize(("flag", "value"), BAD_VALUES)
def test_bad_value_names_the_flag(flag: str, value: Any) -> None:
    with pytest.raises(RulesError, match=flag):
        Rules(**{flag: value})
    with pytest.raises(RulesError, match=flag):
        Rules.from_dict({flag: value})
    with pytest.raises(RulesError, match=flag):
        Rules().replace(**{flag: value})


GOOD_VALUES: list[tuple[str, Any]] = [
    ("min_bid_base", 1),
    ("min_bid_base", 13),
    ("min_total_bids", 4),
    ("min_total_bids", 104),
    ("five_six_face_value_from", None),
    ("five_six_face_value_from", 0),
    ("five_six_face_value_from", -10),
    ("target", 1),
    ("target_step", 1),
    ("total_counted_in", "points"),
    ("score_table", "pagat"),
    ("simultaneous_finish", "highest_player"),
    ("simultaneous_finish", "highest_team_total"),
    ("move_hard_limit_s", 10),
    ("move_time_limit_s", 0.5),
]


@pytest.mark.parametrize(("flag", "value"), GOOD_VALUES)
def test_good_value_accepted(flag: str, value: Any) -> None:
    assert getattr(Rules(**{flag: value}), flag) == value


def test_rules_are_frozen_and_hashable() -> None:
    rules = Rules()
    with pytest.raises(AttributeError):
        rules.target = 51  # type: ignore[misc]
    assert hash(rules) == hash(Rules())
