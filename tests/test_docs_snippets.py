"""Every shell and Python snippet of README.md and the quickstart runs as written.

Python blocks run in a fresh interpreter; each shell line runs from a scratch folder that
links the repository's `.venv`, `examples`, `configs` and `agents`, so `.venv/bin/...` and the
example paths work as they do from the repository and the outputs (runs/...) stay out of it.
A few lines are not run: `make` and `pip` (the set-up this suite runs under), and commands
that do not end by themselves (a server, a terminal game, TensorBoard) or take hours; those
are parsed by the command line instead, so that a flag or a name that does not exist fails.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = ("README.md", "docs/quickstart.md")
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
SETUP = ("make ", "pip ")
# not run: they wait for a person or a browser, or take minutes to hours; parsed instead
PARSED_ONLY = (
    ".venv/bin/fourhundred serve",
    ".venv/bin/fourhundred play",
    ".venv/bin/fourhundred train configs/selfplay.yaml",
    ".venv/bin/fourhundred analyse",  # minutes of search: tests/test_analysis.py runs it
)
TIMEOUT = 600


def _blocks(lang: str) -> list[tuple[str, str]]:
    out = []
    for name in FILES:
        for m in _BLOCK.finditer((ROOT / name).read_text()):
            if m.group(1) == lang:
                out.append((name, m.group(2)))
    return out


def _commands() -> list[tuple[str, str]]:
    out = []
    for name, block in _blocks("bash"):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()  # a comment after two spaces
            if line and not line.startswith("#"):
                out.append((name, line))
    return out


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("snippets")
    for name in (".venv", "examples", "configs", "agents"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def test_the_snippets_are_found() -> None:
    assert len(_blocks("python")) >= 4
    assert len(_commands()) >= 10


@pytest.mark.parametrize("where, code", _blocks("python"), ids=lambda x: x if x in FILES else None)
def test_python_snippet_runs(where: str, code: str, scratch: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=scratch, capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert result.returncode == 0, f"{where}:\n{code}\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("where, line", _commands(), ids=lambda x: x if x in FILES else None)
def test_shell_snippet_runs(where: str, line: str, scratch: Path) -> None:
    if line.startswith(SETUP):
        assert line.split()[0] in ("make", "pip")
        return
    if line.startswith(".venv/bin/tensorboard"):
        assert (ROOT / ".venv" / "bin" / "tensorboard").is_file()
        return
    argv = shlex.split(line)
    if line.startswith(PARSED_ONLY):
        from fourhundred_cli import parse_args
        from fourhundred_env.configs import config_path

        args = parse_args(argv[1:])
        if getattr(args, "config", None):
            assert config_path(ROOT / args.config if "/" in args.config else args.config)
        return
    assert argv[0].startswith(".venv/bin/"), f"{where}: {line!r} is not a .venv/bin/ command"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        argv, cwd=scratch, capture_output=True, text=True, timeout=TIMEOUT, env=env
    )
    assert result.returncode == 0, (
        f"{where}: {line}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )
