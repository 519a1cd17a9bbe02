"""A protocol bot that misbehaves once, then plays its first legal action (for the tests).

    python hostile_bot.py MODE MARKER

On its first `act` while the file MARKER does not exist, it creates MARKER and misbehaves:
crash (exits with code 3), hang (sleeps forever), garbage (a line that is not JSON),
illegal (an action that is not legal), wrong_id (an answer to another request), noisy (writes
more than a pipe holds to stderr at every move, then answers correctly: not a fault). `version2` answers hello with
protocol version 2 (so it never starts); `silent` never answers hello; `gone` crashes like
`crash`, and every start after that fails (its program is gone, as it were).
"""

import json
import os
import sys
import time

mode, marker = sys.argv[1], sys.argv[2]
if mode == "gone" and os.path.exists(marker):
    print("hostile bot: cannot start any more", file=sys.stderr, flush=True)
    sys.exit(4)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "bye":
        break
    if message["type"] == "hello":
        if mode == "silent":
            time.sleep(1e6)
        send(
            {"type": "ready", "name": f"hostile-{mode}", "version": 2 if mode == "version2" else 1}
        )
        continue
    legal = message["legal"]
    answer = {"type": "action", "id": message["id"], "action": legal[0]}
    if not os.path.exists(marker):
        open(marker, "w").close()
        print(f"hostile bot: {mode} now", file=sys.stderr, flush=True)
        if mode in ("crash", "gone"):
            sys.exit(3)
        if mode == "hang":
            time.sleep(1e6)
        if mode == "garbage":
            sys.stdout.write("I think I will play the ace\n")
            sys.stdout.flush()
            continue
        if mode == "illegal":
            everything = [str(b) for b in range(1, 14)] + [
                r + s for s in "CDSH" for r in "23456789TJQKA"
            ]
            answer["action"] = next(
                a for a in everything if a not in legal and a.replace("T", "10") not in legal
            )
        if mode == "wrong_id":
            answer["id"] = message["id"] + 1000
    if mode == "noisy":
        sys.stderr.write("x" * 100_000 + "\n")
        sys.stderr.flush()
    send(answer)
