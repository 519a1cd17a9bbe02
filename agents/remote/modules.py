"""Modules that register more agents (``--agent-module``): by module name or by file path.

``--agent-module my_bots`` imports ``my_bots`` as Python would from the current folder (the
``fourhundred`` command, an installed script, does not have that folder on its path, so it is
added); ``--agent-module path/to/my_bots.py`` loads that file from any folder. The module's
top level registers its agents (`fourhundred_agents.register_agent`). The same list is imported again in
every worker process and in the process of an isolated bot, so a relative path is resolved
against the current folder once, here, and stays valid there.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from fourhundred_env.errors import ConfigError

__all__ = ["import_agent_modules", "resolve_module"]


def _is_path(name: str) -> bool:
    return name.endswith(".py") or "/" in name or os.sep in name


def resolve_module(name: str) -> str:
    """`name` with a file path made absolute (a module name is kept as it is)."""
    return str(Path(name).resolve()) if _is_path(name) else name


def import_agent_modules(modules: Sequence[str]) -> None:
    """Import each module (a name, or the path of a ``.py`` file); one that cannot be found
    or fails to import is a ConfigError saying what to do."""
    for name in modules:
        if _is_path(name):
            _load_file(name)
        else:
            _import_name(name)


def _import_name(name: str) -> None:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)  # as `python -m` would: modules of the current folder
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is not None and name.split(".")[0] != e.name.split(".")[0]:
            raise _failed(name, e) from None  # the module was found; something it imports is not
        raise ConfigError(
            f"agent module {name!r} cannot be found from {cwd!r}: expected a module in the "
            f"current folder, an installed one, or the path of its file (--agent-module "
            f"path/to/{name.split('.')[-1]}.py)"
        ) from None
    except Exception as e:
        raise _failed(name, e) from None


def _load_file(name: str) -> None:
    path = Path(name).resolve()
    if not path.is_file():
        raise ConfigError(
            f"agent module file {name!r} does not exist: expected the path of a .py file that "
            "registers agents"
        )
    module_name = path.stem
    existing = sys.modules.get(module_name)
    if existing is not None and getattr(existing, "__file__", None) == str(path):
        return  # loaded already (a worker loads the list once per job)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"agent module file {name!r} cannot be loaded: expected a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))  # its own imports of files beside it
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[module_name]
        raise _failed(name, e) from None


def _failed(name: str, e: Exception) -> ConfigError:
    return ConfigError(
        f"agent module {name!r} failed to import ({type(e).__name__}: {e}): expected a module "
        "that imports cleanly and registers agents"
    )
