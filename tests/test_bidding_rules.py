"""Bidding policies under every bundled rules profile: the match-win estimate of each rule set
(bundled, or fitted by `fourhundred fit-matchwin` and cached where every command finds it),
the bid trainers, `bid-eval --report` and `bid-analyse` under pagat, and a worker process that
fails at start failing the run in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents.value.matchwin import (  # noqa: E402
    MatchWin,
    MatchWinMissingError,
    find_matchwin,
    rules_key,
)
from fourhundred_cli import main  # noqa: E402
from fourhundred_env.errors import FourHundredError  # noqa: E402
from fourhundred_env.rules import PRESETS, Rules  # noqa: E402
from fourhundred_train.workers import WorkerStartError, in_processes  # noqa: E402

SMALL_Q = ["positions=400", "num_tables=64", "hidden=32", "epochs=1", "batch_size=128",
           "iterations=1", "worlds=4", "candidates=8", "workers=2", "eval_deals=2"]  # fmt: skip


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_bundled_profile_has_its_match_win_estimates(preset: str) -> None:
    rules = Rules.preset(preset)
    for name in ("", "matchwin_h1.npz"):
        model = MatchWin.for_rules(rules, name)
        assert rules_key(model.rules) == preset
        p = model.first_team(np.array([[0, 0, 0, 0], [35, 0, 10, 0]]), 41, 3)
        assert abs(p[0] - 0.5) < 0.1 and p[1] > 0.7


def test_other_rules_say_how_to_fit_their_estimate_and_find_it_once_fitted(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("FOURHUNDRED_CACHE", str(tmp_path / "cache"))
    rules = Rules.preset("pagat", min_bid_base=2)  # no preset plays this game
    with pytest.raises(MatchWinMissingError, match="fourhundred fit-matchwin") as e:
        find_matchwin("matchwin_h1.npz", rules)
    assert "\n" not in str(e.value)
    from fourhundred_train.matchwin import fit_estimate

    out = fit_estimate(rules=rules, matches=400, tables=64, epochs=1, echo=lambda *_: None)
    assert out.parent == tmp_path / "cache" / "matchwin"
    assert find_matchwin("matchwin_h1.npz", rules) == out
    assert MatchWin.for_rules(rules).rules == rules
    # the command line writes the same file, with its progress bars
    capsys.readouterr()
    assert main(["fit-matchwin", "--rules", "pagat", "--matches", "200", "--tables", "64",
                 "--epochs", "1", "--out", str(tmp_path / "p.npz")]) == 0  # fmt: skip
    assert "wrote" in capsys.readouterr().out
    assert rules_key(MatchWin(tmp_path / "p.npz").rules) == "pagat"
    assert main(["fit-matchwin", "--model", "agents/pretrained/selfplay.pt", "--rules", "pagat",
                 "--matches", "10"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trained under other rules" in err


def test_the_bid_trainers_and_the_benchmark_run_under_pagat(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    assert main(["train", "bidding_q", "rules=pagat", *SMALL_Q, f"runs_dir={runs}"]) == 0
    (run,) = runs.iterdir()
    assert (run / "policy.pt").is_file()
    assert main(["train", "bidding", "rules=pagat", "num_tables=32", "total_decisions=2048",
                 "kickstart_decisions=512", "average_from=0", "hidden=32", "eval_every=0",
                 f"runs_dir={runs}"]) == 0  # fmt: skip
    bidder = f"neural-bid:{run / 'policy.pt'}"
    capsys.readouterr()
    assert main(["bid-eval", bidder, "--rules", "pagat", "--report", "--deals", "1",
                 "--matches", "0", "--out", str(tmp_path / "report")]) == 0  # fmt: skip
    assert "dP(win)" in capsys.readouterr().out
    assert main(["bid-analyse", bidder, "--rules", "pagat", "--deal-seed", "1",
                 "--worlds", "4"]) == 0  # fmt: skip
    # a bidder of other rules: one line
    assert main(["bid-eval", "neural-bid:agents/pretrained/bidder.pt", "--rules", "pagat",
                 "--report", "--deals", "1", "--matches", "0"]) == 2  # fmt: skip
    assert "trained under other rules" in capsys.readouterr().err


def _fails_at_start(_: int) -> None:
    raise FourHundredError("checkpoint 'x.pt' was trained under other rules")


def _double(x: int) -> int:
    return 2 * x


def test_a_worker_that_fails_at_start_fails_the_run_in_one_line() -> None:
    with pytest.raises(WorkerStartError, match=r"failed to start: checkpoint 'x\.pt' was"):
        list(in_processes(iter(range(4)), 4, 2, _fails_at_start, (0,), _double))
    assert list(in_processes(iter(range(4)), 4, 2, abs, (0,), _double)) == [0, 2, 4, 6]
