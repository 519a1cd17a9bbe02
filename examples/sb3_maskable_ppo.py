"""Train sb3-contrib's MaskablePPO on the natively batched 400 environment, then measure it.

    pip install -e '.[sb3,train]'       # or: make test (installs every extra)
    python examples/sb3_maskable_ppo.py --total-timesteps 200000 --opponents heuristic

The learner holds seat 0 (``--learner-seats 0 2``: the partnership) of ``--num-envs`` tables
stepped as one batch (:mod:`fourhundred_env.envs.sb3`), the other seats played by
``--opponents``. The run folder is ``<runs-dir>/<name>__<seed>__<time>``, named as
``fourhundred train`` names its runs, with SB3's TensorBoard events in it (when tensorboard is
installed; ``rollout/success_rate`` is the share of episodes won, which ``fourhundred plot``
reads as ``charts/win_rate``) and a config.yaml. At the end the model is saved as
``model.zip`` (stamped with the observation version and the rules) and plays
``--eval-matches`` whole matches as the partnership of seats 0 and 2 against ``random`` and
against ``heuristic``: the win rates are printed and logged (``eval/win_rate`` against
heuristic, with its Wilson band). Then::

    fourhundred plot runs/sb3_maskable_ppo__1__<time>
    fourhundred tournament --agents sb3:runs/sb3_maskable_ppo__1__<time>/model.zip random heuristic
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib.util
import inspect
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass
class Args:
    """The run's settings (each one a command-line flag: ``--num-envs 64``)."""

    env_id: str = "FourHundred-v0"
    """"FourHundred-v0" (bids and cards) or "FourHundredBid-v0" (one bid per episode)."""
    opponents: str = "random"
    """Agent spec of the seats the learner does not hold ("random", "heuristic", ...)."""
    learner_seats: list[int] = field(default_factory=lambda: [0])
    """The learner's seat, or a partnership (0 2)."""
    episode: str = "hand"
    """"hand": one hand from drawn scores per episode (quick credit); "match": whole matches."""
    num_envs: int = 64
    """Tables stepped as one batch."""
    total_timesteps: int = 200_000
    """Learner decisions to train on."""
    n_steps: int = 64
    """Decisions per table per rollout (a rollout is num_envs * n_steps decisions)."""
    batch_size: int = 1024
    """Minibatch size."""
    n_epochs: int = 4
    """Passes over each rollout."""
    learning_rate: float = 3e-4
    """Adam's step size."""
    seed: int = 1
    """Seeds the tables (table i: seed + i) and the network."""
    eval_matches: int = 200
    """Whole matches played at the end against random and against heuristic (0: none)."""
    eval_max_hands: int = 100
    """Evaluation matches are drawn after this many hands."""
    torch_threads: int = 1
    """torch's intra-op threads (more only helps on idle cores: on a busy 2-core machine two
    threads made the updates 20 times slower than one)."""
    name: str = "sb3_maskable_ppo"
    """Run name: runs/<name>__<seed>__<time>."""
    runs_dir: str = "runs"
    """Where run folders go."""


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
    """Args from the command line: one flag per field, its docstring as the help."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    docs = field_help(Args)
    for f in dataclasses.fields(Args):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        flag = "--" + f.name.replace("_", "-")
        text = f"{docs[f.name]} (default: %(default)s)"
        if isinstance(default, list):
            parser.add_argument(flag, type=int, nargs="+", default=default, help=text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=text)
    return Args(**vars(parser.parse_args(argv)))


def main(args: Args) -> dict[str, float]:
    """Train, save and evaluate; returns the evaluation's numbers (and the training time)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    from fourhundred_env.envs.sb3 import make_sb3_vec_env, match_results, stamp_model

    torch.set_num_threads(args.torch_threads)
    run_dir = Path(args.runs_dir) / f"{args.name}__{args.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump({**dataclasses.asdict(args), "eval_opponent": "heuristic"})
    )
    options = {"opponents": args.opponents, "episode": args.episode}
    if args.env_id.endswith("FourHundredBid-v0"):  # the bidding env: one seat, one policy
        options = {"policy": args.opponents}
    else:
        options["learner_seats"] = tuple(args.learner_seats)
    env = VecMonitor(
        make_sb3_vec_env(args.env_id, num_envs=args.num_envs, seed=args.seed, **options)
    )
    has_tensorboard = importlib.util.find_spec("tensorboard") is not None
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    if has_tensorboard:  # the events in the run folder itself, not in a MaskablePPO_1/ below
        from stable_baselines3.common.logger import configure

        model.set_logger(configure(str(run_dir), ["tensorboard"]))
    start = time.perf_counter()
    model.learn(args.total_timesteps, progress_bar=False)
    seconds = time.perf_counter() - start
    stamp_model(model)  # sb3:model.zip then checks the observation version and the rules
    model.save(run_dir / "model.zip")
    env.close()
    results = {"train_seconds": seconds, "steps_per_s": model.num_timesteps / seconds}
    print(f"{model.num_timesteps} decisions in {seconds:.0f} s ({results['steps_per_s']:.0f}/s)")
    if args.eval_matches and not args.env_id.endswith("FourHundredBid-v0"):
        evaluation = match_results(
            model, ["random", "heuristic"], args.eval_matches, seed=10_000,
            max_hands=args.eval_max_hands,
        )  # fmt: skip
        for opponent, r in evaluation.items():
            results[f"win_rate_vs_{opponent}"] = r["win_rate"]
            print(
                f"against {opponent}: won {r['win_rate']:.1%}, drew {r['draw_rate']:.1%} "
                f"of {args.eval_matches} matches (partnership of seats 0 and 2)"
            )
        if has_tensorboard:
            log_evaluation(run_dir, evaluation, args.eval_matches, model.num_timesteps)
    print(f"model: {run_dir / 'model.zip'} (play it as sb3:{run_dir / 'model.zip'})")
    return results


def log_evaluation(run_dir: Path, evaluation: dict, matches: int, step: int) -> None:
    """The evaluation's scalars under the tags ``fourhundred train`` uses: ``eval/win_rate``
    against heuristic with its Wilson 95% band, and ``eval/win_rate_vs_<opponent>``."""
    from torch.utils.tensorboard import SummaryWriter

    from fourhundred_tournament.ratings import wilson_interval

    with SummaryWriter(str(run_dir)) as writer:
        for opponent, r in evaluation.items():
            writer.add_scalar(f"eval/win_rate_vs_{opponent}", r["win_rate"], step)
        low, high = wilson_interval(evaluation["heuristic"]["win_rate"] * matches, matches)
        writer.add_scalar("eval/win_rate", evaluation["heuristic"]["win_rate"], step)
        writer.add_scalar("eval/win_rate_low", low, step)
        writer.add_scalar("eval/win_rate_high", high, step)


if __name__ == "__main__":
    main(parse_args())
