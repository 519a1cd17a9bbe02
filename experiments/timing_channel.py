"""How many bits a second two sandboxed processes pass by CPU timing, the channel no sandbox
on one machine closes (BENCHMARKS.md, "Seats that cannot talk").

    .venv/bin/python experiments/timing_channel.py [--slot-ms 10] [--bits 300] [--runs 3]

A sender and a receiver, each in a sandbox of its own as two seat processes of one ``cmd:`` bot
are (:func:`fourhundred_agents.remote.sandbox.sandbox`), agree on a start time by the wall
clock. For each slot the sender spins (a 1) or sleeps (a 0); the receiver counts the turns of a
loop it runs in that slot and reads a 1 where it counted fewer than its median. Both try to
pin themselves to CPU 0 (``sched_setaffinity``): in the sandbox as it is the filter refuses
that and the scheduler places them; the second case leaves the filter off, so they share a
CPU. Printed: the bit error rate p and the channel's capacity, (1 - H(p)) bits a slot, per
second, the median over runs.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from fourhundred_agents.remote import sandbox as sb

PEER = r"""
import os, sys, time
role, start, slot, bits, pin = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
if pin:
    try:
        os.sched_setaffinity(0, {0})
    except OSError:
        pass  # refused by the sandbox's filter: the scheduler places it
while time.time() < start:
    pass
counts = []
for i, bit in enumerate(bits):
    end = start + (i + 1) * slot
    if role == "send":
        if bit == "1":
            while time.time() < end:
                pass
        else:
            time.sleep(max(0.0, end - time.time()))
    else:
        n = 0
        while time.time() < end:
            n += 1
        counts.append(n)
if role == "recv":
    print(",".join(map(str, counts)))
"""


def _entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def run_once(
    kind: str, slot_s: float, nbits: int, pin: bool, seed: int, confine: bool = True
) -> float:
    """The bit error rate of one transmission of `nbits` random bits."""
    rng = random.Random(seed)
    bits = "".join(rng.choice("01") for _ in range(nbits))
    folder = tempfile.mkdtemp(prefix="timing-channel-")
    script = os.path.join(folder, "peer.py")
    with open(script, "w") as f:
        f.write(PEER)
    os.chmod(folder, 0o755)
    start = time.time() + 2.0  # both sandboxes are up by then
    procs = []
    for role in ("send", "recv"):
        argv = [sys.executable, script, role, repr(start), repr(slot_s), bits, "1" if pin else "0"]
        box = sb.sandbox(argv, kind, sb.plan(argv, cwd=folder), confine=confine)
        procs.append((subprocess.Popen(box.argv, pass_fds=box.pass_fds, stdout=subprocess.PIPE,
                                       text=True), box))  # fmt: skip
        for fd in box.pass_fds:
            os.close(fd)
    outs = []
    for proc, box in procs:
        out, _ = proc.communicate(timeout=60 + nbits * slot_s)
        box.cleanup()
        outs.append(out)
    counts = [int(c) for c in outs[1].strip().split(",")]
    median = statistics.median(counts)
    read = "".join("1" if c < median else "0" for c in counts)
    return sum(a != b for a, b in zip(read, bits, strict=True)) / nbits


def main() -> None:
    """Measure and print the channel for each placement (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slot-ms", type=float, default=10.0, help="a bit's slot (default: 10)")
    ap.add_argument("--bits", type=int, default=300, help="bits a run (default: 300)")
    ap.add_argument("--runs", type=int, default=3, help="runs a placement (default: 3)")
    ap.add_argument("--kind", default=None, help="bwrap or unshare (default: what works)")
    args = ap.parse_args()
    kind = args.kind or sb.mechanism()
    if kind is None:
        sys.exit("no sandbox mechanism works here")
    slot = args.slot_ms / 1000
    print(f"{kind}, {args.slot_ms:g} ms a slot, {args.bits} bits a run, load "
          f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")  # fmt: skip
    cases = (
        (True, True, "the sandbox as it is (pinning refused: placed by the scheduler)"),
        (True, False, "without the seccomp filter, both pinned to CPU 0"),
    )
    for pin, confine, label in cases:
        errors = [run_once(kind, slot, args.bits, pin, seed, confine) for seed in range(args.runs)]
        p = statistics.median(errors)
        capacity = (1 - _entropy(p)) / slot
        print(f"{label}: bit error rates {', '.join(f'{e:.3f}' for e in errors)}; "
              f"median {p:.3f}, capacity {capacity:.1f} bits/s")  # fmt: skip


if __name__ == "__main__":
    main()
