"""Run a command under a seccomp filter: ``python -I -S _confine.py FD COMMAND...`` reads a
classic BPF program from the file descriptor FD (:func:`fourhundred_agents.remote.seccomp.program_fd`),
sets ``no_new_privs``, loads the filter and replaces itself with COMMAND, which inherits the
filter, as do all its children. The ``unshare`` fallback of the sandbox starts through it.

Standard library only (it runs with ``-S``, before any package is importable), and it imports
nothing of the project: the filter was built by the runner.
"""

import ctypes
import os
import sys

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def main(argv: list[str]) -> int:
    """Load the filter read from ``argv[1]`` and exec ``argv[2:]``; 126 if either fails."""
    if len(argv) < 3 or not argv[1].isdigit():
        print("_confine: expected FD COMMAND...", file=sys.stderr)
        return 126
    fd = int(argv[1])
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        os.close(fd)
    except OSError as e:
        print(f"_confine: cannot read the filter from fd {fd}: {e.strerror}", file=sys.stderr)
        return 126
    data = b"".join(chunks)
    if not data or len(data) % 8 or len(data) // 8 > 4096:
        print(f"_confine: {len(data)} bytes are no BPF program", file=sys.stderr)
        return 126
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(data, len(data))
    program = _Program(len(data) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if (
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        or libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0
    ):
        print(f"_confine: cannot load the filter: {os.strerror(ctypes.get_errno())}",
              file=sys.stderr)  # fmt: skip
        return 126
    try:
        os.execv(argv[2], argv[2:])
    except OSError as e:
        print(f"_confine: cannot run {argv[2]}: {e.strerror}", file=sys.stderr)
        return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv))
