"""The `fourhundred` command line."""

from __future__ import annotations

from fourhundred_cli import main
from fourhundred_cli.match import play_random_match
from fourhundred_env.rules import Rules


def test_match_prints_a_score_sheet(capsys) -> None:
    assert main(["match", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Score sheet (wiki rules, target 41")
    assert "Winner: team" in out


def test_same_seed_same_match_different_seed_differs() -> None:
    a = play_random_match(Rules(), seed=5)
    b = play_random_match(Rules(), seed=5)
    c = play_random_match(Rules(), seed=6)
    assert a.history == b.history
    assert a.history != c.history


def test_bad_preset_is_a_clear_error(capsys) -> None:
    assert main(["match", "--rules", "bogus"]) == 2
    assert (
        "unknown rules preset 'bogus': expected one of ['pagat', 'wiki']" in capsys.readouterr().err
    )
