"""The sandbox of ``cmd:`` bots: a bot reads only its own program and the system, sees no other
process and has no network, by a mechanism the platform already has.

- **bubblewrap** (``bwrap``, the sandbox of Flatpak; Debian package ``bubblewrap``), when it is
  on the PATH and works: a fresh root holding the system folders and the bot's own folders
  read-only, a private ``/tmp``, a minimal ``/dev``, a ``/proc`` of its own PID namespace,
  no network (a network namespace with only its own loopback), no capabilities, and
  ``--die-with-parent``.
- else **Linux namespaces through util-linux's ``unshare``**, where unprivileged user
  namespaces are allowed: the same root built by a short ``sh`` script (``mount`` binds,
  ``pivot_root``, the old root detached) and ``setpriv`` dropping every capability.
- else none: the bot runs unconfined, with one warning line per process (``sandbox=auto``), or
  is refused (``sandbox=require``).

Both mechanisms put the bot in a PID namespace of its own: when its first process ends, or
the runner kills it, the kernel kills every process in it, ``setsid`` or not.

What the bot may read (:func:`plan`): the system folders (``/usr``, ``/etc``, ``/bin``,
``/lib*``, ``/sbin``), the installation of its interpreter (the prefix of ``.../bin/python``,
a venv and the Python it was made from), the folders of the files its command line names (a
bot's script and its neighbours), or the current folder when it names none
(``python -m my_bot``). The paths given to :func:`protect_paths` (a tournament's out dir, its
database: it holds the deal secret) are hidden even inside those, by name, with a database's ``-journal``,
``-wal``, ``-shm`` and ``.lock``, whether they exist yet or not: a folder holding one is shown
as a fresh read-only folder of the entries it had when the bot started, the hidden ones left
out, so a journal SQLite makes later never appears in it.

The bot's environment is an allow-list of the runner's
(:func:`fourhundred_agents.remote.external.bot_environment`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fourhundred_agents.remote import seccomp
from fourhundred_env.errors import ConfigError

__all__ = [
    "MODES",
    "MODE_ENV",
    "Plan",
    "Sandbox",
    "mechanism",
    "plan",
    "protect_paths",
    "resolve_mode",
    "sandbox",
    "warn_unconfined",
]

MODES = ("auto", "require", "off")
"""``auto``: sandboxed if the platform can, else a warning; ``require``: refused without a
sandbox; ``off``: never sandboxed."""
MODE_ENV = "FOURHUNDRED_BOT_SANDBOX"
"""The environment variable giving the default mode (``auto`` when unset)."""
HIDE_ENV = "FOURHUNDRED_SANDBOX_HIDE"
"""The paths :func:`protect_paths` hides, os.pathsep-separated (inherited by worker processes)."""
NOBODY = 65534
"""The uid and gid a sandboxed bot runs as (``nobody``), whoever runs the tournament."""
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Folders every sandbox holds read-only (a symbolic link among them is kept a link)."""
_DEVICES = ("null", "zero", "random", "urandom")
_TOOLS = (
    "sh",
    "mount",
    "umount",
    "findmnt",
    "mkdir",
    "rmdir",
    "ln",
    "touch",
    "pivot_root",
    "setpriv",
)
_TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # pivot_root lives in sbin, often off a user's PATH


def resolve_mode(mode: str | None) -> str:
    """`mode` (None: the environment's :data:`MODE_ENV`, else ``auto``), checked."""
    value = mode if mode is not None else os.environ.get(MODE_ENV, "") or "auto"
    if value not in MODES:
        where = "sandbox" if mode is not None else MODE_ENV
        raise ConfigError(f"{where}={value!r}: expected one of {', '.join(MODES)}")
    return value


def protect_paths(paths: Iterable[str | os.PathLike[str]]) -> None:
    """Hide `paths` (and a database's ``-wal``, ``-shm``, ``-journal`` and ``.lock`` files, made
    yet or not) from every bot sandboxed from now on, in this process and the ones it starts."""
    known = [p for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p]
    for path in paths:
        text = os.path.abspath(os.fspath(path))
        if text not in known:
            known.append(text)
    os.environ[HIDE_ENV] = os.pathsep.join(known)


HIDDEN_SUFFIXES = ("-wal", "-shm", "-journal", ".lock")
"""The names hidden beside each protected path (a database's journals and lock), whether or
not they exist yet."""


@dataclass(frozen=True)
class Plan:
    """What one sandboxed bot sees besides the system folders."""

    read_only: tuple[str, ...]
    """Folders bound read-only whole (absolute, none inside another, no hidden path inside)."""
    listed: tuple[str, ...] = ()
    """Folders holding a hidden path: each shown as a fresh read-only folder holding the
    entries it had when the plan was made, hidden ones left out, so that a hidden name (a
    database's journal) created later never appears. Parents come first."""
    binds: tuple[str, ...] = ()
    """The entries of `listed` folders bound read-only (files and folders)."""
    links: tuple[tuple[str, str], ...] = ()
    """The symbolic links of `listed` folders: (path, target), made again inside."""
    cwd: str = "/"
    """The working directory (the caller's; created empty when nothing bound holds it)."""
    make_cwd: bool = False
    """True when `cwd` is not inside a bound folder and must be created."""


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _is_system(path: str) -> bool:
    return _under(path, SYSTEM_DIRS) or _under(os.path.realpath(path), SYSTEM_DIRS)


def _prefix(path: str) -> str:
    """The folder to bind for a program at `path`: an installation's prefix for
    ``PREFIX/bin/prog`` (a venv, a Python, a Node) or ``PREFIX/shims/prog`` (pyenv, rbenv),
    else the program's own folder."""
    folder = os.path.dirname(path)
    parent = os.path.dirname(folder)
    if os.path.basename(folder) == "shims" and os.path.isdir(os.path.join(parent, "libexec")):
        return parent  # a version manager's shim (pyenv, rbenv): it runs the manager's own tree
    if (
        os.path.basename(folder) == "bin"
        and parent != "/"
        and any(os.path.exists(os.path.join(parent, marker)) for marker in ("lib", "pyvenv.cfg"))
    ):
        return parent
    return folder


def _program_folders(program: str) -> list[str]:
    """The folders a program needs: along its chain of symbolic links (a venv's python ->
    the base Python), each link's installation, and a venv's ``home``."""
    out: list[str] = []
    path, seen = os.path.abspath(program), set()
    while path not in seen:
        seen.add(path)
        out.append(_prefix(path))
        cfg = os.path.join(_prefix(path), "pyvenv.cfg")
        if os.path.isfile(cfg):  # a venv made with --copies names its base Python only here
            for line in Path(cfg).read_text(errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    out.append(_prefix(os.path.join(value.strip(), "python")))
        if not os.path.islink(path):
            break
        path = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    out.append(_prefix(os.path.realpath(program)))
    return out


_WALK_LIMIT = 2000
"""The most folders :func:`_closed_folders` looks at under one bound folder."""


def _closed_folders(root: str) -> list[str]:
    """The folders at and under `root` (not through links; the first :data:`_WALK_LIMIT`)
    that other users may not list and enter."""
    closed: list[str] = []
    stack, seen = [root], 0
    while stack and seen < _WALK_LIMIT:
        folder = stack.pop()
        seen += 1
        try:
            if os.stat(folder).st_mode & 0o005 != 0o005:
                closed.append(folder)
            with os.scandir(folder) as entries:
                stack += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    return closed


def plan(
    argv: Sequence[str],
    cwd: str | None = None,
    hidden: Sequence[str] | None = None,
    as_nobody: bool | None = None,
) -> Plan:
    """The folders `argv` needs (see the module docstring), run in `cwd` (default: the current
    folder), with `hidden` (default: those of :func:`protect_paths`) hidden inside them.
    `as_nobody` (default: the runner is root, so the bot runs as another uid than the files'
    owner): a bound folder others may not list (``mkdtemp``'s 0700) is shown as a fresh folder
    of its entries, so the bot reads the files in it that others may read."""
    cwd = os.path.abspath(cwd or os.getcwd())
    folders: list[str] = []
    program = shutil.which(argv[0]) or os.path.join(cwd, argv[0])
    if os.path.exists(program):
        folders += _program_folders(program)
    named = False
    for word in argv[1:]:
        for text in {word, word.partition("=")[2]} - {""}:  # my_bot.py, --model=net.pt
            path = os.path.normpath(os.path.join(cwd, text))
            if os.path.isfile(path):
                folders.append(os.path.dirname(path))
                named = True
            elif os.path.isdir(path) and text not in (".", "..") and not text.startswith("-"):
                folders.append(path)
                named = True
    if not named and not os.path.isabs(argv[0]) and "/" in argv[0]:
        named = True  # ./my_bot: its folder is the program's, already bound
    if not named:
        folders.append(cwd)  # python -m my_bot: the modules of the current folder
    kept: list[str] = []
    for folder in sorted({f for f in folders if f and f != "/" and not _is_system(f)}):
        if not _under(folder, kept):  # sorted: a parent comes before what it holds
            kept.append(folder)
    if hidden is None:
        hidden = [p for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p]
    names = sorted({os.path.abspath(base) + s for base in hidden for s in ("", *HIDDEN_SUFFIXES)})
    if as_nobody is None:
        as_nobody = os.geteuid() == 0
    read_only: list[str] = []
    listed: set[str] = set()
    for root in kept:
        inside = [h for h in names if _under(h, [root])]
        if _under(root, names):
            continue  # the folder itself is hidden: nothing of it is bound
        closed = _closed_folders(root) if as_nobody else []
        for folder in closed:  # each, and every folder above it up to the root, listed
            while _under(folder, [root]):
                listed.add(folder)
                folder = os.path.dirname(folder)
        if not inside and not closed:
            read_only.append(root)
            continue
        for name in inside:  # every existing folder from the root down to the hidden name
            folder = os.path.dirname(name)
            chain = []
            while _under(folder, [root]):
                chain.append(folder)
                folder = os.path.dirname(folder)
            for f in reversed(chain):  # from the root down, up to a link or a missing folder
                if os.path.islink(f) or not os.path.isdir(f):
                    break  # what lies past a link is not bound: nothing to hide there
                listed.add(f)
    binds: list[str] = []
    links: list[tuple[str, str]] = []
    for folder in sorted(listed):
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            entries = []
        for entry in entries:
            path = os.path.join(folder, entry)
            if path in listed or _under(path, names):
                continue
            if os.path.islink(path):
                links.append((path, os.readlink(path)))
            elif os.path.isdir(path) or os.path.isfile(path):
                binds.append(path)
    seen = _under(cwd, [*read_only, *binds]) or cwd in listed or _is_system(cwd)
    return Plan(tuple(read_only), tuple(sorted(listed)), tuple(binds), tuple(links), cwd,
                not seen)  # fmt: skip


@dataclass(frozen=True)
class Sandbox:
    """A command wrapped in a sandbox: run `argv` passing it `pass_fds` (the seccomp filter;
    whoever starts it closes them once it started); remove `scratch` (a folder) once it ended."""

    argv: list[str]
    mechanism: str
    scratch: str | None = None
    pass_fds: tuple[int, ...] = ()

    def cleanup(self) -> None:
        """Remove `scratch` if it is set and empty; an OSError is ignored."""
        if self.scratch is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self.scratch)


def _bwrap_argv(
    bwrap: str, argv: Sequence[str], p: Plan, seccomp: int | None, setpriv: str | None
) -> list[str]:
    """The command line of bwrap. `setpriv`: the runner is root, so bwrap makes no user namespace
    (the bot would be root's uid mapped, owning root's files) and ``setpriv`` makes the bot
    nobody; else the user namespace maps the runner's uid to :data:`NOBODY` inside."""
    out = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if setpriv is not None:
        out += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # fmt: skip
        argv = [*_drop_to_nobody(setpriv), *argv]
    else:
        out += ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    if seccomp is not None:
        out += ["--seccomp", str(seccomp)]
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    out += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for folder in _parents(p):  # made open to all (bwrap copies the host's modes: /root 0700)
        out += ["--perms", "0755", "--dir", folder]
    for folder in p.read_only:
        out += ["--ro-bind", folder, folder]
    for folder in p.listed:
        out += ["--tmpfs", folder]
    for path in p.binds:
        out += ["--ro-bind", path, path]
    for path, target in p.links:
        out += ["--symlink", target, path]
    if p.make_cwd:
        out += ["--dir", p.cwd]
    for folder in reversed(p.listed):
        out += ["--remount-ro", folder]
    return [*out, "--chdir", p.cwd, "--", *argv]


def _parents(p: Plan) -> list[str]:
    """The folders above what `p` binds, lists or makes (not system folders, not /tmp itself,
    not bound themselves), parents first: made in the new root before the binds."""
    paths = [*p.read_only, *p.listed, *p.binds, *(link for link, _ in p.links)]
    if p.make_cwd:
        paths.append(p.cwd)
    made = set(p.read_only) | set(p.listed)
    out: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        while folder not in ("/", "") and folder not in made:
            if not (_under(folder, [*SYSTEM_DIRS, "/proc", "/dev"]) or folder == "/tmp"):
                out.add(folder)
            folder = os.path.dirname(folder)
    return sorted(out)


def _drop_to_nobody(setpriv: str) -> list[str]:
    """``setpriv`` making the rest of its command line :data:`NOBODY` (uid and gid, no
    supplementary groups), with no capability and no way to gain one."""
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]  # fmt: skip


def _unshare_script(tools: dict[str, str], p: Plan, root: bool) -> str:
    """The ``sh`` script that builds the sandbox's root at "$1" inside the new namespaces,
    moves into it, enters "$2" and runs the rest of its arguments without capabilities as
    :data:`NOBODY`: `root` (the runner is root, no user namespace was made) by changing uid,
    else it is already (its user namespace maps the runner's uid to it)."""
    q = shlex.quote
    t = {name: q(path) for name, path in tools.items()}
    lines = ["set -e", "umask 022", 'r="$1"',
             f'{t["mount"]} -t tmpfs -o mode=0755 fourhundred-sandbox "$r"']  # fmt: skip

    def bind(src: str) -> None:  # read-only, every mount under it too (as bwrap does)
        lines.append(f'{t["mkdir"]} -p "$r"{q(src)}')
        lines.append(f'{t["mount"]} --rbind {q(src)} "$r"{q(src)}')
        lines.append(
            f'{t["findmnt"]} -R -n -r -o TARGET "$r"{q(src)} | while read -r m; do '
            f'{t["mount"]} -o remount,bind,ro "$m" || exit 1; done'
        )

    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            lines.append(f'{t["ln"]} -s {q(os.readlink(d))} "$r"{q(d)}')
        elif os.path.isdir(d):
            bind(d)
    lines.append(f'{t["mkdir"]} -p "$r/proc" "$r/dev" "$r/tmp" "$r/dev/shm"')
    lines.append(f'{t["mount"]} -t proc proc "$r/proc"')
    for dev in _DEVICES:
        lines.append(f'{t["touch"]} "$r/dev/{dev}"')
        lines.append(f'{t["mount"]} --bind /dev/{dev} "$r/dev/{dev}"')
    lines.append(f'{t["mount"]} -t tmpfs tmpfs "$r/tmp"')
    lines.append(f'{t["mount"]} -t tmpfs tmpfs "$r/dev/shm"')
    for folder in p.read_only:
        bind(folder)
    for folder in p.listed:  # filled, then made read-only
        lines.append(f'{t["mkdir"]} -p "$r"{q(folder)}')
        lines.append(f'{t["mount"]} -t tmpfs -o mode=0755 tmpfs "$r"{q(folder)}')
    # the entries of listed folders: their mount points made in two commands, each bound
    # read-only in one (mount(8) remounts a plain bind read-only itself); one holding other
    # mounts is bound as above, every mount under it read-only
    folders = [path for path in p.binds if os.path.isdir(path)]
    files = [path for path in p.binds if path not in folders]
    for tool, paths in (("mkdir", folders), ("touch", files)):
        if paths:
            lines.append(" ".join([t[tool], *(f'"$r"{q(path)}' for path in paths)]))
    mounted = _mount_points()
    for path in p.binds:
        if path in folders and any(_under(m, [path]) and m != path for m in mounted):
            bind(path)
        else:
            lines.append(f'{t["mount"]} --bind -o ro {q(path)} "$r"{q(path)}')
    for path, target in p.links:
        lines.append(f'{t["ln"]} -s {q(target)} "$r"{q(path)}')
    if p.make_cwd:
        lines.append(f'{t["mkdir"]} -p "$r"{q(p.cwd)}')
    for folder in reversed(p.listed):
        lines.append(f'{t["mount"]} -o remount,ro "$r"{q(folder)}')
    lines += [
        'cd "$r"',
        f"{t['mkdir']} .old",
        f"{t['pivot_root']} . .old",
        f"{t['umount']} -l /.old",  # the old root, the host's files, is gone
        f"{t['rmdir']} /.old",
        'cd "$2"',
        "shift 2",
    ]
    if root:
        lines.append(f'exec {shlex.join(_drop_to_nobody(tools["setpriv"]))} "$@"')
    else:  # already nobody, holding the namespace's capabilities only to build the root
        lines.append(
            f"exec {t['setpriv']} --bounding-set=-all --inh-caps=-all --ambient-caps=-all "
            '--no-new-privs -- "$@"'
        )
    return "\n".join(lines)


def _mount_points() -> list[str]:
    """The mount points of this process's namespace (/proc/self/mountinfo; [] if unreadable)."""
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return []
    points = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 4:  # octal escapes: \040 for a space
            points.append(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
    return points


def _tools() -> dict[str, str] | None:
    """Absolute paths of the programs the unshare script runs (all in system folders, so the
    script still finds them once inside the sandbox), or None if one is missing."""
    path = os.environ.get("PATH", os.defpath) + os.pathsep + _TOOL_PATH
    found = {name: shutil.which(name, path=path) for name in _TOOLS}
    if any(p is None or not _is_system(p) for p in found.values()):
        return None
    return {name: os.path.abspath(p) for name, p in found.items() if p is not None}


def sandbox(argv: Sequence[str], kind: str, p: Plan | None = None, confine: bool = True) -> Sandbox:
    """`argv` run inside a sandbox of `kind` (``bwrap`` or ``unshare``) following `p`
    (default :func:`plan` of `argv`), as :data:`NOBODY`, under the seccomp filter of
    :mod:`~fourhundred_agents.remote.seccomp` when `confine` and libseccomp is there (else one
    warning line per process)."""
    p = plan(argv) if p is None else p
    path = os.environ.get("PATH", os.defpath)
    root = os.geteuid() == 0
    tools = _tools()
    if kind == "bwrap":
        bwrap = shutil.which("bwrap", path=path)
        if bwrap is None:
            raise ConfigError("sandbox: bwrap is not on the PATH")
        if root and tools is None:
            raise ConfigError("sandbox: setpriv is not in a system folder")
        fd = _filter_fd() if confine else None
        setpriv = tools["setpriv"] if root and tools is not None else None
        return Sandbox(_bwrap_argv(bwrap, argv, p, fd, setpriv), kind,
                       pass_fds=() if fd is None else (fd,))  # fmt: skip
    unshare = shutil.which("unshare", path=path)
    if kind != "unshare" or unshare is None or tools is None:
        raise ConfigError(f"sandbox: {kind!r} is not available: expected bwrap or unshare")
    # root mounts with its own rights; another user as nobody in a user namespace, keeping
    # that namespace's capabilities through the exec of sh until the root is built
    user = (
        [] if root else ["--user", f"--map-user={NOBODY}", f"--map-group={NOBODY}", "--keep-caps"]
    )
    scratch = tempfile.mkdtemp(prefix="fourhundred-sandbox-")  # the new root's mount point
    wrapped = [unshare, *user, "--mount", "--propagation", "private", "--pid", "--kill-child",
               "--net", "--ipc", "--uts", "--", tools["sh"], "-c", _unshare_script(tools, p, root),
               "sh", scratch, p.cwd, *argv]  # fmt: skip
    fd = _filter_fd() if confine else None
    if fd is not None:  # loaded before the namespaces are made; every process inherits it
        confine_py = str(Path(__file__).with_name("_confine.py"))
        wrapped = [sys.executable, "-I", "-S", confine_py, str(fd), *wrapped]
    return Sandbox(wrapped, kind, scratch, () if fd is None else (fd,))


_FILTER_WARNED = False


def _filter_fd() -> int | None:
    """A descriptor of the seccomp filter, or None (one warning line per process) where
    libseccomp is missing."""
    global _FILTER_WARNED
    try:
        return seccomp.program_fd()
    except (seccomp.FilterUnavailable, OSError) as e:
        if not _FILTER_WARNED:
            _FILTER_WARNED = True
            print(f"fourhundred: warning: cmd: bots run without their seccomp filter ({e}): "
                  "the seat processes of one bot could pass each other bits through file "
                  "locks; install libseccomp2", file=sys.stderr, flush=True)  # fmt: skip
        return None


def _works(kind: str) -> bool:
    """Whether a sandbox of `kind` starts here (a shell in it exits 0 within 10 s)."""
    sh = shutil.which("sh", path=_TOOL_PATH)
    if sh is None:
        return False
    try:
        box = sandbox([sh, "-c", "exit 0"], kind, Plan(()))
    except ConfigError:
        return False
    try:
        done = subprocess.run(box.argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=10, check=False, pass_fds=box.pass_fds)  # fmt: skip
        return done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        for fd in box.pass_fds:
            os.close(fd)
        box.cleanup()


@functools.lru_cache(maxsize=8)
def _mechanism(path: str) -> str | None:
    for kind in ("bwrap", "unshare"):
        if _works(kind):
            return kind
    return None


def mechanism() -> str | None:
    """``"bwrap"``, ``"unshare"`` or None: the first mechanism that works here (probed once
    per process and PATH)."""
    return _mechanism(os.environ.get("PATH", os.defpath))


_WARNED = False


def warn_unconfined() -> None:
    """Say once per process, in one line on stderr, that cmd: bots run without a sandbox."""
    global _WARNED
    if _WARNED:
        return
    _WARNED = True
    print(
        "fourhundred: warning: cmd: bots run without a sandbox (neither bubblewrap nor "
        "unprivileged user namespaces work here): they can read your files and use the "
        "network; install bubblewrap, or set sandbox=require to refuse, sandbox=off to "
        "silence this",
        file=sys.stderr,
        flush=True,
    )
