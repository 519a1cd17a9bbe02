"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

RESULTS_AGENTS = ("heuristic", "minbid", "random")


@pytest.fixture(autouse=True)
def _cpu_only(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite trains on the CPU, where a seed gives a run bit for bit, even on a machine
    with a GPU: there the trainers' default device, ``auto``, would be CUDA. Every test finds
    the CPU alone (agents/neural/device.py's devices_present), but those that ask for the
    fixture ``real_devices`` (tests/test_device.py)."""
    if "real_devices" not in request.fixturenames:
        from fourhundred_agents.neural import device

        monkeypatch.setattr(device, "devices_present", lambda: ["cpu"])


@pytest.fixture
def real_devices() -> list[str]:
    """The devices this machine has, untouched by ``_cpu_only``: cpu, then cuda:0..."""
    from fourhundred_agents.neural.device import devices_present

    return devices_present()


@pytest.fixture(scope="session")
def results_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished tournament (3 replayable bots, 2 duplicate matches per pairing, one
    match per job so that every match's agents are seeded differently): its results file.
    Tests copy it before changing it."""
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.tournament import run_tournament

    path = tmp_path_factory.mktemp("results") / "results.sqlite"
    cfg = load_config(
        None,
        {
            "agents": list(RESULTS_AGENTS), "matches": 2, "seed": 7, "workers": 1,
            "chunk_matches": 1, "table_batch": 4, "db": str(path), "progress": False,
            "bootstrap": 0,
        },
    )  # fmt: skip
    run_tournament(cfg)
    return path


@pytest.fixture(scope="session")
def ray_instance():
    """One local Ray instance (2 CPUs) shared by every test that uses Ray: it takes seconds
    to start. Skips without Ray (the `ray` extra), or fails with FOURHUNDRED_REQUIRE_RAY=1
    (CI). Yields the ray module; the instance is stopped at the end of the session."""

    try:
        import ray
    except ImportError:
        if os.environ.get("FOURHUNDRED_REQUIRE_RAY") == "1":
            raise
        pytest.skip("Ray is not installed (the ray extra)")
    import logging

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per browser test module (tests/browser.py)."""
    from tests.web import chromium

    with chromium() as b:
        yield b
