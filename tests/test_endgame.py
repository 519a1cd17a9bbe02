"""The exact endgame solver (agents/search/endgame.py) against plain minimax over every card.

Positions are written as text (each seat's cards, the trick on the table, bids, tricks won);
each legal card's value must equal what a brute-force minimax without any pruning gives,
for the made/missed pattern values of the position and for arbitrary ones.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.search.endgame import solve
from fourhundred_env import Engine, Rules
from fourhundred_env.cards import parse_card
from fourhundred_env.engine import Phase, State
from fourhundred_env.view import seat_view


def _set(text: str) -> int:
    return sum(1 << parse_card(c) for c in text.split())


def position(hands: list[str], leader: int, trick: str = "", bids=(2, 2, 2, 2), won=None,
             forfeit=(False,) * 4, scores=(0, 0, 0, 0), dealer: int = 3) -> State:  # fmt: skip
    """One table in card play: `hands` (text, by seat) still held, `trick` the cards already
    played to the current trick from `leader` on (text, in order)."""
    engine = Engine(Rules())
    state = engine.init(1, scores=np.array(scores), dealer=dealer)
    played = [parse_card(c) for c in trick.split()]
    sets = [_set(h) for h in hands]
    left = max(bin(s).count("1") for s in sets)
    state.phase = Phase.PLAY
    state.hand_set = np.array([sets], np.uint64)
    state.dealt_set = state.hand_set
    state.bids = np.array([bids])
    state.tricks_won = np.array([won if won is not None else [0, 0, 0, 0]])
    state.num_tricks = 13 - left
    state.trick_leader = leader
    state.trick_size = len(played)
    state.trick_cards = -1
    for p, card in enumerate(played):
        state.trick_cards[0, (leader + p) % 4] = card
    state.led_suit = played[0] // 13 if played else 0
    state.to_play = (leader + len(played)) % 4
    state.forfeit = np.array([forfeit])
    state.scores_before = np.array([scores])
    return state


def _strength(card: int, led: int) -> int:
    return card % 13 + (13 if card // 13 == led else 0) + (26 if card // 13 == 3 else 0)


def _legal(hand: int, size: int, led: int) -> list[int]:
    cards = [c for c in range(52) if hand >> c & 1]
    follow = [c for c in cards if c // 13 == led]
    return follow if size and follow else cards


def _play(pos: tuple, card: int) -> tuple:
    hands, trick, leader, size, led, won, left = pos
    seat = (leader + size) % 4
    hands = [h & ~(1 << card) if s == seat else h for s, h in enumerate(hands)]
    trick = [card if s == seat else c for s, c in enumerate(trick)]
    led = card // 13 if size == 0 else led
    if size < 3:
        return hands, trick, leader, size + 1, led, won, left
    winner = max(range(4), key=lambda s: _strength(trick[s], led))
    won = [w + (s == winner) for s, w in enumerate(won)]
    return hands, [-1] * 4, winner, 0, -1, won, left - 1


def brute_force(pos: tuple, bids, forfeit, team: int, leaf) -> float:
    """Minimax over every card, no pruning: `team`'s seats maximise leaf[made pattern]."""
    hands, _, leader, size, led, won, left = pos
    if left == 0:
        return leaf[sum(1 << s for s in range(4) if won[s] >= bids[s] and not forfeit[s])]
    seat = (leader + size) % 4
    values = [
        brute_force(_play(pos, c), bids, forfeit, team, leaf)
        for c in _legal(hands[seat], size, led)
    ]
    return max(values) if seat % 2 == team else min(values)


def solved(state: State, leaves: np.ndarray, viewer: np.ndarray | None = None) -> np.ndarray:
    viewer = state.to_play.astype(np.int64) if viewer is None else viewer
    out = np.empty((state.batch_size, 52))
    nodes = np.empty(state.batch_size, np.int64)
    solve(state.records, viewer, np.arange(state.batch_size), leaves, out, nodes)
    return out


def brute_force_values(state: State, j: int, leaf: np.ndarray, viewer: int) -> dict[int, float]:
    size = int(state.trick_size[j])
    pos = (
        [int(h) for h in state.hand_set[j]], [int(c) for c in state.trick_cards[j]],
        int(state.trick_leader[j]), size, int(state.led_suit[j]) if size else -1,
        [int(w) for w in state.tricks_won[j]], 13 - int(state.num_tricks[j]),
    )  # fmt: skip
    bids, forfeit = state.bids[j].tolist(), state.forfeit[j].tolist()
    seat = (pos[2] + size) % 4
    return {
        c: brute_force(_play(pos, c), bids, forfeit, viewer % 2, leaf)
        for c in _legal(pos[0][seat], size, pos[4])
    }


MADE = np.arange(16.0)  # leaf = the pattern's own number: every pattern has its own value
NO = (False,) * 4
# hands by seat, leader, the trick so far, bids, tricks won, forfeited seats
POSITIONS = {
    # seat 0 needs one trick and leads from AH 2C: either way it makes (the 2C loses to seat
    # 3's club, then the AH ruffs the last club); seat 1 needs two and can take none
    "ace or ruff": (["AH 2C", "3C 4C", "5C 6C", "7C 8C"], 0, "", (3, 2, 2, 2), [2, 0, 2, 4], NO),
    # seat 2 plays third to its partner's KH: overtake with the AH or not
    "overtake": (["5S", "2H 3S", "AH 4S", "6S 7S"], 0, "KH 2H", (2, 3, 2, 3), [1, 3, 1, 3], NO),
    # seat 3, void in spades, needs a trick: ruff the spade ace
    "ruff": (["AS KS", "QS JS", "10S 9S", "2H 3D"], 0, "AS QS 10S", (2, 2, 2, 6), [4, 5, 0, 5],
             NO),
    # three tricks, every seat undecided
    "three tricks": (["AH 5C 9D", "KH 6C 10D", "QH 7C JD", "JH 8C QD"], 1, "", (4, 4, 3, 3),
                     [3, 3, 2, 2], NO),
    # seat 1 forfeited: its contract counts as missed however many tricks it takes
    "forfeit": (["AC 2D", "KC 3D", "QC 4D", "JC 5D"], 2, "", (2, 2, 2, 2), [1, 3, 1, 1],
                (False, True, False, False)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(POSITIONS))
def test_written_positions_match_brute_force(name: str) -> None:
    state = position(*POSITIONS[name])
    rng = np.random.default_rng(0)
    for leaf in (MADE, rng.random(16)):
        viewer = int(state.to_play[0])
        got = solved(state, leaf[None, :])[0]
        want = brute_force_values(state, 0, leaf, viewer)
        assert set(np.flatnonzero(~np.isnan(got))) == set(want)
        for card, value in want.items():
            assert got[card] == pytest.approx(value, abs=1e-12), card


def test_the_first_position_by_hand() -> None:
    """Seats 2 and 3 have made, seat 0 makes with either card, seat 1 misses: pattern 1|4|8."""
    got = solved(position(*POSITIONS["ace or ruff"]), MADE[None, :])[0]
    assert got[parse_card("AH")] == got[parse_card("2C")] == 1 | 4 | 8


def test_the_forfeited_seat_never_makes() -> None:
    got = solved(position(*POSITIONS["forfeit"]), MADE[None, :])[0]
    legal = got[~np.isnan(got)]
    assert legal.size == 2 and not (legal.astype(int) & 2).any()


@pytest.mark.parametrize("tricks_left", [1, 2, 3])
def test_positions_of_real_hands_match_brute_force(tricks_left: int) -> None:
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    state = engine.init(24, seed=tricks_left)
    engine.deal(state)
    rng = np.random.default_rng(tricks_left)
    stop = 52 - 4 * tricks_left + rng.integers(0, 4, 24)
    played = np.zeros(24, np.int64)
    while True:
        go = (state.phase == Phase.BID) | ((state.phase == Phase.PLAY) & (played < stop))
        if not go.any():
            break
        rows = np.flatnonzero(go)
        actions = np.zeros(24, np.int64)
        actions[rows] = base.act(seat_view(engine, state, index=rows))
        played += (state.phase == Phase.PLAY) & go
        engine.step(state, actions, active=go)
    state = state.select(np.flatnonzero(state.phase == Phase.PLAY))
    state.forfeit[::5, 1] = True
    leaves = rng.random((state.batch_size, 16))
    leaves[::3] = np.round(leaves[::3])  # many equal values: the bounds cut early
    viewer = (state.to_play.astype(np.int64) + np.arange(state.batch_size)) % 4
    got = solved(state, leaves, viewer)
    for j in range(state.batch_size):
        want = brute_force_values(state, j, leaves[j], int(viewer[j]))
        assert np.isnan(got[j]).sum() == 52 - len(want)
        for card, value in want.items():
            assert got[j, card] == pytest.approx(value, abs=1e-12), (j, card)


def test_the_solver_loads_from_numba_s_disk_cache() -> None:
    """numba's cache of recursive functions crashed when a recursive call's argument types
    differed from the signature (numba issue 6061): a fresh process must load and run it."""
    code = (
        "import numpy as np; from tests.test_endgame import position, solved;"
        "s = position(['AH 2C', '3C 4C', '5C 6C', '7C 8C'], 0, '', (3, 2, 2, 2), [2, 0, 2, 4]);"
        "print(solved(s, np.arange(16.0)[None, :])[0][51])"
    )
    for _ in range(2):  # the first run may compile and write the cache, the second reads it
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=os.environ.copy(), timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "13.0"
