"""Game records in the browser (:mod:`fourhundred_env.game_records.files`): the record a person
downloads of the match they play, and a record file opened in Watch, shown by the same
viewer as a tournament's game.

A download holds the finished hands only: a hand in progress would tell the person the bots'
cards. Its seats are labelled as the page shows them (``you`` and the bots' public names,
never a path). A record opened in Watch is parsed by :func:`fourhundred_env.game_records.files.
parse_record`, which replays every move on the engine, so what the viewer shows is a game of
400 or a one-line refusal naming the line, hand or move that is wrong.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from fourhundred_env.game_records.files import GameRecord, RecordedHand, parse_record
from fourhundred_env.game_records.hands import HandRecord
from fourhundred_env.table import Table
from fourhundred_web.play import OutOfTurnError, PlaySession
from fourhundred_web.requests import ApiError
from fourhundred_web.watch import calls_json, deal_json, played_json

__all__ = ["MAX_RECORD_UPLOAD", "RECORD_SUFFIX", "read_upload", "record_json", "table_record"]

MAX_RECORD_UPLOAD = 1024 * 1024
"""Largest record upload (bytes of the request body): a match of about 2,000 hands."""
RECORD_SUFFIX = ".400"
"""The file name's ending of a downloaded record (the text form, docs/records.md)."""


def table_record(session: PlaySession) -> tuple[str, str]:
    """(file name, text) of the record of `session`'s finished hands (see the module
    docstring); OutOfTurnError before the first hand is over."""
    table = session.table
    names = session.state()["names"]
    record = table.record(seats=names)
    record = dataclasses.replace(record, hands=record.hands[: len(table.history)])
    if not record.hands:
        raise OutOfTurnError(
            "no hand is finished yet: a record holds the finished hands (the one in progress "
            "would show the bots' cards)"
        )
    name = f"400-match-{time.strftime('%Y%m%d-%H%M%S')}{RECORD_SUFFIX}"
    return name, record.to_text()


_READING = threading.BoundedSemaphore(1)  # uploads read at once, server-wide


def read_upload(text: str) -> GameRecord:
    """The record in `text` (its text or JSON form), replayed and checked; RecordError in
    one line for anything that is not a record of a game of 400. One upload is read at a
    time, server-wide (replaying a record of 1 MiB keeps a core busy for a while): another
    sent meanwhile is refused, ApiError 503, rather than queued on a second core."""
    if not _READING.acquire(blocking=False):
        raise ApiError(503, "the server is reading another record: try again in a moment")
    try:
        return parse_record(text)
    finally:
        _READING.release()


def _finished_hand(h: HandRecord) -> dict[str, Any]:
    """A finished hand as :func:`fourhundred_web.watch.game_json` gives one replayed."""
    return {
        "index": h.number - 1, "dealer": h.dealer, "required_total": h.required_total,
        "thrown_in": h.thrown_in, "redeal_seat": h.redeal_seat,
        "claim_seat": None if h.claim is None else h.claim[0],
        "bids": [b or 0 for b in h.bids], "tricks": list(h.tricks_won),
        "points": list(h.points), "scores": list(h.scores_after),
        "scores_before": list(h.scores_before), "forfeits": list(h.forfeits),
        "replayed": True, "problem": None, "finished": True, **played_json(h),
    }  # fmt: skip


def _open_hand(index: int, moves: RecordedHand, scores: list[int], required: int) -> dict[str, Any]:
    """The hand in progress at the end of a record: its moves so far, no result."""
    assert moves.dealer is not None  # parse_record fills every dealer in
    tricks = moves.tricks_played()
    winners = [w for _, w in tricks if w is not None]
    calls = calls_json((moves.dealer + 1) % 4, moves.bids)
    bids = [0, 0, 0, 0]
    for c in calls:
        bids[c["seat"]] = c["bid"] if isinstance(c["bid"], int) else 0
    return {
        "index": index, "dealer": moves.dealer, "required_total": required,
        "thrown_in": False, "redeal_seat": None, "claim_seat": None, "bids": bids,
        "tricks": [winners.count(s) for s in range(4)], "points": None, "scores": scores,
        "scores_before": scores, "forfeits": list(moves.forfeits), "replayed": True,
        "problem": None, "finished": False, "deal": deal_json(moves.deal), "calls": calls,
        "plays": [{"seat": s, "card": c} for trick, _ in tricks for s, c in trick],
        "trick_winners": winners, "claim": None,
    }  # fmt: skip


def record_json(record: GameRecord, file: str) -> dict[str, Any]:
    """`record` (from :func:`read_upload`) for the viewer: one game in the shape of
    :func:`fourhundred_web.watch.game_json`, with the seats' labels, the record's `file`
    name, and the hand in progress, if the record stops in one, marked ``finished: false``."""
    table = Table.from_record(record)
    history = table.history
    hands = [_finished_hand(h) for h in history]
    if len(record.hands) > len(history):
        hands.append(
            _open_hand(len(history), record.hands[-1], list(table.scores), table.required_total())
        )
    seats = list(record.seats) if record.seats else [f"S{s}" for s in range(4)]
    winner = table.winner
    return {
        "file": file, "seats": seats, "rules": record.rules.name, "key": None,
        "orientation": 0, "team0": f"{seats[0]} + {seats[2]}", "team1": f"{seats[1]} + {seats[3]}",
        "first_dealer": record.dealer, "finished": winner is not None,
        "winner_team": -1 if winner is None else int(winner),
        "winner": None if winner is None else f"{seats[winner]} + {seats[winner + 2]}",
        "num_hands": len(hands), "scores": list(table.scores), "target": int(table.target),
        "exact": True, "reason": None, "hands": hands,
    }  # fmt: skip
