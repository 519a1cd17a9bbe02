"""A person at the terminal: the `human` agent and the `fourhundred play` match loop.

:class:`HumanAgent` is an ordinary agent: it gets its seat's SeatView (so a person sees exactly
what a bot would: their own hand and the public facts), shows it, and reads an action as text
(``3`` to bid 3, ``AH`` or ``10s`` to play a card, ``redeal``), repeating the question with a
clear message for anything malformed or illegal. Commands: ``help``, ``hand`` (show the table
again), ``legal``, ``hint`` (what the heuristic would do), ``quit``.

:func:`play_match` runs one match between a person and three bots on a single
:class:`~fourhundred_env.table.Table`, narrating the bots' moves and every trick, and prints
the score sheet at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_env.cards import (
    NUM_CARDS,
    RANK_TEXT,
    REDEAL_ACTION,
    SUIT_SETS,
    SUIT_SYMBOLS,
    action_text,
    card_text,
    parse_action,
    set_to_cards,
)
from fourhundred_env.engine import Phase
from fourhundred_env.errors import CardError, FourHundredError, IllegalActionError
from fourhundred_env.game_records.files import record_target, write_record
from fourhundred_env.registry import (
    NoSettings,
    display_name,
    make_agent,
    parse_spec,
    register_agent,
)
from fourhundred_env.rules import Rules
from fourhundred_env.table import Table
from fourhundred_env.view import SeatView, seat_view

REL_NAMES = ("you", "right", "partner", "left")
HELP = (
    "Type a bid (a number, e.g. 3), 'redeal' (only with no A, K, Q or J), or a card: rank then "
    "suit, e.g. AH, 10S (or TS), 7d, QC. Commands: hand, legal, hint, help, quit."
)
COMMANDS = "Commands: hand (the table again), legal, hint (a bot's choice), help, quit."


def phase_help(view: SeatView, i: int, rules: Rules) -> str:
    """Help for the decision pending at table i of `view`: the bidding's or the card play's."""
    me = int(view.seat[i])
    mask = view.legal_mask[i]
    if int(view.phase[i]) == Phase.BID:
        redeal = (
            " You may also type 'redeal': your hand has no A, K, Q or J."
            if mask[REDEAL_ACTION]
            else ""
        )
        if rules.five_to_run:
            played = "The hand is played only if someone bids 5 or more."
        else:
            counted = (
                " (bids of 7 or more count double)" if rules.total_counted_in == "points" else ""
            )
            played = (
                f"The four bids must add up to at least {int(view.required_total[i])}{counted}, "
                "or the hand is thrown in."
            )
        return (
            f"Bidding: type how many tricks you alone will take, a number from "
            f"{int(view.min_bid[i, me])} to 13. {played}{redeal} {COMMANDS}"
        )
    if int(view.trick_size[i]) == 0:
        follow = "You lead: any card you hold."
    else:
        led = int(view.led_suit[i])
        follow = (
            f"{SUIT_SYMBOLS[led]} was led: follow with one if you can, else play any card "
            "(a heart trumps)."
        )
    return (
        f"Card play: type a card, rank then suit, e.g. AH, 10S (or TS), 7d, QC. {follow} "
        f"Hearts are trump. Legal now: {_legal_text(mask)}. {COMMANDS}"
    )


class QuitGame(KeyboardInterrupt):
    """The person typed 'quit' (or input ended). A KeyboardInterrupt, so that inside a
    tournament it stops the run (finished games are kept) instead of counting as a forfeit."""


def hand_line(card_set: int | np.integer) -> str:
    """A hand sorted by suit (hearts, trump, first), high to low: ``♥ A K 7 | ♠ Q 10 | ...``."""
    groups = []
    for suit in (3, 2, 1, 0):
        cards = set_to_cards(int(card_set) & int(SUIT_SETS[suit]))[::-1]
        ranks = " ".join(RANK_TEXT[c % 13] for c in cards)
        groups.append(f"{SUIT_SYMBOLS[suit]} {ranks if ranks else '-'}")
    return " | ".join(groups)


def render_view(view: SeatView, i: int = 0) -> str:
    """One screen of what seat ``view.seat[i]`` knows: scores, bids, tricks, trick, hand."""
    me = int(view.seat[i])
    dealer = int(view.dealer[i])
    phase = int(view.phase[i])
    lines = [
        f"You are S{me} (team {me % 2}, partner S{(me + 2) % 4}); dealer S{dealer}; "
        f"target {int(view.target[i])}; required total {int(view.required_total[i])}"
    ]
    first = (dealer + 1) % 4
    bid_done = {(first + k) % 4 for k in range(int(view.num_bids[i]))}
    for rel in range(4):
        seat = (me + rel) % 4
        bid = int(view.bids[i, seat])
        bid_text = str(bid) if phase != Phase.BID or seat in bid_done else "-"
        turn = "  <- to play" if int(view.to_play[i]) == seat else ""
        lines.append(
            f"  S{seat} {REL_NAMES[rel]:<8} score {int(view.scores_before[i, seat]):>4}  "
            f"bid {bid_text:>2} (min {int(view.min_bid[i, seat])})  "
            f"tricks {int(view.tricks_won[i, seat]):>2}{turn}"
        )
    if phase == Phase.PLAY:
        leader = int(view.trick_leader[i])
        size = int(view.trick_size[i])
        trick = [
            f"S{(leader + k) % 4} {card_text(int(view.trick_cards[i, (leader + k) % 4]))}"
            for k in range(size)
        ]
        played = np.bitwise_or.reduce(view.played_set[i])
        hearts_out = (
            13
            - int(np.bitwise_count(played & SUIT_SETS[3]))
            - int(np.bitwise_count(view.hand_set[i] & SUIT_SETS[3]))
        )
        lines.append(
            f"  trick {int(view.num_tricks[i]) + 1}: {', '.join(trick) if trick else '(your lead)'}"
            f"   hearts still out: {hearts_out}"
        )
    lines.append(f"  your hand: {hand_line(view.hand_set[i])}")
    return "\n".join(lines)


def _legal_text(mask: np.ndarray) -> str:
    return " ".join(action_text(a) for a in np.flatnonzero(mask))


def why_illegal(view: SeatView, i: int, action: int) -> str:
    """A sentence saying why `action` is not legal for table i of `view`."""
    me = int(view.seat[i])
    if int(view.phase[i]) == Phase.BID:
        if action < NUM_CARDS:
            return "that is a card, but this is the bidding: type a number"
        if action == REDEAL_ACTION:
            return "a redeal needs a hand with no A, K, Q or J (or redeals are off)"
        return f"your minimum bid is {int(view.min_bid[i, me])}"
    if action >= NUM_CARDS:
        return "that is a bid, but this is the card play: type a card like AH or 10S"
    if not (int(view.hand_set[i]) >> action) & 1:
        return f"you do not hold {card_text(action)}"
    led = int(view.led_suit[i])
    return f"you must follow suit: {SUIT_SYMBOLS[led]} was led and you hold one"


class HumanAgent(Agent):
    """Reads each decision from a person (see the module docstring).

    `input_fn(prompt) -> str` and `output(text)` default to the terminal; `hint_agent` is
    asked for ``hint``.
    """

    stateless = False  # a person remembers what they saw

    name = "human"

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int = 0,
        input_fn: Callable[[str], str] = input,
        output: Callable[[str], None] = print,
        hint_agent: Agent | None = None,
    ) -> None:
        super().__init__(rules, seed)
        self.input_fn = input_fn
        self.output = output
        self.hint_agent = hint_agent

    def act(self, view: SeatView) -> np.ndarray:
        """Asks the person for each table of `view` in turn, until they give a legal action;
        raises QuitGame when they quit or the input ends."""
        return np.array([self._ask(view, i) for i in range(view.size)], np.int64)

    def _ask(self, view: SeatView, i: int) -> int:
        self.output(render_view(view, i))
        mask = view.legal_mask[i]
        bidding = int(view.phase[i]) == Phase.BID
        me = int(view.seat[i])
        if bidding:
            extra = ", or 'redeal'" if mask[REDEAL_ACTION] else ""
            prompt = f"Your bid (minimum {int(view.min_bid[i, me])}{extra}): "
        else:
            prompt = "Your card: "
        while True:
            try:
                text = self.input_fn(prompt)
            except EOFError:
                raise QuitGame("input ended") from None
            t = text.strip()
            low = t.lower()
            if not t:
                continue
            if low in ("quit", "exit", "q"):
                raise QuitGame("quit")
            if low in ("help", "?", "h"):
                self.output(phase_help(view, i, self.rules))
                continue
            if low == "hand":
                self.output(render_view(view, i))
                continue
            if low == "legal":
                self.output(f"legal: {_legal_text(mask)}")
                continue
            if low == "hint":
                self.output(f"hint: {self._hint(view, i)}")
                continue
            try:
                action = parse_action(t)
            except CardError as e:
                self.output(f"'{t}' is not understood: {e}. {HELP}")
                continue
            if not mask[action]:
                self.output(
                    f"'{t}' is not legal now: {why_illegal(view, i, action)}. "
                    f"Legal: {_legal_text(mask)}"
                )
                continue
            return action

    def _hint(self, view: SeatView, i: int) -> str:
        if self.hint_agent is None:
            self.hint_agent = make_agent("heuristic", self.rules)
        return action_text(int(self.hint_agent.act(view.select(np.array([i])))[0]))


register_agent(
    "human",
    lambda rules, seed, settings: HumanAgent(rules, seed),
    "a person at the terminal (fourhundred play)",
    settings=NoSettings,
)


# -- the match loop ------------------------------------------------------------------------------
def play_match(
    seat: int = 0,
    bots: Sequence[str] = ("heuristic",),
    rules: Rules | None = None,
    seed: int = 0,
    max_hands: int = 200,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
    record: str | Path | None = None,
) -> Table:
    """A match between a person at `seat` and bots (one spec for all three, or three specs for
    the other seats in increasing order). Returns the finished (or stopped) table.

    `record`: a file the match is written to as a game record (``.json`` or text), after
    every hand and once more at the end, the hand in progress included if the person quits.
    """
    rules = rules if rules is not None else Rules()
    if record is not None:
        record_target(record)  # a place a record must not go is refused before play
    if seat not in (0, 1, 2, 3):
        raise FourHundredError(f"seat={seat!r}: expected 0, 1, 2 or 3")
    others = [s for s in range(4) if s != seat]
    if len(bots) == 1:
        bots = list(bots) * 3
    if len(bots) != 3:
        raise FourHundredError(
            f"bots={list(bots)!r}: expected one agent spec for all three bots or three specs "
            f"(for seats {others})"
        )
    agents: dict[int, Agent] = {}
    names: dict[int, str] = {seat: "you"}
    for s, spec in zip(others, bots, strict=True):
        if parse_spec(spec)[0] == "human":
            raise FourHundredError(
                "only one person can play: choose bot agents for the other seats"
            )
        agents[s] = make_agent(spec, rules, seed=seed * 4 + s)
        names[s] = display_name(spec)
    human = HumanAgent(rules, seed, input_fn, output)
    for a in (*agents.values(), human):
        a.reset(1)
    table = Table(rules=rules, seed=seed, name="play")
    labels = [names[s] for s in range(4)]
    index = np.array([0])
    output(
        f"400: you are S{seat}, partner S{(seat + 2) % 4} ({names[(seat + 2) % 4]}); opponents "
        f"S{(seat + 1) % 4} ({names[(seat + 1) % 4]}) and S{(seat + 3) % 4} "
        f"({names[(seat + 3) % 4]}). Hearts are trump. Type 'help' for help."
    )
    try:
        while table.phase != "match_over" and table.hand_number < max_hands:
            table.deal()
            output(
                f"\n=== Hand {table.hand_number}: dealer S{table.dealer}, required total "
                f"{table.required_total()}, scores {list(table.scores)} ==="
            )
            while table.phase in ("bid", "play"):
                s = int(table.to_play)
                view = seat_view(table.engine, table.state, index, np.int8(s))
                agent = human if s == seat else agents[s]
                action = int(agent.act(view)[0])
                tricks_before = int(table.state.num_tricks[0])
                phase = table.phase
                try:
                    table.act(action)
                except IllegalActionError as e:  # a bot broke the rules: forfeit, lowest legal
                    output(f"S{s} ({names[s]}) forfeits this hand: {e}")
                    table.forfeit(s)
                    action = table.legal_ids()[0]
                    table.act(action)
                output(_action_line(s, names[s], s == seat, phase, action))
                if phase == "play" and (
                    int(table.state.num_tricks[0]) > tricks_before or table.phase != "play"
                ):
                    last = table.plays[-4:] if len(table.plays) >= 4 else table.plays
                    winner = int(table.state.trick_leader[0]) if table.phase == "play" else None
                    won = f"S{winner} wins" if winner is not None else "last trick"
                    output(
                        f"  trick: {', '.join(f'S{p} {c}' for p, c in last)} -> {won}; "
                        f"tricks {list(table.tricks_won)}"
                    )
            _hand_summary(table, output)
            if record is not None:
                write_record(table.record(seats=labels), record)
    except QuitGame:
        output("Game abandoned.")
        abandoned = True
    else:
        abandoned = False
    if record is not None:
        write_record(table.record(seats=labels), record)
    output("")
    output(table.score_sheet())
    if table.winner is None and not abandoned:
        output(f"(stopped unfinished after {table.hand_number} hands)")
    elif table.winner is not None:
        output("You win!" if table.winner == seat % 2 else "You lose.")
    if record is not None:
        output(f"record: {record} (see it: fourhundred record show {record})")
    return table


def _action_line(seat: int, name: str, you: bool, phase: str, action: int) -> str:
    who = "You" if you else f"S{seat} ({name})"
    if action == REDEAL_ACTION:
        return f"{who} {'ask' if you else 'asks'} for a redeal"
    verb = ("play" if phase == "play" else "bid") + ("" if you else "s")
    return f"{who} {verb} {action_text(action)}"


def _hand_summary(table: Table, output: Callable[[str], None]) -> None:
    h = table.history[-1]
    if h.redeal_seat is not None:
        output(f"Hand thrown in: S{h.redeal_seat} asked for a redeal.")
        return
    if h.thrown_in:
        total = sum(b or 0 for b in h.bids)
        output(f"Hand thrown in: bids total {total}, below the required {h.required_total}.")
        return
    parts = [f"S{s} bid {h.bids[s]} took {h.tricks_won[s]} ({h.points[s]:+d})" for s in range(4)]
    output("Hand over: " + "; ".join(parts) + f". Scores {list(h.scores_after)}.")
    for s in h.forfeits:
        output(f"  S{s} forfeited (contract scored as missed).")
