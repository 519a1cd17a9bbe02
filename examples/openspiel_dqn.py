"""OpenSpiel's PyTorch DQN on 400, unchanged, through OpenSpiel's ``rl_environment``, with a
progress bar; the saved network then plays in our tournaments as ``openspiel:dqn,path=PATH``.

    pip install -e '.[openspiel,train]'
    python examples/openspiel_dqn.py --episodes 2000

What it runs is OpenSpiel's own loop (as its ``breakthrough_dqn.py`` example): the game
``pyspiel.load_game("fourhundred")`` (one hand, team points as the return;
fourhundred_env/envs/openspiel.py) in an ``rl_environment.Environment``, which deals by chance
and feeds each learner ``info_state`` (the game's information-state tensor: our observation
encoder's 588 entries) and ``legal_actions``; one ``open_spiel.python.pytorch.dqn.DQN`` per
seat learns from the hands it plays. At the end each seat's learner is saved with
``agent.save(...)`` as ``dqn_<seat>.pt`` in the run folder
(``runs/<exp_name>__<seed>__<time>``, with a config.yaml), beside a ``fourhundred.json`` (the
observation version and the rules, which ``openspiel:dqn`` checks); any of them plays any
seat::

    fourhundred tournament --agents openspiel:dqn,path=runs/openspiel_dqn__1__<time>/dqn_0.pt heuristic-v1

The numbers come from ``--seed`` (the deals: the environment's chance sampler; exploration:
numpy's global stream, which OpenSpiel's DQN draws from; the networks: torch), so the same
seed trains the same networks on the CPU.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyspiel
import torch
import yaml
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import dqn
from tqdm import tqdm

import fourhundred_env.envs.openspiel  # noqa: F401 - registers "fourhundred" with pyspiel
from fourhundred_agents.libraries.rlcard import write_manifest
from fourhundred_env import Rules


@dataclass
class Args:
    """Every setting, one command-line flag each (``--episodes 2000``)."""

    exp_name: str = "openspiel_dqn"
    """Run name: runs/<exp_name>__<seed>__<time>."""
    seed: int = 1
    """Seeds the deals (the environment's chance sampler), numpy (DQN's exploration) and
    torch (the networks)."""
    episodes: int = 2000
    """Hands to play (each about 56 decisions, 14 per seat)."""
    hidden: str = "256,256"
    """Hidden layer sizes of each Q-network, comma-separated."""
    batch_size: int = 128
    """Transitions per learning step."""
    replay_buffer_capacity: int = 100_000
    """Transitions each seat's replay buffer keeps."""
    min_buffer_size_to_learn: int = 1000
    """Transitions a seat collects before it learns."""
    learn_every: int = 10
    """A learning step every this many of the seat's decisions."""
    learning_rate: float = 1e-3
    """The optimiser's step size."""
    optimizer: str = "adam"
    """OpenSpiel's optimiser name: "adam" or "sgd"."""
    epsilon_decay_duration: int = 200_000
    """Decisions over which exploration falls from 1 to 0.1."""
    progress: bool = True
    """Show a progress bar over the hands."""
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


def main(args: Args) -> Path:
    """Train and save; returns the saved network of seat 0 (``dqn_0.pt``)."""
    run_name = f"{args.exp_name}__{args.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir = Path(args.run_dir) if args.run_dir else Path(args.runs_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump({"name": args.exp_name, **dataclasses.asdict(args)})
    )
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    game = pyspiel.load_game("fourhundred")
    env = rl_environment.Environment(
        game, chance_event_sampler=rl_environment.ChanceEventSampler(args.seed)
    )
    info_state_size = env.observation_spec()["info_state"][0]
    num_actions = env.action_spec()["num_actions"]
    hidden = [int(size) for size in args.hidden.split(",") if size.strip()]
    agents = []
    for seat in range(4):
        agents.append(dqn.DQN(
            seat, info_state_size, num_actions, hidden_layers_sizes=hidden,
            batch_size=args.batch_size, replay_buffer_capacity=args.replay_buffer_capacity,
            min_buffer_size_to_learn=args.min_buffer_size_to_learn,
            learn_every=args.learn_every, learning_rate=args.learning_rate,
            optimizer_str=args.optimizer, epsilon_decay_duration=args.epsilon_decay_duration,
            seed=args.seed * 4 + seat,
        ))  # fmt: skip
    bar = tqdm(range(args.episodes), unit="hand", disable=not args.progress)
    returns = np.zeros(4)
    for episode in bar:
        time_step = env.reset()
        while not time_step.last():
            seat = time_step.observations["current_player"]
            output = agents[seat].step(time_step)
            time_step = env.step([output.action])
        for agent in agents:  # each learner sees the hand's end
            agent.step(time_step)
        returns += np.asarray(time_step.rewards)
        if episode % 50 == 49 or episode == args.episodes - 1:
            loss = agents[0].loss
            bar.set_postfix(
                return_0=f"{returns[0] / (episode + 1):.1f}",
                loss_0="-" if loss is None else f"{loss:.3g}",
            )
    bar.close()
    write_manifest(run_dir, Rules(), "openspiel")
    for seat, agent in enumerate(agents):
        agent.save(run_dir / f"dqn_{seat}.pt")
    path = run_dir / "dqn_0.pt"
    print(f"network: {path}; play it: fourhundred tournament --agents "
          f"openspiel:dqn,path={path} heuristic-v1")  # fmt: skip
    return path


if __name__ == "__main__":
    main(parse_args())
