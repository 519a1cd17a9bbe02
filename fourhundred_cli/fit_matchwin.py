"""`fourhundred fit-matchwin`: fit the match-win estimate for a rules profile and cache it."""

from __future__ import annotations

import argparse

NAME = "fit-matchwin"
HELP = (
    "fit the match-win estimate (dP(win), match-value rewards, the search) for a rules "
    "preset, and cache it where every command finds it"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    from fourhundred_train.matchwin import add_fit_arguments

    add_fit_arguments(p)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status."""
    from fourhundred_train.matchwin import fit_from_args

    fit_from_args(args)
    return 0
