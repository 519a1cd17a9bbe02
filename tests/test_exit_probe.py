"""experiments/exit_probe.py: it reads a run's label chunks, fits a checkpoint's card network on
the first N positions and prints the same table for the same seed; bad input is one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from fourhundred_env import Engine
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.observation import OBS_FIELDS, encode_observation
from fourhundred_env.view import seat_view

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "agents/pretrained/selfplay.pt")


def _probe():
    spec = importlib.util.spec_from_file_location("exit_probe", ROOT / "experiments/exit_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def labels(tmp_path_factory) -> Path:
    """A folder of two label chunks: 48 card positions of selfplay.pt's matches, every legal
    card given a made-up value in each half of the worlds."""
    from fourhundred_agents.neural.checkpoint import load_policy
    from fourhundred_train.exit import load_exit_config, record_positions

    config = load_exit_config("exit", ["positions=48", "bid_share=0", "bidder=", "num_tables=8",
                                       "progress=false", "distill=0"])  # fmt: skip
    engine = Engine()
    net, _, _ = load_policy(MODEL)
    view = seat_view(engine, record_positions(engine, net, config, seed=5))
    obs, legal = encode_observation(view, dtype=np.int8), view.legal_mask
    rng = np.random.default_rng(0)
    values = np.where(legal, rng.random((2, *legal.shape)), -np.inf).astype(np.float32)
    folder = tmp_path_factory.mktemp("labels_0")
    for i, rows in enumerate((slice(0, 24), slice(24, 48))):
        np.savez(folder / f"chunk_{i:05d}.npz", obs=obs[rows], legal=legal[rows],
                 values=values[:, rows])  # fmt: skip
    return folder


def test_fits_and_prints_the_same_table_twice(labels, capsys):
    probe = _probe()
    args = [str(labels), "--model", MODEL, "--sizes", "16,40", "--epochs", "1", "--threads", "1"]
    assert probe.main(args) == 0
    first = capsys.readouterr().out
    assert "48 card positions of tricks 1-13: 43 to fit, 5 held out" in first
    rows = [line for line in first.splitlines() if line.startswith("| 16 |")]
    rows += [line for line in first.splitlines() if line.startswith("| 40 |")]
    assert len(rows) == 2
    assert probe.main(args) == 0
    again = capsys.readouterr().out
    strip = [line.rsplit("|", 2)[0] for line in first.splitlines() if line.startswith("| ")]
    assert strip == [line.rsplit("|", 2)[0] for line in again.splitlines() if line.startswith("| ")]


def test_keeps_only_the_tricks_asked_for(labels, capsys):
    probe = _probe()
    data = probe.read_labels([str(labels)])
    assert data["obs"].shape[0] == 48 and data["values"].shape == (2, 48, 66)
    assert not data["legal"][:, NUM_CARDS:].any()  # card positions only (bid_share 0)
    tricks = data["obs"][:, OBS_FIELDS["num_tricks"].start] + 1
    count = int((tricks <= 6).sum())
    code = probe.main([str(labels), "--model", MODEL, "--tricks", "1-6", "--sizes", "1",
                       "--epochs", "1", "--threads", "1"])  # fmt: skip
    out = capsys.readouterr()
    if count >= 20:
        assert code == 0 and f"{count} card positions of tricks 1-6:" in out.out
    else:
        assert code == 2 and f"{count} card positions of tricks 1-6 in the labels" in out.err


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("empty", [], "holds no labels: expected a folder of chunk_NNNNN.npz files"),
        ("damaged", [], "is not a chunk of labels"),
        (
            "good",
            ["--sizes", "1000"],
            "--sizes asks for 1000 positions fitted: expected at most 43",
        ),
    ],
)
def test_bad_input_is_one_line(labels, tmp_path, capsys, setup, args, message):
    probe = _probe()
    folder = labels
    if setup == "empty":
        folder = tmp_path
    elif setup == "damaged":
        (tmp_path / "chunk_00000.npz").write_bytes(b"not a zip archive")
        folder = tmp_path
    assert probe.main([str(folder), "--model", MODEL, "--threads", "1", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_bad_trick_range_is_refused(labels, capsys):
    with pytest.raises(SystemExit):
        _probe().main([str(labels), "--tricks", "9-3"])
    assert "expected A-B with 1 <= A <= B <= 13" in capsys.readouterr().err
