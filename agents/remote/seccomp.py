"""The system calls a sandboxed bot is refused: those that let processes which share no
writable file, process, IPC or network namespace still pass each other bits.

Two seat processes of one ``cmd:`` bot each run in a sandbox of their own (private PID, IPC,
network, mount and UTS namespaces, a private ``/tmp``), but they read the same system files.
A lock on such a file (``flock``, ``fcntl``'s record and open-file-description locks, a
lease), a watch on it (inotify, fanotify, ``F_NOTIFY``), the page cache's residency of its
pages (``mincore``, ``cachestat``), the kernel's keyrings and the other process-wide
facilities below are seen by every process that can open it, read-only or not: a bot could
carry each seat's hand to its partner and to the other orientation of a duplicate match. The
filter answers each of them ``EPERM`` (an error the bot sees; nothing is killed). CPU time
cannot be closed so: two processes can still time each other, best when both pin themselves
to one CPU, which ``sched_setaffinity`` is refused for (experiments/timing_channel.py).

The filter is built by **libseccomp** (the library every container runtime builds its filters
with; ``libseccomp.so.2``, read through ``ctypes``) and exported as a classic BPF program:
bubblewrap loads it itself (``--seccomp FD``), the ``unshare`` fallback through
:mod:`fourhundred_agents.remote._confine`, before the namespaces are made. Only the native
architecture is allowed: a call through another ABI (``int 0x80`` on x86-64) kills the process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile

__all__ = ["REFUSED_CALLS", "REFUSED_FCNTL", "FilterUnavailable", "filter_program", "program_fd"]

REFUSED_CALLS = (
    "flock",  # file locks
    "inotify_init",  # watches on files
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    "mincore",  # which pages of a shared file are cached
    "cachestat",
    "keyctl",  # the kernel's keyrings
    "add_key",
    "request_key",
    "sched_setaffinity",  # choosing a CPU: two processes pinned to one time each other best
    "perf_event_open",  # performance counters of the machine
    "userfaultfd",
    "io_uring_setup",  # system calls no filter sees
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
)
"""System calls refused whatever their arguments (a name this libseccomp does not know, such as
``cachestat`` on an older one, is skipped)."""

REFUSED_FCNTL = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024,
    "F_GETLEASE": 1025,
    "F_NOTIFY": 1026,
}
"""``fcntl`` commands refused (record locks, open-file-description locks, leases, directory
notifications); Linux's numbers, the same on every architecture that has them."""

_ALLOW = 0x7FFF0000  # SCMP_ACT_ALLOW
_CMP_EQ = 4  # SCMP_CMP_EQ


class FilterUnavailable(RuntimeError):
    """libseccomp is not installed (or this is not Linux): no filter can be built."""


class _ArgCmp(ctypes.Structure):  # struct scmp_arg_cmp
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _library() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        name = ctypes.util.find_library("seccomp")  # slower: it may run ldconfig
        try:
            lib = ctypes.CDLL(name or "libseccomp.so.2", use_errno=True)
        except OSError as e:
            raise FilterUnavailable(f"libseccomp is not installed ({e})") from None
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp),
    ]  # fmt: skip
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    return lib


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)  # SCMP_ACT_ERRNO(code)


@functools.cache
def filter_program() -> bytes:
    """The filter as a classic BPF program (``struct sock_filter`` records, 8 bytes each), built
    once per process; FilterUnavailable where libseccomp is missing."""
    lib = _library()
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        raise FilterUnavailable("libseccomp could not start a filter")
    refuse = _errno_action(errno.EPERM)
    try:
        for name in REFUSED_CALLS:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:
                continue  # unknown to this libseccomp, or absent on this architecture
            if lib.seccomp_rule_add_array(ctx, refuse, number, 0, None) != 0:
                raise FilterUnavailable(f"libseccomp refused the rule for {name}")
        fcntl = lib.seccomp_syscall_resolve_name(b"fcntl")
        for name, command in REFUSED_FCNTL.items():
            cmp = _ArgCmp(1, _CMP_EQ, command, 0)
            if lib.seccomp_rule_add_array(ctx, refuse, fcntl, 1, ctypes.byref(cmp)) != 0:
                raise FilterUnavailable(f"libseccomp refused the rule for fcntl {name}")
        with tempfile.TemporaryFile() as out:
            if lib.seccomp_export_bpf(ctx, out.fileno()) != 0:
                raise FilterUnavailable("libseccomp could not export the filter")
            out.seek(0)
            return out.read()
    finally:
        lib.seccomp_release(ctx)


def program_fd() -> int:
    """A new file descriptor (inheritable, at offset 0) holding :func:`filter_program`; the
    caller passes it to the sandbox and closes it."""
    data = filter_program()
    fd = os.memfd_create("fourhundred-seccomp", 0)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except OSError:
        os.close(fd)
        raise
    return fd
