"""Code of your own named in a setting (``reward=``, ``features=``): `import_named` finds the
object a text names, by entry point, dotted path or file, and says in one line why it cannot.

Only a person's own settings are read this way (a command line, a config, an agent spec typed
by the owner); a name read from data (a checkpoint, a record) is never imported
(docs/security.md)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from fourhundred_env.errors import ConfigError


def import_named(text: str, option: str, group: str) -> object:
    """The object `text` names: an entry point of that name in `group`, else
    ``package.module:name`` (or ``package.module.name``; a module of the current folder is
    found, as ``python -m`` finds it) or ``path/to/file.py:name``. ConfigError in one line,
    starting ``{option}={text!r}``, when it does not import or has no such name."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        if ep.name == text:
            return ep.load()
    module, sep, name = text.partition(":")
    if not sep:
        module, _, name = text.rpartition(".")
    if not module or not name:
        raise ConfigError(
            f"{option}={text!r}: expected 'package.module:function' or the name of an entry "
            f"point in {group}"
        )
    try:
        if module.endswith(".py") or "/" in module:
            found = _load_file(module, option)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.append(os.getcwd())  # as `python -m` would: modules of this folder
            found = importlib.import_module(module)
    except Exception as e:  # an import error of the user's module, whatever it is
        raise ConfigError(
            f"{option}={text!r}: cannot import {module!r} ({type(e).__name__}: "
            f"{first_line(e)}): expected a module importable here (on sys.path, or installed)"
        ) from None
    if not hasattr(found, name):
        raise ConfigError(f"{option}={text!r}: module {module!r} has no {name!r}")
    return getattr(found, name)


def first_line(e: BaseException) -> str:
    """The first line of an exception's message, cut to 200 characters ('' if none)."""
    return str(e).splitlines()[0][:200] if str(e) else ""


def _load_file(path: str, option: str) -> object:
    import importlib.util

    file = Path(path).resolve()
    if not file.is_file():
        raise FileNotFoundError(f"no file {str(file)!r}")
    spec = importlib.util.spec_from_file_location(f"fourhundred_{option}_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
