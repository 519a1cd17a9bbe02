"""A table in the browser: one match of one to four people, bots in the other seats, held
by the server.

:class:`PlaySession` is the server's game loop (as :func:`fourhundred_agents.human.play_match` is the
terminal's): the engine (a :class:`~fourhundred_env.table.Table`) is the authority, the bots
move as soon as it is their turn, a person's seat waits for that person, and each person's
browser gets :meth:`PlaySession.state` for their seat, built from that seat's
:class:`~fourhundred_env.view.SeatView` and public facts only (bids, cards played, tricks,
scores). It never holds another seat's cards. The moves made since the move count the
browser names come with it as *frames* (who did what, the trick after it), so the page can
show the other seats' cards one by one.

Which bots a person may choose: :mod:`fourhundred_web.bots`.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_agents.registry import make_agent
from fourhundred_env.cards import (
    NUM_CARDS,
    REDEAL_ACTION,
    SUIT_SETS,
    action_text,
    card_text,
    parse_action,
    set_to_cards,
    sorted_for_display,
)
from fourhundred_env.engine import Phase
from fourhundred_env.errors import CardError, FourHundredError, IllegalActionError, short
from fourhundred_env.game_records.hands import HandRecord
from fourhundred_env.rules import PRESETS, Rules
from fourhundred_env.table import Table
from fourhundred_env.view import SeatView, seat_view
from fourhundred_web.bots import (
    DEFAULT_BOTS,
    STRENGTH,
    AgentChoice,
    agent_choices,
    default_bot,
    public_text,
)

__all__ = [
    "DEFAULT_BOTS",
    "MAX_NAME",
    "PERSON",
    "STRENGTH",
    "AgentChoice",
    "IllegalMoveError",
    "OutOfTurnError",
    "PlaySession",
    "RequestError",
    "agent_choices",
    "check_person_name",
    "default_bot",
    "hand_sheet",
    "public_text",
]

MAX_HANDS = 200
"""A match still going after this many hands is stopped (as `fourhundred play` does)."""
PERSON = "person"
"""The seat choice, in place of a bot's name, of a person invited by a link."""
MAX_NAME = 24
"""Longest name a person may give their seat (characters)."""


class RequestError(FourHundredError):
    """A request the server refuses (its message is the answer's ``error``)."""


class OutOfTurnError(RequestError):
    """An action sent when the person is not the one to act."""


class IllegalMoveError(RequestError):
    """A bid, redeal or card that is not legal in the position (the reason and the legal
    actions in its message)."""


# -- what the browser is shown -------------------------------------------------------------------
def hand_sheet(record: HandRecord) -> dict[str, Any]:
    """The public facts of a finished hand: one row of the score sheet (no cards)."""
    played = not record.thrown_in
    if record.redeal_seat is not None:
        note = f"S{record.redeal_seat} asked for a redeal"
    elif record.thrown_in:
        note = f"thrown in: bids {sum(b or 0 for b in record.bids)} < {record.required_total}"
    else:
        note = ""
    if record.claim is not None:
        note = f"S{record.claim[0]} claimed the last {record.claim[1]}"
    if record.forfeits:
        note = "; ".join([note, *(f"S{s} forfeited" for s in record.forfeits)]).strip("; ")
    return {
        "number": record.number,
        "dealer": record.dealer,
        "required_total": record.required_total,
        "bids": list(record.bids),
        "tricks": list(record.tricks_won) if played else None,
        "points": list(record.points) if played else None,
        "scores": list(record.scores_after),
        "thrown_in": record.thrown_in,
        "note": note,
        "winner": record.winner,
        "target": record.target_after,
    }


def _hand_groups(card_set: int) -> list[dict[str, Any]]:
    """The person's cards by suit (hearts, spades, diamonds, clubs), high to low."""
    groups = []
    for suit in (3, 2, 1, 0):
        cards = sorted_for_display(set_to_cards(int(card_set) & int(SUIT_SETS[suit])))
        groups.append({"suit": "CDSH"[suit], "cards": [card_text(c) for c in cards]})
    return groups


def check_person_name(name: str) -> str:
    """`name` stripped, if it is a name a person may give their seat: 1 to MAX_NAME letters,
    digits, spaces and ``.-_'``; RequestError otherwise."""
    text = name.strip()
    if not (0 < len(text) <= MAX_NAME and all(c.isalnum() or c in " .-_'" for c in text)):
        raise RequestError(
            f"name={text[: MAX_NAME + 6]!r}: expected 1 to {MAX_NAME} letters, digits, spaces "
            "or .-_'"
        )
    return text


@dataclass
class PlaySession:
    """One match between the person who made it, at `seat`, the people invited to the seats
    `invited`, and bots in the others (see the module docstring).

    `bots` maps each seat nobody holds to an agent spec (`labels`, to the name shown).
    Methods that change the table raise RequestError (nothing changed) for a request that
    cannot be carried out now. `seed` deals the cards and is the server's alone (never in
    `state`); `agent_seeds` seed the bots by seat (None: ``seed * 4 + seat``, a reproducible
    table); `secret`: the seed was drawn by the server (no person knows the deals).
    """

    seat: int
    bots: Mapping[int, str]
    rules: Rules
    seed: int = field(repr=False)
    labels: Mapping[int, str] = field(default_factory=dict)
    agent_seeds: Mapping[int, int] | None = field(default=None, repr=False)
    invited: tuple[int, ...] = ()
    secret: bool = False
    table: Table = field(init=False)
    agents: dict[int, Agent] = field(init=False)
    lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    frames: list[dict[str, Any]] = field(init=False, default_factory=list)
    moves: int = field(init=False, default=0)
    names: dict[int, str] = field(init=False, default_factory=dict)
    joined: set[int] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        if self.seat not in (0, 1, 2, 3):
            raise RequestError(f"seat={self.seat!r}: expected 0, 1, 2 or 3")
        self.invited = tuple(sorted(set(self.invited)))
        if not set(self.invited) <= {0, 1, 2, 3} - {self.seat}:
            raise RequestError(f"invited seats {list(self.invited)}: expected other seats, 0-3")
        if sorted(self.bots) != [s for s in range(4) if s not in self.people]:
            raise RequestError(
                f"bots for seats {sorted(self.bots)}: expected the seats nobody holds, "
                f"{[s for s in range(4) if s not in self.people]}"
            )
        self.joined = {self.seat}
        seeds = self.agent_seeds or {s: self.seed * 4 + s for s in self.bots}
        self.agents = {s: make_agent(spec, self.rules, seed=seeds[s])
                       for s, spec in self.bots.items()}  # fmt: skip
        for agent in self.agents.values():
            agent.reset(1)
        self.table = Table(rules=self.rules, seed=self.seed, name="web")
        self.deal()

    @property
    def people(self) -> tuple[int, ...]:
        """The seats people hold (the maker's and the invited), in seat order."""
        return tuple(sorted((self.seat, *self.invited)))

    def name_of(self, seat: int) -> str:
        """The name shown for `seat`: a bot's label; ``you`` at a table of one person; else
        the name its person gave, or ``person k`` (k: 1-4, in seat order)."""
        if seat in self.bots:
            return self.labels.get(seat, self.bots[seat])
        if not self.invited:
            return "you"
        return self.names.get(seat) or f"person {self.people.index(seat) + 1}"

    # -- changing the table -------------------------------------------------------------------
    def join(self, seat: int, name: str | None = None) -> None:
        """The person at `seat` has opened the table (with `name`, if given, as their name:
        see :func:`check_person_name`)."""
        if seat not in self.people:
            raise RequestError(f"seat {seat} is a bot's: it cannot be joined")
        if name is not None:
            self.names[seat] = check_person_name(name)
        self.joined.add(seat)

    def deal(self) -> None:
        """Deal the next hand and let the bots move until a person is to act (or the hand
        is over: a bot's redeal, a throw-in)."""
        phase = self.table.phase
        if phase == "match_over":
            raise OutOfTurnError("the match is over: start a new game")
        if phase != "hand_over":
            raise OutOfTurnError(
                f"a hand is in progress (hand {self.table.hand_number}, {phase}): play it out "
                "before dealing the next"
            )
        if self.stopped:
            raise OutOfTurnError(f"the match was stopped after {MAX_HANDS} hands")
        self.frames = []
        self.table.deal()
        self._bots_move()

    def act(
        self, action: str, seat: int | None = None, moves: int | None = None,
        by: int | None = None,
    ) -> None:  # fmt: skip
        """The bid, redeal request or card (text: ``"4"``, ``"redeal"``, ``"AH"``) of the
        person at seat `by` (None: the table's maker), then the bots' moves up to the next
        decision of a person.

        `seat`, if given, must be `by`; `moves`, if given, the number of moves the browser
        has seen (a stale page is refused rather than acting on a table it has not shown).
        OutOfTurnError when it is not that person's turn, RequestError for an action that is
        not legal now (with the reason and the legal actions).
        """
        me = self.seat if by is None else by
        if me not in self.people:
            raise OutOfTurnError(f"seat {me} is a bot's: no person plays it")
        if seat is not None and seat != me:
            raise OutOfTurnError(f"seat {seat} is not yours: you play seat {me}")
        if moves is not None and moves != self.moves:
            raise OutOfTurnError(
                f"the page is out of date (it has seen {moves} moves, the table has made "
                f"{self.moves}): reload the table"
            )
        phase = self.table.phase
        if phase not in ("bid", "play"):
            hint = "deal the next hand first" if phase == "hand_over" else "the match is over"
            raise OutOfTurnError(f"no decision is pending ({phase.replace('_', ' ')}): {hint}")
        if self.table.to_play != me:
            to_play = int(self.table.to_play)  # type: ignore[arg-type]
            raise OutOfTurnError(f"it is S{to_play}'s turn ({self.name_of(to_play)}), not yours")
        try:
            a = parse_action(action)
        except (CardError, ValueError) as e:  # ValueError: parse_action's int("²")
            raise RequestError(f"action {action!r} is not understood: {e}") from None
        view = self._view(me)
        if not view.legal_mask[0, a]:
            raise IllegalMoveError(
                f"{action_text(a)} is not legal now: {_why_illegal(view, a)}; legal: "
                + " ".join(action_text(x) for x in np.flatnonzero(view.legal_mask[0]))
            )
        self._apply(me, a, forfeit=None)
        self._bots_move()

    def _bots_move(self) -> None:
        """Bots act until a person is to act or the hand is over (the conduct rules of
        `play_match`: a bot that raises or plays an illegal action forfeits its contract,
        and its lowest legal action is played)."""
        while self.table.phase in ("bid", "play") and self.table.to_play in self.bots:
            s = int(self.table.to_play)  # type: ignore[arg-type]
            view = self._view(s)
            forfeit = None
            try:
                a = int(np.asarray(self.agents[s].act(view))[0])
                if not (0 <= a < view.legal_mask.shape[1] and view.legal_mask[0, a]):
                    forfeit = f"illegal action {a}"
            except Exception as e:  # a broken bot must not take the server down
                forfeit = public_text(f"{type(e).__name__}: {e}")[:200]
            if forfeit is not None:
                self.table.forfeit(s)
                a = int(np.argmax(view.legal_mask[0]))
            self._apply(s, a, forfeit)

    def _apply(self, seat: int, action: int, forfeit: str | None) -> None:
        """Play `action` for `seat` and record its frame (public facts only; ``move``: the
        table's move count after it)."""
        t = self.table
        tricks_before = t.tricks_won
        trick_before = t.trick
        try:
            t.act(action, seat=seat)
        except IllegalActionError as e:  # checked against the mask above: a bug if it happens
            raise RequestError(str(e)) from None
        self.moves += 1
        kind = "play" if action < NUM_CARDS else ("redeal" if action == REDEAL_ACTION else "bid")
        frame: dict[str, Any] = {
            "move": self.moves, "seat": seat, "kind": kind, "action": action_text(action),
            "bids": list(t.bids), "tricks_won": list(t.tricks_won), "forfeit": forfeit,
        }  # fmt: skip
        if kind == "play":
            completed = t.tricks_won != tricks_before
            trick = [*trick_before, (seat, action_text(action))] if completed else t.trick
            frame["trick"] = [{"seat": s, "card": c} for s, c in trick]
            if completed:
                frame["winner"] = next(s for s in range(4) if t.tricks_won[s] != tricks_before[s])
        if t.phase in ("hand_over", "match_over"):
            frame["hand_over"] = True
        self.frames.append(frame)

    # -- what the browser sees ----------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        """The match reached MAX_HANDS hands without a winner."""
        return self.table.winner is None and self.table.hand_number >= MAX_HANDS

    def _view(self, seat: int | None = None) -> SeatView:
        s = self.seat if seat is None else seat
        return seat_view(self.table.engine, self.table.state, np.array([0]), np.int8(s))

    def state(self, viewer: int | None = None, since: int | None = None) -> dict[str, Any]:
        """What the browser of the person at seat `viewer` (None: the maker's) may know now:
        their view, the public record of the match, and the frames of this hand's moves
        after the first `since` moves of the match (None: all of this hand's)."""
        me = self.seat if viewer is None else viewer
        if me not in self.people:
            raise RequestError(f"seat {me} is a bot's: no person sees it")
        t = self.table
        v = self._view(me)
        in_hand = t.phase in ("bid", "play")
        legal = [action_text(a) for a in np.flatnonzero(v.legal_mask[0])]
        last = t.history[-1] if t.history and not in_hand else None
        first_bidder = (int(v.dealer[0]) + 1) % 4 if in_hand else None
        return {
            "seat": me,
            "names": [self.name_of(s) for s in range(4)],
            "people": list(self.people),
            "joined": sorted(self.joined),
            "maker": self.seat,
            "secret": self.secret,
            "rules": t.rules.name,
            "target": t.target,
            "phase": t.phase,
            "stopped": self.stopped,
            "hand_number": t.hand_number,
            "dealer": t._hand_dealer(),
            "first_bidder": first_bidder,
            "to_play": t.to_play,
            "your_turn": in_hand and t.to_play == me,
            "scores": list(t.scores),  # they change only when a hand ends
            "bids": list(t.bids),
            "min_bids": [int(x) for x in v.min_bid[0]],
            "required_total": t.required_total(),
            "bids_total": sum(b or 0 for b in t.bids) if in_hand else None,
            "tricks_won": [int(x) for x in v.tricks_won[0]] if in_hand else list(t.tricks_won),
            "trick": [{"seat": s, "card": c} for s, c in t.trick] if in_hand else [],
            "hand": _hand_groups(int(v.hand_set[0])),
            "legal": legal,
            "redeal_allowed": "redeal" in legal,
            "frames": [f for f in self.frames if since is None or f["move"] > since],
            "moves": self.moves,
            "last_hand": hand_sheet(last) if last is not None else None,
            "sheet": [hand_sheet(h) for h in t.history],
            "winner": t.winner,
        }


def _why_illegal(view: SeatView, action: int) -> str:
    """Why `action` is not legal for the viewer of table 0 of `view` (one short clause)."""
    me = int(view.seat[0])
    if int(view.phase[0]) == Phase.BID:
        if action < NUM_CARDS:
            return "this is the bidding, not the card play"
        if action == REDEAL_ACTION:
            return "a redeal needs a hand without A, K, Q or J"
        return f"your minimum bid is {int(view.min_bid[0, me])}"
    if action >= NUM_CARDS:
        return "this is the card play, not the bidding"
    if not (int(view.hand_set[0]) >> action) & 1:
        return f"you do not hold {card_text(action)}"
    return f"you must follow the suit led ({'CDSH'[int(view.led_suit[0])]})"


SECRET_BITS = 63
"""Bits of a secret table's deal seed and of each bot's seed (drawn by `secrets`): too many
to search for from the cards a person holds."""


MENU_IN_ERROR = 8
"""How many of the offered bots a refusal names (the menu's strongest first; the rest are
counted), so that the line stays short however many bots the server offers."""


def new_session(
    seat: int, partner: str, right: str, left: str, rules: str, seed: int | None,
    choices: Mapping[str, AgentChoice], name: str | None = None,
) -> PlaySession:  # fmt: skip
    """A session from a browser's choices (bots by public name, each checked against the
    server's lists; PERSON: a person invited by a link), for a person at `seat` (called
    `name`, if given).

    `seed` None (what a page gets unless it asks for a seed): the deal and the bots' seeds
    are secrets drawn here and kept by the session, so nothing the browser is sent tells
    the bots' cards. A `seed` given is a reproducible table for the person who chose it:
    the same deals and the same bots' seeds every time."""
    for role, bot in (("partner", partner), ("right", right), ("left", left)):
        if bot != PERSON and bot not in choices:
            offered = list(choices)
            listed = offered[:MENU_IN_ERROR]
            more = len(offered) - len(listed)
            rest = f" and {more} more (GET /api/options lists them)" if more else ""
            raise RequestError(
                f"{role}={short(public_text(bot))}: not a bot this server offers; expected one of "
                f"{listed}{rest}, or {PERSON!r} (a person invited by a link)"
            )
    if rules not in PRESETS:
        raise RequestError(f"rules={public_text(rules)!r}: expected one of {sorted(PRESETS)}")
    given = name if name is None else check_person_name(name)
    names = {(seat + 2) % 4: partner, (seat + 1) % 4: right, (seat + 3) % 4: left}
    invited = tuple(sorted(s for s, bot in names.items() if bot == PERSON))
    bots = {s: choices[bot].spec for s, bot in names.items() if bot != PERSON}
    labels = {s: choices[bot].label for s, bot in names.items() if bot != PERSON}
    try:
        if seed is not None:
            session = PlaySession(seat, bots, Rules.preset(rules), seed, labels, invited=invited)
        else:
            agent_seeds = {s: secrets.randbits(SECRET_BITS) for s in bots}
            session = PlaySession(seat, bots, Rules.preset(rules), secrets.randbits(SECRET_BITS),
                                  labels, agent_seeds, invited, secret=True)  # fmt: skip
    except RequestError:
        raise
    except FourHundredError as e:  # a bot that cannot be made now (a checkpoint gone)
        raise RequestError(f"a bot could not be seated: {public_text(str(e))}") from None
    if given is not None:
        session.join(seat, given)
    return session
