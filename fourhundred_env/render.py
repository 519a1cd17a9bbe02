"""Text for people: the score sheet of a match and a one-screen view of a table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fourhundred_env.game_records.hands import HandRecord
from fourhundred_env.rules import Rules, bids_total


class TableLike(Protocol):
    """What `table_view` reads of a table (a :class:`~fourhundred_env.table.Table`)."""

    name: str
    rules: Rules
    hand_number: int
    target: int
    phase: str
    winner: int | None
    bids: tuple[int | None, ...]
    to_play: int | None
    scores: tuple[int, int, int, int]
    tricks_won: tuple[int, int, int, int]
    trick: list[tuple[int, str]]

    def _hand_dealer(self) -> int: ...

    def required_total(self) -> int:
        """Required total of bids of the current (or next) hand."""

    def min_bid(self, seat: int) -> int:
        """Lowest bid `seat` may make in the current hand."""

    def hand_text(self, seat: int) -> str:
        """Cards `seat` still holds, as one line of text (``cards.hand_text``)."""

    def legal(self) -> list[str]:
        """Legal actions of the seat to play, as text; empty between hands."""


SEAT_NAMES = ("S0", "S1", "S2", "S3")


def _cells(values: Sequence[object], width: int = 4) -> str:
    return "".join(f"{'-' if v is None else v:>{width}}" for v in values)


def score_sheet(history: Sequence[HandRecord], rules: Rules | None = None) -> str:
    """The match hand by hand: dealer, bids, tricks, points and running scores per seat.

    Team 0 is seats 0 and 2, team 1 seats 1 and 3.
    """
    rules = rules or Rules()
    seats = "".join(f"{n:>4}" for n in SEAT_NAMES)
    head = (
        f"{'hand':>4} {'dlr':>3} {'need':>4} |{'bids':^16}|{'tricks':^16}|{'points':^16}|"
        f"{'scores':^16}| note\n{'':>14}|{seats}|{seats}|{seats}|{seats}|"
    )
    lines = [f"Score sheet ({rules.name} rules, target {rules.target}; teams S0+S2 v S1+S3)", head]
    lines.append("-" * len(head.splitlines()[0]) + "-" * 12)
    for h in history:
        notes = []
        if h.redeal_seat is not None:
            notes.append(f"S{h.redeal_seat} asked for a redeal")
        elif h.thrown_in:
            if rules.five_to_run:
                notes.append("thrown in (no bid of 5 or more)")
            else:
                total = bids_total([b or 0 for b in h.bids], rules)
                notes.append(f"thrown in (bids {total} < {h.required_total})")
        if h.claim is not None:
            notes.append(f"S{h.claim[0]} claimed {h.claim[1]}")
        for seat in h.forfeits:
            notes.append(f"S{seat} forfeited")
        if h.winner is not None:
            notes.append(f"team {h.winner} wins")
        elif h.target_after != rules.target:
            notes.append(f"target {h.target_after}")
        played = not h.thrown_in
        lines.append(
            f"{h.number:>4} {'S' + str(h.dealer):>3} {h.required_total:>4} |{_cells(h.bids)}|"
            f"{_cells(h.tricks_won if played else [None] * 4)}|"
            f"{_cells([f'{p:+d}' for p in h.points] if played else [None] * 4)}|"
            f"{_cells(h.scores_after)}| {'; '.join(notes)}"
        )
    if history and history[-1].winner is not None:
        w = history[-1].winner
        final = history[-1].scores_after
        hands = f"{len(history)} hand" + ("s" if len(history) != 1 else "")
        lines.append(f"Winner: team {w} (S{w} {final[w]}, S{w + 2} {final[w + 2]}) after {hands}")
    return "\n".join(lines)


def table_view(table: TableLike, viewer: int | None = None) -> str:
    """One screen: scores, bids, tricks, the current trick and the hands (all, or `viewer`'s)."""
    t = table
    lines = [
        f"{t.name}: hand {t.hand_number}, dealer S{t._hand_dealer()}, "
        f"target {t.target}, required total {t.required_total()} ({t.rules.name} rules)"
    ]
    bids = t.bids
    to_play = t.to_play
    for seat in range(4):
        you = " (you)" if viewer == seat else ""
        turn = " <- to play" if to_play == seat else ""
        bid = "-" if bids[seat] is None else str(bids[seat])
        lines.append(
            f"  S{seat}{you:<6} team {seat % 2}  score {t.scores[seat]:>4}  "
            f"bid {bid:>2}  tricks {t.tricks_won[seat]:>2}  min bid {t.min_bid(seat):>2}{turn}"
        )
    trick = t.trick
    lines.append("  trick: " + ("  ".join(f"S{s} {c}" for s, c in trick) if trick else "-"))
    for seat in range(4):
        if viewer is None or viewer == seat:
            lines.append(f"  hand S{seat}: {t.hand_text(seat)}")
    if t.phase == "match_over":
        lines.append(f"  match over: team {t.winner} wins")
    elif t.phase == "hand_over":
        lines.append("  between hands")
    else:
        lines.append(f"  S{to_play} to {t.phase}: legal {' '.join(t.legal())}")
    return "\n".join(lines)
