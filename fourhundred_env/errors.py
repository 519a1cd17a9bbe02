"""The one exception family of fourhundred: every bad input raises a subclass of FourHundredError."""

from __future__ import annotations


class FourHundredError(ValueError):
    """Bad input to fourhundred: the message names what was given and what was expected."""


class RulesError(FourHundredError):
    """An unknown rules flag or preset, or an impossible flag value."""


class CardError(FourHundredError):
    """Malformed card or hand text: unknown rank or suit, wrong count, duplicates."""


class IllegalActionError(FourHundredError):
    """An action that is not legal now: wrong phase, out of turn, or not in the legal set."""


class ConfigError(FourHundredError):
    """A config (file, mapping, override or agent spec) with an unknown key or a value that
    does not fit."""
