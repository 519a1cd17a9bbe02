"""Code of your own named in a setting (``reward=``, ``features=``): `import_named` finds the
object a text names, by entry point, dotted path or file, and says in one line why it cannot.

Only a person's own settings are read this way (a command line, a config, an agent spec typed
by the owner); a name read from data (a checkpoint, a record) is never imported
(docs/security.md).

Such code runs `guarded` where it is imported and checked at the start: a ``sys.exit`` in it
(SystemExit) and a check that runs past CHECK_SECONDS are one ConfigError line, so the command
ends with its error status rather than silently with status 0, or never. The time limit is
SIGALRM (``setitimer``) in the main thread: it stops Python code wherever it loops or sleeps
and needs no second process (which would import the code twice, with its side effects) or
thread (which cannot be stopped, and would keep running); code stuck inside one C call is
stopped when that call returns, and off the main thread (the web server's) there is no
limit."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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
        with guarded(option, text, "at import"):
            if module.endswith(".py") or "/" in module:
                found = _load_file(module, option)
            else:
                if os.getcwd() not in sys.path and "" not in sys.path:
                    sys.path.append(os.getcwd())  # as `python -m` would: modules of this folder
                found = importlib.import_module(module)
    except ConfigError:
        raise
    except Exception as e:  # an import error of the user's module, whatever it is
        raise ConfigError(
            f"{option}={text!r}: cannot import {module!r} ({type(e).__name__}: "
            f"{first_line(e)}): expected a module importable here (on sys.path, or installed)"
        ) from None
    if not hasattr(found, name):
        raise ConfigError(f"{option}={text!r}: module {module!r} has no {name!r}")
    return getattr(found, name)


CHECK_SECONDS = 60.0
"""How long code of your own may take to import, and to answer its sample at the start."""


class _TimeUp(BaseException):
    """Raised by SIGALRM in code that ran past CHECK_SECONDS (not an Exception, so that the
    code's own ``except Exception`` does not swallow it)."""


@contextmanager
def guarded(option: str, text: str, doing: str) -> Iterator[None]:
    """Run code of your own (named `text` by the setting `option`, `doing` what: "at import",
    "on its sample") with a SystemExit it raises, and a run past CHECK_SECONDS, turned into
    one ConfigError line (see the module docstring)."""
    limit = CHECK_SECONDS
    use_alarm = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )

    def time_up(signum: int, frame: object) -> None:
        raise _TimeUp

    old_handler = signal.signal(signal.SIGALRM, time_up) if use_alarm else None
    old_timer = signal.setitimer(signal.ITIMER_REAL, limit) if use_alarm else (0.0, 0.0)
    try:
        yield
    except SystemExit as e:
        raise ConfigError(
            f"{option}={text!r} ended the program (sys.exit({str(e.code)[:40]!s})) {doing}: "
            "expected code that returns, or raises an exception"
        ) from None
    except _TimeUp:
        raise ConfigError(
            f"{option}={text!r} did not finish {doing} within {limit:g} s (CHECK_SECONDS, "
            "agents/hooks.py): expected code that returns (an endless loop?)"
        ) from None
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            if old_timer[0] > 0:  # someone else's alarm, given back what was left of it
                signal.setitimer(signal.ITIMER_REAL, *old_timer)


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
