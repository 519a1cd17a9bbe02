"""The import paths of the flat ``agents/`` layout, kept for one release.

``import agents.heuristic`` (and every other module that moved into a wing) still works and
gives the module's new home, with a :class:`DeprecationWarning` naming it. A path whose
module was split (``agents.base``, ``agents.heuristic``) gives a module that finds each name
in the modules that now define it. ``agents.neural`` and ``agents.search`` are packages now;
their ``__init__`` forwards the old names the same way (:func:`forward`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
import warnings
from typing import Any

MOVED = {
    "agents.base": ("agents.protocol", "agents.draws", "agents.compiled",
                    "agents.scripted.random", "agents.scripted.playout"),
    "agents.heuristic": ("agents.scripted.heuristic", "agents.scripted.heuristic_bid",
                         "agents.scripted.heuristic_play"),
    "agents.heuristic_v1": ("agents.scripted.heuristic_v1",),
    "agents.playout": ("agents.scripted.playout",),
    "agents.network": ("agents.neural.network",),
    "agents.checkpoint": ("agents.neural.checkpoint",),
    "agents.bid_net": ("agents.neural.bid_net",),
    "agents.worlds": ("agents.search.worlds",),
    "agents.endgame": ("agents.search.endgame",),
    "agents.policy_playout": ("agents.search.policy_playout",),
    "agents.rollout": ("agents.search.rollout",),
    "agents.pimc": ("agents.search.pimc",),
    "agents.matchwin": ("agents.value.matchwin",),
    "agents.match_value": ("agents.value.match_value",),
    "agents.process": ("agents.remote.process",),
    "agents.external": ("agents.remote.external",),
    "agents.isolated": ("agents.remote.isolated",),
    "agents.modules": ("agents.remote.modules",),
}  # fmt: skip
"""Old module -> the modules that now hold its names, in the order they are searched."""

_HERE = os.path.dirname(os.path.abspath(__file__))
_WARNED: set[str] = set()


def _caller_level() -> int:
    """The stacklevel of the first frame outside this package and the import machinery
    (whose frames `warnings.warn` skips itself, so they are not counted)."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            frame = frame.f_back
            continue
        if not name.startswith(_HERE):
            break
        frame, level = frame.f_back, level + 1
    return level


def _warn(old: str, new: str) -> None:
    """The deprecation warning, once per old name."""
    if old in _WARNED:
        return
    _WARNED.add(old)
    warnings.warn(
        f"{old} moved to {new}; the old path goes in the next release",
        DeprecationWarning,
        stacklevel=_caller_level(),
    )


def forward(package: str, target: str, name: str) -> Any:
    """A name of `package` (``agents.search``) that `target` (``agents.search.agent``) now
    defines, with the warning; AttributeError as usual for any other name."""
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module(target)
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    _warn(f"{package}.{name}", f"{target}.{name}")
    return value


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        targets = MOVED[spec.name]
        _warn(spec.name, " and ".join(targets))
        module = types.ModuleType(spec.name, f"Moved to {', '.join(targets)}.")

        def __getattr__(name: str) -> Any:
            for target in targets:
                found = importlib.import_module(target)
                if hasattr(found, name):
                    return getattr(found, name)
            raise AttributeError(f"module {spec.name!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """A module that moved whole is replaced by itself under its old name too (the same
        objects: monkeypatching either reaches both); a split one forwards name by name."""
        targets = MOVED[module.__name__]
        if len(targets) == 1:
            sys.modules[module.__name__] = importlib.import_module(targets[0])


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (after every other finder has not)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader())


def install() -> None:
    """Add the finder once (``import agents`` does)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
