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
    "fourhundred_agents": 2,
    "fourhundred_tournament": 3,
    "fourhundred_train": 3,
    "fourhundred_cli": 4,
    "fourhundred_web": 4,
}
# train may use the tournament (its evaluations play tournaments), the command line starts
# the web server; nothing else sideways
SIDEWAYS = {("fourhundred_train", "fourhundred_tournament"), ("fourhundred_cli", "fourhundred_web")}
# the folders that install under another name (pyproject's package-dir)
FOLDERS = {
    "agents": "fourhundred_agents",
    "tournament": "fourhundred_tournament",
    "train": "fourhundred_train",
}


def _package_of(module: str) -> str | None:
    for pkg in sorted(LAYERS, key=len, reverse=True):
        if module == pkg or module.startswith(pkg + "."):
            return pkg
    return None


_MODULE_TEXT = re.compile(
    r"^(fourhundred_agents|fourhundred_train|fourhundred_tournament|fourhundred_cli"
    r"|fourhundred_web)(\.\w+)+$"
)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, of import_module("...") calls, and of any
    string that names a module of another package ("fourhundred_agents.cli": imported by name
    later)."""
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


def _module_name(path: Path) -> str:
    """The import name of a source file of the repository (folders renamed by package-dir)."""
    top, *rest = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((FOLDERS.get(top, top), *rest))


def _source_files() -> list[tuple[str, Path]]:
    files = []
    for folder in ("fourhundred_env", "agents", "tournament", "train", "fourhundred_cli",
                   "fourhundred_web"):  # fmt: skip
        for path in sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).is_dir() else []:
            module = _module_name(path)
            files.append((_package_of(module) or module.split(".")[0], path))
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
        if pkg not in ("fourhundred_train", "fourhundred_cli")
        for line, module in _imports(path)
        if module == "fourhundred_train" or module.startswith("fourhundred_train.")
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
         {"torch", "gymnasium", "pettingzoo", "fourhundred_agents", "fourhundred_train", "fourhundred_tournament"}),
        ("import fourhundred_env.observation, fourhundred_env.registry, fourhundred_env.configs",
         {"torch", "gymnasium", "fourhundred_agents", "fourhundred_train", "fourhundred_tournament"}),
        ("import fourhundred_env.envs",
         {"torch", "pettingzoo", "fourhundred_agents", "fourhundred_train", "fourhundred_tournament"}),
        ("import gymnasium as gym, fourhundred_env.envs; "
         "gym.make('FourHundred-v0', render_mode='rgb_array').reset(seed=0)",
         {"torch", "PIL", "matplotlib", "stable_baselines3", "fourhundred_train", "fourhundred_tournament"}),
        ("import fourhundred_env.envs.sb3", {"fourhundred_agents", "fourhundred_train", "fourhundred_tournament"}),
        ("from fourhundred_agents import make_agent; [make_agent(s) for s in "
         "('random', 'heuristic', 'heuristic-v1', 'minbid', 'pimc')]",
         {"torch", "gymnasium", "fourhundred_train", "fourhundred_tournament"}),
        ("import fourhundred_cli",
         {"torch", "gymnasium", "fourhundred_train", "starlette", "uvicorn", "ray"}),
        ("import fourhundred_tournament.tournament, fourhundred_tournament.report", {"torch", "fourhundred_train", "ray"}),
        ("from fourhundred_web.app import create_app; create_app()",
         {"torch", "gymnasium", "fourhundred_train", "fourhundred_cli"}),
    ],
    ids=["core", "core-modules", "envs", "envs-rendering-lazily", "sb3-adapter",
         "agents-without-neural", "cli", "tournament-without-ray", "web"],
)  # fmt: skip
def test_each_layer_loads_only_what_it_may(code: str, forbidden: set[str]) -> None:
    assert not _loaded(code) & forbidden


# the wings of agents/, lowest first: a module imports only from its own wing or a lower one
AGENT_WINGS = {
    "compiled": 0, "draws": 0, "hooks": 0,
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
    """protocol, draws, the hooks and the compiled-policy data know no bot; scripted bots
    and value estimates know the protocol; neural bots the scripted ones; search the neural
    ones."""
    wrong = []
    for path in sorted((ROOT / "agents").rglob("*.py")):
        module = _module_name(path)
        mine = _wing(module) if module != "fourhundred_agents.__init__" else "__init__"
        for line, target in _imports(path):
            if not target.startswith("fourhundred_agents."):
                continue
            theirs = _wing(target)
            if theirs != mine and AGENT_WINGS[theirs] >= AGENT_WINGS[mine]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({mine}) imports {target}")
    assert not wrong, "imports that run up a wing of agents/:\n" + "\n".join(wrong)


def test_the_old_import_names_are_gone() -> None:
    """Nothing is installed under the generic names a user's own project uses (agents, train,
    tournament): from a folder without them, they do not import."""
    probe = (
        "import importlib.util, sys\n"
        "print([n for n in ('agents', 'train', 'tournament') if importlib.util.find_spec(n)])"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run([sys.executable, "-c", probe], cwd=folder, capture_output=True,
                             text=True, timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == "[]"
