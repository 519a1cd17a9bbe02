"""One table of 400 for scripted play: tests, the command line and human play.

A :class:`Table` is the batched :class:`~fourhundred_env.engine.Engine` with a batch of one,
plus card text in and out and a hand-by-hand history::

    t = Table(rules=Rules(), dealer=0, scores=(12, 31, -4, 27))
    t.deal(hands=["AH KH QH ...", "...", "...", "..."])   # or t.deal(seed=7), or t.deal()
    while t.phase in ("bid", "play"):
        t.act(t.legal()[0])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fourhundred_env.cards import (
    NUM_CARDS,
    REDEAL_ACTION,
    action_text,
    card_text,
    hand_text,
    parse_action,
    parse_deal,
    set_to_cards,
)
from fourhundred_env.engine import Engine, Phase, State, deal_sets
from fourhundred_env.errors import (
    CardError,
    DealError,
    FourHundredError,
    IllegalActionError,
    RecordError,
    StateError,
    short,
)
from fourhundred_env.game_records.data import GameRecord
from fourhundred_env.game_records.hands import HandRecord, Scores
from fourhundred_env.game_records.replay import replayed, table_record
from fourhundred_env.loop import GameLoop
from fourhundred_env.phases import phase_name
from fourhundred_env.render import score_sheet, table_view
from fourhundred_env.rules import Rules
from fourhundred_env.rules import min_bid as _min_bid
from fourhundred_env.rules import required_total as _required_total


class Table:
    """A single table of 400, driven one action at a time. See the module docstring."""

    def __init__(
        self,
        rules: Rules | None = None,
        dealer: int | None = None,
        scores: Sequence[int] = (0, 0, 0, 0),
        seed: int = 0,
        match_index: int = 0,
        target: int | None = None,
        name: str = "table",
    ) -> None:
        self.name = name
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise FourHundredError(
                f"table {short(name)}: rules={short(rules)}: expected a Rules instance"
            )
        if (
            isinstance(scores, str | bytes)
            or not isinstance(scores, Sequence | np.ndarray)
            or len(scores) != 4
            or not all(isinstance(s, int | np.integer) and not isinstance(s, bool) for s in scores)
        ):
            raise FourHundredError(
                f"table {short(name)}: scores={short(scores)}: expected 4 integers"
            )
        if dealer is not None and not (_is_int(dealer) and 0 <= dealer <= 3):
            raise FourHundredError(
                f"table {short(name)}: dealer={short(dealer)}: expected a seat 0 to 3"
            )
        for what, value in (("seed", seed), ("match_index", match_index), ("target", target)):
            if not (_is_int(value) or (what == "target" and value is None)):
                raise FourHundredError(
                    f"table {short(name)}: {what}={short(value)}: expected an integer"
                )
        self.engine = Engine(self.rules)
        try:
            self.state = self.engine.init(
                1, seed=seed, match_id=np.array([match_index], np.int64), dealer=dealer,
                scores=np.array(scores, np.int64), target=target,
            )  # fmt: skip
        except OverflowError:
            raise FourHundredError(
                f"table {short(name)}: a value beyond int64 among scores={short(scores)}, "
                f"match_index={short(match_index)}: expected int32 scores and int64 match indices"
            ) from None
        self.history: list[HandRecord] = []
        self._plays: list[tuple[int, str]] = []
        # the match's start as this table began it: where its record starts (`record`)
        self._start = (self.dealer, self.scores, self.target)

    # -- copies and records -----------------------------------------------------------------
    def clone(self) -> Table:
        """An independent copy (state, history, the hand's plays) for search or what-ifs:
        acting on one never changes the other. The engine, which holds no game, is shared;
        cheaper than ``copy.deepcopy``."""
        new = object.__new__(Table)
        new.__dict__.update(self.__dict__)
        new._state = self._checked().copy()
        new.history = list(self.history)  # HandRecords are frozen
        new._plays = list(self._plays)
        return new

    def record(self, seats: Sequence[str] | None = None) -> GameRecord:
        """Everything this table has seen since it was made, the hand in progress included,
        as a :class:`~fourhundred_env.game_records.data.GameRecord` (`seats`: 4 labels,
        optional)."""
        self._checked()
        return table_record(self, seats)

    @classmethod
    def from_record(cls, record: GameRecord, upto: int | None = None) -> Table:
        """A table with `record` played through `deal` and `act` (every move checked; a
        record that is not a game raises RecordError naming the hand and the move). `upto`:
        replay only that many decisions, leaving the next one pending (its hand dealt), to
        continue the game from there; None: all of them."""
        if not isinstance(record, GameRecord):
            raise RecordError(f"Table.from_record: {short(record)}: expected a GameRecord")
        return replayed(record, cls, upto)

    @property
    def state(self) -> State:
        """The table's state, a batch of one (assigning one checks it: ``State.validate``)."""
        return self._state

    @state.setter
    def state(self, state: State) -> None:
        if not isinstance(state, State) or state.batch_size != 1:
            raise StateError(
                f"table {short(self.name)}: state={short(state)}: expected a State of one table"
            )
        self._state = state.validate(f"table {short(self.name)}:")

    def _loop(self) -> GameLoop:
        """The game loop over this table's state, paused between hands (a person deals)."""
        return GameLoop(self.engine, self._state, deal_next=False)

    def _checked(self) -> State:
        """The state, checked: it may have been changed in place since the last call."""
        return self._state.validate(f"table {short(self.name)}:")

    def _seat(self, seat: object) -> int:
        if not (_is_int(seat) and 0 <= seat <= 3):  # type: ignore[operator]
            raise FourHundredError(f"table {short(self.name)}: seat={short(seat)}: expected 0 to 3")
        return int(seat)  # type: ignore[call-overload]

    # -- what the table shows ---------------------------------------------------------------
    @property
    def phase(self) -> str:
        """The phase: "bid", "play", "hand_over" or "match_over"."""
        return phase_name(self.state.phase[0])

    @property
    def to_play(self) -> int | None:
        """Seat whose decision is pending, None between hands."""
        return int(self.state.to_play[0]) if self.state.phase[0] <= Phase.PLAY else None

    @property
    def scores(self) -> Scores:
        """Scores of seats 0..3."""
        return tuple(int(s) for s in self.state.scores[0])  # type: ignore[return-value]

    @property
    def bids(self) -> tuple[int | None, ...]:
        """Bids of the current (or last) hand by seat; None for a seat that has not bid."""
        s = self.state
        first = (self._hand_dealer() + 1) % 4
        out: list[int | None] = [None] * 4
        for k in range(int(s.num_bids[0])):
            seat = (first + k) % 4
            out[seat] = int(s.bids[0, seat]) or None
        return tuple(out)

    @property
    def tricks_won(self) -> Scores:
        """Tricks each seat has taken in the current (or last) hand."""
        return tuple(int(t) for t in self.state.tricks_won[0])  # type: ignore[return-value]

    @property
    def dealer(self) -> int:
        """Dealer of the next hand to deal (between hands) or of the hand in progress."""
        return int(self.state.dealer[0])

    @property
    def target(self) -> int:
        """Score a player needs for the team to win (it may rise when both teams qualify)."""
        return int(self.state.target[0])

    @property
    def winner(self) -> int | None:
        """Winning team, 0 or 1, once the match is over; None until then."""
        w = int(self.state.winner[0])
        return None if w < 0 else w

    @property
    def hand_number(self) -> int:
        """Hands dealt so far in this match (the current one included)."""
        return int(self.state.hand_index[0])

    def required_total(self) -> int:
        """Required total of the hand being bid (or of the next hand, between hands)."""
        if self.state.phase[0] <= Phase.PLAY:
            return int(self.state.required_total[0])
        return _required_total(self.scores, self.rules)

    def min_bid(self, seat: int) -> int:
        """Lowest bid `seat` may make in the hand being bid (or in the next hand, between
        hands)."""
        if self.state.phase[0] <= Phase.PLAY:
            return int(self.state.min_bid[0, self._seat(seat)])
        return _min_bid(self.scores[self._seat(seat)], self.rules)

    def hand(self, seat: int) -> list[str]:
        """Cards `seat` still holds, as text, sorted for display."""
        from fourhundred_env.cards import sorted_for_display

        seat = self._seat(seat)
        self._checked()
        return [
            card_text(c) for c in sorted_for_display(set_to_cards(self.state.hand_set[0, seat]))
        ]

    def hand_text(self, seat: int) -> str:
        """Cards `seat` (0..3, else FourHundredError) still holds, as one line of text."""
        seat = self._seat(seat)
        self._checked()
        return hand_text(self.state.hand_set[0, seat])

    @property
    def trick(self) -> list[tuple[int, str]]:
        """The current trick as (seat, card) in the order played."""
        s = self._checked()
        leader, size = int(s.trick_leader[0]), int(s.trick_size[0])
        return [
            ((leader + k) % 4, card_text(s.trick_cards[0, (leader + k) % 4])) for k in range(size)
        ]

    @property
    def plays(self) -> list[tuple[int, str]]:
        """Cards played so far in the current hand, (seat, card) in order."""
        return list(self._plays)

    def legal_ids(self) -> list[int]:
        """Legal action ids (empty between hands)."""
        return [int(a) for a in np.flatnonzero(self.engine.legal_mask(self._checked())[0])]

    def legal(self) -> list[str]:
        """Legal actions as text: bids "2".."13", "redeal", cards like "AH", "10S"."""
        return [action_text(a) for a in self.legal_ids()]

    # -- changing it ------------------------------------------------------------------------
    def deal(
        self, hands: Sequence[str | Sequence[str]] | None = None, seed: int | None = None
    ) -> None:
        """Start the next hand: explicit `hands` by seat (text), a `seed`, or the table's own stream."""
        self._checked()
        phase = self.phase
        if phase != "hand_over":
            what = "the match is over" if phase == "match_over" else "a hand is in progress"
            raise IllegalActionError(
                f"table {short(self.name)}: cannot deal now, {what} (phase {phase}): "
                "expected a table between hands"
            )
        explicit = None
        if hands is not None:
            if seed is not None:
                raise FourHundredError(f"table {short(self.name)}: give hands or seed, not both")
            explicit = self._parse_deal(hands)
        elif seed is not None:
            if not _is_int(seed):
                raise FourHundredError(
                    f"table {short(self.name)}: deal seed={short(seed)}: expected an integer"
                )
            explicit = deal_sets(seed, self.state.match_id, self.state.hand_index)
        self._loop().deal(np.array([0]), explicit)
        self._plays = []
        self._after_action()

    def _parse_deal(self, hands: Sequence[str | Sequence[str]]) -> np.ndarray:
        if isinstance(hands, str | bytes) or not isinstance(hands, Sequence) or len(hands) != 4:
            raise CardError(
                f"table {short(self.name)}: a deal needs 4 hands (one per seat 0-3), got {short(hands)}"
            )
        try:
            sets = parse_deal(hands)
        except DealError as e:
            where = f"table {short(self.name)}" + ("" if e.seat is None else f", seat {e.seat}")
            raise CardError(f"{where}: {e}") from None
        return sets[None, :]

    def act(self, action: str | int, seat: int | None = None) -> None:
        """Bid, ask for a redeal or play a card for the seat to play (text or action id).

        `seat`, if given, must be the seat to play. Raises IllegalActionError (state unchanged)
        for an action that is not legal now.
        """
        self._checked()
        phase = self.phase
        if phase not in ("bid", "play"):
            hint = (
                "call deal() to start the next hand"
                if phase == "hand_over"
                else "the match is over"
            )
            raise IllegalActionError(
                f"table {short(self.name)}: no decision is pending (phase {phase}): {hint}; "
                f"got action {short(action)}"
            )
        to_play = int(self.state.to_play[0])
        if seat is not None and seat != to_play:
            raise IllegalActionError(
                f"table {short(self.name)}, seat {seat}: acting out of turn with {short(action)}: "
                f"seat {to_play} is to {phase}"
            )
        legal = self.legal_ids()
        try:
            a = parse_action(action)
        except CardError as e:
            raise IllegalActionError(
                f"table {short(self.name)}, seat {to_play}: {e}; legal: {' '.join(self.legal())}"
            ) from None
        if a not in legal:
            raise IllegalActionError(
                f"table {short(self.name)}, seat {to_play} ({phase}): illegal action {short(action)}"
                f"{self._why_illegal(a)}; legal: {' '.join(action_text(x) for x in legal)}"
            )
        self._loop().step(np.array([a]), validate=False, end=False)
        if a < NUM_CARDS:
            self._plays.append((to_play, card_text(a)))
        self._after_action()

    def _why_illegal(self, a: int) -> str:
        s = self.state
        seat = int(s.to_play[0])
        if s.phase[0] == Phase.BID:
            if a < NUM_CARDS:
                return " (a card, but this is the bidding)"
            if a == REDEAL_ACTION:
                return (
                    " (a redeal needs a hand without A, K, Q or J)"
                    if self.rules.no_face_redeal
                    else (" (redeals are off in these rules)")
                )
            return f" (minimum bid of seat {seat} is {int(s.min_bid[0, seat])})"
        if a >= NUM_CARDS:
            return " (a bid, but this is the card play)"
        if not int(s.hand_set[0, seat]) >> a & 1:
            return f" (seat {seat} does not hold {card_text(a)})"
        return " (must follow the suit led)"

    def forfeit(self, seat: int) -> None:
        """Score `seat`'s contract as missed this hand (tournament conduct rules)."""
        self._checked()
        self.engine.forfeit(self.state, np.array([0]), np.array([self._seat(seat)]))

    def _hand_dealer(self) -> int:
        """Dealer of the hand in progress or just finished (the deal passes on at its end)."""
        d = int(self.state.dealer[0])
        return d if self.state.phase[0] <= Phase.PLAY else (d - 1) % 4

    def _after_action(self) -> None:
        s = self.state
        if s.phase[0] <= Phase.PLAY:
            return
        if int(s.hand_index[0]) == len(self.history):  # nothing new finished (fresh table)
            return
        claim_seat = int(s.claim_seat[0])
        # A claim happens on the lead, so it takes every trick not played out.
        claim = (claim_seat, 13 - len(self._plays) // 4) if claim_seat >= 0 else None
        self.history.append(
            HandRecord(
                number=int(s.hand_index[0]),
                dealer=self._hand_dealer(),
                hands=tuple(hand_text(h) for h in s.dealt_set[0]),  # type: ignore[arg-type]
                bids=self.bids,  # type: ignore[arg-type]
                redeal_seat=None if s.redeal_seat[0] < 0 else int(s.redeal_seat[0]),
                plays=tuple(self._plays),
                claim=claim,
                tricks_won=self.tricks_won,
                scores_before=tuple(int(x) for x in s.scores_before[0]),  # type: ignore[arg-type]
                points=tuple(int(x) for x in s.hand_points[0]),  # type: ignore[arg-type]
                scores_after=self.scores,
                thrown_in=bool(s.thrown_in[0]),
                forfeits=tuple(int(x) for x in np.flatnonzero(s.forfeit[0])),
                required_total=int(s.required_total[0]),
                target_after=self.target,
                winner=self.winner,
            )
        )

    # -- text -------------------------------------------------------------------------------
    def score_sheet(self) -> str:
        """The match so far, hand by hand (``render.score_sheet``)."""
        return score_sheet(self.history, self.rules)

    def render(self, viewer: int | None = None) -> str:
        """One screen of the table showing every hand, or only seat `viewer`'s (0..3, else
        FourHundredError)."""
        if viewer is not None:
            self._seat(viewer)
        self._checked()
        return table_view(self, viewer)

    def __repr__(self) -> str:
        return (
            f"Table(name={short(self.name)}, phase={short(self.phase)}, hand={self.hand_number}, "
            f"dealer={self.dealer}, scores={self.scores}, target={self.target}, winner={self.winner})"
        )


def _is_int(value: object) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)
