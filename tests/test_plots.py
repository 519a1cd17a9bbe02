"""Learning-curve and tournament figures: they are written from real (tiny) runs and
tournaments, are real images, cope with missing scalars, and `fourhundred plot` dispatches
on its argument."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from fourhundred_cli import main as cli_main
from fourhundred_env.errors import FourHundredError
from fourhundred_tournament.db import ReadOnlyResults
from fourhundred_tournament.plots import bids_and_tricks, pick_games, write_tournament_plots
from fourhundred_tournament.report import build_report, config_from_db, load_report
from fourhundred_train.plots import (
    NoRunsError,
    auto_smoothing,
    ema,
    find_runs,
    load_runs,
    write_training_plots,
)
from tests.plot_data import EVAL_EVERY, SYNTHETIC_UPDATES, PlotData, plot_data

TRAINING_PNGS = ["win_rate.png", "points_per_hand.png", "bid_success.png", "losses.png"]
TOURNAMENT_PNGS = ["leaderboard.png", "pairwise.png", "ratings.png", "bid_vs_tricks.png",
                   "bid_margin.png", "score_trajectories.png"]  # fmt: skip


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> PlotData:
    return plot_data(tmp_path_factory)


def assert_real_image(path: Path, min_width: int = 500, min_height: int = 250) -> None:
    """A PNG of a decent size that is not blank: several colours, dark ink (text) on light."""
    from matplotlib.image import imread

    assert path.is_file(), path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    img = imread(path)
    height, width = img.shape[:2]
    assert width >= min_width and height >= min_height, (path, img.shape)
    rgb = img[..., :3].reshape(-1, 3)
    assert len(np.unique((rgb * 255).astype(np.uint8), axis=0)) > 50, f"{path} looks blank"
    luminance = rgb.mean(axis=1)
    assert (luminance < 0.3).mean() > 0.002, f"{path} has no dark ink (labels?)"
    assert (luminance > 0.9).mean() > 0.3, f"{path} has no light background"


# -- reading and smoothing ---------------------------------------------------------------------
def test_runs_are_read_with_their_scalars_and_labels(data: PlotData) -> None:
    runs = load_runs([data.real_run, data.synthetic_run])
    real, synthetic = runs
    assert real.label == "tiny (seed 1)" and synthetic.label == "synthetic (seed 0)"
    # TensorBoard's step is the learner decisions: 16 tables x 64 steps per update
    np.testing.assert_array_equal(
        real.scalars["charts/points_per_hand"].steps, [1024, 2048, 3072, 4096]
    )
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy",
                "charts/bid_success_rate", "charts/decisions"):  # fmt: skip
        assert real.has(tag), tag
    assert not real.has("eval/win_rate")
    eval_steps = synthetic.scalars["eval/win_rate"].steps
    np.testing.assert_array_equal(
        eval_steps, 1024 * np.arange(EVAL_EVERY, SYNTHETIC_UPDATES + 1, EVAL_EVERY)
    )
    low, rate, high = (synthetic.scalars[f"eval/win_rate{s}"].values for s in ("_low", "", "_high"))
    assert (low <= rate).all() and (rate <= high).all()
    # a folder of runs stands for the runs below it
    assert find_runs([data.real_run.parent]) == sorted([data.real_run, data.synthetic_run])


def test_folders_without_event_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(NoRunsError, match="no TensorBoard event files"):
        find_runs([tmp_path])
    with pytest.raises(NoRunsError, match="does not exist"):
        find_runs([tmp_path / "missing"])


def test_ema_is_debiased_skips_nan_and_weight_zero_is_raw() -> None:
    x = np.array([1.0, np.nan, 3.0, 5.0])
    np.testing.assert_allclose(ema(x, 0.0), [1.0, 1.0, 3.0, 5.0])
    # weight 0.5: debiased, the first value is itself; NaN carries the average over
    np.testing.assert_allclose(ema(x, 0.5), [1.0, 1.0, (0.25 + 1.5) / 0.75, (0.875 + 2.5) / 0.875])
    assert np.isnan(ema(np.array([np.nan, 2.0]), 0.9)[0])
    assert auto_smoothing(10) == 0.0 and auto_smoothing(100) == pytest.approx(0.8)
    assert auto_smoothing(10**6) == 0.99


# -- training figures --------------------------------------------------------------------------
def test_training_plots_overlay_runs_and_skip_what_was_not_logged(
    data: PlotData, tmp_path: Path
) -> None:
    both = write_training_plots([data.real_run, data.synthetic_run], tmp_path / "both")
    assert [p.name for p in both] == TRAINING_PNGS
    for path in both:
        assert_real_image(path)
    # the tiny run logged no evaluation: no win-rate figure, the others still drawn
    alone = write_training_plots([data.real_run], tmp_path / "alone", smoothing=0.5)
    assert [p.name for p in alone] == TRAINING_PNGS[1:]
    assert not (tmp_path / "alone" / "win_rate.png").exists()
    for path in alone:
        assert_real_image(path)


# -- tournament figures ------------------------------------------------------------------------
def test_config_is_rebuilt_from_the_database_and_reports_agree(data: PlotData) -> None:
    cfg = data.tournament_config
    with ReadOnlyResults(data.db) as db:
        rebuilt = config_from_db(db)
        assert sorted(rebuilt.agents) == sorted(cfg.agents)
        assert (rebuilt.seed, rebuilt.max_hands, rebuilt.matches) == (0, 40, 3)
        assert rebuilt.effective_rules == cfg.effective_rules
        real = build_report(db, cfg)
        data_bt = bids_and_tricks(db, rebuilt)
        games = pick_games(db, rebuilt, 4)
    _, report = load_report(data.db)
    for a, b in zip(report["leaderboard"], real["leaderboard"], strict=True):
        assert (a["agent"], a["win_rate"], a["games"], a["elo"]) == (
            b["agent"], b["win_rate"], b["games"], b["elo"],
        )  # fmt: skip
    # every agent bid in every played hand it sat in; bids and tricks are in range
    assert set(data_bt) == set(cfg.agents)
    for bt in data_bt.values():
        assert len(bt) > 0 and (bt[:, 1] >= 0).all() and (bt[:, 1] <= 13).all()
    # both halves of a duplicate match first
    assert games[0][:3] == games[1][:3] and {games[0][3], games[1][3]} == {0, 1}


def test_tournament_plots_are_written_and_the_database_is_left_unchanged(
    data: PlotData, tmp_path: Path
) -> None:
    before = hashlib.sha256(data.db.read_bytes()).hexdigest()
    paths = write_tournament_plots(data.db, tmp_path / "plots")
    assert [p.name for p in paths] == TOURNAMENT_PNGS
    for path in paths:
        assert_real_image(path)
    assert hashlib.sha256(data.db.read_bytes()).hexdigest() == before


def test_missing_or_foreign_databases_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FourHundredError, match="does not exist"):
        write_tournament_plots(tmp_path / "missing.sqlite", tmp_path / "out")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all, just some bytes" * 100)
    with pytest.raises(FourHundredError, match="not a fourhundred tournament database"):
        write_tournament_plots(junk, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- the command line --------------------------------------------------------------------------
def test_plot_command_dispatches_on_its_arguments(
    data: PlotData, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["plot", str(data.db), "--out", str(tmp_path / "t")]) == 0
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == sorted(TOURNAMENT_PNGS)
    runs = [str(data.real_run), str(data.synthetic_run)]
    assert cli_main(["plot", *runs, "--out", str(tmp_path / "r")]) == 0
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == sorted(TRAINING_PNGS)
    assert cli_main(["plot", str(data.real_run), "--out", str(tmp_path / "one")]) == 0
    out = capsys.readouterr().out
    assert "no win_rate.png" in out
    assert cli_main(["plot", str(data.db), *runs]) == 2
    assert cli_main(["plot", str(tmp_path / "nothing_here")]) == 2
    assert cli_main(["plot", *runs, "--smoothing", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "expected either one results database" in err and "does not exist" in err
    assert "expected a number in [0, 1)" in err
