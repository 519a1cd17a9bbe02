"""The command line as the manual describes it: `--version`, every flag's help with its
default, a mistyped flag answered with its subcommand's usage, the examples' flags."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fourhundred_cli import build_parser, main
from fourhundred_env import __version__

ROOT = Path(__file__).resolve().parents[1]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"fourhundred {__version__}"


def test_the_version_is_the_installed_package_s() -> None:
    from importlib.metadata import version

    assert version("fourhundred") == __version__


def _flag_problems(parser: argparse.ArgumentParser) -> list[str]:
    fmt = parser._get_formatter()
    chosen = {id(a) for g in parser._mutually_exclusive_groups if g.required
              for a in g._group_actions}  # fmt: skip
    problems = []
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
            continue
        text = fmt._expand_help(a) if a.help else ""
        switch = isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction))
        if not text:
            problems.append(f"{a.option_strings or a.dest}: no help")
        elif a.option_strings and not switch and id(a) not in chosen and "default" not in text:
            problems.append(f"{a.option_strings}: the help does not give the default")
    return problems


def test_every_flag_has_help_with_its_default() -> None:
    problems = {name: _flag_problems(p) for name, p in _subparsers().items()}
    assert not any(problems.values()), problems


def test_the_tournament_flags_state_the_config_defaults() -> None:
    from fourhundred_tournament.config import TournamentConfig

    helps = {a.dest: a.help for a in _subparsers()["tournament"]._actions}
    for name in ("matches", "seed", "max_hands", "workers", "table_batch", "chunk_matches"):
        default = TournamentConfig.__dataclass_fields__[name].default
        assert re.search(rf"\(default {default}\b", helps[name]), (name, helps[name])


@pytest.mark.parametrize(
    "argv", [["tournament", "--matchez", "3"], ["bid-eval", "x", "--tabels", "2"]]
)
def test_a_mistyped_flag_shows_that_subcommand_s_usage(argv, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: fourhundred {argv[0]} ")
    assert "unrecognized arguments" in err


@pytest.mark.parametrize(
    "script",
    ["examples/sb3_maskable_ppo.py", "examples/cleanrl_ppo.py", "examples/openspiel_dqn.py"],
)
def test_the_examples_flags_have_help_with_defaults(script: str) -> None:
    out = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True).stdout  # fmt: skip
    flags = [line.split()[0] for line in out.splitlines() if line.startswith("  --")]
    assert len(flags) > 10
    assert out.count("(default:") >= len(flags), out
