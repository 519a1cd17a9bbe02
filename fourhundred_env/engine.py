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

from dataclasses import dataclass, fields
from enum import IntEnum

import numpy as np

from fourhundred_env.cards import (
    BID_OFFSET,
    FACE_SET,
    NUM_ACTIONS,
    NUM_CARDS,
    REDEAL_ACTION,
    SUIT_SETS,
    action_text,
)
from fourhundred_env.errors import FourHundredError, IllegalActionError
from fourhundred_env.rules import Rules


class Phase(IntEnum):
    BID = 0
    PLAY = 1
    HAND_OVER = 2
    MATCH_OVER = 3


PHASE_NAMES = ("bid", "play", "hand_over", "match_over")

_U64 = np.uint64
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_BID, _PLAY, _HAND_OVER, _MATCH_OVER = (int(p) for p in Phase)
_NOT_CARD_BIT = ~(_ONE << np.arange(NUM_CARDS, dtype=np.uint64))  # card id -> all bits but its own
_SUIT_OF = (np.arange(NUM_CARDS) // 13).astype(np.int8)
_SUIT_BIT = (1 << np.arange(4)).astype(np.uint8)
_NEXT_SEAT = np.array([1, 2, 3, 0], np.int8)
_HEARTS = SUIT_SETS[3]
_SIDE_SUITS = SUIT_SETS[:3]
_BID_BITS = np.uint64((1 << 13) - 1)  # bits 0..12 of the bid-phase set: bids 1..13
_REDEAL_BIT = np.uint64(1 << 13)
_NO_CLAIM = -1


@dataclass
class State:
    """B tables. Shapes: (B,) per table, (B, 4) per seat (absolute seats 0..3)."""

    phase: np.ndarray  # (B,) int8, Phase
    dealer: np.ndarray  # (B,) int8
    to_play: np.ndarray  # (B,) int8: seat whose decision is pending (BID, PLAY)
    scores: np.ndarray  # (B, 4) int32: running scores (after the last finished hand)
    scores_before: np.ndarray  # (B, 4) int32: scores when the current hand was dealt
    target: np.ndarray  # (B,) int32: 41, or raised by simultaneous finishes
    winner: np.ndarray  # (B,) int8: -1 none, else winning team 0 or 1
    dealt_set: np.ndarray  # (B, 4) uint64: the hands as dealt
    hand_set: np.ndarray  # (B, 4) uint64: cards still held
    bids: np.ndarray  # (B, 4) int8: 0 = not yet bid (or asked for a redeal)
    num_bids: np.ndarray  # (B,) int8: bids made in the current hand
    min_bid: np.ndarray  # (B, 4) int8: minimum bid of each seat this hand
    required_total: np.ndarray  # (B,) int16: required total of this hand
    tricks_won: np.ndarray  # (B, 4) int8
    trick_cards: np.ndarray  # (B, 4) int8: card each seat put in the current trick, -1 none
    trick_leader: np.ndarray  # (B,) int8: seat that led the current trick
    trick_size: np.ndarray  # (B,) int8: cards in the current trick, 0..3
    led_suit: np.ndarray  # (B,) int8: suit led to the current trick (valid if trick_size > 0)
    num_tricks: np.ndarray  # (B,) int8: completed tricks this hand
    shown_void: np.ndarray  # (B, 4) uint8: bit s set if the seat failed to follow suit s
    forfeit: np.ndarray  # (B, 4) bool: contract scored as missed (tournament forfeits)
    hand_points: np.ndarray  # (B, 4) int32: score change of the last finished hand
    thrown_in: np.ndarray  # (B,) bool: the last finished hand was thrown in
    redeal_seat: np.ndarray  # (B,) int8: seat that asked for the redeal, -1 none
    claim_seat: np.ndarray  # (B,) int8: seat that claimed the rest of the hand, -1 none
    match_id: np.ndarray  # (B,) int64: deal stream of this table's match
    hand_index: np.ndarray  # (B,) int32: hands dealt so far in this match
    seed: int

    @property
    def batch_size(self) -> int:
        return self.phase.shape[0]

    def copy(self) -> State:
        return State(
            **{
                f.name: (getattr(self, f.name).copy() if f.name != "seed" else self.seed)
                for f in fields(self)
            }
        )

    def select(self, index: np.ndarray | slice | int) -> State:
        """A new State of the tables at `index` (copies)."""
        if isinstance(index, int | np.integer):
            index = [int(index)]
        return State(
            **{
                f.name: (getattr(self, f.name)[index].copy() if f.name != "seed" else self.seed)
                for f in fields(self)
            }
        )

    def equals(self, other: State) -> bool:
        """Every field equal (used by the batch-equivalence and determinism tests)."""
        return self.seed == other.seed and all(
            np.array_equal(getattr(self, f.name), getattr(other, f.name))
            for f in fields(self)
            if f.name != "seed"
        )


# -- counter-based random numbers: deals depend on (seed, match_id, hand_index) only ----------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_DEALER_SALT = np.uint64(0xD1B54A32D192ED03)
_HAND_SALT = np.uint64(0x8CB92BA72F3D8DD7)
_CARD_STEPS = (np.arange(1, NUM_CARDS + 1, dtype=np.uint64) * _GOLDEN)[None, :]


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser, elementwise on uint64 (wraps modulo 2**64): a counter-based hash."""
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> _U64(30))) * _M1
    z = (z ^ (z >> _U64(27))) * _M2
    return z ^ (z >> _U64(31))


def _match_keys(seed: int, match_id: np.ndarray) -> np.ndarray:
    seed_key = mix64(np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))
    return mix64(seed_key ^ np.asarray(match_id).astype(np.uint64))


def first_dealers(seed: int, match_id: np.ndarray) -> np.ndarray:
    """First dealer of each match, drawn from (seed, match_id): shape like match_id, int8."""
    keys = _match_keys(seed, np.atleast_1d(match_id))
    return (mix64(keys ^ _DEALER_SALT) % _U64(4)).astype(np.int8)


def deal_sets(seed: int, match_id: np.ndarray, hand_index: np.ndarray) -> np.ndarray:
    """Uniformly random deals, (n,) ids -> (n, 4) uint64 hands by seat.

    Hand `hand_index` of match `match_id` under `seed` is the same whatever batch it is in.
    """
    match_id = np.atleast_1d(match_id)
    hand_index = np.atleast_1d(hand_index)
    key = mix64(_match_keys(seed, match_id) ^ (hand_index.astype(np.uint64) * _HAND_SALT))
    noise = mix64(key[:, None] + _CARD_STEPS)  # (n, 52)
    order = np.argsort(noise, axis=1, kind="stable").astype(np.uint64)  # random permutation
    bits = (_ONE << order).reshape(-1, 4, 13)
    return np.bitwise_or.reduce(bits, axis=2)


# -- bit helpers ----------------------------------------------------------------------------
def _select_table() -> np.ndarray:
    table = np.zeros((256, 8), np.int64)
    for byte in range(256):
        for k, bit in enumerate(b for b in range(8) if byte >> b & 1):
            table[byte, k] = bit
    return table


_SELECT8 = _select_table()  # _SELECT8[byte, k]: position of the k-th set bit of byte
_ROWS: dict[int, np.ndarray] = {}


def _rows(b: int) -> np.ndarray:
    rows = _ROWS.get(b)
    if rows is None:
        rows = _ROWS[b] = np.arange(b)
    return rows


def select_bit(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Position (int64) of the k-th (0-based) set bit of each uint64 in x (B,); needs k < popcount."""
    b = x.shape[0]
    if b <= 32:  # few tables: fewer, larger numpy calls win
        bits = np.unpackbits(
            np.ascontiguousarray(x, dtype="<u8").view(np.uint8).reshape(b, 8),
            axis=1,
            bitorder="little",
        )
        return (np.cumsum(bits, axis=1, dtype=np.uint8) <= k[:, None]).sum(axis=1)
    octets = np.ascontiguousarray(x, dtype="<u8").view(np.uint8).reshape(b, 8)
    below = np.cumsum(np.bitwise_count(octets), axis=1, dtype=np.uint8)  # set bits in bytes <= j
    j = np.minimum((below <= k[:, None]).sum(axis=1), 7)  # byte holding the k-th bit
    rows = _rows(b)
    before = np.where(j > 0, below[rows, j - 1], 0)
    return 8 * j + _SELECT8[octets[rows, j], k - before]


def unpack_sets(sets: np.ndarray, num_bits: int = 64) -> np.ndarray:
    """uint64 bitmasks, shape (...,) -> bool array (..., num_bits), bit i at index i."""
    sets = np.ascontiguousarray(sets, dtype="<u8")
    bits = np.unpackbits(sets.view(np.uint8).reshape(*sets.shape, 8), axis=-1, bitorder="little")
    return bits[..., :num_bits].view(bool)


class Engine:
    """The rules of 400 applied to a batch of tables. Stateless apart from `rules`.

    Every method takes a :class:`State` and, where it changes it, changes it in place.
    """

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules if rules is not None else Rules()
        r = self.rules
        self._values = r.value_table()  # (2, 14)
        self._weights = r.total_weights()  # (14,)
        self._thirty = r.five_six_face_value_from
        self._target_step = r.target_step

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
        match; scores (B, 4) or (4,) default to 0; target defaults to ``rules.target``.
        """
        b = int(batch_size)
        if b < 1:
            raise FourHundredError(f"batch_size={batch_size!r}: expected at least 1")
        match_id = np.arange(b, dtype=np.int64) if match_id is None else np.asarray(match_id)
        match_id = np.broadcast_to(match_id, (b,)).astype(np.int64)
        if dealer is None:
            dealer_arr = first_dealers(seed, match_id)
        else:
            dealer_arr = np.broadcast_to(np.asarray(dealer), (b,)).astype(np.int8)
            if ((dealer_arr < 0) | (dealer_arr > 3)).any():
                raise FourHundredError(f"dealer={dealer!r}: expected a seat 0 to 3")
        scores_arr = np.zeros((b, 4), np.int32) if scores is None else np.asarray(scores)
        if scores_arr.shape[-1:] != (4,):
            raise FourHundredError(f"scores has shape {scores_arr.shape}: expected (4,) or (B, 4)")
        scores_arr = np.broadcast_to(scores_arr, (b, 4)).astype(np.int32)
        target_arr = np.full(b, self.rules.target if target is None else target, np.int32)
        z4 = np.zeros((b, 4), np.int8)
        return State(
            phase=np.full(b, Phase.HAND_OVER, np.int8),
            dealer=dealer_arr.copy(),
            to_play=np.full(b, -1, np.int8),
            scores=scores_arr.copy(),
            scores_before=scores_arr.copy(),
            target=target_arr,
            winner=np.full(b, -1, np.int8),
            dealt_set=np.zeros((b, 4), np.uint64),
            hand_set=np.zeros((b, 4), np.uint64),
            bids=z4.copy(),
            num_bids=np.zeros(b, np.int8),
            min_bid=np.full((b, 4), self.rules.min_bid_base, np.int8),
            required_total=np.zeros(b, np.int16),
            tricks_won=z4.copy(),
            trick_cards=np.full((b, 4), -1, np.int8),
            trick_leader=np.full(b, -1, np.int8),
            trick_size=np.zeros(b, np.int8),
            led_suit=np.zeros(b, np.int8),
            num_tricks=np.zeros(b, np.int8),
            shown_void=np.zeros((b, 4), np.uint8),
            forfeit=np.zeros((b, 4), bool),
            hand_points=np.zeros((b, 4), np.int32),
            thrown_in=np.zeros(b, bool),
            redeal_seat=np.full(b, -1, np.int8),
            claim_seat=np.full(b, -1, np.int8),
            match_id=match_id.copy(),
            hand_index=np.zeros(b, np.int32),
            seed=int(seed),
        )

    def new_match(self, state: State, index: np.ndarray, match_id: np.ndarray) -> None:
        """Restart the tables at `index` as fresh matches with the given match ids (phase HAND_OVER).

        Scores return to 0, the target to ``rules.target``, the first dealer is drawn from
        (seed, match_id); the per-hand fields are reset by the next `deal`.
        """
        index = np.asarray(index)
        match_id = np.broadcast_to(np.asarray(match_id, dtype=np.int64), index.shape)
        state.match_id[index] = match_id
        state.dealer[index] = first_dealers(state.seed, match_id)
        state.scores[index] = 0
        state.scores_before[index] = 0
        state.target[index] = self.rules.target
        state.winner[index] = -1
        state.hand_index[index] = 0
        state.to_play[index] = -1
        state.hand_points[index] = 0
        state.thrown_in[index] = False
        state.phase[index] = _HAND_OVER

    def deal(
        self, state: State, index: np.ndarray | None = None, hands: np.ndarray | None = None
    ) -> None:
        """Start the next hand at the tables `index` (default: all), which must be in HAND_OVER.

        hands: (n, 4) uint64 explicit hands by seat, or None for the seeded deal of
        (seed, match_id, hand_index). Raises FourHundredError if a table is not between hands.
        """
        idx = np.arange(state.batch_size) if index is None else np.atleast_1d(np.asarray(index))
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        if idx.size == 0:
            return
        bad = state.phase[idx] != _HAND_OVER
        if bad.any():
            t = int(idx[np.argmax(bad)])
            raise IllegalActionError(
                f"table {t}: cannot deal in phase {PHASE_NAMES[state.phase[t]]}: "
                "expected a table between hands (hand_over)"
            )
        if hands is None:
            hands = deal_sets(state.seed, state.match_id[idx], state.hand_index[idx])
        else:
            hands = np.asarray(hands, dtype=np.uint64).reshape(idx.size, 4)
            self._check_deal(hands)
        r = self.rules
        before = state.scores[idx]
        state.scores_before[idx] = before
        state.dealt_set[idx] = hands
        state.hand_set[idx] = hands
        state.bids[idx] = 0
        state.num_bids[idx] = 0
        if r.min_bid_escalates:
            state.min_bid[idx] = np.clip(before // 10, r.min_bid_base, 13)
        else:
            state.min_bid[idx] = r.min_bid_base
        total = r.min_total_bids
        if r.escalate_total:
            total = total + np.maximum(0, before.max(axis=1) // 10 - 2)
        state.required_total[idx] = total
        state.tricks_won[idx] = 0
        state.trick_cards[idx] = -1
        first = (state.dealer[idx] + 1) & 3
        state.to_play[idx] = first
        state.trick_leader[idx] = first
        state.trick_size[idx] = 0
        state.num_tricks[idx] = 0
        state.shown_void[idx] = 0
        state.forfeit[idx] = False
        state.hand_points[idx] = 0
        state.thrown_in[idx] = False
        state.redeal_seat[idx] = -1
        state.claim_seat[idx] = -1
        state.hand_index[idx] += 1
        state.phase[idx] = _BID

    @staticmethod
    def _check_deal(hands: np.ndarray) -> None:
        counts = np.bitwise_count(hands)
        union = np.bitwise_or.reduce(hands, axis=1)
        overlap = np.bitwise_count(union) != counts.sum(axis=1)
        bad = (counts != 13).any(axis=1) | overlap
        if bad.any():
            t = int(np.argmax(bad))
            raise FourHundredError(
                f"explicit deal {t} is not a deal: cards per seat {counts[t].tolist()}"
                f"{' with a card given twice' if overlap[t] else ''}: expected 13 distinct cards "
                "for each of the 4 seats"
            )

    # -- legal actions --------------------------------------------------------------------------
    def legal_sets(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Legal actions as one bitmask per table, in phase-local coordinates.

        Returns (legal (B,) uint64, playing (B,) bool). Where `playing`, bit c is card c;
        otherwise bit i is action ``52 + i`` (bids 1..13, then redeal). 0 where no decision
        is pending.
        """
        b = state.batch_size
        rows = _rows(b)
        seat = state.to_play
        phase = state.phase
        hand = state.hand_set[rows, seat]
        playing = phase == _PLAY
        num_playing = np.count_nonzero(playing)
        if num_playing:
            follow = hand & SUIT_SETS[state.led_suit]
            cards = np.where((state.trick_size > 0) & (follow != 0), follow, hand)
            if num_playing == b:
                return cards, playing
        low = state.min_bid[rows, seat].astype(np.uint64) - _ONE
        bids = (_BID_BITS >> low) << low
        if self.rules.no_face_redeal:
            bids |= np.where((hand & FACE_SET) == 0, _REDEAL_BIT, _ZERO)
        bids = np.where(phase == _BID, bids, _ZERO)
        legal = np.where(playing, cards, bids) if num_playing else bids
        return legal, playing

    def legal_mask(self, state: State) -> np.ndarray:
        """(B, 66) bool legal-action mask; all False only where no decision is pending."""
        legal, playing = self.legal_sets(state)
        mask = np.zeros((state.batch_size, NUM_ACTIONS), bool)
        mask[:, :NUM_CARDS] = unpack_sets(np.where(playing, legal, _ZERO), NUM_CARDS)
        mask[:, NUM_CARDS:] = unpack_sets(np.where(playing, _ZERO, legal), NUM_ACTIONS - NUM_CARDS)
        return mask

    def random_actions(
        self, state: State, rng: np.random.Generator, max_bid: int | None = None
    ) -> np.ndarray:
        """(B,) int64 uniformly random legal actions, -1 where no decision is pending.

        `max_bid` caps random bids (a seat whose minimum bid is higher bids its minimum);
        uniformly random bids up to 13 are mostly missed, and such bots never finish a match.
        """
        legal, playing = self.legal_sets(state)
        if max_bid is not None:
            cap = _U64((1 << max(1, min(13, max_bid))) - 1) | _REDEAL_BIT
            capped = legal & cap
            lowest = legal & (~legal + _ONE)
            capped |= np.where((capped & _BID_BITS) == 0, lowest, _ZERO)
            legal = np.where(playing, legal, capped)
        n = np.bitwise_count(legal)
        k = (rng.random(state.batch_size) * n).astype(np.uint8)
        action = select_bit(legal, k) + np.where(playing, 0, NUM_CARDS)
        return np.where(n > 0, action, -1)

    # -- stepping -------------------------------------------------------------------------------
    def step(
        self,
        state: State,
        actions: np.ndarray,
        validate: bool = True,
        active: np.ndarray | None = None,
    ) -> None:
        """Apply one action per table (B,) int; tables with no pending decision ignore theirs.

        With `validate`, an illegal action raises IllegalActionError naming the table, seat,
        action and the legal actions, before anything changes. With `active` (B,) bool, the
        tables where it is False are left as they are and their actions ignored.
        """
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape[0] != state.batch_size:
            raise IllegalActionError(
                f"got {actions.shape[0]} actions for {state.batch_size} tables: expected one per table"
            )
        phase = state.phase if active is None else np.where(active, state.phase, _HAND_OVER)
        if validate:
            self._validate(state, actions, phase)
        bidding = (phase == _BID).nonzero()[0]
        playing = (phase == _PLAY).nonzero()[0]
        if bidding.size:
            self._apply_bids(state, bidding, actions[bidding])
        if playing.size:
            self._apply_cards(state, playing, actions[playing])

    def _validate(self, state: State, actions: np.ndarray, phase: np.ndarray) -> None:
        legal, playing = self.legal_sets(state)
        # phase-local bit of each action; anything out of range maps to bit 63, never legal
        local = np.minimum((actions - np.where(playing, 0, NUM_CARDS)).astype(np.uint64), _U64(63))
        bad = (phase <= _PLAY) & (((legal >> local) & _ONE) == 0)
        if np.count_nonzero(bad):
            t = int(np.argmax(bad))
            mask = self.legal_mask(state.select(t))[0]
            given = int(actions[t])
            try:
                given_text = f"{action_text(given)!r} ({given})"
            except FourHundredError:
                given_text = f"{given} (not an action id 0-65)"
            legal_text = " ".join(action_text(a) for a in np.flatnonzero(mask))
            raise IllegalActionError(
                f"table {t}, seat {int(state.to_play[t])} "
                f"({PHASE_NAMES[state.phase[t]]}): illegal action {given_text}; legal: {legal_text}"
            )

    def _apply_bids(self, state: State, idx: np.ndarray, actions: np.ndarray) -> None:
        seat = state.to_play[idx]
        redeal = actions == REDEAL_ACTION
        state.bids[idx, seat] = np.where(redeal, 0, actions - BID_OFFSET)
        num = state.num_bids[idx] + 1
        state.num_bids[idx] = num
        state.to_play[idx] = _NEXT_SEAT[seat]
        if np.count_nonzero(redeal):
            state.redeal_seat[idx[redeal]] = seat[redeal]
            self._throw_in(state, idx[redeal])
        done = (num == 4) & ~redeal
        if np.count_nonzero(done):
            t = idx[done]
            bids = state.bids[t]
            if self.rules.five_to_run:
                played = bids.max(axis=1) >= 5
            else:
                played = self._weights[bids].sum(axis=1) >= state.required_total[t]
            if np.count_nonzero(played) != played.size:
                self._throw_in(state, t[~played])
            if np.count_nonzero(played):
                t = t[played]
                state.phase[t] = _PLAY
                if self.rules.auto_claim:
                    self._auto_claim(state, t)
                    claimed = state.num_tricks[t] == 13
                    if np.count_nonzero(claimed):
                        self._score_hands(state, t[claimed])

    def _throw_in(self, state: State, t: np.ndarray) -> None:
        state.thrown_in[t] = True
        state.hand_points[t] = 0
        state.dealer[t] = (state.dealer[t] + 1) & 3
        state.to_play[t] = -1
        state.phase[t] = _HAND_OVER

    def _apply_cards(self, state: State, idx: np.ndarray, cards: np.ndarray) -> None:
        seat = state.to_play[idx]
        state.hand_set[idx, seat] &= _NOT_CARD_BIT[cards]
        suit = _SUIT_OF[cards]
        size = state.trick_size[idx]
        led = np.where(size == 0, suit, state.led_suit[idx])
        state.led_suit[idx] = led
        void = suit != led  # never on the lead, where led == suit
        if np.count_nonzero(void):
            state.shown_void[idx[void], seat[void]] |= _SUIT_BIT[led[void]]
        state.trick_cards[idx, seat] = cards
        size += 1
        state.trick_size[idx] = size
        state.to_play[idx] = _NEXT_SEAT[seat]
        full = size == 4
        if np.count_nonzero(full):
            self._finish_tricks(state, idx[full])

    def _finish_tricks(self, state: State, t: np.ndarray) -> None:
        cards = state.trick_cards[t]  # (n, 4) by seat
        suits = cards // 13
        # Any heart beats any non-heart; then the suit led beats the other suits; then rank.
        strength = cards % 13 + 13 * (suits == state.led_suit[t][:, None]) + 26 * (suits == 3)
        winner = np.argmax(strength, axis=1).astype(np.int8)
        state.tricks_won[t, winner] += 1
        state.to_play[t] = winner
        state.trick_leader[t] = winner
        state.trick_size[t] = 0
        state.trick_cards[t] = -1
        num = state.num_tricks[t] + 1
        state.num_tricks[t] = num
        over = num == 13
        if self.rules.auto_claim and not over.all():
            self._auto_claim(state, t[~over])
            over = state.num_tricks[t] == 13
        if np.count_nonzero(over):
            self._score_hands(state, t[over])

    def _auto_claim(self, state: State, t: np.ndarray) -> None:
        """Give the rest of the hand to a leader who wins every trick however anyone plays.

        Sound condition: no other seat holds a heart, and in each side suit every card the
        leader holds outranks every card of that suit the others hold. Then each trick the
        leader leads is won by the leader, whatever the order of play.
        """
        leader = state.trick_leader[t]
        hands = state.hand_set[t]  # (n, 4)
        mine = hands[np.arange(t.size), leader]
        others = np.bitwise_or.reduce(hands, axis=1) & ~mine
        claim = (others & _HEARTS) == 0
        for suit_set in _SIDE_SUITS:
            m = mine & suit_set
            o = others & suit_set
            lowest = m & (~m + _ONE)
            claim &= (m == 0) | (o < lowest)
        if not claim.any():
            return
        c = t[claim]
        lead = leader[claim]
        state.tricks_won[c, lead] += 13 - state.num_tricks[c]
        state.num_tricks[c] = 13
        state.hand_set[c] = 0
        state.claim_seat[c] = lead

    def _score_hands(self, state: State, t: np.ndarray) -> None:
        before = state.scores_before[t]
        bids = state.bids[t]
        made = (state.tricks_won[t] >= bids) & ~state.forfeit[t]
        row = (before >= self._thirty).astype(np.intp) if self._thirty is not None else 0
        value = self._values[row, bids]
        delta = np.where(made, value, -value).astype(np.int32)
        scores = before + delta
        state.scores[t] = scores
        state.hand_points[t] = delta
        state.thrown_in[t] = False
        state.dealer[t] = (state.dealer[t] + 1) & 3
        state.to_play[t] = -1
        winner, target = self.end_of_game(scores, state.target[t])
        state.winner[t] = winner
        state.target[t] = target
        state.phase[t] = np.where(winner >= 0, _MATCH_OVER, _HAND_OVER)

    def end_of_game(self, scores: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised end-of-game decision, (n, 4) new scores and (n,) target in force.

        Returns (winner (n,) int8: -1 play on, else team; target (n,) int32 for the next hand).
        """
        r = self.rules
        base = r.target

        def qualifies(tgt: np.ndarray) -> np.ndarray:  # (n, 2) bool
            at = scores >= tgt[:, None]
            if r.partner_must_be_positive:
                at &= np.roll(scores > 0, 2, axis=1)  # column i: the partner of seat i is > 0
            return at[:, :2] | at[:, 2:]  # column 0: seat 0 or 2; column 1: seat 1 or 3

        target = target.astype(np.int32).copy()
        q = qualifies(target)
        winner = np.where(q[:, 0] & ~q[:, 1], 0, np.where(q[:, 1] & ~q[:, 0], 1, -1))
        both = q[:, 0] & q[:, 1]
        if np.count_nonzero(both):
            if r.simultaneous_finish == "extend":
                target = np.where(both, target + self._target_step, target)
            else:
                if r.simultaneous_finish == "highest_player":
                    a = np.maximum(scores[:, 0], scores[:, 2])
                    b = np.maximum(scores[:, 1], scores[:, 3])
                else:
                    a = scores[:, 0] + scores[:, 2]
                    b = scores[:, 1] + scores[:, 3]
                winner = np.where(both & (a > b), 0, np.where(both & (b > a), 1, winner))
        fallback = ~q[:, 0] & ~q[:, 1] & (target != base)
        if np.count_nonzero(fallback):
            q41 = qualifies(np.full(target.shape, base, np.int32))
            winner = np.where(fallback & q41[:, 0] & ~q41[:, 1], 0, winner)
            winner = np.where(fallback & q41[:, 1] & ~q41[:, 0], 1, winner)
            target = np.where(fallback & ~q41[:, 0] & ~q41[:, 1], base, target)
        return winner.astype(np.int8), target.astype(np.int32)

    # -- tournament support ---------------------------------------------------------------------
    def forfeit(self, state: State, index: np.ndarray, seat: np.ndarray) -> None:
        """Score the contract of `seat` at tables `index` as missed this hand (RULES.md, conduct)."""
        state.forfeit[np.asarray(index), np.asarray(seat)] = True
