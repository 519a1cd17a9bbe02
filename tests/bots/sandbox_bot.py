"""A protocol bot that tries what a sandbox must stop, then plays its first legal action (for
tests/test_bot_sandbox.py).

    python sandbox_bot.py pry DB OUT_DIR PID PORT   # at hello: read the database, list the out
                                                    # dir, read /proc/PID/cmdline, count the
                                                    # processes, connect to 127.0.0.1:PORT;
                                                    # one stderr line "probe k=v ..."
    python sandbox_bot.py fork TOKEN        # at hello: a child that calls setsid and sleeps
    python sandbox_bot.py fork-exit TOKEN   # at its first act: a child (same group), then exits
    python sandbox_bot.py log               # 2 MB to stderr before each answer
    python sandbox_bot.py look PATH...      # at each act: one stderr line "probe n=K P1 P2 ...
                                            # write=W env=NAMES", each Pi ok (read a byte),
                                            # empty or denied, W whether it could write a file
                                            # in its own folder, NAMES its environment's
                                            # variables
"""

import json
import os
import socket
import subprocess
import sys

mode, args = sys.argv[1], sys.argv[2:]
here = os.path.dirname(os.path.abspath(__file__))


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def attempt(action):
    """ "ok" if `action` gets the real thing, else "denied"."""
    try:
        return "ok" if action() else "denied"
    except OSError:
        return "denied"


def read(path, n=16):
    with open(path, "rb") as f:
        return f.read(n)


def pry():
    db, out_dir, pid, port = args
    found = {
        "db": attempt(lambda: read(db) == b"SQLite format 3\x00"),
        "out": attempt(lambda: read(os.path.join(out_dir, "report.json")) == b"{}"),
        "parent": "denied",
        "net": attempt(lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=1)),
        "listing": attempt(lambda: "results.sqlite" in os.listdir(os.path.dirname(db))),
    }
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            found["parent"] = "pytest" if b"pytest" in f.read() else "other"
    except OSError:
        pass
    found["procs"] = sum(name.isdigit() for name in os.listdir("/proc"))  # processes seen
    print("probe " + " ".join(f"{k}={v}" for k, v in found.items()), file=sys.stderr, flush=True)


def sleeper(token, new_session):
    code = "import time; time.sleep(60)"
    subprocess.Popen([sys.executable, "-c", code, token], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, start_new_session=new_session)  # fmt: skip


def look(count):
    seen = [f"n={count}"]
    for path in args:
        try:
            with open(path, "rb") as f:
                seen.append("ok" if f.read(1) else "empty")
        except OSError:
            seen.append("denied")
    seen.append(
        "write=" + attempt(lambda: open(os.path.join(here, "written"), "w").close() is None)
    )
    seen.append("env=" + ",".join(sorted(os.environ)))
    print("probe " + " ".join(seen), file=sys.stderr, flush=True)


acts = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "bye":
        break
    if message["type"] == "hello":
        if mode == "pry":
            pry()
        if mode == "fork":
            sleeper(args[0], new_session=True)
        send({"type": "ready", "name": f"sandbox-{mode}", "version": 1})
        continue
    if mode == "fork-exit":
        sleeper(args[0], new_session=False)
        sys.exit(5)
    acts += 1
    if mode == "look":
        look(acts)
    if mode == "log":
        sys.stderr.write(("x" * 999 + "\n") * 2000)  # 2 MB
        sys.stderr.flush()
    send({"type": "action", "id": message["id"], "action": message["legal"][0]})
