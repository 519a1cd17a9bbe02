"""The bundled configs are package data: found by name from any directory, paths still
accepted, and the packaging lists every package of the tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fourhundred_env.configs import bundled_configs, config_path
from fourhundred_env.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_every_file_in_configs_is_bundled_under_its_name() -> None:
    on_disk = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert sorted(bundled_configs()) == on_disk
    assert sorted(bundled_configs("tournament")) == ["acceptance", "default", "pagat"]
    for name, path in bundled_configs().items():
        assert path.read_bytes() == (ROOT / "configs" / f"{name}.yaml").read_bytes()


@pytest.mark.parametrize(
    ("given", "kind", "expected"),
    [
        ("tiny", None, "tiny.yaml"),
        ("tiny.yaml", None, "tiny.yaml"),
        ("configs/tiny.yaml", None, "tiny.yaml"),
        ("default", "tournament", "tournament_default.yaml"),
        ("tournament_pagat", "tournament", "tournament_pagat.yaml"),
    ],
)
def test_names_resolve_to_the_bundled_files(
    given: str, kind: str | None, expected: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the repository: no configs/ here
    assert config_path(given, kind).name == expected


def test_a_path_is_a_path_and_wins_over_a_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").write_text("name: mine\n")
    assert config_path("tiny") == Path("tiny")
    with pytest.raises(ConfigError, match=r"'nope'.*one of \['acceptance', 'default', 'pagat'\]"):
        config_path("nope", "tournament")
    with pytest.raises(ConfigError, match="no such file"):
        config_path("elsewhere/tiny.yaml")


def test_the_cli_finds_configs_by_name_from_another_directory(tmp_path: Path) -> None:
    """`fourhundred train tiny` and `fourhundred tournament --config default` from a folder
    with no configs/ in it; a bundled checkpoint written as the configs write it
    (agents/pretrained/...) is found there too."""
    cli = [sys.executable, "-m", "fourhundred_cli"]
    train = subprocess.run(
        [*cli, "train", "tiny", "total_decisions=1024", "runs_dir=runs", "--no-eval"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr[-2000:]
    assert list((tmp_path / "runs").glob("tiny__1__*/policy.pt"))
    tournament = subprocess.run(
        [*cli, "tournament", "--config", "default", "--agents", "random",
         "neural:agents/pretrained/selfplay.pt", "--matches", "1", "--max-hands", "3",
         "--workers", "1", "--overwrite", "--out", "t", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert tournament.returncode == 0, tournament.stderr[-2000:]
    assert "neural:agents/pretrained/selfplay.pt" in tournament.stdout
    assert (tmp_path / "t" / "report.json").is_file()


def test_pyproject_lists_every_package_of_the_tree() -> None:
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        "agents": "fourhundred_agents",
        "tournament": "fourhundred_tournament",
        "train": "fourhundred_train",
    }  # pyproject's package-dir
    found = {
        ".".join((folders.get(parts[0], parts[0]), *parts[1:]))
        for top in ("fourhundred_env", *folders, "fourhundred_cli", "fourhundred_web")
        for p in (ROOT / top).rglob("__init__.py")
        for parts in [p.parent.relative_to(ROOT).parts]
    }
    assert listed == found | {"fourhundred_env.bundled_configs"}
