"""The compiled core: the same results as plain Python (NUMBA_DISABLE_JIT=1), safe against bad
input (every value checked before it reaches a kernel), and the records behind the fields."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fourhundred_env import Engine, FourHundredError, IllegalActionError, Phase, Rules, Table
from fourhundred_env.engine import State
from fourhundred_env.observation import OBS_SIZE, encode_observation
from fourhundred_env.view import SeatView, seat_view

ROOT = Path(__file__).resolve().parents[1]

# Plays a few tables of random legal play under three rules profiles and prints a digest of
# every state, observation (float32 and int8) and mask along the way.
_SAMPLE = """
import hashlib, sys
import numpy as np
from fourhundred_env import Engine, Phase, Rules
from fourhundred_env.observation import encode_observation
from fourhundred_env.view import seat_view

digest = hashlib.sha256()
for rules in (Rules(), Rules.preset("pagat"), Rules(auto_claim=True, five_to_run=True)):
    engine = Engine(rules)
    rng = np.random.default_rng(3)
    state = engine.init(6, seed=11, scores=rng.integers(-30, 60, size=(6, 4)))
    engine.deal(state)
    for step in range(120):
        view = seat_view(engine, state)
        pending = view.seat >= 0
        for dtype in (np.float32, np.int8):
            digest.update(encode_observation(view.select(np.flatnonzero(pending)), dtype=dtype).tobytes())
        digest.update(engine.legal_mask(state).tobytes())
        after = np.zeros(engine.legal_mask(state).shape, np.int8)
        engine.step(state, engine.random_actions(state, rng, max_bid=5), mask_out=after)
        digest.update(after.tobytes())
        digest.update(state.records.tobytes())
        engine.deal(state, state.phase == Phase.HAND_OVER)
        done = np.flatnonzero(state.phase == Phase.MATCH_OVER)
        if done.size:
            engine.new_match(state, done, state.match_id[done] + 6)
            engine.deal(state, done)
print(digest.hexdigest())
"""


def _digest(disable_jit: bool) -> str:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1" if disable_jit else "0"}
    out = subprocess.run(
        [sys.executable, "-c", _SAMPLE], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=600, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def test_plain_python_and_compiled_kernels_agree_bit_for_bit() -> None:
    compiled = _digest(disable_jit=False)
    assert len(compiled) == 64
    assert _digest(disable_jit=True) == compiled


# -- bad input never reaches a kernel -----------------------------------------------------------
def _bidding_state() -> tuple[Engine, State]:
    engine = Engine(Rules())
    state = engine.init(2, seed=1)
    engine.deal(state)
    return engine, state


@pytest.mark.parametrize(
    "actions, message",
    [
        (np.array([53.9, 53.0]), "actions of dtype float64"),
        (np.array(["53", "54"]), "actions of dtype <U2"),
        (np.array([[53], [54]]), r"shape \(2, 1\)"),
        (np.array([True, False]), "actions of dtype bool"),
        (np.array([53, 54, 55]), "got 3 actions for 2 tables"),
        (np.array([2**40, 53]), "not an action id 0-65"),
        (np.array([-7, 53]), "not an action id 0-65"),
    ],
)
def test_step_refuses_what_is_not_an_action_id_and_changes_nothing(actions, message) -> None:
    engine, state = _bidding_state()
    before = state.copy()
    with pytest.raises(IllegalActionError, match=message):
        engine.step(state, actions)
    assert state.equals(before)


def test_unvalidated_steps_still_refuse_ids_outside_the_phase() -> None:
    engine, state = _bidding_state()
    before = state.copy()
    for bad in (3, 66, 10**6, -1):  # a card id while bidding, ids out of range
        with pytest.raises(IllegalActionError, match="illegal action"):
            engine.step(state, np.array([bad, 53]), validate=False)
        assert state.equals(before)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scores": np.array([2**40, 0, 0, 0])}, "scores=.*expected integers from -2147483648"),
        ({"scores": np.array([1.5, 0, 0, 0])}, "scores=.*expected integers"),
        ({"target": 0}, "target=0: expected integers from 1"),
        ({"target": 2**33}, "target=.*expected integers from 1 to 2147483647"),
        ({"dealer": 4}, "dealer=4: expected integers from 0 to 3"),
        ({"match_id": np.array([1.0, 2.0])}, "match_id=.*expected integers"),
        ({"seed": 1.5}, "seed=1.5: expected an integer"),
    ],
)
def test_init_refuses_values_the_fields_cannot_hold(kwargs, message) -> None:
    with pytest.raises(FourHundredError, match=message):
        Engine(Rules()).init(2, **kwargs)


def test_table_refuses_scores_outside_int32() -> None:
    with pytest.raises(FourHundredError, match="scores"):
        Table(scores=(2**40, 0, 0, 0))


def test_deals_with_cards_beyond_the_pack_are_refused() -> None:
    engine = Engine(Rules())
    state = engine.init(1)
    good = state.copy()
    hands = np.array([[(1 << 13) - 1 << 13 * s for s in range(4)]], dtype=np.uint64)
    hands[0, 0] = (hands[0, 0] & ~np.uint64(1)) | np.uint64(1 << 60)  # 13 cards, one is bit 60
    with pytest.raises(FourHundredError, match="bits above card 51"):
        engine.deal(state, np.array([0]), hands)
    with pytest.raises(FourHundredError, match="expected \\(1, 4\\) uint64"):
        engine.deal(state, np.array([0]), np.ones((1, 3), np.uint64))
    assert state.equals(good)


def test_views_and_observations_refuse_tables_and_seats_out_of_range() -> None:
    engine, state = _bidding_state()
    with pytest.raises(FourHundredError, match="table 5"):
        seat_view(engine, state, np.array([5]))
    with pytest.raises(FourHundredError, match="seat=7: expected seats 0 to 3"):
        seat_view(engine, state, np.array([0]), seat=7)
    view = seat_view(engine, state)
    with pytest.raises(FourHundredError, match="out has shape"):
        encode_observation(view, out=np.zeros((2, OBS_SIZE + 1), np.float32))
    with pytest.raises(FourHundredError, match="legal_mask out="):
        engine.legal_mask(state, out=np.zeros((2, 60), bool))


# -- the records behind the fields --------------------------------------------------------------
def test_fields_are_views_into_one_record_per_table() -> None:
    engine, state = _bidding_state()
    assert state.records.shape == (2,) and state.records.dtype == State.DTYPE
    state.scores[1, 2] = 17
    assert state.records["scores"][1, 2] == 17
    state.scores = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])  # assignment writes into the records
    assert state.records["scores"].tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert state.forfeit.dtype == np.bool_ and state.thrown_in.dtype == np.bool_
    engine.forfeit(state, np.array([1]), np.array([3]))
    assert state.forfeit[1].tolist() == [False, False, False, True]


def test_copies_selections_and_pickles_are_independent_batches() -> None:
    _, state = _bidding_state()
    for other in (state.copy(), state.select(np.array([0, 1])), pickle.loads(pickle.dumps(state))):
        assert other.equals(state)
        other.bids[0, 0] = 9
        assert state.bids[0, 0] == 0
        assert other.records["bids"][0, 0] == 9
    joined = State.concat([state, state.select(1)])
    assert joined.batch_size == 3 and joined.select(2).equals(state.select(1))


def test_a_seat_view_built_from_arrays_packs_them() -> None:
    engine, state = _bidding_state()
    view = seat_view(engine, state)
    rebuilt = SeatView(**{name: getattr(view, name) for name in SeatView.DTYPE.names})
    assert rebuilt.equals(view)
    assert encode_observation(rebuilt).tobytes() == encode_observation(view).tobytes()
    assert (view.phase == Phase.BID).all()


@pytest.mark.parametrize(
    "field, value",
    [
        ("phase", 100),
        ("bids", 100),
        ("trick_cards", 90),
        ("seat", 7),
        ("to_play", 9),
        ("num_bids", 9),
    ],
)
def test_views_built_by_hand_are_checked_before_a_kernel_indexes_with_them(field, value) -> None:
    engine, state = _bidding_state()
    arrays = {name: getattr(seat_view(engine, state), name).copy() for name in SeatView.DTYPE.names}
    arrays[field][0] = value  # a bid of 100 would index past the end of the observation row
    view = SeatView(**arrays)
    with pytest.raises(FourHundredError, match="not a seat's view"):
        encode_observation(view)
    from fourhundred_agents.scripted.heuristic import HeuristicAgent

    with pytest.raises(FourHundredError, match="not a seat's view"):
        HeuristicAgent(Rules()).act(view)


def test_direct_entry_points_and_the_dispatcher_play_the_same_games() -> None:
    """The engine's hot calls skip numba's dispatch only for the usual argument types; strided
    actions, strided masks and int8 masks go through the dispatcher. Both paths, mixed at
    random, play the same games bit for bit as a run that always takes the direct path."""
    from fourhundred_env.cards import NUM_ACTIONS
    from fourhundred_env.engine import sample_legal_actions

    def play(unusual: bool) -> bytes:
        engine = Engine(Rules())
        state = engine.init(6, seed=11)
        engine.deal(state)
        rng = np.random.default_rng(3)
        pick = np.random.default_rng(4)
        for _ in range(400):
            odd = unusual and pick.random() < 0.5
            if odd:
                wide = np.zeros((6, 2 * NUM_ACTIONS), np.int8)
                mask = engine.legal_mask(state, np.zeros((6, NUM_ACTIONS), np.int8))
                wide[:, ::2] = mask  # a strided (non-contiguous) view of the same mask
                mask = wide[:, ::2]
            else:
                mask = engine.legal_mask(state)
            actions = sample_legal_actions(mask, rng)
            if odd:
                spaced = np.zeros(12, np.int64)
                spaced[::2] = actions
                actions = spaced[::2]
            if engine.step(state, actions):
                done = np.flatnonzero(state.phase >= Phase.HAND_OVER)
                over = done[state.phase[done] == Phase.MATCH_OVER]
                if over.size:
                    engine.new_match(state, over, over + 100)
                engine.deal(state, done)
        return state.records.tobytes()

    assert play(unusual=True) == play(unusual=False)


# -- the step that also writes the next mask ------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    batch=st.integers(1, 6),
    preset=st.sampled_from(["wiki", "pagat", "claim"]),
    dtype=st.sampled_from([np.bool_, np.int8]),
)
def test_step_mask_out_is_the_legal_mask_after_the_step(
    seed: int, batch: int, preset: str, dtype: type
) -> None:
    """`step(..., mask_out=m)` leaves in m exactly what `legal_mask` gives after the step,
    and plays the same game as a step without it (hypothesis over seeds, batch sizes, rules)."""
    from fourhundred_env.engine import sample_legal_actions

    rules = Rules(auto_claim=True, five_to_run=True) if preset == "claim" else Rules.preset(preset)
    engine = Engine(rules)
    with_mask, without = engine.init(batch, seed=seed), engine.init(batch, seed=seed)
    engine.deal(with_mask)
    engine.deal(without)
    rng = np.random.default_rng(seed)
    mask = engine.legal_mask(with_mask, np.zeros((batch, 66), dtype))
    for _ in range(150):
        actions = sample_legal_actions(mask, rng)
        assert np.array_equal(engine.legal_mask(without), mask.astype(bool))
        ended = engine.step(with_mask, actions, mask_out=mask)
        assert engine.step(without, actions) == ended
        assert np.array_equal(mask.astype(bool), engine.legal_mask(with_mask))
        assert with_mask.equals(without)
        if ended:
            for state in (with_mask, without):
                done = np.flatnonzero(state.phase >= Phase.HAND_OVER)
                over = done[state.phase[done] == Phase.MATCH_OVER]
                engine.new_match(state, over, over + 100)
                engine.deal(state, done)
            engine.legal_mask(with_mask, out=mask)


def test_an_illegal_step_leaves_mask_out_as_it_was() -> None:
    engine, state = _bidding_state()
    before = state.copy()
    mask = engine.legal_mask(state)
    kept = mask.copy()
    with pytest.raises(IllegalActionError, match="illegal action"):
        engine.step(state, np.array([0, 0]), mask_out=mask)  # a card while bidding
    assert np.array_equal(mask, kept)
    assert state.equals(before)


@pytest.mark.parametrize(
    ("out", "said"),
    [
        (np.zeros((2, 65), np.bool_), r"array of shape \(2, 65\) and dtype bool"),
        (np.zeros((2, 66), np.float32), r"array of shape \(2, 66\) and dtype float32"),
        (np.broadcast_to(np.zeros(66, np.bool_), (2, 66)), "a read-only array"),
        ([[0] * 66] * 2, "a list"),
    ],
)
def test_a_mask_out_the_kernel_cannot_write_is_refused_in_one_line(out: object, said: str) -> None:
    engine, state = _bidding_state()
    before = state.copy()
    actions = engine.random_actions(state, np.random.default_rng(0))
    for call, what in (
        (lambda: engine.step(state, actions, mask_out=out), "step mask_out="),
        (lambda: engine.legal_mask(state, out=out), "legal_mask out="),
    ):
        with pytest.raises(FourHundredError, match=said) as raised:
            call()
        message = str(raised.value)
        assert message.startswith(what) and "\n" not in message
        assert "expected a writeable (2, 66) bool or int8 array" in message
    assert state.equals(before)


# -- bit helpers ----------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(x=st.integers(1, 2**64 - 1), pick=st.integers(0, 63))
def test_nth_bit_is_the_kth_set_bit(x: int, pick: int) -> None:
    """The compiled nth_bit (a branch-free binary search) against the list of set bits."""
    from fourhundred_env import kernels as K
    from fourhundred_env._jit import nth_bit

    bits = [i for i in range(64) if x >> i & 1]
    k = pick % len(bits)
    assert nth_bit(np.uint64(x), k) == bits[k]
    out = np.empty(1, np.int64)
    K.select_bits(np.array([x], np.uint64), np.array([k], np.int64), out)  # inside a kernel
    assert out[0] == bits[k]


# -- the disk cache follows the sources a kernel uses -------------------------------------------
_CACHED_RUN = """
import numpy as np
from fourhundred_env import kernels as K
out = np.empty(1, np.int64)
K.select_bits(np.array([0b10110], np.uint64), np.array([1], np.int64), out)
stats = K.select_bits.stats
print(int(out[0]), stats.cache_hits.total() if hasattr(stats.cache_hits, "total") else sum(stats.cache_hits.values()))
"""


def test_editing_a_helper_in_another_file_recompiles_the_kernels_that_use_it(
    tmp_path: Path,
) -> None:
    """numba alone keys a cached kernel on its own file only: `select_bits` (kernels.py) would
    keep running the old `nth_bit` (_jit.py) after an edit. The kernels' cache keys also hold
    a hash of every project source their module imports, so the edit is seen, and an
    unchanged tree still loads from the cache."""
    import shutil

    shutil.copytree(ROOT / "fourhundred_env", tmp_path / "fourhundred_env",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "NUMBA_DISABLE_JIT": "0"}
    env.pop("NUMBA_CACHE_DIR", None)

    def run() -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", _CACHED_RUN], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
        bit, hits = out.stdout.split()
        return int(bit), int(hits)

    assert run() == (2, 0)  # the 1st set bit of 0b10110, compiled
    assert run() == (2, 1)  # loaded from the cache
    jit = tmp_path / "fourhundred_env" / "_jit.py"
    text = jit.read_text()
    assert "    return pos\n" in text
    jit.write_text(text.replace("    return pos\n", "    return pos + 40\n"))  # a changed helper
    assert run() == (42, 0)  # compiled again, with the new helper
