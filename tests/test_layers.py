"""Imports point one way: rules core <- envs <- agents <- tournament / train <- CLI / web.

Read from the source (every import statement, lazy ones inside functions included, and
``import_module("...")`` calls) and checked by importing in a fresh interpreter: what each
layer loads into ``sys.modules``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# layer of each package (dotted prefix) and the layers it may import from
LAYERS = {
    "fourhundred_env.envs": 1,
    "fourhundred_env": 0,
    "agents": 2,
    "tournament": 3,
    "train": 3,
    "fourhundred_cli": 4,
    "fourhundred_web": 4,
}
# train may use the tournament (its evaluations play tournaments), the command line starts
# the web server; nothing else sideways
SIDEWAYS = {("train", "tournament"), ("fourhundred_cli", "fourhundred_web")}


def _package_of(module: str) -> str | None:
    for pkg in sorted(LAYERS, key=len, reverse=True):
        if module == pkg or module.startswith(pkg + "."):
            return pkg
    return None


_MODULE_TEXT = re.compile(r"^(agents|train|tournament|fourhundred_cli|fourhundred_web)(\.\w+)+$")


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, of import_module("...") calls, and of any
    string that names a module of another package ("agents.cli": imported by name later)."""
    tree = ast.parse(path.read_text())
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append((node.lineno, node.args[0].value))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_TEXT.match(node.value)
        ):
            out.append((node.lineno, node.value))
    return out


def _source_files() -> list[tuple[str, Path]]:
    files = []
    for pkg in ("fourhundred_env", "agents", "tournament", "train", "fourhundred_cli",
                "fourhundred_web"):  # fmt: skip
        for path in sorted((ROOT / pkg).rglob("*.py")) if (ROOT / pkg).is_dir() else []:
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            files.append((_package_of(module) or pkg, path))
    return files


def test_no_import_runs_up_a_layer() -> None:
    wrong = []
    for pkg, path in _source_files():
        for line, module in _imports(path):
            target = _package_of(module)
            if target is None or target == pkg:
                continue
            if LAYERS[target] > LAYERS[pkg] or (
                LAYERS[target] == LAYERS[pkg] and (pkg, target) not in SIDEWAYS
            ):
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({pkg}) imports {module}")
    assert not wrong, "imports that run up a layer:\n" + "\n".join(wrong)


def test_nothing_outside_train_and_the_cli_imports_train() -> None:
    users = {
        f"{path.relative_to(ROOT)}:{line}"
        for pkg, path in _source_files()
        if pkg not in ("train", "fourhundred_cli")
        for line, module in _imports(path)
        if module == "train" or module.startswith("train.")
    }
    assert not users


def _loaded(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "code, forbidden",
    [
        ("import fourhundred_env; from fourhundred_env import Table; Table().deal(seed=1)",
         {"torch", "gymnasium", "pettingzoo", "agents", "train", "tournament"}),
        ("import fourhundred_env.observation, fourhundred_env.registry, fourhundred_env.configs",
         {"torch", "gymnasium", "agents", "train", "tournament"}),
        ("import fourhundred_env.envs",
         {"torch", "pettingzoo", "agents", "train", "tournament"}),
        ("import gymnasium as gym, fourhundred_env.envs; "
         "gym.make('FourHundred-v0', render_mode='rgb_array').reset(seed=0)",
         {"torch", "PIL", "matplotlib", "stable_baselines3", "train", "tournament"}),
        ("import fourhundred_env.envs.sb3", {"agents", "train", "tournament"}),
        ("from agents import make_agent; [make_agent(s) for s in "
         "('random', 'heuristic', 'heuristic-v1', 'minbid', 'pimc')]",
         {"torch", "gymnasium", "train", "tournament"}),
        ("import fourhundred_cli",
         {"torch", "gymnasium", "train", "starlette", "uvicorn", "ray"}),
        ("import tournament.parallel, tournament.report", {"torch", "train", "ray"}),
        ("from fourhundred_web.app import create_app; create_app()",
         {"torch", "gymnasium", "train", "fourhundred_cli"}),
    ],
    ids=["core", "core-modules", "envs", "envs-rendering-lazily", "sb3-adapter",
         "agents-without-neural", "cli", "tournament-without-ray", "web"],
)  # fmt: skip
def test_each_layer_loads_only_what_it_may(code: str, forbidden: set[str]) -> None:
    assert not _loaded(code) & forbidden


# the wings of agents/, lowest first: a module imports only from its own wing or a lower one
AGENT_WINGS = {
    "compiled": 0, "draws": 0, "_moved": 0,
    "protocol": 1,
    "scripted": 2, "value": 2, "remote": 2, "human": 2,
    "neural": 3,
    "search": 4, "compose": 4, "libraries": 4,
    "bid_analysis": 5, "registry": 5, "analysis": 5,
    "__init__": 6,
}  # fmt: skip


def _wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_agent_wings_import_downwards_only() -> None:
    """protocol, draws and the compiled-policy data know no bot; scripted bots and value
    estimates know the protocol; neural bots the scripted ones; search the neural ones.
    (agents/_moved.py, the old paths of the flat layout, names every wing as text.)"""
    wrong = []
    for path in sorted((ROOT / "agents").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        mine = _wing(module) if module != "agents.__init__" else "__init__"
        if mine == "_moved":
            continue
        for line, target in _imports(path):
            if not target.startswith("agents."):
                continue
            theirs = _wing(target)
            if theirs != mine and AGENT_WINGS[theirs] >= AGENT_WINGS[mine]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({mine}) imports {target}")
    assert not wrong, "imports that run up a wing of agents/:\n" + "\n".join(wrong)


def test_old_agent_paths_still_import_with_a_warning() -> None:
    """The flat layout's modules (agents.heuristic, agents.search, ...) import for one
    release, giving the new modules' objects and a DeprecationWarning."""
    import importlib

    from agents import _moved
    from agents.scripted.heuristic import HeuristicAgent
    from agents.search.agent import SearchAgent

    for old, targets in _moved.MOVED.items():
        sys.modules.pop(old, None)
        _moved._WARNED.discard(old)
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {targets[0]}"):
            module = importlib.import_module(old)
        for target in targets:
            new = importlib.import_module(target)
            names = [n for n in vars(new) if not n.startswith("__")]
            assert all(getattr(module, n) is getattr(new, n) for n in names), old
    assert importlib.import_module("agents.heuristic").HeuristicAgent is HeuristicAgent
    _moved._WARNED.discard("agents.search.SearchAgent")
    with pytest.warns(DeprecationWarning, match="agents.search.agent.SearchAgent"):
        from agents.search import SearchAgent as old_search
    assert old_search is SearchAgent
