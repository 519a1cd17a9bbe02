"""The notebooks run top to bottom on small data the tests make, and are stored stripped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pytest.importorskip("torch")

from tests.plot_data import PlotData, plot_data  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> PlotData:
    return plot_data(tmp_path_factory)


def run_notebook(path: Path) -> nbformat.NotebookNode:
    """Execute a copy of the notebook in a python3 kernel running this interpreter."""
    from jupyter_client.manager import KernelManager

    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="python3")
    # jupyter_client starts "python" kernels with sys.executable: the venv with our packages
    assert Path(km.format_kernel_cmd()[0]) == Path(sys.executable), km.format_kernel_cmd()
    client = nbclient.NotebookClient(
        nb, km=km, timeout=120, resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()
    return nb


def outputs(nb: nbformat.NotebookNode) -> tuple[list[str], int]:
    """(texts of all outputs, number of PNG images displayed)."""
    texts, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", "".join(out.get("traceback", []))
            texts.append(out.get("text", "") + out.get("data", {}).get("text/markdown", ""))
            images += "image/png" in out.get("data", {})
    return texts, images


@pytest.mark.parametrize("name", ["learning_curves", "tournament_report", "bid_analysis"])
def test_notebooks_are_stored_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_learning_curves_notebook_runs_on_two_runs(
    data: PlotData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOURHUNDRED_RUNS", f"{data.real_run},{data.synthetic_run}")
    monkeypatch.setenv("FOURHUNDRED_PLOTS", str(tmp_path / "curves"))
    nb = run_notebook(NOTEBOOKS / "learning_curves.ipynb")
    texts, images = outputs(nb)
    assert images == 4
    assert any("tiny (seed 1)" in t and "synthetic (seed 0)" in t for t in texts)
    assert sorted(p.name for p in (tmp_path / "curves").iterdir()) == sorted(
        ["win_rate.png", "points_per_hand.png", "bid_success.png", "losses.png"]
    )


def test_tournament_notebook_runs_on_a_tournament(
    data: PlotData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOURHUNDRED_DB", str(data.db))
    monkeypatch.setenv("FOURHUNDRED_PLOTS", str(tmp_path / "report"))
    nb = run_notebook(NOTEBOOKS / "tournament_report.ipynb")
    texts, images = outputs(nb)
    assert images == 6
    joined = "\n".join(texts)
    assert "| 1 | heuristic |" in joined  # the leaderboard table, best first
    assert "Pairwise win rate, row against column" in joined  # the text report
    assert len(list((tmp_path / "report").glob("*.png"))) == 6


def test_bid_analysis_notebook_shows_tables_and_plots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOURHUNDRED_WORLDS", "4")
    monkeypatch.setenv("FOURHUNDRED_PLOTS", str(tmp_path / "bids"))
    nb = run_notebook(NOTEBOOKS / "bid_analysis.ipynb")
    texts, images = outputs(nb)
    assert images == 2
    joined = "\n".join(texts)
    assert "<- bids" in joined and "value head" in joined
    assert sorted(p.name for p in (tmp_path / "bids").iterdir()) == [
        "seeded_hand.png",
        "text_hand.png",
    ]
