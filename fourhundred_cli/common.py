"""Checks the subcommands share."""

from __future__ import annotations

from fourhundred_env.errors import FourHundredError


def check_seed(seed: int | None, flag: str = "--seed") -> None:
    """A seed is an integer of 0 or more (the one rule in every subcommand and config)."""
    if seed is not None and seed < 0:
        raise FourHundredError(f"{flag} {seed}: expected a seed of 0 or more")
