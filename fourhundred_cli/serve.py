"""`fourhundred serve`: the web table (play against bots, watch a tournament's or a ladder's
matches, replay a game record)."""

from __future__ import annotations

import argparse

from fourhundred_env.errors import FourHundredError

NAME = "serve"
HELP = "serve the 400 table in a browser: play against bots, replay a tournament's matches"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")  # fmt: skip
    p.add_argument("--port", type=int, default=8400, help="port (default 8400; 0: any free port)")
    p.add_argument(
        "--db",
        help="a tournament's or a ladder's results database to watch, read-only (default: none)",
    )
    p.add_argument("--record", metavar="FILE",
                   help="a game record file (text or JSON) to replay in Watch (default: none)")  # fmt: skip
    p.add_argument("--agent", action="append", default=[], metavar="SPEC", dest="agents",
                   help="also offer this bot at the table (neural:PATH, pimc:worlds=32...); "
                   "repeatable (default: none)")  # fmt: skip
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   dest="allowed_hosts",
                   help="a name the browser may reach the server by, besides localhost, "
                   "127.0.0.1, [::1] and --host ('*': any, behind a proxy that checks it); "
                   "repeatable (default: none)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    try:
        import uvicorn

        from fourhundred_web.app import create_app
    except ImportError as e:
        raise FourHundredError(
            f"fourhundred serve needs the web extra ({e}): pip install -e '.[web]'"
        ) from None
    if not 0 <= args.port <= 65535:
        raise FourHundredError(f"--port {args.port}: expected 0 to 65535")
    app = create_app(db=args.db, agents=args.agents, record=args.record,
                     allowed_hosts=[args.host, *args.allowed_hosts])  # fmt: skip
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    _announce_when_started(server, args.host)
    server.run()
    return 0


def _announce_when_started(server, host: str) -> None:
    """Print the address once uvicorn listens (the port is known only then when it is 0)."""
    startup = server.startup

    async def startup_and_announce(sockets=None) -> None:
        await startup(sockets=sockets)
        if not server.started:
            return
        port = server.servers[0].sockets[0].getsockname()[1]
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        shown = f"[{shown}]" if ":" in shown else shown
        print(f"fourhundred serve: open http://{shown}:{port}/ in a browser (Ctrl-C stops)",
              flush=True)  # fmt: skip

    server.startup = startup_and_announce
