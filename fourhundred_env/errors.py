"""The one exception family of fourhundred: every bad input raises a subclass of FourHundredError."""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable
from typing import Any


class FourHundredError(ValueError):
    """Bad input to fourhundred: the message names what was given and what was expected."""


class RulesError(FourHundredError):
    """An unknown rules flag or preset, or an impossible flag value."""


class CardError(FourHundredError):
    """Malformed card or hand text: unknown rank or suit, wrong count, duplicates."""


class DealError(CardError):
    """A deal that is not 4 hands of 13 cards, every card exactly once. `seat` is the seat
    whose hand is malformed, or None when the fault lies across hands (a card dealt twice)."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat


class IllegalActionError(FourHundredError):
    """An action that is not legal now: wrong phase, out of turn, or not in the legal set."""


class ConfigError(FourHundredError):
    """A config (file, mapping, override or agent spec) with an unknown key or a value that
    does not fit."""


class StateError(FourHundredError):
    """A State (or its record array) holding what no game reaches: a seat outside 0-3, a
    phase that is none, a card id above 51, a negative count; or records of another layout."""


class RecordError(FourHundredError):
    """A game record that is not a game of 400 as written: malformed text or JSON, another
    format or version, a wrong deal, an illegal move or a stated result the replay does not
    give. The message names the line, or the hand and the move."""


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 2, 6, 6, 6
_SHORT.maxset, _SHORT.maxstring, _SHORT.maxother = 6, 80, 80


def short(value: Any) -> str:
    """`value`'s repr cut to about 100 characters, for error messages: a value read from a file
    or a request may be huge (a list of 10**6 items, an alias-expanded tree, a 5,000-digit
    number whose full repr Python refuses)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        text = " ".join(_SHORT.repr(value).split())  # one line (numpy's reprs span several)
    except Exception:  # a repr that fails is no reason to lose the error being reported
        return f"<a {type(value).__name__}>"
    return text if len(text) <= 100 else text[:97] + "..."


def did_you_mean(given: object, choices: Iterable[str], n: int = 3) -> str:
    """``"did you mean 'x' or 'y'?"``: the choices closest to `given` (difflib's
    ``get_close_matches``, at most `n`), or "" when none is close; the one way every error
    about an unknown name (an agent, a config, a key, a device) suggests the valid ones."""
    close = difflib.get_close_matches(str(given), sorted(set(choices)), n=n, cutoff=0.7)
    if not close:
        return ""
    quoted = [repr(c) for c in close]
    return "did you mean " + (quoted[0] if len(quoted) == 1 else
                              ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"  # fmt: skip
