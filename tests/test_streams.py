"""Every random stream has a salt of its own, defined once (fourhundred_env/streams.py)."""

from __future__ import annotations

import re
from pathlib import Path

from fourhundred_env.streams import all_salts

ROOT = Path(__file__).resolve().parents[1]


def test_no_two_salts_are_equal() -> None:
    salts = all_salts()
    by_value: dict[int, list[str]] = {}
    for name, value in salts.items():
        by_value.setdefault(value, []).append(name)
    assert len(salts) >= 20
    assert not [names for names in by_value.values() if len(names) > 1]


def test_salts_are_defined_in_streams_only() -> None:
    """No module outside fourhundred_env/streams.py assigns a salt of its own."""
    salt = re.compile(r"^\s*_?[A-Z_]*SALTS? = ", re.M)
    found = [
        str(path.relative_to(ROOT))
        for pkg in ("fourhundred_env", "agents", "tournament", "train", "fourhundred_web")
        for path in (ROOT / pkg).rglob("*.py")
        if path.name != "streams.py" and salt.search(path.read_text())
    ]
    assert not found
