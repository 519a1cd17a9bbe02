"""`fourhundred bot-check CMD`: play a few hands against a protocol bot and report its errors.

The bot (``CMD``, a command line speaking docs/bot-protocol.md) plays a duplicate pair of
games against `--opponent` for `--hands` hands each, so it sits at all four seats; each seat
has its own bot process, as in a tournament. Reported: its hello, the decisions it made and
their times, every protocol error, illegal action, crash or timeout (with what it wrote to
stderr), and the slow moves. Exit code 0 when there was none of those, 1 otherwise. The bot
runs in the sandbox a tournament run here with the defaults gives it (its out dir and database
hidden), so a bot that passes here starts there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

NAME = "bot-check"
HELP = "play a few hands against a bot speaking the JSON-lines protocol and report its errors"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument(
        "command", metavar="CMD", help='the bot\'s command line, e.g. "python my_bot.py"'
    )
    p.add_argument("--hands", type=int, default=4, help="hands per game (default 4; 2 games)")
    p.add_argument("--opponent", default="heuristic", help="agent spec of the other side")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    p.add_argument("--time-limit", type=float, default=10.0, help="soft limit per move, s")
    p.add_argument("--hard-limit", type=float, default=20.0, help="hard limit per move, s")
    p.add_argument("--transcript", metavar="FILE",
                   help="write every line sent (>) and received (<) to FILE, by seat "
                   "(default: none)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from fourhundred_agents.registry import make_agent
    from fourhundred_agents.remote.external import ExternalAgent
    from fourhundred_agents.remote.sandbox import protect_paths
    from fourhundred_cli.common import check_seed
    from fourhundred_env.errors import FourHundredError
    from fourhundred_env.rules import Rules
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.deals import with_real_paths
    from fourhundred_tournament.runner import LockstepRunner, Records, close_agents

    check_seed(args.seed)
    if args.hands < 1:
        raise FourHundredError(f"--hands {args.hands}: expected 1 or more")
    # the sandbox a tournament run here with the defaults gives the bot: its out dir, its
    # database hidden (a bot that starts here starts there too)
    default = load_config(None, {"agents": ["random", "heuristic"]})
    protect_paths(with_real_paths([default.out_dir, default.db_path]))
    rules = Rules(move_time_limit_s=args.time_limit, move_hard_limit_s=args.hard_limit)
    label = f"cmd:{args.command}"
    # a bad opponent spec is refused before the bot's processes start
    others = [make_agent(args.opponent, rules, seed=10 + seat) for seat in range(4)]
    log = _Transcript(args.transcript)
    bots = [ExternalAgent(args.command, rules, seed=seat, transcript=log.writer(seat))
            for seat in range(4)]  # fmt: skip
    bots[0].check()  # starts and answers hello, or one line saying why not
    print(f"bot-check {label}")
    print(f"  hello: answered by {bots[0].bot_name or '(no name)'!r}, protocol version 1")
    records = Records()

    def sink(rec: Records) -> None:
        records.hands.extend(rec.hands)
        records.matches.extend(rec.matches)
        records.events.extend(rec.events)

    runner = LockstepRunner(rules, (label, args.opponent), [bots, others], args.seed,
                            args.hands, 1, sink)  # fmt: skip
    try:
        runner.run([(0, 0), (0, 1)])
    finally:
        close_agents([bots, others])
        log.close()
    tails = [b.stderr_tail() for b in bots]
    return _report(label, records, bots, tails)


def _report(label: str, records: Any, bots: list[Any], tails: list[str]) -> int:
    """Print what the bot did; 0 if it made no error, 1 otherwise."""
    decisions, seconds, worst = 0, 0.0, 0.0
    for h in records.hands:
        for seat in range(4):
            team = h.team0 if seat % 2 == 0 else h.team1
            if team == label:
                n = getattr(h, f"decisions{seat}")
                t = getattr(h, f"seconds{seat}")
                decisions += n
                seconds += t
                worst = max(worst, t / n if n else 0.0)
    faults = [e for e in records.events if e.agent == label and e.kind != "slow"]
    slow = [e for e in records.events if e.agent == label and e.kind == "slow"]
    mean_ms = 1000 * seconds / decisions if decisions else float("nan")
    print(f"  played: {len(records.matches)} games, {len(records.hands)} hands, {decisions} "
          f"decisions at its seats, {mean_ms:.2f} ms per decision")  # fmt: skip
    restarts = sum(b.restarts for b in bots)
    if faults:
        print(f"  errors: {len(faults)} (each forfeits the contract; bot restarted {restarts}x)")
        for e in faults[:10]:
            print(f"    game {e.orientation} hand {e.hand_index} seat {e.seat}: {e.kind}: "
                  f"{e.detail}")  # fmt: skip
    else:
        print("  errors: none")
    print(f"  slow moves: {len(slow) or 'none'}")
    said = [t for t in tails if t]
    if said:
        print(f"  stderr (last lines): {said[0][:300]}")
    ok = not faults
    print("  result: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


class _Transcript:
    """The lines exchanged with the bots, written to a file as they go (or nowhere)."""

    def __init__(self, path: str | None) -> None:
        from fourhundred_env.errors import FourHundredError

        try:
            self.file = Path(path).open("w") if path else None  # noqa: SIM115 (see close())
        except OSError as e:
            raise FourHundredError(
                f"--transcript {path!r}: cannot write it ({e.strerror}): expected a writable file"
            ) from None

    def writer(self, seat: int) -> Any:
        if self.file is None:
            return None

        def write(line: str) -> None:
            self.file.write(f"seat {seat} {line}\n")

        return write

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            print(f"  transcript: {self.file.name}", file=sys.stdout)
