"""A game record's text and JSON forms read (:mod:`fourhundred_env.game_records.files`,
docs/records.md).

The text form is line by line: ``key: value`` (the colon may be left out), ``#`` starts a
comment (at the start of a line or after a space), blank lines and spacing do not matter,
nor does the case of keys and cards. It opens with ``fourhundred-record 1``; a header (the
rules, the seats, the start) comes before the first ``hand N`` line, and each hand's lines
after its own. Reading here only turns text into a :class:`GameRecord`; whether it is a game
of 400 is for the replay (:func:`~fourhundred_env.game_records.files.parse_record`) to say.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fourhundred_env.configs import build
from fourhundred_env.errors import FourHundredError, RecordError, short
from fourhundred_env.game_records.data import FORMAT, FORMAT_VERSION, GameRecord, RecordedHand
from fourhundred_env.rules import PRESETS, Rules

__all__ = ["json_to_record", "text_to_record"]

HEADER_KEYS = ("rules", "seat", "dealer", "scores", "target")
HAND_KEYS = ("dealer", "s0", "s1", "s2", "s3", "bids", "play", "forfeit", "tricks", "points", "scores")  # fmt: skip
JSON_KEYS = ("format", "version", "rules", "seats", "dealer", "scores", "target", "hands")
JSON_HAND_KEYS = ("dealer", "deal", "bids", "cards", "forfeits", "tricks", "points", "scores")
_LINE = re.compile(r"([A-Za-z][\w-]*)\s*:?\s*(.*)")
_SEAT_LABEL = re.compile(r"[sS]?([0-3])\s*:?\s*(.+)")
_COMMENT = re.compile(r"(^|\s)#")


# -- reading the text form ---------------------------------------------------------------------
def text_to_record(text: str) -> GameRecord:
    """The record written in `text` (not yet replayed). Raises RecordError naming the line."""
    header: dict[str, Any] = {}
    seats: dict[int, str] = {}
    hands: list[dict[str, Any]] = []
    opened = False
    for number, raw in enumerate(text.splitlines(), 1):
        comment = _COMMENT.search(raw)
        line = (raw[: comment.start()] if comment else raw).strip()
        if not line:
            continue
        where = f"record line {number}"
        match = _LINE.fullmatch(line)
        if match is None:
            raise RecordError(
                f"{where}: {short(line)}: expected 'key: value', like 'bids: 4 3 2 2'"
            )
        key, value = match.group(1).lower(), match.group(2).strip()
        if not opened:
            if key != FORMAT:
                raise RecordError(
                    f"{where}: {short(line)}: expected the record to open with the line "
                    f"'{FORMAT} {FORMAT_VERSION}'"
                )
            _check_version(value, where)
            opened = True
        elif key == "hand":
            if value != str(len(hands) + 1):
                raise RecordError(f"{where}: hand {short(value)}: expected hand {len(hands) + 1}")
            hands.append({"line": number})
        elif key not in (HAND_KEYS if hands else HEADER_KEYS):
            part = f"hand {len(hands)}" if hands else "the header (before 'hand 1')"
            keys = ", ".join(HAND_KEYS if hands else (*HEADER_KEYS, "hand"))
            raise RecordError(
                f"{where}: unknown key {short(key)} in {part}: expected one of {keys}"
            )
        elif key == "seat" and not hands:
            label = _SEAT_LABEL.fullmatch(value)
            if label is None or int(label.group(1)) in seats:
                raise RecordError(
                    f"{where}: seat {short(value)}: expected 'seat S0: LABEL', each seat once"
                )
            seats[int(label.group(1))] = label.group(2).strip()
        elif key == "play":
            hands[-1].setdefault("play", []).append(value)
        else:
            section = hands[-1] if hands else header
            if key in section:
                raise RecordError(f"{where}: a second {key!r} line: expected one")
            section[key] = (where, value)
    if not opened:
        raise RecordError(
            f"record: no lines: expected a record opening '{FORMAT} {FORMAT_VERSION}'"
        )
    if seats and len(seats) != 4:
        raise RecordError(
            f"record: seats {sorted(seats)} only: expected a line for each of S0 to S3"
        )
    parsed = [_text_hand(n, h) for n, h in enumerate(hands, 1)]
    dealer = _seat(*header["dealer"]) if "dealer" in header else None
    if dealer is None:
        dealer = parsed[0].dealer if parsed else None
        if dealer is None:
            raise RecordError(
                "record: no dealer: expected a line 'dealer: S0' (the first hand's dealer) in the "
                "header or in hand 1"
            )
    rules = _text_rules(*header["rules"]) if "rules" in header else Rules()
    return GameRecord(
        rules=rules, seats=tuple(seats[s] for s in range(4)) if seats else None,  # type: ignore[arg-type]
        dealer=dealer, scores=_four(*header["scores"]) if "scores" in header else (0, 0, 0, 0),
        target=_integer(*header["target"]) if "target" in header else None, hands=tuple(parsed),
    )  # fmt: skip


def _text_hand(n: int, h: dict[str, Any]) -> RecordedHand:
    missing = [f"S{s}" for s in range(4) if f"s{s}" not in h]
    if missing:
        raise RecordError(
            f"record hand {n} (line {h['line']}): no cards for {', '.join(missing)}: expected "
            "lines 'S0: ...' to 'S3: ...' with each seat's cards as dealt"
        )
    tokens = " ".join(h.get("play", ())).replace(",", " ").split()
    return RecordedHand(
        deal=tuple(h[f"s{s}"][1] for s in range(4)),  # type: ignore[arg-type]
        bids=tuple(h["bids"][1].replace(",", " ").split()) if "bids" in h else (),
        cards=tuple(tokens), dealer=_seat(*h["dealer"]) if "dealer" in h else None,
        forfeits=tuple(_seat(h["forfeit"][0], t) for t in h["forfeit"][1].replace(",", " ").split()) if "forfeit" in h else (),
        tricks=_four(*h["tricks"]) if "tricks" in h else None,
        points=_four(*h["points"]) if "points" in h else None,
        scores=_four(*h["scores"]) if "scores" in h else None,
    )  # fmt: skip


def _check_version(value: object, where: str) -> None:
    if str(value).strip() != str(FORMAT_VERSION):
        raise RecordError(
            f"{where}: version {short(value)} of {FORMAT}: expected version {FORMAT_VERSION}, "
            "the one this fourhundred reads"
        )


def _seat(where: str, text: str) -> int:
    t = text.strip().upper().removeprefix("S")
    if t not in ("0", "1", "2", "3"):
        raise RecordError(f"{where}: seat {short(text)}: expected S0, S1, S2 or S3")
    return int(t)


def _integer(where: str, text: str) -> int:
    try:
        if len(text) > 12:
            raise ValueError
        return int(text)
    except ValueError:
        raise RecordError(f"{where}: {short(text)}: expected an integer") from None


def _four(where: str, text: str) -> tuple[int, int, int, int]:
    values = text.replace(",", " ").split()
    if len(values) != 4:
        raise RecordError(f"{where}: {short(text)}: expected 4 integers, S0 to S3")
    return tuple(_integer(where, v) for v in values)  # type: ignore[return-value]


def _text_rules(where: str, text: str) -> Rules:
    """``wiki`` or ``pagat``, then ``flag=value`` overrides (``wiki target=31 auto_claim=yes``)."""
    preset, overrides = "wiki", {}
    for k, token in enumerate(text.split()):
        name, sep, value = token.partition("=")
        if not sep and k == 0:
            preset = token.lower()
        elif not sep or not name:
            raise RecordError(
                f"{where}: rules {short(token)}: expected a preset first, then flag=value"
            )
        else:
            overrides[name] = value
    if preset not in PRESETS:
        raise RecordError(
            f"{where}: unknown rules preset {short(preset)}: expected one of {sorted(PRESETS)}"
        )
    try:
        return build(Rules, {**PRESETS[preset], **overrides}, "rules", text=overrides)
    except FourHundredError as e:
        raise RecordError(f"{where}: {e}") from None


# -- the JSON form -----------------------------------------------------------------------------
def json_to_record(text: str) -> GameRecord:
    """The record in JSON `text` (not yet replayed). Raises RecordError naming what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(
            f"record: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})"
        ) from None
    except RecursionError:
        raise RecordError("record: JSON nested too deeply: expected a record object") from None
    except ValueError as e:  # e.g. an integer of more digits than Python converts
        raise RecordError(f"record: not valid JSON ({short(str(e))})") from None
    if not isinstance(data, dict):
        raise RecordError(
            f'record: JSON {type(data).__name__}: expected an object with "format": {FORMAT!r}'
        )
    if data.get("format") != FORMAT:
        raise RecordError(f"record: format {short(data.get('format'))}: expected {FORMAT!r}")
    version = data.get("version")
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise RecordError(
            f"record: version {short(version)} of {FORMAT}: expected version {FORMAT_VERSION}, "
            "the one this fourhundred reads"
        )
    _known(data, JSON_KEYS, "record")
    rules_value = data.get("rules", "wiki")
    try:
        rules = (
            Rules.preset(rules_value)
            if isinstance(rules_value, str)
            else Rules.from_dict(rules_value)
        )
    except FourHundredError as e:
        raise RecordError(f"record rules: {e}") from None
    seats = data.get("seats")
    if seats is not None and not (
        isinstance(seats, list) and len(seats) == 4 and all(isinstance(s, str) for s in seats)
    ):
        raise RecordError(f"record seats: {short(seats)}: expected null or 4 labels (text)")
    if not isinstance(data.get("hands", []), list):
        raise RecordError(f"record hands: {short(data.get('hands'))}: expected a list of hands")
    return GameRecord(
        rules=rules, seats=None if seats is None else tuple(seats),  # type: ignore[arg-type]
        dealer=_json_int(data.get("dealer"), "record dealer", 0, 3),
        scores=_json_ints(data.get("scores", [0, 0, 0, 0]), "record scores"),  # type: ignore[arg-type]
        target=None if data.get("target") is None else _json_int(data["target"], "record target"),
        hands=tuple(_json_hand(n, h) for n, h in enumerate(data.get("hands", []), 1)),
    )  # fmt: skip


def _json_hand(n: int, h: object) -> RecordedHand:
    where = f"record hand {n}"
    if not isinstance(h, dict):
        raise RecordError(f"{where}: {short(h)}: expected an object with a deal, bids and cards")
    _known(h, JSON_HAND_KEYS, where)
    deal = h.get("deal")
    if not (isinstance(deal, list) and len(deal) == 4 and all(isinstance(d, str) for d in deal)):
        raise RecordError(f"{where}, deal: {short(deal)}: expected the 4 hands of S0 to S3 as text")
    bids, cards = h.get("bids", []), h.get("cards", [])
    if not isinstance(bids, list) or not all(isinstance(b, str) or _is_int(b) for b in bids):
        raise RecordError(
            f'{where}, bids: {short(bids)}: expected a list of bids (2, 3, ... or "redeal")'
        )
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise RecordError(f'{where}, cards: {short(cards)}: expected a list of cards like "AH"')
    results = {
        k: None if h.get(k) is None else _json_ints(h[k], f"{where} {k}")
        for k in ("tricks", "points", "scores")
    }
    return RecordedHand(
        deal=tuple(deal), bids=tuple(str(b) for b in bids), cards=tuple(cards),  # type: ignore[arg-type]
        dealer=None if h.get("dealer") is None else _json_int(h["dealer"], f"{where} dealer", 0, 3),
        forfeits=tuple(_json_int(s, f"{where} forfeits", 0, 3) for s in _json_list(h.get("forfeits", []), f"{where} forfeits")),
        **results,  # type: ignore[arg-type]
    )  # fmt: skip


def _known(data: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(data) - set(keys), key=short)
    if unknown:
        raise RecordError(
            f"{where}: unknown key(s) {short(unknown)}: expected some of {list(keys)}"
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_int(value: object, where: str, lo: int = -(2**31), hi: int = 2**31 - 1) -> int:
    if not _is_int(value) or not lo <= value <= hi:  # type: ignore[operator]
        raise RecordError(f"{where}: {short(value)}: expected an integer {lo} to {hi}")
    return int(value)  # type: ignore[arg-type]


def _json_list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{where}: {short(value)}: expected a list")
    return value


def _json_ints(value: object, where: str) -> tuple[int, ...]:
    items = _json_list(value, where)
    if len(items) != 4:
        raise RecordError(f"{where}: {short(value)}: expected 4 integers, S0 to S3")
    return tuple(_json_int(v, where) for v in items)
