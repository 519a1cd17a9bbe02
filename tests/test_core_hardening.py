"""The rules core never crashes the interpreter and refuses bad input with a FourHundredError.

- A State holding values no game reaches (a seat of 127, phase 99, cards above 51, random
  bytes) is stepped, masked, viewed and encoded without a crash: the kernels mask every field
  they index with; `State.validate` names the table and field where a state comes from
  outside (unpickling, `Table`, on request), and `step` names it too.
- Bad arguments to the public API raise a FourHundredError subclass in one line and change
  nothing (hypothesis fuzzers).
- YAML configs are bounded (aliases, depth, size) and a batch size is bounded before any
  allocation.

The fuzzers that feed corrupted records to compiled code run in a child process
(``python tests/test_core_hardening.py CHILD``), so that a segfault fails the test instead of
killing pytest. FUZZ_EXAMPLES sets their number of examples (default 150).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fourhundred_env import Engine, FourHundredError, Rules, Table
from fourhundred_env.cards import parse_action, parse_card, parse_hand
from fourhundred_env.configs import (
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    build,
    load_yaml,
    parse_yaml,
)
from fourhundred_env.engine import MAX_BATCH_SIZE, State
from fourhundred_env.errors import ConfigError, IllegalActionError, RulesError, StateError
from fourhundred_env.state import FIELD_RANGES
from fourhundred_env.view import SeatView, seat_view

HERE = Path(__file__).resolve()
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def _playing_state(batch: int = 3, steps: int = 6, seed: int = 0) -> tuple[Engine, State]:
    """An engine-made state with hands in play (some bidding, some playing)."""
    engine = Engine(Rules())
    state = engine.init(batch, seed=seed)
    engine.deal(state)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if engine.step(state, engine.random_actions(state, rng, max_bid=4)):
            done = np.flatnonzero(state.phase >= 2)
            engine.new_match(state, done, done + 100)
            engine.deal(state, done)
    return engine, state


def _one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and len(text) < 1000, text
    return text


def _child(name: str, examples: int = EXAMPLES) -> None:
    """Run the fuzzer `name` of this file in a child process; a signal or an exception fails."""
    env = {**os.environ, "FUZZ_EXAMPLES": str(examples)}
    run = subprocess.run(
        [sys.executable, str(HERE), name], env=env, capture_output=True, text=True, timeout=1800
    )
    tail = (run.stdout + run.stderr)[-4000:]
    assert run.returncode == 0, f"child {name} ended with {run.returncode}:\n{tail}"
    assert f"ok {name}" in run.stdout, tail


# -- item 9: out-of-range fields never crash -------------------------------------------------


def test_fuzzed_records_crash_nothing() -> None:
    _child("records")


def test_fuzzed_fields_of_played_states_crash_nothing() -> None:
    _child("fields")


def test_fuzzed_api_arguments_crash_nothing() -> None:
    _child("api")


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("to_play", 127, "to_play=127"),
        ("to_play", -1, "to_play=-1"),  # -1 only between hands
        ("phase", 99, "phase=99"),
        ("led_suit", -7, "led_suit=-7"),
        ("trick_leader", 9, "trick_leader=9"),
        ("trick_size", 4, "trick_size=4"),
        ("num_bids", 9, "num_bids=9"),
        ("winner", 5, "winner=5"),
        ("target", -100, "target=-100"),  # every score would have reached it
        ("target", 0, "target=0"),
    ],
)
def test_validate_names_the_table_and_the_field(field: str, value: int, named: str) -> None:
    _, state = _playing_state()
    state.validate()  # engine-made: fine
    getattr(state, field)[1] = value
    with pytest.raises(StateError, match=rf"^snapshot table 1: {named}: expected "):
        state.validate("snapshot")


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("bids", 99, r"bids\[2\]=99"),
        ("min_bid", -3, r"min_bid\[2\]=-3"),
        ("trick_cards", 60, r"trick_cards\[2\]=60"),
        ("tricks_won", -1, r"tricks_won\[2\]=-1"),
        ("hand_set", 1 << 60, r"hand_set\[2\]=\d+"),
        ("dealt_set", 1 << 63, r"dealt_set\[2\]=\d+"),
    ],
)
def test_validate_names_the_seat_of_a_seat_field(field: str, value: int, named: str) -> None:
    _, state = _playing_state()
    getattr(state, field)[0, 2] = value
    with pytest.raises(StateError, match=rf"^state table 0: {named}: expected "):
        state.validate()


def test_a_table_refuses_a_state_with_a_target_below_1() -> None:
    table = Table()
    state = table.state.copy()
    state.target[0] = -100
    with pytest.raises(StateError, match=r"target=-100: expected a target of at least 1"):
        table.state = state
    assert table.target == 41 and table.state is not state  # the table is as it was


def test_every_range_checked_is_reached_by_no_engine_state_beyond_it() -> None:
    """States the engine makes always pass: many random hands, checked at every step."""
    engine = Engine(Rules(auto_claim=True))
    state = engine.init(64, seed=3)
    engine.deal(state)
    rng = np.random.default_rng(3)
    for _ in range(600):
        if engine.step(state, engine.random_actions(state, rng, max_bid=4)):
            done = np.flatnonzero(state.phase >= 2)
            over = done[state.phase[done] == 3]
            engine.new_match(state, over, over + 1000)
            engine.deal(state, done)
        state.validate()
    assert set(FIELD_RANGES) <= set(State.DTYPE.names)


def test_step_names_a_field_changed_from_outside_and_changes_nothing() -> None:
    engine, state = _playing_state()
    actions = engine.random_actions(state, np.random.default_rng(1), max_bid=4)
    state.to_play[2] = 127
    before = state.records.tobytes()
    for validate in (True, False):
        with pytest.raises(StateError, match=r"^step table 2: to_play=127: expected") as e:
            engine.step(state, actions, validate=validate)
        _one_line(e.value)
        assert state.records.tobytes() == before


def test_a_corrupted_pickle_is_refused_and_a_good_one_loads() -> None:
    _engine, state = _playing_state()
    again = pickle.loads(pickle.dumps(state))
    assert again.equals(state)
    state.phase[0] = 99
    with pytest.raises(StateError, match=r"table 0: phase=99"):
        pickle.loads(pickle.dumps(state))
    state.phase[0] = 1
    state.seed = "x"  # type: ignore[assignment]
    with pytest.raises(StateError, match=r"seed='x': expected an integer"):
        pickle.loads(pickle.dumps(state))


def test_records_of_another_shape_or_layout_are_refused() -> None:
    with pytest.raises(StateError, match=r"shape \(2, 3\): expected a \(B,\) State.DTYPE"):
        State.from_records(np.zeros((2, 3), State.DTYPE), seed=0)
    with pytest.raises(StateError, match=r"expected a \(B,\) State.DTYPE"):
        State.from_records(np.zeros(4, np.int64), seed=0)
    with pytest.raises(StateError, match=r"a list"):
        State.from_records([1, 2], seed=0)  # type: ignore[arg-type]
    with pytest.raises(StateError, match=r"unknown field"):
        State.from_records(np.zeros(1, State.DTYPE), seed=0, colour=1)
    assert State.from_records(np.zeros(1, State.DTYPE)).seed == 0  # the default
    _, state = _playing_state()
    with pytest.raises(StateError, match=r"cannot be replaced"):
        state.records = np.zeros((2, 3), State.DTYPE)
    with pytest.raises(StateError, match=r"expected one or more States"):
        State.concat([])
    with pytest.raises(StateError, match=r"expected one or more States"):
        State.concat([state, "x"])  # type: ignore[list-item]
    assert State.concat([state, state]).batch_size == 2 * state.batch_size


def test_a_state_built_by_hand_is_checked() -> None:
    _, state = _playing_state()
    fields = {f: getattr(state, f).copy() for f in State.DTYPE.names}
    assert State(**fields, seed=0).equals(state)
    fields["to_play"][0] = 50
    with pytest.raises(StateError, match=r"^state table 0: to_play=50"):
        State(**fields, seed=0)
    fields["to_play"] = np.zeros((2, 2))
    with pytest.raises(StateError, match=r"to_play of dtype float64 and shape \(2, 2\)"):
        State(**fields, seed=0)


def test_a_table_refuses_its_state_changed_in_place() -> None:
    table = Table(name="north", dealer=0)
    table.deal(seed=4)
    table.state.to_play[0] = 127
    before = table.state.records.tobytes()
    for call in (lambda: table.act(table.legal()[0]), table.legal, lambda: table.forfeit(1)):
        with pytest.raises(StateError, match=r"^table 'north': table 0: to_play=127: expected"):
            call()
    assert table.state.records.tobytes() == before
    with pytest.raises(StateError, match=r"expected a State of one table"):
        table.state = Engine().init(2)


# -- item 10: bad arguments raise FourHundredError and change nothing --------------------------


def test_the_inputs_of_the_issue_raise_four_hundred_errors() -> None:
    engine, state = _playing_state()
    before = state.records.tobytes()
    actions = engine.random_actions(state, np.random.default_rng(0), max_bid=4)
    with pytest.raises(FourHundredError, match=r"^step active of shape \(3,\) and dtype int64"):
        engine.step(state, actions, active=[1, 0, 1])  # type: ignore[arg-type]
    with pytest.raises(FourHundredError, match=r"expected \(3,\) bool"):
        engine.step(state, actions, active="yes")  # type: ignore[arg-type]
    with pytest.raises(FourHundredError, match=r"scores=None: expected 4 integers"):
        Table(scores=None)  # type: ignore[arg-type]
    table = Table()
    with pytest.raises(FourHundredError, match=r"deal seed='x': expected an integer"):
        table.deal(seed="x")  # type: ignore[arg-type]
    assert table.phase == "hand_over"
    with pytest.raises(FourHundredError, match=r"legal_mask of shape \(3, 66\) and dtype object"):
        seat_view(engine, state, legal_mask=np.zeros((3, 66), object))
    with pytest.raises(FourHundredError, match=r"legal_mask a list"):
        seat_view(engine, state, legal_mask=[[0] * 66] * 3)  # type: ignore[arg-type]
    with pytest.raises(FourHundredError, match=r"engine=None"):
        seat_view(None, state)  # type: ignore[arg-type]
    with pytest.raises(FourHundredError, match=r"index of dtype <U1"):
        seat_view(engine, state, index=np.array(["a"]))
    with pytest.raises(FourHundredError, match=r"expected a State"):
        engine.step("state", actions)  # type: ignore[arg-type]
    with pytest.raises(FourHundredError, match=r"expected a numpy.random.Generator"):
        engine.random_actions(state, 7)  # type: ignore[arg-type]
    assert state.records.tobytes() == before
    engine.step(state, actions, active=[True, False, True])  # a list of bools is a mask


def test_a_batch_size_is_bounded_before_anything_is_allocated() -> None:
    engine = Engine()
    tracemalloc.start()
    try:
        for b in (MAX_BATCH_SIZE + 1, 10**12, 2**63):
            with pytest.raises(FourHundredError, match=r"expected 1 to 4,194,304 tables"):
                engine.init(b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_rules_refuse_time_limits_no_clock_can_take() -> None:
    for value in (1e10, float("inf"), float("nan"), -1.0):
        with pytest.raises(RulesError, match=r"move_hard_limit_s=.*at most 86,400"):
            Rules(move_hard_limit_s=value)
    assert Rules(move_time_limit_s=60.0, move_hard_limit_s=86_400.0).move_hard_limit_s == 86_400


def test_text_inputs_of_any_size_give_one_short_line() -> None:
    for call in (
        lambda: parse_action("9" * 5000),
        lambda: parse_card("A" * 10**6),
        lambda: parse_hand(["AH"] * 10**5),
        lambda: Rules(target=list(range(10**6))),  # type: ignore[arg-type]
        lambda: Rules.from_dict({f"flag{i}": 1 for i in range(10**4)}),
    ):
        with pytest.raises(FourHundredError) as e:
            call()
        _one_line(e.value)


# -- item 7: YAML and sizes --------------------------------------------------------------------

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def test_a_billion_laughs_is_refused_while_reading(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(LAUGHS)
    with pytest.raises(ConfigError, match=r"more than 100,000 values once its aliases") as e:
        load_yaml(path)
    _one_line(e.value)


def test_deep_nesting_and_recursive_aliases_are_refused(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 50_000 + "]" * 50_000)
    with pytest.raises(ConfigError, match=rf"nested deeper than {MAX_YAML_DEPTH} levels") as e:
        load_yaml(deep)
    _one_line(e.value)
    for text, why in (
        ("a: &x [1, *x]", "an alias inside the value it names"),
        ("a: " + "9" * 5000, "cannot be read"),
        ("x: &x 1\na: [" + ", ".join(["*x"] * 300) + "]", "more than 256 aliases"),
    ):
        with pytest.raises(ConfigError, match=why) as e:
            parse_yaml(text, "config 'x'")
        _one_line(e.value)
    nested = "a: " + "[" * (MAX_YAML_DEPTH - 2) + "1" + "]" * (MAX_YAML_DEPTH - 2)
    assert parse_yaml(nested)["a"] is not None
    assert parse_yaml("x: &x [1, 2]\ny: *x") == {"x": [1, 2], "y": [1, 2]}
    assert MAX_YAML_NODES >= 10_000


def test_a_key_given_twice_and_an_empty_file_are_refused(tmp_path: Path) -> None:
    """The last of two equal keys would win unseen; an empty file would mean all defaults."""
    path = tmp_path / "twice.yaml"
    path.write_text("matches: 1\nseed: 3\nmatches: 2\n")
    with pytest.raises(ConfigError, match=r"key 'matches' is given twice \(lines 1 and 3\)") as e:
        load_yaml(path)
    _one_line(e.value)
    with pytest.raises(ConfigError, match="key 'b' is given twice"):
        parse_yaml("a:\n  b: 1\n  b: 2\n")
    assert parse_yaml("base: &b {x: 1}\nmine:\n  <<: *b\n  y: 2\n")["mine"] == {"x": 1, "y": 2}
    path.write_text("# nothing but a comment\n")
    with pytest.raises(ConfigError, match="is empty: expected a mapping of keys to values") as e:
        load_yaml(path)
    _one_line(e.value)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("a: 1\n" + "#" * (2 << 20))
    with pytest.raises(ConfigError, match=r"larger than 1,048,576 bytes"):
        load_yaml(path)


def test_a_config_error_shows_a_huge_value_cut_short() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Small:
        n: int = 1

        def __post_init__(self) -> None:
            from fourhundred_env.configs import check_fields

            check_fields(self)

    nested: list = [1]
    for _ in range(5):
        nested = [nested] * 9
    for value in (list(range(10**6)), nested, "x" * 10**6, 1.5):
        with pytest.raises(ConfigError) as e:
            build(Small, {"n": value})
        assert len(_one_line(e.value)) < 160
    with pytest.raises(
        ConfigError, match=r"^config: unknown key\(s\) .{0,100}: expected some of \['n'\]$"
    ):
        build(Small, {"k" * 10**5 + str(i): 1 for i in range(10**3)})


# -- the fuzzers (children) ----------------------------------------------------------------------


def _exercise(engine: Engine, state: State, rng: np.random.Generator) -> None:
    """Every entry point of the core that reads a state; FourHundredError is fine."""
    from fourhundred_env.observation import OBS_SCALE, OBS_SIZE, encode_observation, observe_tables
    from fourhundred_env.view import world_state

    b = state.batch_size
    calls = [
        lambda: engine.legal_mask(state),
        lambda: engine.legal_mask(state, out=np.zeros((b, 66), np.int8)),
        lambda: engine.legal_sets(state),
        lambda: engine.random_actions(state, rng, max_bid=4),
        lambda: engine.random_actions(state, rng),
        lambda: engine.step(state, rng.integers(-5, 70, b), validate=False),
        lambda: engine.step(state, rng.integers(0, 66, b), mask_out=np.zeros((b, 66), bool)),
        lambda: engine.step(state, engine.random_actions(state, rng), validate=False),
        lambda: engine.step(state, engine.random_actions(state, rng)),
        lambda: engine.deal(state, np.flatnonzero(state.phase == 2)),
        lambda: engine.forfeit(state, np.arange(b), rng.integers(0, 4, b)),
        lambda: engine._score_hands(state, np.arange(b)),
        lambda: engine.new_match(state, np.arange(b), np.arange(b)),
        lambda: state.validate(),
        lambda: pickle.loads(pickle.dumps(state)),
    ]
    for seat in (None, 0, 1, 2, 3, -1):
        calls.append(lambda seat=seat: encode_observation(seat_view(engine, state, seat=seat)))
        calls.append(
            lambda seat=seat: world_state(
                engine, seat_view(engine, state, seat=seat), state.hand_set.copy()
            )
        )
    calls.append(
        lambda: observe_tables(
            state.records,
            np.arange(b),
            np.zeros(b, np.int8),
            engine._r,
            OBS_SCALE,
            np.zeros(1, SeatView.DTYPE),
            np.zeros((b, OBS_SIZE), np.float32),
            np.zeros((b, 66), np.int8),
        )
    )
    order = rng.permutation(len(calls))
    for k in order:
        with contextlib.suppress(FourHundredError):
            calls[k]()


def _child_records() -> None:
    engine = Engine(Rules())
    engine_claim = Engine(Rules(auto_claim=True))
    size = State.DTYPE.itemsize

    @FUZZ
    @given(st.integers(1, 4).flatmap(lambda b: st.binary(min_size=b * size, max_size=b * size)),
           st.integers(0, 2**32 - 1), st.booleans())  # fmt: skip
    def fuzz(raw: bytes, seed: int, claim: bool) -> None:
        records = np.frombuffer(bytearray(raw), State.DTYPE).copy()
        state = State.from_records(records, seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(3):
            _exercise(engine_claim if claim else engine, state, rng)

    fuzz()
    # random bytes are mostly far out of range: also every field at every edge of its dtype
    _, base = _playing_state(4, steps=9)
    rng = np.random.default_rng(0)
    for name in State.DTYPE.names:
        info = np.iinfo(State.DTYPE[name].base)
        for value in (info.min, info.max, -1, 4, 14, 52, 64, 99):
            if info.min <= value <= info.max:
                state = base.copy()
                state.records[name][...] = value
                _exercise(engine, state, rng)


def _child_fields() -> None:
    names = list(State.DTYPE.names)

    @FUZZ
    @given(st.integers(0, 40), st.lists(st.tuples(st.sampled_from(names), st.integers(0, 3),
                                                  st.integers(0, 3), st.integers(-(2**64), 2**64)),
                                        min_size=1, max_size=4),
           st.integers(0, 2**16), st.booleans())  # fmt: skip
    def fuzz(steps: int, changes: list, seed: int, claim: bool) -> None:
        engine, state = _playing_state(4, steps=steps, seed=seed)
        if claim:
            engine = Engine(Rules(auto_claim=True))
        for name, table, seat, value in changes:
            column = state.records[name]
            info = np.iinfo(column.dtype)
            v = info.min + (value - info.min) % (int(info.max) - int(info.min) + 1)
            if column.ndim == 2:
                column[table, seat] = v
            else:
                column[table] = v
        rng = np.random.default_rng(seed)
        for _ in range(4):
            _exercise(engine, state, rng)

    fuzz()


# anything at all, for arguments
ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=8)
    | st.sampled_from([np.int8(3), np.uint64(2**63), np.float32(1.5), np.bool_(True)])
    | st.builds(
        lambda d, n: np.zeros(n, d),
        st.sampled_from([np.bool_, np.int8, np.int64, np.uint64, np.float64, object, "U2"]),
        st.sampled_from([0, 1, 3, 4, (3, 66), (3, 4), (1, 4), (2, 2, 2)]),
    ),
    lambda children: st.lists(children, max_size=5) | st.tuples(children, children),
    max_leaves=8,
)


def _call(fn, *args, _state: State | None = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
    """fn(*args, **kwargs): success, or a FourHundredError in one line that left `_state` as
    it was."""
    before = None if _state is None else _state.records.tobytes()
    try:
        fn(*args, **kwargs)
    except FourHundredError as e:
        _one_line(e)
        if _state is not None:
            assert _state.records.tobytes() == before, (fn, e)


def _child_api() -> None:
    from fourhundred_env.deals import deal_sets, first_dealers

    rules_fields = list(Rules.__dataclass_fields__)
    kinds = st.sampled_from(
        ["init", "deal", "step", "mask", "view", "table", "act", "rules", "parse", "sets",
         "forfeit", "new_match", "end_of_game", "deals"]
    )  # fmt: skip

    @FUZZ
    @given(kinds, st.lists(ANY, max_size=4), st.dictionaries(st.sampled_from(
        ["seed", "match_id", "dealer", "scores", "target", "validate", "active", "mask_out",
         "out", "index", "seat", "legal_mask", "hands", "name", "match_index", "rules",
         *rules_fields]), ANY, max_size=3))  # fmt: skip
    def fuzz(kind: str, args: list, kwargs: dict) -> None:
        engine, state = _playing_state(3, steps=5)
        before = state.records.tobytes()
        changed_ok = False
        a0 = args[0] if args else None
        if kind == "init":
            b = a0 if not (isinstance(a0, int) and 4096 < a0 <= MAX_BATCH_SIZE) else 3
            _call(engine.init, b, **_only(kwargs, "seed match_id dealer scores target"))
        elif kind == "deal":
            fresh = engine.init(3)
            _call(engine.deal, fresh, *args[:2], _state=fresh)
            _call(engine.deal, state, *args[:2], _state=state)
        elif kind == "step":
            changed_ok = True  # a legal step changes the state; an error must not
            for _ in range(2):
                _call(engine.step, state, a0, _state=state,
                      **_only(kwargs, "validate active mask_out"))  # fmt: skip
        elif kind == "mask":
            _call(engine.legal_mask, state, *args[:1])
        elif kind == "view":
            _call(seat_view, engine, state, **_only(kwargs, "index seat legal_mask"))
        elif kind == "table":
            _call(Table, **_only(kwargs, "rules dealer scores seed match_index target name"))
        elif kind == "act":
            table = Table()
            table.deal(seed=1)
            for x in args:
                _call(table.act, x)
                _call(table.hand, x)
                _call(table.render, x)
            _call(table.deal, *args[:2])
        elif kind == "rules":
            _call(Rules, **_only(kwargs, " ".join(rules_fields)))
            _call(Rules.from_dict, a0)
            _call(Rules.preset, a0)
        elif kind == "parse":
            for x in args:
                _call(parse_card, x)
                _call(parse_hand, x)
                _call(parse_hand, x, expected=None)
                _call(parse_action, x)
        elif kind == "sets":
            from fourhundred_env.cards import action_text, card_text, cards_to_set, hand_text

            for x in args:
                _call(card_text, x)
                _call(action_text, x)
                _call(hand_text, x)
                _call(cards_to_set, [x] if not isinstance(x, list) else x)
        elif kind == "forfeit":
            _call(engine.forfeit, state, *[*args, 0, 0][:2], _state=state)
            changed_ok = True
        elif kind == "new_match":
            _call(engine.new_match, state, *[*args, 0, 0][:2], _state=state)
            changed_ok = True
        elif kind == "end_of_game":
            _call(engine.end_of_game, *([*args, np.zeros((1, 4), int), 41])[:2])
        elif kind == "deals":
            _call(deal_sets, *([*args, 0, np.arange(2), np.arange(2)])[:3])
            _call(first_dealers, *([*args, 0, np.arange(2)])[:2])
        if not changed_ok:
            assert state.records.tobytes() == before, kind

    fuzz()


def _only(kwargs: dict, names: str) -> dict:
    return {k: v for k, v in kwargs.items() if k in names.split()}


def test_errors_of_step_leave_the_state_as_it_was() -> None:
    engine, state = _playing_state()
    before = state.records.tobytes()
    for bad in ([99, 99, 99], np.zeros((3, 2), int), "x", [1.5, 2, 3], None):
        with pytest.raises(FourHundredError):
            engine.step(state, bad)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError):
        engine.step(state, np.full(3, 65))
    assert state.records.tobytes() == before


if __name__ == "__main__":
    child = {"records": _child_records, "fields": _child_fields, "api": _child_api}
    name = sys.argv[1]
    child[name]()
    print(f"ok {name}", flush=True)
