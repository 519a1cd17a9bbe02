"""`fourhundred tournament`: a duplicate tournament between agents, its leaderboard and report."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from typing import Any

from fourhundred_cli.common import (
    accept_unchecked_argument,
    check_seed,
    keeps_games_on_interrupt,
    writable_folder,
)
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules

NAME = "tournament"
HELP = "play a duplicate tournament between agents; print and save the leaderboard"

DEFAULT_AGENTS = ("heuristic", "heuristic-v1", "minbid", "random")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    from fourhundred_tournament.config import TournamentConfig

    def default(name: str) -> Any:  # a flag's default is the config field's (no --config)
        return next(f.default for f in fields(TournamentConfig) if f.name == name)

    p.add_argument(
        "--config",
        help="YAML tournament config, or a bundled one's name: default, "
        "pagat, acceptance (configs/tournament_*.yaml); flags override it (default: none, "
        "the defaults below)",
    )
    p.add_argument(
        "--agents", nargs="+", metavar="SPEC",
        help="agent specs, e.g. heuristic random:any neural:PATH,name=mine (name=: what the "
        f"report shows) (default {' '.join(DEFAULT_AGENTS)})",
    )  # fmt: skip
    p.add_argument("--matches", type=int,
                   help="duplicate matches per pairing, each played twice with the partnerships "
                   f"swapped (default {default('matches')})")  # fmt: skip
    p.add_argument("--seed", type=int,
                   help=f"seed of the deals (see --deals) and the agents (default {default('seed')})")  # fmt: skip
    p.add_argument("--deals", choices=("secret", "public"),
                   help="secret: dealt from a secret drawn afresh for this tournament from the "
                   "operating system's randomness and kept in its database, which no bot can "
                   "recompute; public: from the seed alone, so anyone who knows the seed "
                   f"predicts every card (default {default('deals')})")  # fmt: skip
    p.add_argument("--rules", help="rules preset: wiki or pagat (default wiki)")
    p.add_argument("--max-hands", type=int,
                   help="stop a match after this many hands: a draw "
                   f"(default {default('max_hands')})")  # fmt: skip
    p.add_argument("--workers", type=int,
                   help=f"processes (default {default('workers')}; 1: in this process); with "
                   "--backend ray and no --address, the CPUs of the local Ray instance")  # fmt: skip
    p.add_argument("--backend", choices=("local", "ray"),
                   help="where jobs run: local processes or Ray tasks (the ray extra) "
                   f"(default {default('backend')})")  # fmt: skip
    p.add_argument("--address", dest="ray_address", metavar="ADDR",
                   help="with --backend ray: the Ray cluster's head, HOST:PORT or auto "
                   "(default: a local Ray instance for this run)")  # fmt: skip
    p.add_argument(
        "--table-batch",
        type=int,
        help=f"tables per job played in lockstep (default {default('table_batch')})",
    )
    p.add_argument(
        "--chunk-matches",
        type=int,
        help=f"duplicate matches per job (default {default('chunk_matches')})",
    )
    p.add_argument("--mirror", action=argparse.BooleanOptionalAction, default=None,
                   help="also play each agent against a copy of itself (default: no)")  # fmt: skip
    p.add_argument("--move-time-limit", type=float, dest="move_time_limit_s",
                   help="soft per-move limit, seconds: slow moves are recorded "
                   f"(default {Rules().move_time_limit_s:g})")  # fmt: skip
    p.add_argument("--move-hard-limit", type=float, dest="move_hard_limit_s",
                   help="hard per-move limit, seconds: the contract is forfeited "
                   f"(default {Rules().move_hard_limit_s:g})")  # fmt: skip
    p.add_argument("--db", help="SQLite results file (default <out>/results.sqlite)")
    p.add_argument(
        "--out",
        dest="out_dir",
        help=f"directory of the report and database (default {default('out_dir')})",
    )
    p.add_argument(
        "--tensorboard",
        metavar="DIR",
        help="also log the report to TensorBoard in this directory (default: no)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        help=f"bootstrap resamples of the Elo intervals (default {default('bootstrap')})",
    )
    p.add_argument(
        "--elo-anchor",
        metavar="SPEC",
        help="agent (its spec or name) whose Elo is pinned at 1500 (default: none, the mean "
        "is 1500)",
    )
    p.add_argument("--agent-module", action="append", dest="agent_modules", metavar="MODULE",
                   help="import MODULE first (it registers more agents); repeatable "
                   "(default: none)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config key (value in YAML syntax); repeatable "
                   "(default: none)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--overwrite", action="store_true",
                   help="discard an existing results database first (default: resume it)")  # fmt: skip
    accept_unchecked_argument(p)
    p.add_argument("--report-only", action="store_true",
                   help="play nothing; report what the database holds")  # fmt: skip
    p.add_argument("--list-agents", action="store_true", help="list the registered agents and exit")
    p.add_argument(
        "--plots",
        metavar="DIR",
        help="also write the report's figures (PNG) to DIR (default: none)",
    )


_OVERRIDE_KEYS = (
    "agents", "matches", "seed", "deals", "rules", "max_hands", "workers", "backend", "ray_address",
    "table_batch", "chunk_matches",
    "mirror", "move_time_limit_s", "move_hard_limit_s", "db", "out_dir", "tensorboard",
    "bootstrap", "elo_anchor", "agent_modules",
)  # fmt: skip


def tournament_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Config overrides from the command line (None: not given)."""
    import yaml

    out: dict[str, Any] = {key: getattr(args, key) for key in _OVERRIDE_KEYS}
    if args.no_progress:
        out["progress"] = False
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise FourHundredError(f"--set {item!r}: expected KEY=VALUE")
        out[key.strip()] = yaml.safe_load(value)
    return out


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from fourhundred_agents.registry import available_agents
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.db import ReadOnlyResults
    from fourhundred_tournament.report import (
        build_report,
        format_report,
        log_tensorboard,
        write_report,
    )
    from fourhundred_tournament.tournament import run_tournament

    if args.list_agents:
        for name, desc in available_agents().items():
            print(f"{name:<14} {desc}")
        return 0
    check_seed(args.seed)
    overrides = tournament_overrides(args)
    pairings = None
    if args.report_only:
        cfg, pairings = _report_config(args, overrides)
    else:
        if args.config is None and overrides.get("agents") is None:
            overrides["agents"] = list(DEFAULT_AGENTS)
        cfg = load_config(args.config, overrides)
    writable_folder(cfg.out_dir, "--out")
    if cfg.tensorboard:
        writable_folder(cfg.tensorboard, "--tensorboard")
    if args.plots:
        writable_folder(args.plots, "--plots")
    if not args.report_only:
        keeps_games_on_interrupt(args, cfg.db_path)
        summary = run_tournament(cfg, overwrite=args.overwrite,
                                 accept_unchecked=args.accept_unchecked)  # fmt: skip
        if summary.lock_note:
            print(f"note: {summary.lock_note}", file=sys.stderr)
        if summary.jobs_restarted:
            print(
                f"note: {summary.jobs_restarted} jobs were started again after their Ray worker "
                "died (their finished games kept, the others played from their start)",
                file=sys.stderr,
            )
        print(
            f"{summary.games_played} games played in {summary.seconds:.1f} s "
            f"({summary.games_resumed} already in {summary.db_path}"
            + (
                f"; dropped {summary.hands_dropped} hands of unfinished games"
                if summary.hands_dropped
                else ""
            )
            + ")"
        )
    with ReadOnlyResults(cfg.db_path, None if args.report_only else cfg.fingerprint(),
                         args.accept_unchecked) as db:  # fmt: skip
        report = build_report(db, cfg, pairings=pairings)
    print(format_report(report))
    paths = write_report(report, cfg.out_dir)
    print("report: " + ", ".join(str(p) for p in paths.values()))
    if cfg.tensorboard:
        log_tensorboard(report, cfg.tensorboard)
        print(f"TensorBoard: {cfg.tensorboard}")
    if args.plots:
        from fourhundred_tournament.plots import write_tournament_plots

        figures = write_tournament_plots(cfg.db_path, args.plots, cfg=cfg, report=report,
                                         accept_unchecked=args.accept_unchecked)  # fmt: skip
        print("plots: " + ", ".join(str(p) for p in figures))
    return 0


def _report_config(
    args: argparse.Namespace, overrides: dict[str, Any]
) -> tuple[Any, dict[tuple[str, str], int] | None]:
    """(config, a ladder's pairings) of `--report-only`: what the database records (its
    agents, rules, seed, max_hands, matches played; :func:`config_from_db`), with only the
    flags given on top, so that `--report-only --db FILE` needs no other flag and a report
    never counts games the run did not plan."""
    from pathlib import Path

    from fourhundred_tournament.config import config_from_mapping, load_config
    from fourhundred_tournament.db import ReadOnlyResults
    from fourhundred_tournament.db.ladder import recorded_pairings
    from fourhundred_tournament.report import config_from_db

    given = {k: v for k, v in overrides.items() if v is not None}
    if args.config is not None:
        base = load_config(args.config, {"agents": ["random", "minbid"], **given})
        given = {"out_dir": base.out_dir, "db": str(base.db_path), **given}
    path = Path(given["db"]) if given.get("db") else Path(
        given.get("out_dir", "runs/tournament")
    ) / "results.sqlite"  # fmt: skip
    if not path.exists():
        raise FourHundredError(f"--report-only: no results database at {str(path)!r}")
    with ReadOnlyResults(path, accept_unchecked=args.accept_unchecked) as db:
        stored = config_from_db(db)
        pairings = recorded_pairings(db)
    from dataclasses import fields

    values = {f.name: getattr(stored, f.name) for f in fields(stored)}
    values["rules"] = stored.rules.to_dict()
    values.update(given)
    values["db"] = str(path)
    if "out_dir" not in given:  # the report goes beside its database
        values["out_dir"] = str(path.parent)
    cfg = config_from_mapping(values)
    diffs = [k for k in ("agents", "rules", "seed", "max_hands")
             if _key(cfg, k) != _key(stored, k)]  # fmt: skip
    if diffs:
        raise FourHundredError(
            f"--report-only: database {str(path)!r} holds another tournament ("
            + "; ".join(f"{k}: database {_key(stored, k)}, flags {_key(cfg, k)}" for k in diffs)
            + "): expected the flags of its own run, or none"
        )
    return cfg, pairings


def _key(cfg: Any, key: str) -> Any:
    """A fingerprint key of a config (agents sorted, rules by name when a preset)."""
    if key == "agents":
        return sorted(cfg.labels)  # a name is no part of a bot: a report may rename
    if key == "rules":
        return cfg.effective_rules.name
    return getattr(cfg, key)
