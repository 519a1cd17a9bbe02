"""`heuristic-v1` and `minbid` are frozen by their recorded decisions, not by a copy of code.

tests/data/heuristic_positions.npz holds 5,000 seat views (five rules profiles, half of them
bids) and what `heuristic-v1`, `minbid` and a heuristic with every parameter changed chose
there when the fixture was made (tests/make_heuristic_fixture.py). Every decision must be
the same, bit for bit, in one batch and table by table.
"""

from __future__ import annotations

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView
from tests.make_heuristic_fixture import PATH, PROFILES, load_views

_DATA = dict(np.load(PATH))
COLUMNS = {"v1": "heuristic-v1", "minbid": "minbid", "tuned": str(_DATA["tuned_spec"])}


def _views(profile: int) -> tuple[SeatView, np.ndarray]:
    rows = np.flatnonzero(_DATA["profile"] == profile)
    view = load_views(_DATA, rows)
    return view, rows


@pytest.mark.parametrize("column", list(COLUMNS))
@pytest.mark.parametrize("profile", range(len(PROFILES)), ids=list(PROFILES))
def test_recorded_decisions_are_played_bit_for_bit(profile: int, column: str) -> None:
    rules = Rules.from_dict(PROFILES[list(PROFILES)[profile]])
    view, rows = _views(profile)
    expected = _DATA[f"action_{column}"][rows]
    agent = make_agent(COLUMNS[column], rules, seed=0)
    got = agent.act(view)
    diff = np.flatnonzero(got != expected)
    assert diff.size == 0, f"{diff.size} of {rows.size} decisions differ, first at rows {diff[:10]}"
    for j in range(0, view.size, 37):  # one table at a time: the same decisions
        assert agent.act(view.select(np.array([j])))[0] == expected[j], f"row {rows[j]}"


def test_the_fixture_covers_bids_and_cards_of_every_profile() -> None:
    phase = _DATA["view_phase"]
    for p in range(len(PROFILES)):
        mine = _DATA["profile"] == p
        assert (mine & (phase == 0)).sum() >= 400 and (mine & (phase == 1)).sum() >= 400
    assert len(_DATA["action_v1"]) == 5000
    # the three columns are different bots: each disagrees with the others somewhere
    assert (_DATA["action_v1"] != _DATA["action_minbid"]).any()
    assert (_DATA["action_v1"] != _DATA["action_tuned"]).any()
