"""The fitted-Q bidder's config (``mode: bid_q``, configs/bidding_q.yaml): `BidQConfig`, read
from YAML and ``key=value`` overrides by the shared loader, every field checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fourhundred_agents.neural.device import check_device
from fourhundred_env.configs import (
    asdict_shallow,
    build,
    check_fields,
    check_numbers,
    config_path,
    load_yaml,
    parse_overrides,
)
from fourhundred_env.errors import ConfigError
from fourhundred_train.run_data import check_run_fields

AGENT_KEYS = ("play",)
"""The config's agent specs (`matchwin` is a weights file: data)."""
CODE_KEYS = {"reward": (), "features": ()}
"""The config's fields that name a function of your own to import when not ''."""

BID_HEADS = {"value": 1, "outcome": 2}
"""BidNetConfig.head_version of each ``bid_head`` setting."""


@dataclass(frozen=True)
class BidQConfig:
    """A fitted-Q bidding run (see train/bid_q/__init__.py)."""

    name: str = "bidding_q"
    """Name of the run (its folder is runs_dir/name__seed__time)."""
    mode: Literal["bid_q"] = "bid_q"
    """This trainer (``fourhundred train`` picks it by this key)."""
    seed: int = 1
    """Seed of every deal of the run (matches and play-outs)."""
    rules: str = "wiki"
    """Rules preset."""
    value: Literal["match_value", "team_points"] = "match_value"
    """What a play-out is worth: 100 x the team's change of match-win estimate over the hand,
    or the team's points in the hand."""
    matchwin: str = ""
    """Match-win weights for value match_value: a file, or the name of one bundled in
    agents/pretrained ('' = the bundled estimate of the run's rules); under other rules than
    the file's, its variant fitted under them (bundled, or cached by ``fourhundred
    fit-matchwin``)."""
    play: str = "heuristic-v1"
    """Who plays every card, and the other side's bids, in the matches the positions come from
    and in the play-outs: an agent spec; the bidder's checkpoint records it as its card
    player (``neural-bid:``). ``heuristic-v1`` runs compiled; any other bot (your own,
    registered or from ``--agent-module``) is asked through its ``act``, slower, and needs
    worlds 0."""
    reward: str = ""
    """Your own value of a play-out, instead of `value`'s: ``package.module:function`` (or an
    entry point in ``fourhundred.bid_rewards``) taking a BidOutcome and returning one number
    per play-out, on the true deal or in each of the bid search's worlds
    (train/bid_q/hooks.py). '' = `value` alone."""
    features: str = ""
    """Bid features of your own, appended to the network's input: ``package.module:function``
    (or ``FILE.py:function``, or an entry point in ``fourhundred.bid_features``) taking the
    bidding seat's SeatView of K tables and returning (K, F) finite numbers
    (agents/neural/extra_features.py). The checkpoint records only the function's name and F:
    play it as ``neural-bid:PATH,features=SPEC``. '' = none."""
    match_features: bool = True
    """False: the network does not see the match scores and target (blanked, as in the
    agent playing the checkpoint)."""
    per_point: float = 0.0
    """With value match_value, added to a play-out's value per point the team scores in the
    hand, in match-win units (0.003: 10 points weigh 3 percentage points; as ``search``'s
    per_point): of two bids about even for the match, the one that scores more is worth more."""
    worlds: int = 0
    """0: each bid is played out once on the position's true deal. K > 0: each bid is valued
    by its mean over K worlds dealt from the bidding seat's view, weighted by how likely
    heuristic-v1 makes the bids already seen there (the bid search of ``search``, every seat
    played by heuristic-v1; agents/search/agent.py): lower-noise targets, slower."""
    candidates: int = 128
    """With worlds K > 0: deals drawn per position before they are weighted by the bids seen
    and resampled down to the K worlds (at least K; ``search:bidder`` draws 8,192 for its 512
    worlds)."""
    workers: int = 1
    """Processes that compute the worlds' values (worlds > 0), each on a share of the
    positions: the values do not depend on the share."""
    net: Literal["mlp", "bid_features"] = "mlp"
    """The network: ``mlp`` reads the observation (agents/neural/network.py); ``bid_features`` also
    reads heuristic-v1's evaluation of the hand and what each bid would do to the match,
    with one head shared by the bids (agents/neural/bid_net.py)."""
    iterations: int = 3
    """Rounds of (play matches, play out every bid, fit)."""
    positions: int = 300000
    """Learner bidding positions recorded per iteration."""
    num_tables: int = 2048
    """Matches played side by side while recording positions."""
    max_hands: int = 200
    """A match still running after this many hands is abandoned (a new one starts)."""
    hidden: int = 256
    """Width of each hidden layer."""
    layers: int = 2
    """Hidden layers (net mlp)."""
    head: int = 128
    """Width of the first layer of the head that scores each bid (net bid_features)."""
    bid_head: Literal["value", "outcome"] = "value"
    """What that head gives (net bid_features, value match_value for ``outcome``): ``value``,
    each bid's value; ``outcome``, each bid's chance of being made and a correction, the value
    being worked out from that chance and the features' match-win change if made and if missed
    (agents/neural/bid_net.py): the product a plain head must learn is then built in."""
    window: int = 0
    """Fit on the positions of the last `window` iterations only (0: all so far), so that
    the fit's time and memory stay bounded however many iterations run."""
    epochs: int = 4
    """Passes over the kept positions, per iteration."""
    batch_size: int = 1024
    """Positions per gradient step."""
    learning_rate: float = 0.001
    """Adam's learning rate (x 0.3 for the last quarter of each iteration's epochs)."""
    clip: float = 8.0
    """The fitted targets are each bid's value minus the value of the bid the iteration's
    bidder made (what the deal's luck adds to every bid cancels), floored at -clip (a
    hopeless bid need not be fitted exactly); 0: no floor."""
    torch_threads: int = 1
    """torch.set_num_threads."""
    device: str = "auto"
    """Where the fit runs: "auto" (a CUDA GPU if torch finds one, else the CPU), "cpu",
    "cuda" or "cuda:N". The matches and play-outs are played on the CPU, and the checkpoints
    hold CPU tensors; a resume may change it. On the CPU a seed gives the same weights bit
    for bit; on a GPU not quite (docs/training.md, "Training on a GPU")."""
    eval_every: int = 1
    """Iterations between evaluations of the bidder (and after the last; 0: never): its bids
    judged as ``bid-eval --report`` judges them (eval/bid_*: `eval_deals`) and, with
    `eval_matches`, in duplicate matches. Evaluations have their own seeds and change no
    weight."""
    eval_deals: int = 16
    """Deals per match situation and dealer of the bidding benchmark's hands at each
    evaluation (7 situations x 4 dealers x this: 448 hands at 16), the same every time:
    dP(win) and points per hand over heuristic-v1's bids on the same hands with their 95%
    intervals, contracts made, hands thrown in; 0: none."""
    eval_matches: int = 0
    """Duplicate match pairs per evaluation of ``neural-bid:`` (heuristic-v1's cards) against
    heuristic-v1 (eval/win_rate with its Wilson interval); 0: none."""
    runs_dir: str = "runs"
    """Where run folders go."""

    def __post_init__(self) -> None:
        check_fields(self)
        check_device(self.device)  # its form; whether this machine has it, when a run starts
        check_numbers(self)  # no nan or inf; the seed's range
        for name in ("iterations", "positions", "num_tables", "max_hands", "hidden", "layers",
                     "head", "epochs", "batch_size", "torch_threads", "workers",
                     "candidates"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)}: expected at least 1")
        for name in ("eval_every", "eval_deals", "eval_matches"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name}={getattr(self, name)}: expected 0 (none) or more")
        if self.worlds < 0:
            raise ConfigError(f"worlds={self.worlds}: expected 0 (the true deal) or more")
        if self.play != "heuristic-v1" and self.worlds:
            raise ConfigError(
                f"play={self.play!r} with worlds={self.worlds}: expected worlds: 0 (the bid "
                "search's worlds are played by heuristic-v1 in compiled code)"
            )
        if self.window < 0:
            raise ConfigError(f"window={self.window}: expected 0 (all iterations) or more")
        if not self.per_point >= 0:
            raise ConfigError(f"per_point={self.per_point}: expected 0 or more")
        if self.per_point and self.value != "match_value":
            raise ConfigError(
                f"per_point={self.per_point} with value={self.value}: expected value: "
                "match_value (per_point adds points to the match value)"
            )
        if self.net == "bid_features" and not self.match_features:
            raise ConfigError(
                "net=bid_features with match_features=false: expected match_features: true "
                "(the bid features are worked out from the match scores)"
            )
        if self.bid_head == "outcome" and (self.net, self.value) != ("bid_features", "match_value"):
            raise ConfigError(
                f"bid_head=outcome with net={self.net}, value={self.value}: expected net: "
                "bid_features and value: match_value (the head works in match-win change)"
            )
        if self.clip < 0:
            raise ConfigError(f"clip={self.clip}: expected 0 (none) or more")
        if not self.learning_rate > 0:
            raise ConfigError(f"learning_rate={self.learning_rate}: expected a number > 0")

    def to_dict(self) -> dict:
        """The init fields as a dict (values as they are), as saved in config.yaml."""
        return asdict_shallow(self)


def load_bid_q_config(path, overrides=()) -> BidQConfig:
    """BidQConfig from a YAML file (or bundled name) plus ``key=value`` overrides."""
    values = load_yaml(config_path(path)) if path is not None else {}
    texts = parse_overrides(overrides)
    values.update(texts)
    return build(BidQConfig, values, str(path) if path is not None else "config", text=texts)


def resume_bid_q_config(run_dir: Path, overrides=()) -> BidQConfig:
    """The config of the run in `run_dir` (its config.yaml) with `overrides`. A spec of the
    run's that starts a program (AGENT_KEYS), or a function of its own to import (CODE_KEYS),
    is refused unless an override names it again: a run folder is data (`check_run_fields`)."""
    config = load_bid_q_config(Path(run_dir) / "config.yaml", overrides)
    check_run_fields(config.to_dict(), parse_overrides(overrides), AGENT_KEYS, CODE_KEYS,
                     where=f"--resume {str(run_dir)!r}: ")  # fmt: skip
    return config


def is_bid_q(path) -> bool:
    """The YAML at `path` (or bundled name) is a ``mode: bid_q`` config."""
    if path is None:
        return False
    values = load_yaml(config_path(path))
    return isinstance(values, dict) and values.get("mode") == "bid_q"
