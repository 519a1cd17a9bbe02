"""Tests that need an optional extra: the modules it brings, looked up (not imported), and a
skip that becomes a failure where CI requires the test (``FOURHUNDRED_REQUIRE_*=1``)."""

from __future__ import annotations

import importlib.util
import os

import pytest


def missing(modules: tuple[str, ...], extra: str) -> str | None:
    """Why the test cannot run (the first of `modules` not installed, and the extra that brings
    it), or None."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a dotted name whose parent is missing
            found = False
        if not found:
            return f"{module} is not installed (pip install -e '.[{extra}]')"
    return None


def require(why: str | None, env: str, what: str, module: bool = False) -> None:
    """Nothing if `why` is None; else skip, or fail when the environment variable `env` is 1.
    `module`: called at a test module's top, before it imports the extra (the whole module is
    skipped, or fails to collect)."""
    if why is None:
        return
    if os.environ.get(env) == "1":
        pytest.fail(f"{what} is required but cannot run: {why}", pytrace=False)
    pytest.skip(f"{what} skipped: {why}", allow_module_level=module)
