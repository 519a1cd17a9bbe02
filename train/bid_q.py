"""A bidder by fitted Q-iteration over exact play-outs (``mode: bid_q``, configs/bidding_q.yaml).

A bid is a one-shot decision and the rest of the hand is cheap to play exactly, so instead of
a policy gradient this trains a regression of Q(situation, hand, bid), the value of each bid:

1. **Situations from real matches.** Matches are played to their end, the learner bidding
   for seats 0 and 2 (its partnership) with its bidder of the moment (``heuristic-v1`` in
   the first iteration), ``heuristic-v1`` bidding for seats 1 and 3 and playing every card.
   Every bid of a learner seat is recorded with the whole table (the match scores, the
   target, the bids so far and the deal): the positions a match really reaches, not scores
   drawn at random.
2. **Every legal bid played out.** From each recorded position every legal bid (and the
   redeal, where allowed) is played out on the same deal: the later bids of the learner's
   partner by the learner's bidder of the moment, the opponents' by ``heuristic-v1``, all
   cards by ``heuristic-v1`` (common random numbers: the bids differ only in the bid). Each
   play-out is valued by what it did to the team's chance of winning the match
   (``value: match_value``: 100 x the change of the match-win estimate over the hand,
   agents/value/match_value.py, in percentage points) or by the team's points in the hand
   (``value: team_points``). No play-out sees a hidden card; only the deal is the true one.
3. **A fitted Q.** A network reads the bidding seat's own observation (match fields blanked
   with ``match_features: false``) and outputs one value per bid; it is fitted by squared
   error to the played-out values of every legal bid of every position. The bidder is the
   argmax of the fitted values: the noise of one deal averages out in the fit, so the
   choice is not the maximum of noisy play-outs (the winner's curse).
4. **Iterate.** The next iteration's matches and play-outs use the new bidder for the
   learner's seats (in a match both seats of a team bid with it), and the network is
   fitted again (warm-started) on the positions of all iterations so far (or of the last
   ``window`` iterations: the fit's time and memory then stay bounded).

**The shipped config** (configs/bidding_q.yaml) values each bid by its mean over 64 worlds
instead of the one true deal (``worlds``: the bid search of ``search:bidder``, far less
noisy targets; computed by ``workers`` processes), adds the team's points (``per_point``), and
fits a network that also reads heuristic-v1's evaluation of the hand and what each bid would
do to the match (``net: bid_features``, agents/neural/bid_net.py), in one iteration.

Either network's bid logits are the Q-values (in value units, relative to the bid made: see
``clip``): greedy ``neural-bid:PATH`` plays it, with ``heuristic-v1``'s card play recorded as
its play policy; the value head (``net: mlp``, a PolicyValueNet) is not fitted and is 0.
The fit runs on ``torch_threads`` threads (the worlds' values in their own processes); each
iteration's positions
and values are saved in the run folder as it ends (``iter_N.npz``) with the network after
it (``iter_N.pt``), and a rerun of the same folder (``--resume``) continues from the last
finished iteration with exactly the result of a straight run; an iteration stopped in its
fit starts again from its saved values (the fit's settings may then be changed: the values
do not depend on them).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from agents.scripted.heuristic_v1 import HeuristicV1Agent
from agents.scripted.playout import Playout
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.configs import (
    asdict_shallow,
    build,
    check_fields,
    config_path,
    load_yaml,
    parse_overrides,
    save_yaml,
)
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import ConfigError
from fourhundred_env.observation import OBS_SCALE, encode_observation
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view

NUM_BIDS = 66 - NUM_CARDS  # bids 0..13 and the redeal: actions 52..65
_BID, _PLAY = int(Phase.BID), int(Phase.PLAY)
_OVER = (int(Phase.HAND_OVER), int(Phase.MATCH_OVER))
BID_HEADS = {"value": 1, "outcome": 2}
"""BidNetConfig.head_version of each ``bid_head`` setting."""


@dataclass(frozen=True)
class BidQConfig:
    """A fitted-Q bidding run (see the module docstring)."""

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
    agents/pretrained ('' = matchwin.npz, fitted on selfplay.pt's card play)."""
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
    runs_dir: str = "runs"
    """Where run folders go."""

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("iterations", "positions", "num_tables", "max_hands", "hidden", "layers",
                     "head", "epochs", "batch_size", "torch_threads", "workers",
                     "candidates"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)}: expected at least 1")
        if self.worlds < 0:
            raise ConfigError(f"worlds={self.worlds}: expected 0 (the true deal) or more")
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
            raise ConfigError(f"learning_rate={self.learning_rate}: expected > 0")

    def to_dict(self) -> dict:
        return asdict_shallow(self)


def load_bid_q_config(path, overrides=()) -> BidQConfig:
    """BidQConfig from a YAML file (or bundled name) plus ``key=value`` overrides."""
    values = load_yaml(config_path(path)) if path is not None else {}
    texts = parse_overrides(overrides)
    values.update(texts)
    return build(BidQConfig, values, str(path) if path is not None else "config", text=texts)


def is_bid_q(path) -> bool:
    """The YAML at `path` (or bundled name) is a ``mode: bid_q`` config."""
    if path is None:
        return False
    values = load_yaml(config_path(path))
    return isinstance(values, dict) and values.get("mode") == "bid_q"


class QBidder:
    """The learner's bidder of the moment: heuristic-v1 (net None) or the argmax of a
    Q-network's bid values, from the seat's own view."""

    def __init__(self, engine: Engine, net=None, blank: tuple = ()) -> None:
        self.engine, self.net, self.blank = engine, net, blank
        self.heuristic = HeuristicV1Agent(engine.rules)

    def __call__(self, state: State, rows: np.ndarray) -> np.ndarray:
        view = seat_view(self.engine, state, index=rows)
        if self.net is None:
            return np.asarray(self.heuristic.act(view), np.int64)
        import torch

        from agents.neural.agent import net_inputs

        inputs = net_inputs(self.net, view, self.engine.rules, self.blank)
        with torch.no_grad():
            q = self.net(*map(torch.from_numpy, inputs))[0][:, NUM_CARDS:].numpy()
        q = np.where(view.legal_mask[:, NUM_CARDS:], q, -np.inf)
        return NUM_CARDS + q.argmax(1).astype(np.int64)


def _learner_decides() -> np.ndarray:
    """The Playout's `decides`: stop at the bids of seats 0 and 2 (the learner's)."""
    decides = np.zeros((4, 5), np.bool_)
    decides[_BID, 1] = decides[_BID, 3] = True
    return decides


def record_positions(engine: Engine, bidder: QBidder, n: int, seed: int, tables: int,
                     max_hands: int, first_match: int) -> State:  # fmt: skip
    """The first `n` bidding positions of seats 0 and 2 in matches (ids from first_match on)
    of the learner's `bidder` (seats 0, 2) against heuristic-v1 (bids of seats 1, 3, every
    card), as one State of n tables, each at that seat's bid."""
    policy = HeuristicV1Agent(engine.rules).compiled_policy()
    playout = Playout(dict.fromkeys(range(4), policy))
    decides = _learner_decides()
    ids = first_match + np.arange(tables, dtype=np.int64)
    next_id = int(ids[-1]) + 1
    state = engine.init(tables, seed=seed, match_id=ids)
    engine.deal(state)
    ended = np.empty(tables, np.int64)
    parts: list[State] = []
    got = 0
    while got < n:
        if playout.run(state, engine._r, decides, ended) < 0:
            raise RuntimeError("heuristic-v1 chose an illegal action")
        rows = np.flatnonzero((state.phase == _BID) & (state.to_play % 2 == 0))
        if rows.size:
            parts.append(state.select(rows))
            got += rows.size
            actions = np.zeros(tables, np.int64)
            actions[rows] = bidder(state, rows)
            active = np.zeros(tables, np.bool_)
            active[rows] = True
            engine.step(state, actions, validate=False, active=active)
        over = np.isin(state.phase, _OVER)
        if over.any():
            done = over & ((state.phase == int(Phase.MATCH_OVER)) | (state.hand_index >= max_hands))
            idx = np.flatnonzero(done)
            if idx.size:
                engine.new_match(state, idx, np.arange(next_id, next_id + idx.size, dtype=np.int64))
                next_id += idx.size
            engine.deal(state, np.flatnonzero(over))
    return State.concat(parts).select(np.arange(n))


def play_out_values(engine: Engine, positions: State, bidder: QBidder, value: str, model,
                    chunk: int = 8192, per_point: float = 0.0) -> np.ndarray:  # fmt: skip
    """(n, NUM_BIDS) float32: each legal bid's value at each position (-inf where illegal),
    the rest of the hand played by the partner's `bidder` and heuristic-v1 (see the module
    docstring)."""
    from agents.value.match_value import hand_value_change

    policy = HeuristicV1Agent(engine.rules).compiled_policy()
    playout = Playout(dict.fromkeys(range(4), policy))
    decides = _learner_decides()
    n = positions.batch_size
    out = np.full((n, NUM_BIDS), -np.inf, np.float32)
    for lo in range(0, n, chunk):
        part = positions.select(np.arange(lo, min(n, lo + chunk)))
        legal = engine.legal_mask(part)[:, NUM_CARDS:]
        table, bid = np.nonzero(legal)
        branch = part.select(table)
        seat = part.to_play[table].astype(np.int64)
        engine.step(branch, NUM_CARDS + bid.astype(np.int64), validate=False)
        ended = np.empty(branch.batch_size, np.int64)
        while True:
            if playout.run(branch, engine._r, decides, ended) < 0:
                raise RuntimeError("heuristic-v1 chose an illegal action")
            rows = np.flatnonzero(branch.phase == _BID)
            if not rows.size:
                break
            actions = np.zeros(branch.batch_size, np.int64)
            actions[rows] = bidder(branch, rows)
            active = np.zeros(branch.batch_size, np.bool_)
            active[rows] = True
            engine.step(branch, actions, validate=False, active=active)
        k = np.arange(table.size)
        if value == "match_value":
            change = hand_value_change(
                engine, model, part.scores_before[table], branch.hand_points,
                part.target[table], part.dealer[table], ~branch.thrown_in,
            )  # fmt: skip
            team = branch.hand_points[k, seat] + branch.hand_points[k, (seat + 2) % 4]
            v = 100.0 * (change[k, seat] + per_point * team)
        else:
            v = branch.hand_points[k, seat] + branch.hand_points[k, (seat + 2) % 4]
        out[lo + table, bid] = v
    return out


def world_values(engine: Engine, positions: State, config: BidQConfig, chunk: int = 2048,
                 progress: bool = False) -> np.ndarray:  # fmt: skip
    """(n, NUM_BIDS) float32: each legal bid's value at each position (-inf where illegal),
    its mean over `config.worlds` worlds dealt from the bidding seat's view and weighted by
    heuristic-v1's likelihood of the bids seen, the rest of the hand played by heuristic-v1
    at every seat, in the units of play_out_values (percentage points of match-win chance,
    or the team's points; the match-win estimate after the hand, not its change, which is
    the same once made relative to a bid). Chunks of `chunk` positions are shared out to
    `config.workers` processes; a position's values do not depend on its chunk."""
    from tqdm import tqdm

    n = positions.batch_size
    pieces = [np.arange(lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]
    out = np.empty((n, NUM_BIDS), np.float32)
    bar = tqdm(total=n, unit="position", desc="bid values", disable=not progress,
               dynamic_ncols=True)  # fmt: skip
    chunks = (positions.select(rows) for rows in pieces)
    values = in_processes(chunks, len(pieces), config.workers, _start_worker,
                          (engine.rules, config), _value_in_worker)  # fmt: skip
    for rows, v in zip(pieces, values, strict=True):
        out[rows] = v
        bar.update(rows.size)
    bar.close()
    return out


def in_processes(items, count: int, workers: int, start, args: tuple, work):
    """work(item) of each of `count` items, in order: in min(workers, count) spawned processes
    each set up by start(*args), or here (start called here) for 1 worker or 1 item."""
    if workers > 1 and count > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        with context.Pool(min(workers, count), initializer=start, initargs=args) as pool:
            yield from pool.imap(work, items)
    else:
        start(*args)
        yield from map(work, items)


class _WorldValuer:
    """The bid search of world_values, for one process."""

    def __init__(self, rules: Rules, config: BidQConfig) -> None:
        from agents.search.agent import SearchAgent, SearchSettings

        self.match = config.value == "match_value"
        settings = SearchSettings(models="heuristic-v1", own="heuristic-v1",
                                  bid_worlds=config.worlds,
                                  value="match" if self.match else "points",
                                  candidates=max(config.candidates, config.worlds),
                                  matchwin=config.matchwin, per_point=config.per_point)  # fmt: skip
        self.engine = Engine(rules)
        self.agent = SearchAgent(rules, seed=config.seed, settings=settings)

    def __call__(self, positions: State) -> np.ndarray:
        v = self.agent.action_values(seat_view(self.engine, positions))[:, NUM_CARDS:]
        return (100.0 * v if self.match else v).astype(np.float32)


_WORKER: _WorldValuer | None = None


def _start_worker(rules: Rules, config: BidQConfig) -> None:
    global _WORKER
    _WORKER = _WorldValuer(rules, config)


def _value_in_worker(positions: State) -> np.ndarray:
    assert _WORKER is not None
    return _WORKER(positions)


def bid_inputs(rules: Rules, views: np.ndarray, workers: int = 1, progress: bool = False,
               chunk: int = 20000) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The bid_features network's inputs (agents/neural/bid_net.py's BidFeatures) of saved seat-view
    records, `chunk` tables at a time shared out to `workers` processes (a table's inputs do
    not depend on its chunk)."""
    from tqdm import tqdm

    n = len(views)
    pieces = [views[lo : lo + chunk] for lo in range(0, n, chunk)]
    bar = tqdm(total=n, unit="position", desc="bid features", disable=not progress,
               dynamic_ncols=True)  # fmt: skip
    parts = []
    for part in in_processes(pieces, len(pieces), workers, _start_features, (rules,),
                             _features_in_worker):  # fmt: skip
        parts.append(part)
        bar.update(len(part[0]))
    bar.close()
    return tuple(np.concatenate(x) for x in zip(*parts, strict=True))


_FEATURES = None


def _start_features(rules: Rules) -> None:
    from agents.neural.bid_net import BidFeatures

    global _FEATURES
    _FEATURES = BidFeatures(rules)


def _features_in_worker(views: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    assert _FEATURES is not None
    return _FEATURES(SeatView.from_records(views))


def observations(engine: Engine, positions: State, blank: tuple) -> np.ndarray:
    """(n, OBS_SIZE) int8 observations of the bidding seats (blanked fields zero)."""
    from agents.neural.agent import blank_fields

    obs = encode_observation(seat_view(engine, positions), dtype=np.int8)
    return blank_fields(obs, blank)


def fit(net, inputs: tuple, q: np.ndarray, config: BidQConfig, seed: int,
        progress: bool = False) -> float:  # fmt: skip
    """Fit net's bid logits to q (n, NUM_BIDS) (-inf: illegal, not fitted) by squared error;
    `inputs` are the network's inputs, each (n, ...) (int8 observations are scaled);
    returns the last epoch's mean loss."""
    import torch
    from tqdm import tqdm

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    scale = torch.from_numpy(OBS_SCALE.astype(np.float32))
    legal = torch.from_numpy(np.isfinite(q))
    target = torch.from_numpy(np.where(np.isfinite(q), q, 0.0).astype(np.float32))
    tensors = [torch.from_numpy(x) for x in inputs]
    floor = config.clip > 0 and getattr(net.config, "head_version", 1) == 2

    def batch(idx):
        return [t[idx].float() * scale if t.dtype == torch.int8 else t[idx] for t in tensors]

    net.train()
    last = 0.0
    bar = tqdm(range(config.epochs), unit="epoch", desc="fit", disable=not progress,
               dynamic_ncols=True)  # fmt: skip
    for epoch in bar:
        lr = config.learning_rate * (0.3 if epoch >= 0.75 * config.epochs and epoch > 0 else 1.0)
        for g in opt.param_groups:
            g["lr"] = lr
        perm = torch.randperm(len(q), generator=gen)
        total, count = 0.0, 0
        for i in range(0, len(perm), config.batch_size):
            idx = perm[i : i + config.batch_size]
            pred = net(*batch(idx))[0][:, NUM_CARDS:]
            if floor:  # the targets are floored: so is what is compared with them
                pred = torch.clamp(pred, min=-config.clip)
            m = legal[idx]
            err = torch.where(m, pred - target[idx], torch.zeros(()))
            loss = (err * err).sum() / m.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        last = total / count
        bar.set_postfix(loss=f"{last:.3f}")
    net.eval()
    return last


class BidQTrainer:
    """Runs a BidQConfig in `run_dir` (see the module docstring)."""

    def __init__(self, config: BidQConfig, run_dir: Path, resume: bool = False,
                 progress: bool = True) -> None:  # fmt: skip
        import torch

        from agents.neural.network import NetConfig, PolicyValueNet

        self.config, self.run_dir, self.progress = config, Path(run_dir), progress
        self.rules: Rules = Rules.preset(config.rules)
        self.engine = Engine(self.rules)
        self.blank = () if config.match_features else _match_fields()
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        if config.net == "bid_features":
            from agents.neural.bid_net import BidNet, BidNetConfig

            self.net = BidNet(
                BidNetConfig(
                    hidden=config.hidden, head=config.head, head_version=BID_HEADS[config.bid_head]
                )
            )
        else:
            self.net = PolicyValueNet(NetConfig(hidden=config.hidden, layers=config.layers))
            with torch.no_grad():  # not fitted: the value head says 0 rather than noise
                self.net.value_head.weight.zero_()
                self.net.value_head.bias.zero_()
        self.model = None
        if config.value == "match_value":
            from agents.value.matchwin import MatchWin, matchwin_path

            self.model = MatchWin(matchwin_path(config.matchwin), rules=self.rules)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not resume:
            save_yaml(config.to_dict(), self.run_dir / "config.yaml")

    def _done(self) -> int:
        k = 0
        while (self.run_dir / f"iter_{k}.pt").is_file():
            k += 1
        return k

    def inputs(self, saved: dict) -> tuple:
        """The network's inputs for an iteration's saved positions: their observations, or
        (net bid_features) the features worked out from their saved views."""
        if self.config.net == "bid_features":
            return bid_inputs(self.rules, saved["views"], self.config.workers, self.progress)
        return (saved["obs"],)

    def train(self) -> list[dict]:
        import torch

        c = self.config
        history = []
        start = self._done()
        inputs_all, q_all = [], []
        first_kept = max(0, start - c.window + 1) if c.window else 0
        for k in range(first_kept, start):
            with np.load(self.run_dir / f"iter_{k}.npz") as d:
                inputs_all.append(self.inputs(d))
                q_all.append(d["q"])
        if start:
            self.net.load_state_dict(torch.load(self.run_dir / f"iter_{start - 1}.pt")["w"])
        for k in range(start, c.iterations):
            t0 = time.perf_counter()
            seed = c.seed * 1000 + k
            path = self.run_dir / f"iter_{k}.npz"
            if path.is_file():  # saved before the run stopped in the fit: not computed again
                saved, q = self._saved_values(path)
                t1 = t2 = time.perf_counter()
            else:
                bidder = QBidder(self.engine, self.net if k else None, self.blank)
                positions = record_positions(self.engine, bidder, c.positions, seed,
                                             c.num_tables, c.max_hands, 0)  # fmt: skip
                t1 = time.perf_counter()
                if c.worlds:
                    q = world_values(self.engine, positions, c, progress=self.progress)
                else:
                    q = play_out_values(self.engine, positions, bidder, c.value, self.model,
                                        per_point=c.per_point)  # fmt: skip
                own = bidder(positions, np.arange(positions.batch_size)) - NUM_CARDS
                t2 = time.perf_counter()
                if c.net == "bid_features":
                    saved = {"views": seat_view(self.engine, positions).records}
                else:
                    saved = {"obs": observations(self.engine, positions, self.blank)}
                q = relative_targets(q, own, c.clip)
                part = path.with_suffix(".part.npz")
                np.savez(part, q=q, **saved)
                part.replace(path)  # a crash mid-write leaves no damaged iter_k.npz
            gap = float(np.mean(q.max(1)))  # q is relative to the bid made, its floor below 0
            inputs_all.append(self.inputs(saved))
            q_all.append(q)
            if c.window:
                del inputs_all[: -c.window], q_all[: -c.window]
            joined = tuple(np.concatenate(parts) for parts in zip(*inputs_all, strict=True))
            loss = fit(self.net, joined, np.concatenate(q_all), c, seed, self.progress)
            t3 = time.perf_counter()
            torch.save({"w": self.net.state_dict()}, self.run_dir / f"iter_{k}.pt")
            self.save_policy()
            row = {"iteration": k, "positions": int(c.positions), "loss": loss,
                   "matches_s": t1 - t0, "playouts_s": t2 - t1, "fit_s": t3 - t2,
                   "mean_best_minus_own": gap}  # fmt: skip
            history.append(row)
            print(json.dumps(row), flush=True)
        return history

    def _saved_values(self, path: Path) -> tuple[dict, np.ndarray]:
        """The positions' inputs (observations or views) and relative values an iteration
        saved in `path` before its fit; a file of another network or size is refused."""
        key = "views" if self.config.net == "bid_features" else "obs"
        try:
            with np.load(path) as d:
                saved, q = {key: d[key]}, d["q"]
        except (OSError, ValueError, KeyError) as e:
            raise ConfigError(
                f"{path}: saved values unreadable or without {key!r} ({e}): expected the "
                f"iteration's positions for net={self.config.net} (delete it to compute them "
                "again)"
            ) from None
        if q.shape != (self.config.positions, NUM_BIDS):
            raise ConfigError(
                f"{path}: values of shape {q.shape}: expected ({self.config.positions}, "
                f"{NUM_BIDS}) for positions={self.config.positions} (delete it to compute "
                "them again)"
            )
        return saved, q

    def save_policy(self) -> None:
        from train.checkpoint import save_policy

        extra = {"play_policy": "heuristic-v1", "bid_q": self.config.to_dict()}
        if self.blank:
            extra["blank_fields"] = list(self.blank)
        save_policy(self.run_dir / "policy.pt", self.net, self.rules, extra)


def relative_targets(q: np.ndarray, own: np.ndarray, clip: float) -> np.ndarray:
    """(n, NUM_BIDS) float32: q minus each row's value of bid index `own`, floored at -clip
    (0: not floored); -inf (illegal) stays."""
    rel = q - q[np.arange(len(q)), own][:, None]
    if clip > 0:
        rel = np.maximum(rel, -clip)
    return np.where(np.isfinite(q), rel, -np.inf).astype(np.float32)


def _match_fields() -> tuple:
    from agents.neural.agent import MATCH_FIELDS

    return tuple(MATCH_FIELDS)
