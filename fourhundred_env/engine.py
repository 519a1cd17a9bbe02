"""The batched rules engine: B tables of 400 at once, numpy only.

State is one dataclass of arrays, batch axis first, seat axis second (:class:`State`); card
sets are uint64 bitmasks. :class:`Engine` holds the rules and their lookup tables and
implements the whole match: deals (seeded by ``(seed, match_id, hand_index)``, independent
of the batch size, or explicit), redeal requests, bidding, thrown-in hands, trick play, the
optional auto-claim, scoring, dealer rotation and every end-of-game rule.

A single game is a batch of one; there is no second code path.

Hand lifecycle of one table::

    HAND_OVER --deal--> BID --4 bids, total reached--> PLAY --13 tricks--> HAND_OVER | MATCH_OVER
                         |--redeal request or total too low--> HAND_OVER (thrown in)

Actions (see :mod:`fourhundred_env.cards`): 0-51 play a card, 52-64 bid 1..13, 65 redeal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import cached_entry_point
from fourhundred_env.bits import sample_legal_actions, select_bit, unpack_sets
from fourhundred_env.cards import FULL_DECK, NUM_ACTIONS, action_text
from fourhundred_env.deals import deal_sets, first_dealers, mix64, seed_key
from fourhundred_env.errors import FourHundredError, IllegalActionError, StateError, short
from fourhundred_env.phases import PHASE_NAMES, Phase, phase_name
from fourhundred_env.rules import Rules
from fourhundred_env.state import State, check_records

__all__ = [
    "PHASE_NAMES",
    "Engine",
    "Phase",
    "State",
    "deal_sets",
    "first_dealers",
    "mix64",
    "sample_legal_actions",
    "seed_key",
    "select_bit",
    "unpack_sets",
]

_HAND_OVER = int(Phase.HAND_OVER)
_INT32 = np.iinfo(np.int32)
_ALL = np.zeros(0, bool)  # `active` meaning "every table" to the step kernel
_NO_HANDS = np.zeros((0, 4), np.uint64)
_NO_MASK = np.zeros((0, NUM_ACTIONS), np.bool_)  # `mask_out` meaning "none" to the step kernel


# Entry points of the hot kernels (see _jit.cached_entry_point), by the dtype of their one
# argument whose dtype varies (the mask): at one table numba's dispatch costs as much as the
# work. Each call site first makes sure of every other property the entry point was compiled
# for (dtypes, C order, writeable outputs) and otherwise calls through the dispatcher.
_LEGAL_MASK: dict[np.dtype, Callable[..., Any]] = {}
_STEP: dict[np.dtype, Callable[..., Any]] = {}
_I64 = np.dtype(np.int64)

MAX_BATCH_SIZE = 1 << 22
"""The most tables `Engine.init` makes at once (4,194,304: 738 MB of records); a larger
`batch_size` is refused before anything is allocated."""


def _records(state: object, what: str) -> np.ndarray:
    """The record array of `state`, refusing anything but a State of the engine's layout."""
    if not isinstance(state, State):
        raise StateError(f"{what}: got a {type(state).__name__}: expected a State")
    records = state.records
    if records.dtype != _STATE or records.ndim != 1:  # only through from_records' checks
        raise StateError(
            f"{what}: records of dtype {records.dtype!s:.60} and shape {records.shape}: expected (B,) "
            "State.DTYPE"
        )
    return records  # type: ignore[no-any-return]


def _mask_out(out: object, b: int, what: str) -> np.ndarray:
    """`out` if the kernels can write a (b, 66) mask into it in place: a writeable bool or
    int8 array of that shape. Anything else is refused in one line naming it."""
    if (
        type(out) is np.ndarray
        and out.shape == (b, NUM_ACTIONS)
        and out.dtype.char in "?b"
        and out.flags.writeable
    ):
        return out
    if isinstance(out, np.ndarray):
        kind = "an array" if out.flags.writeable else "a read-only array"
        given = f"{kind} of shape {out.shape} and dtype {out.dtype}"
    else:
        given = f"a {type(out).__name__}"
    raise FourHundredError(
        f"{what} {given}: expected a writeable ({b}, {NUM_ACTIONS}) bool or int8 array"
    )


def _integers(values: object, what: str, low: int, high: int) -> np.ndarray:
    """`values` as an int64 array, refusing non-integers and values outside [low, high]."""
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError, OverflowError):
        raise FourHundredError(f"{what}={short(values)}: expected integers") from None
    if arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        raise FourHundredError(f"{what}={short(values)}: expected integers")
    if arr.size and (arr.min() < low or arr.max() > high):
        raise FourHundredError(f"{what}={short(values)}: expected integers from {low} to {high}")
    return arr.astype(np.int64)


_STATE = State.DTYPE  # the record dtype the direct entry points were compiled for


class Engine:
    """The rules of 400 applied to a batch of tables. Stateless apart from `rules`.

    Every method takes a :class:`State` and, where it changes it, changes it in place. The
    methods check their input (bad input raises a :class:`FourHundredError` naming it and
    changes nothing) and hand the state's records to the compiled kernels of
    :mod:`fourhundred_env.kernels`.
    """

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise FourHundredError(f"rules={short(rules)}: expected a Rules instance")
        self._r = K.rules_record(self.rules)
        self._keys: dict[int, np.uint64] = {}

    def _key(self, seed: int) -> np.uint64:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise StateError(f"state seed={short(seed)}: expected an integer")
        key = self._keys.get(seed)
        if key is None:
            key = self._keys[seed] = seed_key(seed)
        return key

    # -- creating and dealing -------------------------------------------------------------------
    def init(
        self,
        batch_size: int,
        seed: int = 0,
        match_id: np.ndarray | None = None,
        dealer: np.ndarray | int | None = None,
        scores: np.ndarray | None = None,
        target: np.ndarray | int | None = None,
    ) -> State:
        """B tables at the start of a match, phase HAND_OVER: call `deal` to start a hand.

        match_id (B,) defaults to 0..B-1; dealer defaults to the seeded first dealer of each
        match; scores (B, 4) or (4,) default to 0 (int32 values); target defaults to
        ``rules.target``.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
            raise FourHundredError(f"batch_size={short(batch_size)}: expected a positive integer")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise FourHundredError(f"seed={short(seed)}: expected an integer")
        b = int(batch_size)
        if not 1 <= b <= MAX_BATCH_SIZE:
            raise FourHundredError(
                f"batch_size={short(batch_size)}: expected 1 to {MAX_BATCH_SIZE:,} tables (MAX_BATCH_SIZE)"
            )
        if match_id is None:
            ids = np.arange(b, dtype=np.int64)
        else:
            ids = _integers(match_id, "match_id", -(2**63), 2**63 - 1)
            if ids.shape not in ((), (b,)):
                raise FourHundredError(f"match_id has shape {ids.shape}: expected ({b},)")
            ids = np.broadcast_to(ids, (b,))
        if dealer is None:
            dealer_arr = first_dealers(seed, ids)
        else:
            dealer_arr = _integers(dealer, "dealer", 0, 3)
            if dealer_arr.shape not in ((), (b,)):
                raise FourHundredError(f"dealer has shape {dealer_arr.shape}: expected ({b},)")
        if scores is None:
            scores_arr = np.zeros((b, 4), np.int64)
        else:
            scores_arr = _integers(scores, "scores", int(_INT32.min), int(_INT32.max))
            if scores_arr.shape not in ((4,), (b, 4)):
                raise FourHundredError(
                    f"scores has shape {scores_arr.shape}: expected (4,) or ({b}, 4)"
                )
        tgt = _integers(
            self.rules.target if target is None else target, "target", 1, int(_INT32.max)
        )
        if tgt.shape not in ((), (b,)):
            raise FourHundredError(f"target has shape {tgt.shape}: expected ({b},)")
        state = State._wrap(np.zeros(b, State.DTYPE), seed=int(seed))
        state.phase = _HAND_OVER
        state.dealer = dealer_arr
        state.to_play = -1
        state.scores = scores_arr
        state.scores_before = scores_arr
        state.target = tgt
        state.winner = -1
        state.min_bid = self.rules.min_bid_base
        state.trick_cards = -1
        state.trick_leader = -1
        state.redeal_seat = -1
        state.claim_seat = -1
        state.match_id = ids
        return state

    def new_match(self, state: State, index: np.ndarray, match_id: np.ndarray) -> None:
        """Restart the tables at `index` as fresh matches with the given match ids (phase HAND_OVER).

        Scores return to 0, the target to ``rules.target``, the first dealer is drawn from
        (seed, match_id); the per-hand fields are reset by the next `deal`.
        """
        records = _records(state, "new_match")
        idx = self._index(state, index)
        ids = _integers(match_id, "match_id", -(2**63), 2**63 - 1)
        if ids.shape not in ((), idx.shape):
            raise FourHundredError(f"match_id has shape {ids.shape}: expected {idx.shape}")
        ids = np.ascontiguousarray(np.broadcast_to(ids, idx.shape))
        K.new_match(records, idx, ids, self._key(state.seed), self._r)

    def deal(
        self, state: State, index: np.ndarray | None = None, hands: np.ndarray | None = None
    ) -> None:
        """Start the next hand at the tables `index` (default: all), which must be in HAND_OVER.

        hands: (n, 4) uint64 explicit hands by seat, or None for the seeded deal of
        (seed, match_id, hand_index). Raises FourHundredError if a table is not between hands.
        """
        records = _records(state, "deal")
        idx = np.arange(state.batch_size) if index is None else self._index(state, index)
        if idx.size == 0:
            return
        if hands is None:
            explicit, seeded = _NO_HANDS, True
        else:
            explicit, seeded = self._check_deal(hands, idx.size), False
        bad = K.deal(records, idx, explicit, seeded, self._key(state.seed), self._r)
        if bad >= 0:
            t = int(idx[bad])
            raise IllegalActionError(
                f"table {t}: cannot deal in phase {phase_name(state.phase[t])}: "
                "expected a table between hands (hand_over)"
            )

    @staticmethod
    def _index(state: State, index: np.ndarray | int) -> np.ndarray:
        """Table indices (n,) int64 from indices or a (B,) bool mask; refuses anything else."""
        try:
            idx = np.atleast_1d(np.asarray(index))
        except (ValueError, TypeError, OverflowError):
            raise FourHundredError(f"table index {short(index)}: expected (n,) integers") from None
        if idx.dtype == np.bool_:
            if idx.shape != (state.batch_size,):
                raise FourHundredError(
                    f"a table mask of shape {idx.shape}: expected ({state.batch_size},) bool"
                )
            return np.flatnonzero(idx)
        if idx.dtype.kind not in "iu" or idx.ndim != 1:
            raise FourHundredError(
                f"table index of dtype {idx.dtype} and shape {idx.shape}: expected (n,) integers"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= state.batch_size):
            raise FourHundredError(
                f"table index {idx.tolist()[:8]}: expected tables 0 to {state.batch_size - 1}"
            )
        return np.ascontiguousarray(idx, dtype=np.int64)

    @staticmethod
    def _check_deal(hands: object, n: int) -> np.ndarray:
        try:
            arr = np.asarray(hands)
        except (ValueError, TypeError, OverflowError):
            arr = np.zeros(0, object)
        if arr.dtype.kind not in "iu" or arr.dtype == np.bool_ or arr.size != 4 * n:
            raise FourHundredError(
                f"explicit deal of dtype {arr.dtype} and shape {arr.shape}: expected ({n}, 4) "
                "uint64 card sets, one per seat"
            )
        if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
            raise FourHundredError("explicit deal with a negative card set: expected uint64 sets")
        sets = arr.astype(np.uint64).reshape(n, 4)
        counts = np.bitwise_count(sets)
        union = np.bitwise_or.reduce(sets, axis=1)
        overlap = np.bitwise_count(union) != counts.sum(axis=1)
        foreign = (union & ~FULL_DECK) != 0
        bad = (counts != 13).any(axis=1) | overlap | foreign
        if bad.any():
            t = int(np.argmax(bad))
            why = " with a card given twice" if overlap[t] else ""
            why += " with bits above card 51" if foreign[t] else ""
            raise FourHundredError(
                f"explicit deal {t} is not a deal: cards per seat {counts[t].tolist()}{why}: "
                "expected 13 distinct cards (ids 0-51) for each of the 4 seats"
            )
        return sets

    # -- legal actions --------------------------------------------------------------------------
    def legal_sets(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Legal actions as one bitmask per table, in phase-local coordinates.

        Returns (legal (B,) uint64, playing (B,) bool). Where `playing`, bit c is card c;
        otherwise bit i is action ``52 + i`` (bids 1..13, then redeal). 0 where no decision
        is pending.
        """
        records = _records(state, "legal_sets")
        b = records.shape[0]
        legal = np.empty(b, np.uint64)
        playing = np.empty(b, np.bool_)
        K.legal_sets(records, self._r, legal, playing)
        return legal, playing

    def legal_mask(self, state: State, out: np.ndarray | None = None) -> np.ndarray:
        """(B, 66) bool legal-action mask; all False only where no decision is pending.

        `out`, if given, is a (B, 66) bool or int8 array written in place (and returned).
        """
        if type(state) is not State:
            _records(state, "legal_mask")
        records = state.records
        if out is None:
            out = np.empty((records.shape[0], NUM_ACTIONS), np.bool_)
        else:
            out = _mask_out(out, records.shape[0], "legal_mask out=")
        # A State's records are (B,) State.DTYPE (from_records checks): the dtype's identity
        # and the C order are what the direct entry point needs besides.
        if records.dtype is _STATE and records.flags.c_contiguous and out.flags.c_contiguous:
            fn = _LEGAL_MASK.get(out.dtype) or cached_entry_point(
                _LEGAL_MASK, out.dtype, K.legal_mask, records, self._r, out
            )
            fn(records, self._r, out)
        else:
            K.legal_mask(_records(state, "legal_mask"), self._r, out)
        return out

    def random_actions(
        self, state: State, rng: np.random.Generator, max_bid: int | None = None
    ) -> np.ndarray:
        """(B,) int64 uniformly random legal actions, -1 where no decision is pending.

        `max_bid` caps random bids (a seat whose minimum bid is higher bids its minimum);
        uniformly random bids up to 13 are mostly missed, and such bots never finish a match.
        """
        records = _records(state, "random_actions")
        if not isinstance(rng, np.random.Generator):
            raise FourHundredError(
                f"random_actions rng={short(rng)}: expected a numpy.random.Generator"
            )
        if max_bid is not None and (
            isinstance(max_bid, bool) or not isinstance(max_bid, int | np.integer)
        ):
            raise FourHundredError(f"random_actions max_bid={short(max_bid)}: expected an integer")
        out = np.empty(records.shape[0], np.int64)
        cap = 0 if max_bid is None else int(min(13, max(1, max_bid)))
        K.random_actions(records, self._r, rng.random(records.shape[0]), cap, out)
        return out

    # -- stepping -------------------------------------------------------------------------------
    def step(
        self,
        state: State,
        actions: np.ndarray,
        validate: bool = True,
        active: np.ndarray | None = None,
        mask_out: np.ndarray | None = None,
    ) -> int:
        """Apply one action per table (B,) int; tables with no pending decision ignore theirs.

        Returns the number of tables whose hand ended at this step (played out or thrown in:
        phase HAND_OVER or MATCH_OVER now), so a loop knows cheaply when to look for them.

        With `validate`, an illegal action raises IllegalActionError naming the table, seat,
        action and the legal actions, before anything changes. Without, only what keeps the
        kernel safe is checked (a card id while playing, a bid or redeal id while bidding).
        With `active` (B,) bool, the tables where it is False are left as they are and their
        actions ignored.

        With `mask_out`, a (B, 66) bool or int8 array, the step also writes every table's
        legal mask after it there, exactly what ``legal_mask(state, out=mask_out)`` would
        write, in the same compiled call: a loop that needs the mask of every decision pays
        one call per decision instead of two (at one table the calls are most of the cost).
        An illegal action leaves it as it was, like the state.
        """
        if type(state) is not State:
            _records(state, "step")
        records = state.records
        b = records.shape[0]
        a = actions
        if type(a) is not np.ndarray or a.dtype is not _I64 or a.shape != (b,):
            a = self._coerce_actions(a, b)
        elif not a.flags.c_contiguous:
            a = a.copy()
        active = _ALL if active is None else self._active(active, b)
        mask = _NO_MASK if mask_out is None else _mask_out(mask_out, b, "step mask_out=")
        if validate is not True and validate is not False:
            if not isinstance(validate, bool | np.bool_ | int | np.integer):
                raise FourHundredError(f"step validate={short(validate)}: expected True or False")
            validate = bool(validate)
        if records.dtype is _STATE and records.flags.c_contiguous and mask.flags.c_contiguous:
            fn = _STEP.get(mask.dtype) or cached_entry_point(
                _STEP, mask.dtype, K.step, records, a, active, validate, self._r, mask
            )
            bad = fn(records, a, active, validate, self._r, mask)
        else:
            bad = K.step(_records(state, "step"), a, active, validate, self._r, mask)
        if bad >= 0:
            self._illegal(state, a, bad)
        return -1 - bad

    @staticmethod
    def _active(active: object, b: int) -> np.ndarray:
        """`active` as a C-ordered (b,) bool array; anything else is refused in one line."""
        if type(active) is not np.ndarray:
            try:
                active = np.asarray(active)
            except (ValueError, TypeError, OverflowError):
                active = np.zeros(0, object)
        assert isinstance(active, np.ndarray)
        if active.shape != (b,) or active.dtype != np.bool_:
            raise FourHundredError(
                f"step active of shape {active.shape} and dtype {active.dtype}: expected ({b},) "
                "bool, True at the tables to step"
            )
        return np.ascontiguousarray(active)

    @staticmethod
    def _coerce_actions(actions: object, b: int) -> np.ndarray:
        """Actions as a (b,) int64 array; anything else is refused (IllegalActionError)."""
        try:
            a = np.asarray(actions)
        except (ValueError, TypeError, OverflowError):
            a = np.zeros(0, object)
        if a.shape == (b,) and a.dtype.kind in "iu":
            return np.ascontiguousarray(a, np.int64)
        if a.ndim == 1 and a.dtype.kind in "iu":
            raise IllegalActionError(
                f"got {a.shape[0]} actions for {b} tables: expected one per table"
            )
        raise IllegalActionError(
            f"actions of dtype {a.dtype} and shape {a.shape}: expected ({b},) integer action ids "
            "(0-65), one per table"
        )

    def _illegal(self, state: State, actions: np.ndarray, t: int) -> None:
        # The kernel also stops at a pending table whose seat, leader or trick fields are out
        # of range (a state changed from outside): name the field rather than the action.
        one = state.select(t)
        check_records(one.records, "step", np.array([t]))
        mask = self.legal_mask(one)[0]
        given = int(actions[t])
        try:
            given_text = f"{action_text(given)!r} ({given})"
        except FourHundredError:
            given_text = f"{given} (not an action id 0-65)"
        legal_text = " ".join(action_text(a) for a in np.flatnonzero(mask))
        raise IllegalActionError(
            f"table {t}, seat {int(state.to_play[t])} "
            f"({phase_name(state.phase[t])}): illegal action {given_text}; legal: {legal_text}"
        )

    def _score_hands(self, state: State, index: np.ndarray) -> None:
        """Score the hands at tables `index` as they stand (for the rules-table tests)."""
        K.score_hands(_records(state, "score_hands"), self._index(state, index), self._r)

    def end_of_game(self, scores: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End-of-game decision, (n, 4) new scores and (n,) target in force.

        Returns (winner (n,) int8: -1 play on, else team; target (n,) int32 for the next hand).
        """
        sc = _integers(scores, "end_of_game scores", -(2**62), 2**62)
        if sc.ndim not in (1, 2) or sc.shape[-1] != 4:
            raise FourHundredError(f"end_of_game scores of shape {sc.shape}: expected (n, 4)")
        sc = np.ascontiguousarray(sc.reshape(-1, 4))
        tg = _integers(target, "end_of_game target", -(2**62), 2**62)
        if tg.shape not in ((), sc.shape[:1]):
            raise FourHundredError(
                f"end_of_game target of shape {tg.shape}: expected ({sc.shape[0]},)"
            )
        tg = np.ascontiguousarray(np.broadcast_to(tg, sc.shape[:1]))
        winner = np.empty(sc.shape[0], np.int8)
        new_target = np.empty(sc.shape[0], np.int32)
        K.end_of_games(sc, tg, self._r, winner, new_target)
        return winner, new_target

    # -- tournament support ---------------------------------------------------------------------
    def forfeit(self, state: State, index: np.ndarray, seat: np.ndarray) -> None:
        """Score the contract of `seat` at tables `index` as missed this hand (docs/rules.md, conduct)."""
        records = _records(state, "forfeit")
        idx = self._index(state, index)
        seats = _integers(seat, "seat", 0, 3)
        if seats.shape not in ((), idx.shape):
            raise FourHundredError(f"forfeit seat of shape {seats.shape}: expected {idx.shape}")
        K.forfeit(records, idx, np.ascontiguousarray(np.broadcast_to(seats, idx.shape)))
