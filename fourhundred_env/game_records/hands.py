"""The record of a finished hand, as a table keeps it (:attr:`Table.history`)."""

from __future__ import annotations

from dataclasses import dataclass

Scores = tuple[int, int, int, int]


@dataclass(frozen=True)
class HandRecord:
    """One finished hand of a match (played or thrown in)."""

    number: int  # 1-based hand number within the match
    dealer: int
    hands: tuple[str, str, str, str]  # as dealt, by seat
    bids: tuple[int | None, int | None, int | None, int | None]  # None: did not bid
    redeal_seat: int | None  # seat that asked for a no-picture redeal
    plays: tuple[tuple[int, str], ...]  # (seat, card) in the order played
    claim: tuple[int, int] | None  # (seat, tricks) taken by auto-claim
    tricks_won: Scores
    scores_before: Scores
    points: Scores
    scores_after: Scores
    thrown_in: bool
    forfeits: tuple[int, ...]  # seats whose contract was scored as missed by forfeit
    required_total: int
    target_after: int
    winner: int | None  # team, once the match is won
