"""The distribution as a user gets it: ``python -m build`` makes the sdist and the wheel (the
wheel built from the sdist, so the sdist is complete), ``twine check`` passes, and the wheel,
installed (not editable) into a fresh virtual environment and run from a folder outside the
repository, plays a tournament with the bundled networks named as the README names them, finds
the bundled configs by name, trains, and serves the web table. Everything it installs is named
for the project.

Needs the ``dev`` extra's build and twine and a few minutes (a virtual environment of its own,
torch's CPU wheel first, as the Makefile installs it); skipped without them unless
FOURHUNDRED_REQUIRE_WHEEL=1 (`.ci/run`), which turns the skip into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.requires import missing, require
from tests.web import serve_command

ROOT = Path(__file__).resolve().parents[1]
TORCH = os.environ.get("FOURHUNDRED_TORCH_WHEEL", "torch==2.13.0")  # the Makefile's TORCH_WHEEL
TIMEOUT = 900
OURS = ("fourhundred_", "fourhundred-")  # the import names and the dist-info folder


def _run(argv: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                         **kw)  # type: ignore[call-overload]  # fmt: skip
    assert out.returncode == 0, (
        f"{' '.join(argv[:4])}...:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    )
    return out


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(missing(("build", "twine"), "dev"), "FOURHUNDRED_REQUIRE_WHEEL", "the wheel test")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], ROOT)
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("fourhundred-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and its train and web extras installed."""
    folder = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", str(folder)], folder)
    pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run([*pip, TORCH], folder)  # the CPU build first, as the Makefile does
    _run([*pip, f"{wheel}[train,web]"], folder)
    return folder


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder with nothing of the repository in it."""
    return tmp_path_factory.mktemp("elsewhere")


def test_twine_check_passes(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert any(f.endswith(".tar.gz") for f in files) and any(f.endswith(".whl") for f in files)
    out = _run([sys.executable, "-m", "twine", "check", "--strict", *files], dist)
    assert out.stdout.count("PASSED") == len(files)


def test_the_wheel_installs_nothing_outside_our_names(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
        metadata = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(metadata).decode()
        names = z.namelist()
    assert tops and all(top.startswith(OURS) for top in tops), sorted(tops)
    assert "Classifier:" in text and "License-Expression: MIT" in text
    assert "fourhundred_agents/pretrained/exit.pt" in names
    assert "fourhundred_env/bundled_configs/tournament_default.yaml" in names
    assert "fourhundred_web/static/index.html" in names
    assert "fourhundred_web/routes/tables.py" in names  # a subpackage listed in pyproject


def test_pip_show_lists_only_our_names(venv: Path) -> None:
    out = _run([str(venv / "bin" / "python"), "-m", "pip", "show", "-f", "fourhundred"], venv)
    files = out.stdout.split("Files:", 1)[1].split()
    tops = {f.split("/")[0] for f in files if not f.startswith("..")}  # ../../../bin/fourhundred
    assert tops and all(top.startswith(OURS) for top in tops), sorted(tops)


def test_a_tournament_of_the_bundled_networks_from_outside(venv: Path, outside: Path) -> None:
    specs = [
        "heuristic-v1",
        "neural:agents/pretrained/exit.pt",
        "neural:agents/pretrained/selfplay.pt",
        "compose:bid=neural-bid:agents/pretrained/bidder.pt,play=heuristic-v1",
    ]
    out = _run(
        [str(venv / "bin" / "fourhundred"), "tournament", "--config", "default", "--agents",
         *specs, "--matches", "1", "--max-hands", "3", "--workers", "2", "--deals", "public",
         "--out", "t", "--overwrite", "--no-progress"],
        outside,
    )  # fmt: skip
    for spec in specs[:3]:
        assert spec in out.stdout
    assert json.loads((outside / "t" / "report.json").read_text())


def test_train_finds_a_bundled_config_by_name(venv: Path, outside: Path) -> None:
    _run(
        [str(venv / "bin" / "fourhundred"), "train", "tiny", "total_decisions=1024",
         "runs_dir=runs", "--no-eval"],
        outside,
    )  # fmt: skip
    assert list((outside / "runs").glob("tiny__1__*/policy.pt"))


def test_serve_answers_its_page(venv: Path, outside: Path) -> None:
    paths = ["/", "/static/play.js", "/api/options"]
    bodies = serve_command([str(venv / "bin" / "fourhundred"), "serve"], outside, paths)
    assert b"<html" in bodies["/"].lower() and bodies["/static/play.js"]
    assert b"exit.pt" in bodies["/api/options"]  # the bundled networks, found as package data
