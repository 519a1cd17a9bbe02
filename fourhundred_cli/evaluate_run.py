"""`fourhundred evaluate-run RUN`: a run's snapshots against a fixed agent, after the fact.

The spec that plays a snapshot follows the run's mode: a bidding run (PPO's ``mode:
bidding``, the fitted-Q bidder's ``mode: bid_q``) made a bidder, played as ``neural-bid:``
(its bids, the cards by the play policy recorded in the checkpoint, ``heuristic-v1`` for
the fitted-Q bidder); any other as ``neural:``. A bidder trained with bid features of your
own is played with them named again (``--features SPEC``, as ``neural-bid:PATH,features=SPEC``):
the run's config.yaml records them, but a file names no code that is run (docs/security.md).
So is the run's ``eval_opponent`` when it starts a program or imports code: it plays only
when ``--opponent`` names it again; one that starts none (``heuristic-v1``, ``neural:PATH``)
plays as the run recorded it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fourhundred_env.errors import FourHundredError

NAME = "evaluate-run"
HELP = "play a run's snapshots against a fixed agent after the fact; log eval/* to its TensorBoard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument("run", help="a run folder (runs/<name>__<seed>__<time>)")
    p.add_argument(
        "--opponent", default=None,
        help="agent spec; a run's eval_opponent that starts a program plays only when named "
        "here (a run folder is data) (default: the run's eval_opponent)",
    )  # fmt: skip
    p.add_argument(
        "--matches",
        type=int,
        default=None,
        help="duplicate matches per snapshot (default: the run's eval_matches)",
    )
    p.add_argument("--every", type=int, default=1, help="evaluate every K-th snapshot")
    p.add_argument(
        "--ladder", metavar="FILE",
        help="add the snapshots to this ladder instead (fourhundred ladder), the opponent "
        "first; log ladder/elo by training step and write <run>/plots/ladder_elo.png "
        "(default: none)",
    )  # fmt: skip
    p.add_argument("--workers", type=int, default=2, help="processes playing the games")
    p.add_argument(
        "--features", metavar="SPEC", default="",
        help="a bidding run's bid features of your own, named again as in training (its "
        "config's features=; package.module:function or FILE.py:function): the run's model "
        "is played as neural-bid:PATH,features=SPEC (default: none)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from torch.utils.tensorboard import SummaryWriter

    from fourhundred_train.config import load_config
    from fourhundred_train.evaluate import eval_seed, evaluate_pair

    _check_numbers(args)
    run = Path(args.run)
    if not (run / "config.yaml").is_file():
        raise FourHundredError(f"{args.run!r}: expected a run folder with config.yaml")
    if not (run / "checkpoints").is_dir() or _bidding_without_snapshots(run):
        # one model: a run of another library's example, a fitted-Q bidder, a PPO bidder
        if args.ladder:
            raise FourHundredError(
                f"{args.run!r} has no snapshots (checkpoints/): add its model to the ladder "
                "with fourhundred ladder add SPEC --db FILE"
            )
        return _final_model(args, run)
    config = load_config(run / "config.yaml")
    if args.features:  # no trainer that keeps snapshots reads bid features
        raise FourHundredError(
            f"--features {args.features!r}: {args.run!r} is a {config.mode} run, which reads no "
            "bid features: expected --features for a bidding run's one model"
        )
    snapshots = sorted((run / "checkpoints").glob("policy_*.pt"))[:: args.every]
    if not snapshots:
        raise FourHundredError(f"{args.run!r} has no checkpoints/policy_*.pt snapshots")
    opponent = _opponent(args, config.eval_opponent)
    matches = config.eval_matches if args.matches is None else args.matches
    if matches < 1:  # a run whose eval_matches is 0 (no evaluations)
        raise FourHundredError(f"the run's eval_matches={matches}: expected --matches of 1 or more")
    # the specs as played below: a bidding run's snapshots are bidders
    kind = "neural-bid" if config.mode == "bidding" else "neural"
    _check_agents(
        {_opponent_flag(args): opponent, **{f"snapshot {snap.name}": f"{kind}:{snap}"
                                            for snap in snapshots}},
        config.rules,
    )  # fmt: skip
    if args.ladder:
        return _to_ladder(args, run, config, snapshots, opponent, matches)
    writer = SummaryWriter(str(run))  # beside the run's own events: one TensorBoard run
    print(f"{len(snapshots)} snapshots of {run} against {opponent}, {matches} duplicate matches")
    for snap in snapshots:
        update = int(snap.stem.split("_")[1])
        out = run / "eval" / f"posthoc_{update:05d}"
        result = evaluate_pair(
            f"{kind}:{snap}", opponent, matches, seed=eval_seed(config.seed, update),
            rules=config.rules, out_dir=out, workers=args.workers,
        )  # fmt: skip
        for key, value in result.items():
            # the trainer's step: learner decisions trained on at that snapshot
            writer.add_scalar(key, value, update * config.num_tables * config.rollout_steps)
        writer.flush()
        print(
            f"  update {update:>5}: win rate {100 * result['eval/win_rate']:5.1f}% "
            f"[{100 * result['eval/win_rate_low']:.1f}, {100 * result['eval/win_rate_high']:.1f}]"
            f"  points/hand {result['eval/points_per_hand']:+.2f}"
        )
    writer.close()
    return 0


def _bidding_without_snapshots(run: Path) -> bool:
    """A PPO bidding run (``mode: bidding``), which keeps no snapshots: its policy.pt is
    evaluated as the one model."""
    from fourhundred_env.configs import load_yaml

    meta = load_yaml(run / "config.yaml", "run config")
    return (
        isinstance(meta, dict) and meta.get("mode") == "bidding"
        and not any((run / "checkpoints").glob("policy_*.pt"))
    )  # fmt: skip


def _check_numbers(args: argparse.Namespace) -> None:
    """Refuse a count below 1 (--matches, when given; --every; --workers) in one line."""
    for flag, value in (("--matches", args.matches), ("--every", args.every),
                        ("--workers", args.workers)):  # fmt: skip
        if value is not None and value < 1:
            raise FourHundredError(f"{flag} {value}: expected at least 1")


def _opponent(args: argparse.Namespace, eval_opponent: str) -> str:
    """The opponent's spec: --opponent, else the run's eval_opponent, refused in one line when
    it starts a program or imports code (a run folder is data: `check_run_fields`)."""
    if args.opponent:
        return args.opponent
    from fourhundred_train.run_data import check_run_fields

    check_run_fields({"eval_opponent": eval_opponent}, (), ["eval_opponent"],
                     again={"eval_opponent": "--opponent"})  # fmt: skip
    return eval_opponent


def _opponent_flag(args: argparse.Namespace) -> str:
    """Where the opponent's spec came from, for a message."""
    return "--opponent" if args.opponent else "the run's eval_opponent"


def _check_agents(specs: dict[str, str], rules: str) -> None:
    """Make each agent of `specs` (what it is -> its spec) once, so that an unknown agent or an
    unreadable snapshot is refused in one line naming it, before anything is played or
    logged (a refused run gets no new events file)."""
    from fourhundred_agents.registry import make_agent
    from fourhundred_env.rules import Rules

    preset = Rules.preset(rules)
    for what, spec in specs.items():
        try:
            make_agent(spec, preset, seed=0).close()
        except FourHundredError as e:  # its message names the spec, or the checkpoint's file
            named = spec in str(e) or what.startswith("snapshot")
            raise FourHundredError(f"{what}: {e}" if named else f"{what} {spec!r}: {e}") from None


def _final_model(args: argparse.Namespace, run: Path) -> int:
    """Evaluate the one model of a run against the opponent, and log eval/* at the run's last
    step: a run written by another library's example (the SB3 and CleanRL examples:
    model.zip, or policy.pt with policy.json; its config's total_timesteps), a fitted-Q
    bidder's (positions fitted) or a PPO bidder's (learner decisions). The model's spec is
    what the file can do (`model_spec`): a bidder is played as ``neural-bid:``, with the bid
    features of your own it was trained with named again (``--features``)."""
    from torch.utils.tensorboard import SummaryWriter

    from fourhundred_env.configs import load_yaml
    from fourhundred_train.evaluate import evaluate_pair

    meta = load_yaml(run / "config.yaml", "run config")
    opponent = _opponent(args, str(meta.get("eval_opponent", "heuristic-v1")))
    spec = _model_with_features(run, meta, args.features)
    matches = args.matches or int(meta.get("eval_matches") or 100)
    rules = str(meta.get("rules", "wiki"))
    _check_agents({"the run's model": spec, _opponent_flag(args): opponent}, rules)
    seed, step = int(meta.get("seed", 0)), _final_step(run, meta)
    print(f"{spec} against {opponent}, {matches} duplicate matches")
    result = evaluate_pair(spec, opponent, matches, seed=seed * 1_000_003, rules=rules,
                           out_dir=run / "eval" / "posthoc_final", workers=args.workers)  # fmt: skip
    with SummaryWriter(str(run)) as writer:
        for key, value in result.items():
            writer.add_scalar(key, value, step)
    print(
        f"  step {step:>8}: win rate {100 * result['eval/win_rate']:5.1f}% "
        f"[{100 * result['eval/win_rate_low']:.1f}, {100 * result['eval/win_rate_high']:.1f}]"
        f"  points/hand {result['eval/points_per_hand']:+.2f}"
    )
    return 0


def _model_with_features(run: Path, meta: dict, features: str) -> str:
    """The spec of a run's one model (`model_spec`): a bidder trained with bid features of
    your own (its config's ``features``) played with `features` named again, as
    ``neural-bid:PATH,features=SPEC``; refused in one line without them, or with them for a
    run that has none (the checkpoint's own check then compares name and width)."""
    from fourhundred_agents.libraries.agent import model_spec

    trained = str(meta.get("features") or "")
    if trained and not features:
        raise FourHundredError(
            f"{str(run)!r} was trained with bid features (features={trained[:200]!r}): expected "
            "them named again, --features SPEC (a run's config never names code that is run; "
            "docs/security.md)"
        )
    if not features:
        return model_spec(run)
    if not trained or meta.get("mode") not in ("bidding", "bid_q"):
        raise FourHundredError(
            f"--features {features!r}: {str(run)!r} was trained without bid features: expected "
            "no --features"
        )
    return f"neural-bid:{run / 'policy.pt'},features={features}"


def _final_step(run: Path, meta: dict) -> int:
    """The TensorBoard step of a run's last model: positions fitted by a fitted-Q bidder
    (its iterations done x positions), the learner decisions of a PPO run (its latest.pt),
    else the config's total_timesteps (another library's example)."""
    if meta.get("mode") == "bid_q":
        done = sum(1 for _ in run.glob("iter_*.pt"))
        return done * int(meta.get("positions", 0))
    latest = run / "checkpoints" / "latest.pt"
    if latest.is_file():
        from fourhundred_train.checkpoint import read_checkpoint

        return int(read_checkpoint(latest).get("decisions", 0))
    return int(meta.get("total_timesteps", 0))


def _step(config: Any, update: int) -> int:
    """The trainer's step of a snapshot: learner decisions trained on by that update."""
    return update * config.num_tables * config.rollout_steps


def _to_ladder(
    args: argparse.Namespace, run: Path, config: Any, snapshots: list[Path], opponent: str,
    matches: int,
) -> int:  # fmt: skip
    """Add `opponent`, then each snapshot, to the ladder `args.ladder` (each an event: it
    plays every bot on the ladder); log and draw the Elo by training step."""
    from torch.utils.tensorboard import SummaryWriter

    from fourhundred_env.registry import display_name, split_name
    from fourhundred_tournament.config import files_digest
    from fourhundred_tournament.db import ReadOnlyResults
    from fourhundred_tournament.db.ladder import read_ladder
    from fourhundred_tournament.figures import save_figure
    from fourhundred_tournament.ladder.history import ladder_report
    from fourhundred_tournament.ladder.play import add_bots
    from fourhundred_tournament.ladder.plots import figure_by_step, step_points

    kind = "neural-bid" if config.mode == "bidding" else "neural"
    label, shown = split_name(opponent)[0], display_name(opponent)  # its name= is shown only
    play = {"workers": args.workers, "progress": True}
    path = Path(args.ladder)
    print(f"{len(snapshots)} snapshots of {run} onto the ladder {path} ({opponent} first), "
          f"{matches} duplicate matches per pairing")  # fmt: skip
    for spec, info in [(opponent, {}), *(
        (f"{kind}:{snap}", {"run": str(run), "update": int(snap.stem.split("_")[1]),
                            "step": _step(config, int(snap.stem.split("_")[1]))})
        for snap in snapshots
    )]:  # fmt: skip
        if _on_ladder(path, split_name(spec)[0], files_digest(spec), read_ladder, ReadOnlyResults):
            continue
        add_bots(path, [spec], matches, seed=None if path.exists() else config.seed,
                 rules=None if path.exists() else config.rules, info={spec: info}, play=play,
                 anchor=label if not path.exists() else None,
                 run=[label])  # the opponent: --opponent, or the run's that starts none  # fmt: skip
    with ReadOnlyResults(path) as db:
        report = ladder_report(db)
    ref = next((b for b in report["bots"] if b["label"] == label), None)
    points = [p for p in step_points(report, label) if str(run) in p["label"]]
    writer = SummaryWriter(str(run))
    for p in points:
        for key in ("elo", "low", "high"):
            writer.add_scalar(f"ladder/elo{'' if key == 'elo' else '_' + key}", p[key], p["step"])
        writer.add_scalar("ladder/win_rate", p["win_rate"], p["step"])
        print(f"  step {p['step']:>10}: Elo {p['elo']:.0f} [{p['low']:.0f}, {p['high']:.0f}]  "
              f"win rate against {shown} {100 * p['win_rate']:5.1f}% "
              f"[{100 * p['win_low']:.1f}, {100 * p['win_high']:.1f}]")  # fmt: skip
    writer.close()
    png = save_figure(figure_by_step(points, shown, ref["elo"] if ref else None),
                      run / "plots" / "ladder_elo.png")  # fmt: skip
    print(f"TensorBoard: {run} (ladder/*); plot: {png}; the whole ladder: "
          f"fourhundred ladder report --db {path}")  # fmt: skip
    return 0


def _on_ladder(path: Path, spec: str, digest: str | None, read: Any, opener: Any) -> bool:
    """Whether `spec`, with these files, is on the ladder with its games all played."""
    if not path.exists():
        return False
    with opener(path) as db:
        ladder = read(db)
    bots = [b for b in ladder.bots if b.spec == spec and b.files == digest]
    if not bots or bots[-1].label not in ladder.active():
        return False
    return all(e.finished for e in ladder.events if bots[-1].label in e.labels)
