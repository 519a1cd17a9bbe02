"""Training configs: frozen dataclasses loaded from YAML, overridable from the command line.

    cfg = load_config("configs/selfplay.yaml", overrides=["learning_rate=1e-4", "seed=3"])

An unknown key, in the file or an override, is an error that names it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fourhundred_agents.neural.device import check_device
from fourhundred_env.configs import (
    build,
    check_fields,
    check_numbers,
    config_path,
    load_yaml,
    parse_overrides,
    save_yaml,
)
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules
from fourhundred_train.run_data import check_run_fields

__all__ = [
    "AGENT_KEYS",
    "CODE_KEYS",
    "FIXED_ON_RESUME",
    "FIXED_REWARDS",
    "ConfigError",
    "TrainConfig",
    "config_from_dict",
    "load_config",
    "resume_config",
    "save_config",
]

FIXED_REWARDS = ("team_points", "hand_points", "match_value")
"""The rewards of `TrainConfig.reward` built in; any other is a function of your own."""

AGENT_KEYS = ("opponent", "play_policy", "eval_opponent", "teacher")
"""The config's agent specs (`fourhundred_train.ppo.check_agents` makes each; a teacher of None
is none)."""

CODE_KEYS = {"reward": FIXED_REWARDS, "features": ()}
"""The config's fields that may name a function of your own to import, with their built-in
values (which name none)."""

FIXED_ON_RESUME = ("mode", "hidden", "layers", "match_features", "oracle_critic")
"""Keys a resumed run may not change: they make another run (another learner, or a network of
another shape or input), which its latest.pt and policy.pt would no longer be."""


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Every field has a docstring; YAML keys are these field names."""

    name: str = "selfplay"
    """Run name: the run folder is runs/<name>__<seed>__<time>."""
    mode: Literal["selfplay", "bidding"] = "selfplay"
    """"selfplay": PPO on bidding and card play; "bidding": PPO on the bid only, with card play
    (and the other seats' bids) held fixed by `play_policy` on FourHundredBid-v0."""
    seed: int = 1
    """Seed of everything: deals, opponent sampling, network initialisation."""
    rules: str = "wiki"
    """Rules preset ("wiki" or "pagat")."""
    reward: str = "team_points"
    """Reward per hand: "team_points", the seat's team's points (partners share);
    "hand_points", the seat's own; "match_value": only the match-value term (see
    `match_value_points`), no points. Mode "bidding" also takes your own reward,
    ``package.module:function`` (or ``path/to/file.py:function``, or an entry point in
    ``fourhundred.bid_rewards``): a function of a BidOutcome (train/bid_q/hooks.py) giving
    each hand's reward of the bidding seat, as the fitted-Q bidder's `reward` does; it is
    checked before any work."""
    features: str = ""
    """Mode "bidding": bid features of your own, appended to the policy's input at every
    learner bid: ``package.module:function`` (or ``path/to/file.py:function``, or an entry
    point in ``fourhundred.bid_features``) taking the bidding seat's SeatView of K tables and
    returning (K, F) finite numbers (agents/neural/extra_features.py), checked before any
    work. policy.pt records only the function's name and F: play it as
    ``neural-bid:PATH,features=SPEC``. '' = none."""
    match_value_points: float = 0.0
    """Match value: > 0 adds to each hand's reward what the hand did to the team's chance of
    winning the match, times this many points (before reward_scale): the change of the
    match-win estimate (agents/value/matchwin.py) from before the hand to after it, 1 or 0 when it
    ends the match; a hand thrown in changes only the dealer. 0: off (needed > 0 with reward
    "match_value")."""
    match_features: bool = True
    """The learner sees the match situation (scores, who is at the target or above zero, the
    target). False blanks those entries of its observation (minimum bids, required total and
    bids stay: they are the rules of this hand), in training and in the agent that plays the
    checkpoint (recorded in it): the "no match features" ablation."""
    learner_partnership: bool = False
    """Bidding mode: the learner bids for seats 0 and 2, both seats of its partnership, as a
    bidder paired with itself does in a match (False: seat 0 alone, `play_policy` bids for
    its partner)."""
    match_bonus: float = 0.0
    """Points (before reward_scale) given to both seats of the partnership whose hand wins
    the match, and taken from both losers: training hands start from drawn scores, so some
    of them end the match, and the learner learns what winning is worth beyond points."""
    reward_scale: float = 0.05
    """Rewards are multiplied by this before learning (hand points reach +-80)."""
    hand_scores_low: int = -20
    """Pre-hand scores of training hands are drawn from low..high so that score rules matter."""
    hand_scores_high: int = 45
    """See hand_scores_low."""
    num_tables: int = 512
    """Tables played in lockstep per rollout (all groups together)."""
    rollout_steps: int = 192
    """Steps per rollout; hands still unfinished at its end are not learned from."""
    total_decisions: int = 5_000_000
    """Stop after this many learner decisions."""
    selfplay_share: float = 0.5
    """Share of tables where all four seats are the learner."""
    heuristic_share: float = 0.3
    """Share of tables where the learner partnership plays `heuristic` opponents."""
    snapshot_share: float = 0.2
    """Share of tables against a frozen past snapshot (heuristic until one exists)."""
    opponent: str = "heuristic"
    """Agent spec of the scripted opponents (and of play in bidding mode)."""
    play_policy: str = "heuristic"
    """Bidding mode: agent spec that plays the cards and makes the other seats' bids."""
    teacher: str | None = None
    """Kickstarting (Schmitt et al. 2018): an agent spec whose action at every learner decision
    is a second, cross-entropy target beside PPO's (None: pure PPO). The teacher only labels
    the learner's own states; it never acts."""
    kickstart_coef: float = 0.0
    """Weight of the teacher's cross-entropy at the start of the run."""
    kickstart_decisions: int = 0
    """The weight falls linearly to 0 over this many learner decisions (0: stays constant)."""
    rollout_share: float = 0.0
    """Share of the learner's decisions (bids and cards, where there is a choice) valued by
    rollouts: each legal action is played out to the end of the hand on the true table by the
    teacher at every seat (each from its own view), and the policy is pushed towards the
    actions worth most to its team (agents/search/rollout.py: one step of policy improvement over
    the teacher). 0: no rollouts."""
    rollout_team_from: int | None = None
    """Policy iteration: from this many learner decisions on, the learner's own policy of the
    moment (greedy) plays its partnership's seats in the rollouts and the teacher only the
    opponents', so an action is valued by how the learner itself would go on against the
    teacher (None: the teacher plays all four seats throughout)."""
    rollout_team_dtype: str = "bfloat16"
    """Float type of the learner's copy that plays the rollouts: bfloat16 (about 5x faster
    matrix products on CPUs with AVX-512 BF16, the logits compared in float32) or float32."""
    rollout_coef: float = 1.0
    """Weight of the rollout term, sum over actions of pi(a) * (value - mean value) in
    reward_scale units, against PPO's loss (constant over the run)."""
    average_from: int | None = None
    """Weight averaging (SWA, Izmailov et al. 2018): from this many learner decisions on, the
    policy's weights after every `average_every`-th update enter a uniform mean, and the run's
    policy.pt (the product, and what the evaluations play) is that mean. Training itself is
    unchanged: it goes on from the last weights, and the snapshots are the last weights
    (None: no averaging, policy.pt is the last weights)."""
    average_every: int = 10
    """Updates between the weights that enter the average (at updates divisible by it)."""
    oracle_critic: bool = False
    """Advantages from a separate critic that also sees the other hands (training only; the
    policy still reads its own observation): the deal's luck drops out of the advantages."""
    snapshot_every: int = 10
    """Updates between frozen snapshots added to the opponent pool."""
    pool_size: int = 8
    """Newest snapshots kept in the pool."""
    learning_rate: float = 3e-4
    """Adam learning rate (annealed linearly to 0 if anneal_lr)."""
    anneal_lr: bool = True
    """Anneal the learning rate linearly over the run."""
    gamma: float = 1.0
    """Discount per decision (hands are short and episodic)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    num_minibatches: int = 8
    """Minibatches per epoch."""
    update_epochs: int = 3
    """Epochs over each rollout."""
    clip_coef: float = 0.2
    """PPO ratio clip."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    target_kl: float | None = 0.05
    """Stop the epochs of an update early when approx KL exceeds this (None: never)."""
    hidden: int = 256
    """Width of the network's hidden layers."""
    layers: int = 3
    """Number of hidden layers."""
    eval_every: int = 20
    """Updates between evaluations by the tournament runner (0: never)."""
    eval_matches: int = 100
    """Duplicate match pairs per evaluation against `eval_opponent` (2 matches each)."""
    eval_opponent: str = "heuristic-v1"
    """Agent spec the evaluation plays against."""
    eval_bid_deals: int = 16
    """Bidding mode: at every evaluation the policy's bids are also judged as ``bid-eval
    --report`` judges them (its hands: 7 match situations x 4 dealers x this many seeded
    deals, the same at every evaluation, against heuristic-v1's bids on the same hands, the
    cards by `play_policy`), logged as eval/bid_* (dP(win) and points per hand over
    heuristic-v1's bids with their 95% intervals, contracts made, hands thrown in); 0: off.
    16 deals: 448 hands a bidder, a few seconds."""
    checkpoint_every: int = 10
    """Updates between checkpoints (the last one is always written)."""
    torch_threads: int = 2
    """torch.set_num_threads (of the learner; each Ray rollout actor uses one thread)."""
    device: str = "auto"
    """Where the learner's network (and oracle critic) learns: "auto" (a CUDA GPU if torch
    finds one, else the CPU), "cpu", "cuda" or "cuda:N". The rollouts are played on the CPU
    with a copy of the weights taken before each; checkpoints hold CPU tensors, and a resume
    may change the device. On the CPU a seed gives the same run bit for bit; on a GPU not
    quite (docs/training.md, "Training on a GPU")."""
    backend: Literal["local", "ray"] = "local"
    """Where rollouts are played: "local" in this process (the default; bit for bit as
    before), "ray" by `rollout_actors` Ray actors (the ``ray`` extra), each with a copy of
    the network whose weights are sent to them every update, each playing its share of every
    group of tables on a core of its own; the learner waits for all of them (synchronous,
    on-policy). One actor gives the local rollouts bit for bit (with torch_threads: 1);
    several give rollouts fixed by the seed and the number of actors (train/ray_rollouts.py)."""
    rollout_actors: int = 2
    """backend ray: how many rollout actors (each takes 1 CPU of the Ray instance)."""
    ray_address: str | None = None
    """backend ray: the Ray cluster to join (HOST:PORT of its head, or "auto"); None starts a
    local Ray instance with `rollout_actors` CPUs for the run."""
    runs_dir: str = "runs"
    """Folder of run folders."""

    def __post_init__(self) -> None:
        check_fields(self)  # types and choices, from the annotations
        Rules.preset(self.rules)  # raises on an unknown preset
        check_device(self.device)  # its form; whether this machine has it, when a run starts
        for name in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name}={getattr(self, name)}: expected a number from 0 to 1")
        for name in ("learning_rate", "clip_coef", "max_grad_norm", "reward_scale"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}={getattr(self, name)}: expected a number > 0")
        for name in ("ent_coef", "vf_coef"):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name}={getattr(self, name)}: expected a number >= 0")
        if self.target_kl is not None and not self.target_kl > 0:
            raise ConfigError(
                f"target_kl={self.target_kl}: expected a number > 0, or null for no early stop"
            )
        check_numbers(self)  # any other float: no nan or inf; the seed's range
        shares = self.selfplay_share + self.heuristic_share + self.snapshot_share
        if (
            abs(shares - 1.0) > 1e-6
            or min(self.selfplay_share, self.heuristic_share, self.snapshot_share) < 0
        ):
            raise ConfigError(
                f"selfplay_share + heuristic_share + snapshot_share = {shares}: expected shares >= 0 adding to 1"
            )
        for name in ("num_tables", "rollout_steps", "total_decisions", "num_minibatches",
                     "update_epochs", "hidden", "layers", "torch_threads", "pool_size", "average_every",
                     "rollout_actors"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)!r}: expected a positive integer")
        if self.eval_bid_deals < 0:
            raise ConfigError(f"eval_bid_deals={self.eval_bid_deals}: expected 0 (off) or more")
        from fourhundred_agents.neural.network import (
            NetConfig,
        )  # torch: loaded by every user of a run

        problem = NetConfig(hidden=self.hidden, layers=self.layers).size_problem()
        if problem is not None:  # refused here, before a run folder or a weight exists
            raise ConfigError(f"network too big: {problem}")
        if self.reward not in FIXED_REWARDS and self.mode != "bidding":
            raise ConfigError(
                f"reward={self.reward!r}: expected one of {', '.join(FIXED_REWARDS)} (your own "
                "reward, 'package.module:function', is for mode 'bidding')"
            )
        if self.features and self.mode != "bidding":
            raise ConfigError(
                f"features={self.features!r}: your own bid features are for mode 'bidding' "
                "(the learner's bids alone read them)"
            )
        if self.match_value_points < 0 or (
            self.reward == "match_value" and self.match_value_points == 0
        ):
            raise ConfigError(
                f"match_value_points={self.match_value_points} with reward={self.reward!r}: "
                "expected a value >= 0, and > 0 with reward 'match_value'"
            )
        if self.mode != "bidding" and (self.learner_partnership or not self.match_features):
            raise ConfigError("learner_partnership and match_features=false are for mode='bidding'")
        if self.match_bonus < 0:
            raise ConfigError(f"match_bonus={self.match_bonus}: expected a value >= 0")
        if self.kickstart_coef < 0 or self.kickstart_decisions < 0:
            raise ConfigError(
                f"kickstart_coef={self.kickstart_coef}, kickstart_decisions="
                f"{self.kickstart_decisions}: expected values >= 0"
            )
        if self.kickstart_coef > 0 and self.teacher is None:
            raise ConfigError(f"kickstart_coef={self.kickstart_coef} needs a teacher agent spec")
        if not 0.0 <= self.rollout_share <= 1.0 or self.rollout_coef < 0:
            raise ConfigError(
                f"rollout_share={self.rollout_share}, rollout_coef={self.rollout_coef}: "
                "expected a share from 0 to 1 and a weight >= 0"
            )
        if self.rollout_share > 0 and self.teacher is None:
            raise ConfigError(
                f"rollout_share={self.rollout_share} needs a teacher agent spec to play the rollouts"
            )
        for name, off in (("rollout_team_from", "the teacher at every seat"),
                          ("average_from", "no weight averaging")):  # fmt: skip
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ConfigError(
                    f"{name}={value!r}: expected a number of decisions >= 0, or null for {off}"
                )
        if self.rollout_team_dtype not in ("bfloat16", "float32"):
            raise ConfigError(
                f"rollout_team_dtype={self.rollout_team_dtype!r}: expected 'bfloat16' or 'float32'"
            )
        if self.num_tables < 4:
            raise ConfigError(f"num_tables={self.num_tables}: expected at least 4")
        if self.backend == "ray" and self.rollout_actors > self.num_tables:
            raise ConfigError(
                f"rollout_actors={self.rollout_actors}: expected at most num_tables="
                f"{self.num_tables} (each actor plays a share of the tables)"
            )
        if self.ray_address is not None and self.backend != "ray":
            raise ConfigError(
                f"ray_address={self.ray_address!r}: expected backend 'ray' with an address"
            )

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (`dataclasses.asdict`), as saved in config.yaml."""
        return dataclasses.asdict(self)


def config_from_dict(
    values: dict[str, Any], source: str = "config", text: Iterable[str] = ()
) -> TrainConfig:
    """A TrainConfig from a mapping (`text`: the keys whose values are text to parse)."""
    return build(TrainConfig, values, source, text=text)


def load_config(
    path: str | Path | None, overrides: list[str] | tuple[str, ...] = ()
) -> TrainConfig:
    """TrainConfig from a YAML file or a bundled config's name (``"tiny"``, see
    :func:`~fourhundred_env.configs.config_path`; None: defaults) plus ``key=value``
    overrides."""
    if path is not None:
        path = config_path(path)
    values: dict[str, Any] = {} if path is None else load_yaml(path)
    texts = parse_overrides(overrides)
    values.update(texts)
    return config_from_dict(values, str(path) if path is not None else "config", text=texts)


def resume_config(run_dir: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """The config of the run in `run_dir` (its config.yaml) with ``key=value`` overrides, which
    may not change a key of FIXED_ON_RESUME: the run's checkpoints were made for its own. A
    spec of the run's (AGENT_KEYS) that starts a program, or a function of its own to import
    (CODE_KEYS), is refused unless an override names it again: a run folder is data
    (`check_run_fields`)."""
    path = Path(run_dir) / "config.yaml"
    saved, config = load_config(path), load_config(path, overrides)
    check_run_fields(config.to_dict(), parse_overrides(overrides), AGENT_KEYS, CODE_KEYS,
                     where=f"--resume {str(run_dir)!r}: ")  # fmt: skip
    for key in FIXED_ON_RESUME:
        old, new = getattr(saved, key), getattr(config, key)
        if new != old:
            raise ConfigError(
                f"--resume {str(run_dir)!r}: {key}={new!r} differs from the run's {old!r}: "
                f"expected the run's own {key} (start a new run to change it)"
            )
    return config


def save_config(config: TrainConfig, path: str | Path) -> None:
    """Write the resolved config as YAML, atomically (a temporary file, then a rename)."""
    save_yaml(config.to_dict(), path)
