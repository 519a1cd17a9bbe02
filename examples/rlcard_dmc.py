"""RLCard's DMC (Deep Monte-Carlo, DouZero's trainer) on 400, unchanged, with a progress bar
and its learning curve in TensorBoard.

    pip install -e '.[rlcard]'
    python examples/rlcard_dmc.py --total-frames 2000000 --num-actors 2

What it runs is RLCard's own ``DMCTrainer`` on ``rlcard.make("fourhundred")``
(fourhundred_env/envs/rlcard.py): actor processes play hands with the learner's networks (one
per seat), the learner fits each seat's Q-network to the hands' payoffs (team points by
default). DMC logs to ``<run>/dmc/logs.csv``; this script follows that file, drives a tqdm bar
over the frames and writes TensorBoard scalars under the run folder (``charts/return_P``,
``losses/loss_P``, step = frames), named as ``fourhundred train`` names its runs
(``runs/<exp_name>__<seed>__<time>``, with a config.yaml). At the end the run holds DMC's
``dmc/model.tar`` and ``dmc/fourhundred.json`` (the observation version and the rules, which
``rlcard:`` checks), and plays anywhere an agent does::

    fourhundred tournament --agents rlcard:runs/rlcard_dmc__1__<time>/dmc heuristic-v1

DMC overwrites model.tar at each checkpoint (every ``--save-interval`` minutes); this script
keeps a copy of each in ``dmc/snapshots/<frames>/`` (model.tar, the manifest and a
``snapshot.json`` of its frames and training minutes), each playable as ``rlcard:<folder>``,
which ``benchmarks/dmc_curve.py`` turns into a learning curve. ``--total-minutes`` ends a run by
the clock, with DMC's own final checkpoint::

    python examples/rlcard_dmc.py --total-minutes 60 --save-interval 5 --num-actors 1

DMC is asynchronous (actor processes and learner threads), so two runs with one seed see the
same deals in the same order per actor but not the same updates: not bit for bit the same.
DMC's ``meta.json`` records the process environment; this script blanks it.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import inspect
import io
import itertools
import json
import multiprocessing
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rlcard
import torch
import yaml
from tqdm import tqdm

import fourhundred_env.envs.rlcard  # noqa: F401 - registers "fourhundred"
from fourhundred_agents.libraries.rlcard import MANIFEST_NAME, write_manifest
from fourhundred_env import Rules


@dataclass
class Args:
    """Every setting, one command-line flag each (``--num-actors 2``)."""

    exp_name: str = "rlcard_dmc"
    """Run name: runs/<exp_name>__<seed>__<time>."""
    seed: int = 1
    """Seeds the env (actor i: RLCard seeds it with i; the deals also with this seed), torch
    and numpy."""
    reward: str = "team_points"
    """The payoff DMC fits: "team_points", "hand_points" or "match_result"."""
    episode: str = "hand"
    """"hand" (one hand a game) or "match"."""
    total_frames: int = 2_000_000
    """Learner samples (decisions) to train on."""
    num_actors: int = 2
    """Actor processes playing hands."""
    unroll_length: int = 100
    """Decisions per buffer (DMC's T)."""
    batch_size: int = 32
    """Buffers per learner step (DMC's B)."""
    num_buffers: int = 50
    """Shared-memory buffers per seat."""
    num_threads: int = 1
    """Learner threads per seat."""
    learning_rate: float = 1e-4
    """RMSprop's step size (DMC's default)."""
    exp_epsilon: float = 0.01
    """Actors' exploration: a random legal action with this probability."""
    save_interval: float = 30.0
    """Minutes between DMC's checkpoints (it also saves at the start and the end)."""
    total_minutes: float = 0.0
    """Stop after this many minutes of training, with DMC's final checkpoint (0: no limit,
    only total_frames)."""
    snapshots: bool = True
    """Keep a copy of each checkpoint DMC saves (it overwrites model.tar) in
    dmc/snapshots/<frames>/, loadable as rlcard:<that folder>, for a learning curve."""
    tensorboard: bool = True
    """Write TensorBoard events (needs the tensorboard package)."""
    progress: bool = True
    """Show a progress bar over the frames."""
    runs_dir: str = "runs"
    """Where run folders go."""
    run_dir: str = ""
    """The run's folder exactly (empty: <runs-dir>/<exp-name>__<seed>__<time>)."""


def field_help(cls: type) -> dict[str, str]:
    """Each field's docstring (the string under it in the class body), for its flag's help."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {
        a.target.id: " ".join(b.value.value.split()).replace("%", "%%")
        for a, b in itertools.pairwise(body)
        if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)
        and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
    }  # fmt: skip


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one flag per field, its docstring as the help."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    docs = field_help(Args)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        text = f"{docs[f.name]} (default: %(default)s)"
        if isinstance(f.default, bool):
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=f.default, help=text
            )
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    return Args(**vars(parser.parse_args(argv)))


def read_log(folder: Path) -> list[dict[str, float]]:
    """The rows DMC has logged so far (``logs.csv`` with the names of ``fields.csv``)."""
    fields_path, logs_path = folder / "fields.csv", folder / "logs.csv"
    if not fields_path.is_file() or not logs_path.is_file():
        return []
    names = next(csv.reader(fields_path.open()), [])
    rows = []
    for line in logs_path.read_text().splitlines():
        if line and not line.startswith("#"):
            values = next(csv.reader([line]))
            rows.append({n: float(v) for n, v in zip(names, values, strict=False) if v != ""})
    return rows


def keep_snapshot(folder: Path, start: float, kept: dict[str, float]) -> Path | None:
    """Copy DMC's ``model.tar`` (with the manifest) into ``snapshots/<frames>/`` when it is new
    and whole; `kept` maps model.tar's last seen mtime. Returns the new snapshot's folder.

    DMC rewrites model.tar in place, so a copy is kept only once torch can read it back; each
    snapshot's ``snapshot.json`` records its frames and the training minutes when it was first
    seen (the minutes are counted from just before DMC starts its actors).
    """
    path = folder / "model.tar"
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return None
    if kept.get("mtime") == mtime:
        return None
    data = path.read_bytes()
    try:
        frames = int(torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)["frames"])
    except Exception:  # half written: try again on the next poll
        return None
    kept["mtime"] = mtime
    snapshot = folder / "snapshots" / f"{frames:012d}"
    if (snapshot / "snapshot.json").is_file():
        # a checkpoint before the learner's next step (DMC saves on the clock): the same
        # network, kept with the minutes it was first seen at
        return None
    snapshot.mkdir(parents=True, exist_ok=True)
    (snapshot / "model.tar").write_bytes(data)
    shutil.copy(folder / MANIFEST_NAME, snapshot / MANIFEST_NAME)
    minutes = (time.time() - start) / 60
    (snapshot / "snapshot.json").write_text(
        json.dumps({"frames": frames, "minutes": round(minutes, 3)}) + "\n"
    )
    return snapshot


def follow(folder: Path, args: Args, stop: threading.Event, writer, trainer=None) -> None:
    """Until `stop`: move the bar to DMC's frames, log each new row to TensorBoard, keep a
    snapshot of each checkpoint and, past ``total_minutes``, tell DMC to finish."""
    bar = tqdm(total=args.total_frames, unit="frame", disable=not args.progress)
    seen = 0
    start = time.time()
    kept: dict[str, float] = {}
    while True:
        if args.snapshots:
            keep_snapshot(folder, start, kept)
        if (
            trainer is not None
            and args.total_minutes
            and time.time() - start > args.total_minutes * 60
        ):
            # DMC's loops run while frames < total_frames: lowering it ends them, and DMC
            # then saves its final checkpoint as it does at the end of a run
            trainer.total_frames = 0
        rows = read_log(folder)
        for row in rows[seen:]:
            frames = int(row.get("frames", 0))
            bar.update(max(0, min(frames, args.total_frames) - bar.n))
            if writer is not None:
                for p in range(4):
                    if f"mean_episode_return_{p}" in row:
                        writer.add_scalar(
                            f"charts/return_{p}", row[f"mean_episode_return_{p}"], frames
                        )
                    if f"loss_{p}" in row:
                        writer.add_scalar(f"losses/loss_{p}", row[f"loss_{p}"], frames)
        seen = len(rows)
        if stop.is_set():
            if args.snapshots:
                keep_snapshot(folder, start, kept)  # DMC's final checkpoint
            break
        stop.wait(1.0)
    bar.close()


def main(args: Args) -> Path:
    """Train and save; returns the folder holding model.tar (the run's ``dmc``)."""
    from rlcard.agents.dmc_agent import DMCTrainer

    run_name = f"{args.exp_name}__{args.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir = Path(args.run_dir) if args.run_dir else Path(args.runs_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump({"name": args.exp_name, **dataclasses.asdict(args)})
    )
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    env = rlcard.make(
        "fourhundred",
        config={"seed": args.seed, "game_reward": args.reward, "game_episode": args.episode},
    )
    trainer = DMCTrainer(
        env, cuda="", xpid="dmc", savedir=str(run_dir), save_interval=args.save_interval,
        num_actors=args.num_actors, total_frames=args.total_frames, exp_epsilon=args.exp_epsilon,
        batch_size=args.batch_size, unroll_length=args.unroll_length,
        num_buffers=args.num_buffers, num_threads=args.num_threads,
        learning_rate=args.learning_rate, training_device="cpu",
    )  # fmt: skip
    trainer.plogger.metadata["env"] = {}  # DMC writes the whole process environment there
    trainer.plogger._save_metadata()
    folder = run_dir / "dmc"
    write_manifest(folder, Rules())
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir))
        writer.add_text("hyperparameters", str(dataclasses.asdict(args)))
    before = set(multiprocessing.active_children())
    stop = threading.Event()
    monitor = threading.Thread(
        target=follow, args=(folder, args, stop, writer, trainer), daemon=True
    )
    monitor.start()
    try:
        trainer.start()
    finally:
        # DMC's actors loop for ever (they are not daemons): end the ones it started here
        for process in set(multiprocessing.active_children()) - before:
            process.terminate()
            process.join()
        stop.set()
        monitor.join()
        if writer is not None:
            writer.close()
    print(f"model: {folder / 'model.tar'}; play it: fourhundred tournament --agents "
          f"rlcard:{folder} heuristic-v1")  # fmt: skip
    return folder


if __name__ == "__main__":
    main(parse_args())
