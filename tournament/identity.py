"""A bot's identity: the files of its code, each with its SHA-256.

A checkpoint bot (``neural:PATH``, the search's models, a ``compose:``'s parts) is the files its
spec names. A program bot (``cmd:``) is all of its code: every file of the folders it reads its
code from, recursively, the folders the sandbox shows it
(:func:`fourhundred_agents.remote.sandbox.plan`): the folder of each file or the folder its
command line names (``python bots/my_bot.py``: ``bots/``), or, for ``python -m pkg``, the
package as that interpreter would import it (found from the working folder, then the
interpreter's path when it is this one; the top-level name only, so nothing is imported: a
package is its folder, a plain module the folder it lies in). The interpreter's own
installation and the system folders are no part of a bot; neither are ``__pycache__`` folders,
``.pyc`` files, nor the paths hidden from sandboxed bots (a tournament's database and out dir,
:func:`~fourhundred_agents.remote.sandbox.protect_paths`). A folder of more than
:data:`MAX_FILES` files or :data:`MAX_BYTES` bytes is refused: a bot lives in a folder of its
own.

:func:`file_digests` is the per-file map (name -> SHA-256), which lets a refusal name the file
that changed; :func:`files_digest` the one SHA-256 a database records for the bot.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from fourhundred_env.errors import FourHundredError
from fourhundred_env.registry import parse_spec, spec_settings

__all__ = [
    "MAX_BYTES",
    "MAX_FILES",
    "changed_file",
    "file_digests",
    "files_digest",
    "identity",
    "legacy_digest",
    "named_files",
    "spec_files",
]

MAX_FILES = 2_000
"""Most files of a program bot's folders (a folder of more is not a bot's own)."""
MAX_BYTES = 1 << 30
"""Most bytes of a program bot's folders, all files together (1 GiB)."""
_SKIPPED_FOLDERS = ("__pycache__",)
_SKIPPED_SUFFIXES = (".pyc",)
# the names protect_paths hides beside each path (fourhundred_agents.remote.sandbox)
_HIDDEN_SUFFIXES = ("-wal", "-shm", "-journal", ".lock")


class BotFilesError(FourHundredError):
    """A bot's files cannot be checksummed (too many, too large, unreadable)."""


def spec_files(spec: str) -> list[Path]:
    """The files an agent spec names: a checkpoint (``neural:PATH``), the checkpoints a bot
    plays with (a `files()` of its settings: the search's model and bidder), those of a
    ``compose:``'s parts, or the files on a bot's command line (``cmd:python my_bot.py``).
    A program bot is more than these: :func:`file_digests`."""
    from fourhundred_agents.neural.files import resolve_checkpoint

    paths = [resolve_checkpoint(p) for p in named_files(spec)]  # a bundled one from anywhere
    return [p for p in paths if p.is_file()]


def named_files(spec: str) -> list[str]:
    """The files an agent spec names (see :func:`spec_files`), whether or not they exist."""
    name, text = parse_spec(spec)
    if name == "compose":
        from fourhundred_agents.compose import parse_parts

        try:
            parts = parse_parts(text)
        except FourHundredError:  # refused when agents are made
            return []
        return [p for part in parts.values() for p in named_files(part)]
    if name == "cmd":
        words = _command_words(text)
        python = Path(sys.executable).resolve()
        # the files of the bot, not the interpreter that runs them (python, node, java...)
        return [w for w in words if Path(w).is_file() and Path(w).resolve() != python]
    try:
        settings = spec_settings(spec)
    except FourHundredError:  # an unknown agent or bad settings: refused when agents are made
        return []
    files = getattr(settings, "files", None)
    names = files() if callable(files) else [getattr(settings, "path", None)]
    return [n for n in names if isinstance(n, str)]


def _command_words(text: str | None) -> list[str]:
    from fourhundred_agents.remote.external import split_command

    try:  # the ``,sandbox=MODE`` setting is no part of the command line
        return shlex.split(split_command(text or "")[0])
    except ValueError:
        return []


def legacy_digest(spec: str) -> str | None:
    """The SHA-256 (hex) of the files `spec` names, read in order (None: it names none): what
    fourhundred recorded for every bot before a program bot's identity covered its folders,
    and still records for a checkpoint bot."""
    paths = spec_files(spec)
    if not paths:
        return None
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def files_digest(spec: str) -> str | None:
    """The SHA-256 (hex) that a database records as the identity of the bot `spec` (None: it
    has no files): for a checkpoint bot, that of the files it names (:func:`legacy_digest`);
    for a program bot (``cmd:``), that of its :func:`file_digests` (a manifest of lines
    ``SHA-256  NAME``, sorted by name). BotFilesError when its folders cannot be read whole."""
    return identity(spec)[0]


def identity(spec: str) -> tuple[str | None, dict[str, str]]:
    """(:func:`files_digest`, :func:`file_digests`) of `spec`, its files read once."""
    digests = file_digests(spec)
    if parse_spec(spec)[0] != "cmd":
        return legacy_digest(spec), digests
    if not digests:
        return None, digests
    manifest = "".join(f"{sha}  {name}\n" for name, sha in sorted(digests.items()))
    return hashlib.sha256(manifest.encode()).hexdigest(), digests


def file_digests(spec: str) -> dict[str, str]:
    """Each file of the bot `spec` (see the module docstring), by name (as its command line or
    the interpreter finds it), with its SHA-256 (hex); a symbolic link's is that of the text
    it points to. Empty when the bot has no files of its own."""
    if parse_spec(spec)[0] != "cmd":
        from fourhundred_agents.neural.files import resolve_checkpoint

        found = ((name, resolve_checkpoint(name)) for name in named_files(spec))
        return {name: _sha(path) for name, path in found if path.is_file()}
    out: dict[str, str] = {}
    hidden = _hidden()
    count = size = 0
    for root in program_folders(parse_spec(spec)[1]):
        if os.path.isfile(root):  # a plain module found elsewhere than a folder of its own
            out[root] = _sha(Path(root))
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_FOLDERS
                             and not _is_hidden(os.path.join(folder, d), hidden))  # fmt: skip
            for file in sorted(files):
                path = os.path.join(folder, file)
                if file.endswith(_SKIPPED_SUFFIXES) or _is_hidden(path, hidden):
                    continue
                if not os.path.islink(path) and not os.path.isfile(path):
                    continue  # a socket or a pipe: no code, and reading one could block
                count += 1
                size += os.path.getsize(path) if os.path.isfile(path) else 0
                if count > MAX_FILES or size > MAX_BYTES:
                    raise BotFilesError(
                        f"{spec!r}: its folder {root!r} holds more than {MAX_FILES} files or "
                        f"{MAX_BYTES >> 20} MiB, and a program bot is every file of its "
                        "folders: expected a folder of the bot's own (move its files into one)"
                    )
                out[os.path.normpath(path)] = _sha(Path(path))
    return out


def program_folders(command: str | None) -> list[str]:
    """The folders (or a lone module's file) a ``cmd:`` bot's code lives in: those of the files
    and folders its command line names, or the package of ``-m NAME``; never the system's nor
    an interpreter's installation. As given (relative to the current folder) or absolute."""
    words = _command_words(command)
    if not words:
        return []
    cwd = os.getcwd()
    roots: list[str] = []
    program = words[0]
    if "/" in program and os.path.isfile(program):  # ./my_bot, /opt/bots/run.sh
        folder = os.path.dirname(program) or "."
        if os.path.basename(os.path.abspath(folder)) not in ("bin", "shims"):  # not python's
            roots.append(folder)
    module = _module_name(words[1:])
    if module is not None:
        roots += _module_roots(module, program, cwd)
    python = Path(sys.executable).resolve()
    for word in words[1:]:
        for text in {word, word.partition("=")[2]} - {""}:  # my_bot.py, --model=net.pt
            if os.path.isfile(text) and Path(text).resolve() != python:
                roots.append(os.path.dirname(text) or ".")
            elif os.path.isdir(text) and text not in (".", "..") and not text.startswith("-"):
                roots.append(text)
    kept: list[str] = []
    for root in sorted(dict.fromkeys(os.path.normpath(r) for r in roots),
                       key=lambda r: os.path.abspath(r)):  # fmt: skip
        full = os.path.abspath(root)
        if full == "/" or _is_system(full):
            continue
        if not any(_under(full, os.path.abspath(k)) for k in kept):  # a parent came first
            kept.append(root)
    return kept


def _module_name(args: list[str]) -> str | None:
    """The NAME of ``-m NAME`` (or ``-mNAME``) among the interpreter's options, if any."""
    for i, word in enumerate(args):
        if word == "-m":
            return args[i + 1] if i + 1 < len(args) else None
        if word.startswith("-m") and not word.startswith("--"):
            return word[2:]
        if not word.startswith("-") or word == "-c":
            return None  # a script, or code: what follows are its arguments
    return None


def _module_roots(module: str, program: str, cwd: str) -> list[str]:
    """Where the top-level package of `module` lives, found as `program` would find it: in
    the working folder, then on this interpreter's path when `program` is this interpreter.
    The finder only looks at files: nothing is imported."""
    import shutil

    top = module.partition(".")[0]
    spec = importlib.machinery.PathFinder.find_spec(top, [cwd])
    found = shutil.which(program) or os.path.join(cwd, program)
    if spec is None and os.path.abspath(found) == os.path.abspath(sys.executable):
        try:  # this interpreter's path and finders (an editable install's); a top-level
            spec = importlib.util.find_spec(top)  # name is found, not imported
        except (ImportError, ValueError):
            spec = None
    if spec is None:
        return []
    if spec.submodule_search_locations:  # a package, or a namespace package's folders
        return [str(p) for p in spec.submodule_search_locations]
    origin = spec.origin or ""
    if not os.path.isfile(origin):
        return []
    folder = os.path.dirname(origin)
    # a plain module in the working folder is a script found by name: its folder is the bot's
    return [folder] if os.path.abspath(folder) == cwd else [origin]


def _sha(path: Path) -> str:
    if path.is_symlink():
        return hashlib.sha256(b"link:" + os.fsencode(os.readlink(path))).hexdigest()
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as e:
        raise BotFilesError(
            f"cannot read the bot's file {str(path)!r} ({e.strerror or e}): expected its "
            "files readable"
        ) from None


def _hidden() -> list[str]:
    from fourhundred_agents.remote.sandbox import HIDE_ENV

    bases = [p for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p]
    return [os.path.abspath(b) + s for b in bases for s in ("", *_HIDDEN_SUFFIXES)]


def _is_hidden(path: str, hidden: list[str]) -> bool:
    full = os.path.abspath(path)
    return any(_under(full, h) for h in hidden)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _is_system(path: str) -> bool:
    from fourhundred_agents.remote.sandbox import SYSTEM_DIRS

    return any(_under(p, d) for p in (path, os.path.realpath(path)) for d in SYSTEM_DIRS)


def changed_file(recorded: Mapping[str, str], now: Mapping[str, str]) -> str | None:
    """What differs first between two :func:`file_digests` maps, in words (``'x.py' changed``,
    ``'x.py' is gone``, ``'x.py' is new``), or None when they are the same."""
    for name in sorted(set(recorded) | set(now)):
        if name not in now:
            return f"{name!r} is gone"
        if name not in recorded:
            return f"{name!r} is new"
        if recorded[name] != now[name]:
            return f"{name!r} changed"
    return None
