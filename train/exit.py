"""Expert iteration (``mode: exit``, configs/exit.yaml): the search's strength trained into the
network, and the search run again over the better network.

Each iteration k, with the network of the moment N_k (the ``init`` checkpoint for k = 0):

1. **Positions from N_k's own matches.** `num_tables` matches to 41 are played from 0-0 by
   N_k at all four seats (actions sampled from its policy, ``sample: true``, so the games
   vary), and decisions with more than one legal action are kept at random (bids more often
   than cards) until `positions` are kept, a `bid_share` of them bids: the bids and cards of
   every seat, in the match situations real matches reach.
2. **Every legal action valued by the search over N_k.** ``search`` (agents/search/agent.py)
   with N_k as its prior, its play-out policy and its model of the other seats values every
   legal action of each position by its mean over `worlds` worlds (`bid_worlds` for bids)
   dealt from the seat's view and weighted by the others' inferred models: the match-win
   estimate after the hand (1 or 0 if the hand ends the match). Two independent halves of
   the worlds are kept apart (two search keys), so that the noise of the values can be
   measured. Positions are valued in chunks of `chunk` by `workers` processes (or Ray tasks,
   ``backend: ray``); a chunk's values depend on nothing but its positions and the seed, and
   each chunk is written to the run folder as it is done.
3. **The fit.** The policy's target at a position is a softmax of its actions' values (the
   mean of both halves) at a temperature: `temperature`, or by default the one at which
   the softmax of one half's values best predicts the other half's best action on the
   held-out positions (divided by sqrt 2 for the mean of both halves, whose noise is that
   much smaller). The value head is fitted to the target's expected value (the position's
   match-win chance under the search). N_k is trained on the positions of the last `window`
   iterations for `epochs` passes by cross-entropy and squared error: N_{k+1}.
4. **Evaluation.** N_{k+1} plays duplicate matches against `eval_opponent` and against N_k
   (the tournament runner, Wilson intervals); the held-out positions give the search's
   gain over N_k (the value of the search's best action minus that of N_k's choice) and
   their agreement.

The run folder holds config.yaml, labels_K/chunk_NNNNN.npz (the values), iter_K.pt (the
policy after iteration K, a policy checkpoint), policy.pt (the last), metrics.jsonl (a
row per iteration) and TensorBoard's event files. A rerun of the folder (``--resume``)
goes on from the last finished iteration and its valued chunks, with the weights of a
straight run.
"""

from __future__ import annotations

import json
import math
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS
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
from fourhundred_env.view import seat_view

DEFAULT_INIT = str(Path(__file__).parents[1] / "agents" / "pretrained" / "selfplay.pt")
_BID, _PLAY = int(Phase.BID), int(Phase.PLAY)
_OVER = (int(Phase.HAND_OVER), int(Phase.MATCH_OVER))
KEEP_BID, KEEP_PLAY = 0.5, 0.1
"""Chance that a recorded match's bid, or card with a choice, is kept as a position: a hand
gives a few of each, so the positions of one hand are few and the matches many."""
TEMPERATURES = np.geomspace(1e-4, 1.0, 81)
"""The temperatures tried when one is fitted (match-win chance units)."""
RESUMABLE = ("workers", "backend", "ray_address", "eval_matches", "progress")
"""Keys a resumed run may change: they do not change the labels or the weights."""


@dataclass(frozen=True)
class ExitConfig:
    """An expert-iteration run (see the module docstring)."""

    name: str = "exit"
    """Name of the run (its folder is runs_dir/name__seed__time)."""
    mode: Literal["exit"] = "exit"
    """This trainer (``fourhundred train`` picks it by this key)."""
    seed: int = 1
    """Seed of everything: the matches, the worlds, the fit."""
    rules: str = "wiki"
    """Rules preset."""
    init: str = DEFAULT_INIT
    """The policy checkpoint the first iteration searches over and the fit starts from."""
    iterations: int = 4
    """Rounds of (play, value by search, fit)."""
    positions: int = 20000
    """Positions valued per iteration."""
    bid_share: float = 0.2
    """Share of those positions that are bids (the rest: card play)."""
    num_tables: int = 256
    """Matches played side by side while positions are recorded."""
    max_hands: int = 200
    """A match still running after this many hands is abandoned (a new one starts)."""
    sample: bool = True
    """The recorded matches sample the network's actions (False: its most likely one)."""
    worlds: int = 16
    """Worlds per card-play position (two halves of worlds/2, see the module docstring)."""
    bid_worlds: int = 32
    """Worlds per bidding position."""
    candidates: int = 64
    """Deals drawn per card-play position before weighting and resampling to `worlds`."""
    chunk: int = 64
    """Positions per labelling task (the unit of work written to the run folder)."""
    workers: int = 2
    """Processes (or Ray tasks at once) that value the positions."""
    backend: Literal["local", "ray"] = "local"
    """Where positions are valued: "local" processes, or Ray tasks (the ``ray`` extra)."""
    ray_address: str | None = None
    """backend ray: the cluster to join (HOST:PORT or "auto"); None starts a local Ray with
    `workers` CPUs."""
    prior: bool = True
    """The policy target is the searched network's own policy times exp(value / temperature)
    (a KL-regularised improvement of it: where the values cannot tell actions apart, the
    prior stays); False: the softmax of the values alone."""
    temperature: float | None = None
    """Softmax temperature of the policy target, in match-win chance; None: fitted."""
    holdout: float = 0.1
    """Share of each iteration's positions held out of the fit (temperature, agreement)."""
    window: int = 2
    """Iterations of positions the fit uses (the newest ones)."""
    epochs: int = 4
    """Passes over the window's positions per iteration."""
    batch_size: int = 256
    """Positions per gradient step."""
    learning_rate: float = 0.0001
    """Adam's learning rate."""
    value_coef: float = 0.25
    """Weight of the value head's squared error (match-win chance units) beside the policy's
    cross-entropy."""
    eval_matches: int = 100
    """Duplicate match pairs per evaluation (2 matches each; 0: none)."""
    eval_opponent: str = "heuristic-v1"
    """The fixed opponent of the evaluations."""
    torch_threads: int = 2
    """torch.set_num_threads of the fit."""
    progress: bool = True
    """Progress bars."""
    runs_dir: str = "runs"
    """Folder of run folders."""

    def __post_init__(self) -> None:
        check_fields(self)
        Rules.preset(self.rules)
        for name in ("iterations", "positions", "num_tables", "max_hands", "bid_worlds",
                     "candidates", "chunk", "workers", "window", "epochs", "batch_size",
                     "torch_threads"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)}: expected at least 1")
        for name in ("worlds", "bid_worlds"):  # two halves of the worlds
            if getattr(self, name) < 2 or getattr(self, name) % 2:
                raise ConfigError(
                    f"{name}={getattr(self, name)}: expected an even number, at least 2"
                )
        if self.window > self.iterations:
            raise ConfigError(
                f"window={self.window}: expected at most iterations={self.iterations} "
                "(the fit cannot keep more iterations than the run stores)"
            )
        if not 0.0 <= self.bid_share <= 1.0:
            raise ConfigError(f"bid_share={self.bid_share}: expected a share from 0 to 1")
        if not 0.0 < self.holdout < 0.5:
            raise ConfigError(f"holdout={self.holdout}: expected a share above 0 and below 0.5")
        if self.temperature is not None and not self.temperature > 0:
            raise ConfigError(
                f"temperature={self.temperature}: expected a value > 0, or null to fit it"
            )
        for name in ("learning_rate",):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}={getattr(self, name)}: expected a value > 0")
        if not self.value_coef >= 0:
            raise ConfigError(f"value_coef={self.value_coef}: expected 0 or more")
        if self.eval_matches < 0:
            raise ConfigError(f"eval_matches={self.eval_matches}: expected 0 (none) or more")
        if self.ray_address is not None and self.backend != "ray":
            raise ConfigError(
                f"ray_address={self.ray_address!r}: expected backend 'ray' with an address"
            )

    def to_dict(self) -> dict:
        return asdict_shallow(self)


def load_exit_config(path, overrides=()) -> ExitConfig:
    """ExitConfig from a YAML file (or bundled name) plus ``key=value`` overrides."""
    values = load_yaml(config_path(path)) if path is not None else {}
    texts = parse_overrides(overrides)
    values.update(texts)
    return build(ExitConfig, values, str(path) if path is not None else "config", text=texts)


def resume_config(run_dir: Path, overrides=()) -> ExitConfig:
    """The config of the run in `run_dir` with `overrides`, which may change only the keys
    of RESUMABLE (the others would give other labels or weights than a straight run)."""
    saved = load_exit_config(run_dir / "config.yaml")
    config = load_exit_config(run_dir / "config.yaml", overrides)
    new, old = config.to_dict(), saved.to_dict()
    changed = sorted(k for k in new if new[k] != old[k] and k not in RESUMABLE)
    if changed:
        raise ConfigError(
            f"--resume {run_dir}: overrides change {', '.join(changed)}: expected only "
            f"{', '.join(RESUMABLE)} to differ from the run's config.yaml (start a new run)"
        )
    return config


# -- positions ------------------------------------------------------------------------------
def record_positions(engine: Engine, net, config: ExitConfig, seed: int) -> State:
    """`config.positions` positions (as one State, each at its seat's decision) from matches
    of `net` at all four seats, `bid_share` of them bids, in the order they were reached."""
    from agents.neural.agent import NeuralAgent

    agent = NeuralAgent("<live>", engine.rules, seed=seed, sample=config.sample, net=net)
    rng = np.random.default_rng(seed)
    want_bid = round(config.positions * config.bid_share)
    want = {_BID: want_bid, _PLAY: config.positions - want_bid}
    keep = {_BID: KEEP_BID, _PLAY: KEEP_PLAY}
    parts: dict[int, list[State]] = {_BID: [], _PLAY: []}
    got = {_BID: 0, _PLAY: 0}
    tables = config.num_tables
    state = engine.init(tables, seed=seed, match_id=np.arange(tables, dtype=np.int64))
    next_id = tables
    engine.deal(state)
    while got[_BID] < want[_BID] or got[_PLAY] < want[_PLAY]:
        legal = engine.legal_mask(state)
        choice = legal.sum(axis=1) > 1
        draw = rng.random(tables)
        for phase in (_BID, _PLAY):
            if got[phase] >= want[phase]:
                continue
            rows = np.flatnonzero(choice & (state.phase == phase) & (draw < keep[phase]))
            rows = rows[: want[phase] - got[phase]]
            if rows.size:
                parts[phase].append(state.select(rows))
                got[phase] += rows.size
        view = seat_view(engine, state, legal_mask=legal)
        engine.step(state, agent.act(view), validate=False)
        over = np.isin(state.phase, _OVER)
        if over.any():
            done = over & (
                (state.phase == int(Phase.MATCH_OVER)) | (state.hand_index >= config.max_hands)
            )
            idx = np.flatnonzero(done)
            if idx.size:
                engine.new_match(state, idx, np.arange(next_id, next_id + idx.size, dtype=np.int64))
                next_id += idx.size
            engine.deal(state, np.flatnonzero(over))
    return State.concat([*parts[_BID], *parts[_PLAY]])


# -- values ---------------------------------------------------------------------------------
class Labeller:
    """The search over one network, valuing every legal action of positions: (2, K, 66)
    float32 values of the two halves of the worlds (-inf where illegal)."""

    def __init__(self, rules: Rules, model: str, config: ExitConfig, iteration: int) -> None:
        from agents.search.agent import SearchAgent, SearchSettings

        settings = SearchSettings(model=model, worlds=config.worlds // 2,
                                  bid_worlds=config.bid_worlds // 2,
                                  candidates=max(config.candidates // 2, config.worlds // 2))  # fmt: skip
        self.engine = Engine(rules)
        base = config.seed * 1_000_003 + 2 * iteration
        self.halves = [SearchAgent(rules, seed=base + h, settings=settings) for h in (0, 1)]

    def __call__(self, positions: State) -> np.ndarray:
        view = seat_view(self.engine, positions)
        return np.stack([a.action_values(view) for a in self.halves]).astype(np.float32)


_LABELLER: Labeller | None = None


def _start_labeller(rules: Rules, model: str, config: ExitConfig, iteration: int) -> None:
    global _LABELLER
    import torch

    torch.set_num_threads(1)
    _LABELLER = Labeller(rules, model, config, iteration)


def _label(positions: State) -> np.ndarray:
    assert _LABELLER is not None
    return _LABELLER(positions)


def in_workers(items: list, config: ExitConfig, start, args: tuple, work) -> Iterator:
    """work(item) of each item, in order: in `config.workers` spawned processes (or Ray
    tasks with backend ray) each set up by start(*args), or here for 1 local worker."""
    count = len(items)
    if not count:
        return
    if config.backend == "ray":
        try:
            import ray
            from ray.util.multiprocessing import Pool
        except ImportError:
            raise ConfigError(
                "backend 'ray' needs Ray: expected it installed (pip install 'fourhundred[ray]')"
            ) from None
        from train.ray_rollouts import start_ray

        started = start_ray(config.ray_address, config.workers)
        try:
            with Pool(config.workers, initializer=start, initargs=args) as pool:
                yield from pool.imap(work, items)
        finally:
            if started:
                ray.shutdown()
    elif config.workers > 1 and count > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        with context.Pool(min(config.workers, count), initializer=start, initargs=args) as pool:
            yield from pool.imap(work, items)
    else:
        start(*args)
        yield from map(work, items)


def read_chunk(path: Path, size: int) -> dict[str, np.ndarray] | None:
    """A valued chunk saved by an earlier run, or None if it is missing or damaged (it is
    then valued again)."""
    try:
        with np.load(path) as d:
            chunk = {k: d[k] for k in ("obs", "legal", "values")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if chunk["values"].shape != (2, size, NUM_ACTIONS) or len(chunk["obs"]) != size:
        return None
    return chunk


def label_positions(engine: Engine, positions: State, model: str, config: ExitConfig,
                    iteration: int, folder: Path) -> tuple[dict[str, np.ndarray], int]:  # fmt: skip
    """The observations, legal masks and values (2, n, 66) of the positions, each chunk of
    `config.chunk` read from `folder` if an earlier run valued it, else valued and saved;
    and how many positions were valued by this call."""
    from tqdm import tqdm

    folder.mkdir(parents=True, exist_ok=True)
    n = positions.batch_size
    pieces = [np.arange(lo, min(n, lo + config.chunk)) for lo in range(0, n, config.chunk)]
    chunks: list[dict[str, np.ndarray] | None] = [
        read_chunk(folder / f"chunk_{i:05d}.npz", rows.size) for i, rows in enumerate(pieces)
    ]
    todo = [i for i, c in enumerate(chunks) if c is None]
    bar = tqdm(total=n, initial=n - sum(pieces[i].size for i in todo), unit="position",
               desc=f"iteration {iteration}: search values", disable=not config.progress,
               dynamic_ncols=True, smoothing=0.05)  # fmt: skip
    work = [positions.select(pieces[i]) for i in todo]
    args = (engine.rules, model, config, iteration)
    for i, part, values in zip(todo, work, in_workers(work, config, _start_labeller, args, _label),
                               strict=False):  # fmt: skip
        view = seat_view(engine, part)
        chunk = {"obs": encode_observation(view, dtype=np.int8), "legal": view.legal_mask,
                 "values": values}  # fmt: skip
        path = folder / f"chunk_{i:05d}.npz"
        tmp = path.with_suffix(".part.npz")
        np.savez(tmp, **chunk)
        tmp.replace(path)  # a crash mid-write leaves no damaged chunk
        chunks[i] = chunk
        bar.update(part.batch_size)
    bar.close()
    joined = {k: np.concatenate([c[k] for c in chunks], axis=-2 if k == "values" else 0)
              for k in ("obs", "legal", "values")}  # fmt: skip
    return joined, sum(pieces[i].size for i in todo)


# -- targets --------------------------------------------------------------------------------
def improved_policy(values: np.ndarray, temperature: float,
                    log_prior: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """(n, 66) float64: softmax over each row's legal (finite) actions of values / temperature,
    plus `log_prior` (n, 66) when given (prior x exp(value / temperature)); 0 elsewhere."""
    legal = np.isfinite(values)
    z = np.where(legal, values, -np.inf).astype(np.float64) / temperature
    if log_prior is not None:
        z = z + np.where(legal, log_prior, 0.0)
    z = z - z.max(axis=1, keepdims=True)
    e = np.where(legal, np.exp(z), 0.0)
    return e / e.sum(axis=1, keepdims=True)


def target_worth(values: np.ndarray, temperature: float,
                 log_prior: np.ndarray | None = None) -> float:  # fmt: skip
    """What the improved policy of one half's values (values (2, n, 66)) at `temperature` is
    worth by the other half's values, both ways round (the noise of the values that make the
    policy does not judge it): the mean over positions, in match-win chance."""
    if not values.shape[1]:
        return 0.0
    a, b = values.astype(np.float64)
    legal = np.isfinite(a)
    va, vb = np.where(legal, a, 0.0), np.where(legal, b, 0.0)
    worth = (improved_policy(a, temperature, log_prior) * vb).sum(1)
    worth += (improved_policy(b, temperature, log_prior) * va).sum(1)
    return float(worth.mean() / 2)


def fit_temperature(values: np.ndarray, log_prior: np.ndarray | None = None) -> float:
    """The temperature of TEMPERATURES whose improved policy is worth most (`target_worth`)."""
    scores = [target_worth(values, t, log_prior) for t in TEMPERATURES]
    return float(TEMPERATURES[int(np.argmax(scores))])


def targets(values: np.ndarray, temperature: float,
            log_prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The fit's targets from values (2, n, 66): the policy's (n, 66) improved policy of the
    mean of both halves at `temperature`, and the value head's (n,) expected value under it."""
    mean = values.mean(axis=0)
    pi = improved_policy(mean, temperature, log_prior)
    v = (pi * np.where(np.isfinite(mean), mean, 0.0)).sum(axis=1)
    return pi.astype(np.float32), v.astype(np.float32)


def split(n: int, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fitted, held out) position indices of an iteration: a seeded random `share` out."""
    order = np.random.default_rng(seed).permutation(n)
    cut = round(n * share)
    return np.sort(order[cut:]), np.sort(order[:cut])


def log_policy(net, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """(n, 66) float64 log-probabilities of the network's policy at int8 observations
    (-inf where illegal)."""
    import torch

    scale = torch.from_numpy(OBS_SCALE.astype(np.float32))
    out = [np.zeros((0, NUM_ACTIONS))]
    with torch.no_grad():
        for lo in range(0, len(obs), 4096):
            logits = net(torch.from_numpy(obs[lo : lo + 4096]).float() * scale)[0].double()
            mask = torch.from_numpy(legal[lo : lo + 4096])
            logp = torch.log_softmax(torch.where(mask, logits, -torch.inf), -1)
            out.append(logp.numpy())
    return np.concatenate(out)


def search_gain(values: np.ndarray, choice: np.ndarray) -> dict[str, float]:
    """How the search's values (2, n, 66) judge the network's `choice` (n,): the mean value of
    the search's best action minus the choice's, in percentage points of match-win chance
    (each half's best judged by the other half: no winner's curse), the share of positions
    where the choice is the search's best (mean of both halves), and the choice's value."""
    a, b = values.astype(np.float64)
    rows = np.arange(len(choice))
    fa, fb = np.where(np.isfinite(a), a, -np.inf), np.where(np.isfinite(b), b, -np.inf)
    own = (a[rows, choice] + b[rows, choice]) / 2
    best = (b[rows, fa.argmax(1)] + a[rows, fb.argmax(1)]) / 2
    mean = np.where(np.isfinite(a), (a + b) / 2, -np.inf)
    return {"gain_pp": float(100 * (best - own).mean()),
            "agreement": float((mean.argmax(1) == choice).mean()),
            "own_value": float(own.mean())}  # fmt: skip


# -- the fit --------------------------------------------------------------------------------
def fit(net, obs: np.ndarray, legal: np.ndarray, pi: np.ndarray, v: np.ndarray,
        config: ExitConfig, seed: int, desc: str = "fit") -> dict[str, float]:  # fmt: skip
    """Train `net` on the positions: cross-entropy of its masked policy to `pi` plus
    value_coef x squared error of its value to `v`, `config.epochs` passes; returns the last
    epoch's mean losses."""
    import torch
    from tqdm import tqdm

    from agents.neural.network import masked_logits

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    scale = torch.from_numpy(OBS_SCALE.astype(np.float32))
    obs_t, legal_t = torch.from_numpy(obs), torch.from_numpy(legal)
    pi_t, v_t = torch.from_numpy(pi), torch.from_numpy(v)
    n = len(obs)
    steps = config.epochs * math.ceil(n / config.batch_size)
    bar = tqdm(total=steps, unit="step", desc=desc, disable=not config.progress,
               dynamic_ncols=True)  # fmt: skip
    net.train()
    stats = {"policy_loss": 0.0, "value_loss": 0.0}
    for _ in range(config.epochs):
        perm = torch.randperm(n, generator=gen)
        totals = [0.0, 0.0]
        for lo in range(0, n, config.batch_size):
            idx = perm[lo : lo + config.batch_size]
            logits, value = net(obs_t[idx].float() * scale)
            logp = torch.log_softmax(masked_logits(logits, legal_t[idx]), -1)
            policy_loss = -(pi_t[idx] * torch.where(legal_t[idx], logp, 0.0)).sum(1).mean()
            value_loss = ((value - v_t[idx]) ** 2).mean()
            loss = policy_loss + config.value_coef * value_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            totals[0] += float(policy_loss.detach()) * len(idx)
            totals[1] += float(value_loss.detach()) * len(idx)
            bar.update(1)
        stats = {"policy_loss": totals[0] / n, "value_loss": totals[1] / n}
        bar.set_postfix(loss=f"{stats['policy_loss']:.3f}")
    bar.close()
    net.eval()
    return stats


# -- the run --------------------------------------------------------------------------------
class ExitTrainer:
    """Runs an ExitConfig in `run_dir` (see the module docstring)."""

    def __init__(self, config: ExitConfig, run_dir: Path, resume: bool = False) -> None:
        import torch

        from agents.neural.checkpoint import CheckpointError, load_policy, require_card_player

        self.config, self.run_dir = config, Path(run_dir)
        self.rules = Rules.preset(config.rules)
        self.engine = Engine(self.rules)
        torch.set_num_threads(config.torch_threads)
        net, _, _ = load_policy(config.init, rules=self.rules)
        self.net = require_card_player(net, config.init)
        if not hasattr(self.net, "config"):
            raise CheckpointError(f"checkpoint {config.init!r}: expected a PolicyValueNet")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not resume:
            save_yaml(config.to_dict(), self.run_dir / "config.yaml")
        self.metrics = self.run_dir / "metrics.jsonl"

    def done(self) -> int:
        """Iterations finished (their iter_K.pt written)."""
        k = 0
        while (self.run_dir / f"iter_{k}.pt").is_file():
            k += 1
        return k

    def teacher_path(self, k: int) -> str:
        """The checkpoint iteration k searches over: N_k."""
        return self.config.init if k == 0 else str(self.run_dir / f"iter_{k - 1}.pt")

    def history(self) -> list[dict[str, Any]]:
        if not self.metrics.is_file():
            return []
        rows = [json.loads(line) for line in self.metrics.read_text().splitlines() if line]
        return [r for r in rows if r["iteration"] < self.done()]

    def train(self) -> list[dict[str, Any]]:
        import torch
        from torch.utils.tensorboard import SummaryWriter

        from agents.neural.checkpoint import load_policy

        c = self.config
        start = self.done()
        history = self.history()
        elapsed = history[-1]["minutes"] * 60 if history else 0.0
        writer = SummaryWriter(str(self.run_dir), purge_step=start + 1 if start else None)
        kept: list[dict[str, np.ndarray]] = []
        for k in range(max(0, start - c.window + 1), start):  # the replay window so far
            teacher, _, _ = load_policy(self.teacher_path(k), rules=self.rules)
            kept.append(self._labelled(k, teacher)[0])
        if start:
            self.net, _, _ = load_policy(self.run_dir / f"iter_{start - 1}.pt", rules=self.rules)
        for k in range(start, c.iterations):
            t0 = time.perf_counter()
            fitted, held, row = self._labelled(k, self.net)
            t2 = time.perf_counter()
            kept.append(fitted)
            del kept[: -c.window]
            joined = {key: np.concatenate([d[key] for d in kept]) for key in fitted}
            seed = c.seed * 7919 + k
            torch.manual_seed(seed)
            row.update(fit(self.net, joined["obs"], joined["legal"], joined["pi"], joined["v"],
                           c, seed=seed, desc=f"iteration {k}: fit"))  # fmt: skip
            t3 = time.perf_counter()
            after = log_policy(self.net, held["obs"], held["legal"]).argmax(1)
            row["agreement_after"] = search_gain(held["values"], after)["agreement"]
            row.update(fit_s=t3 - t2, positions_fitted=len(joined["obs"]))
            self._save(k)
            t4 = time.perf_counter()
            row.update(self._evaluate(k))
            row["eval_s"] = time.perf_counter() - t4
            elapsed += time.perf_counter() - t0
            row["minutes"] = elapsed / 60
            for key, value in row.items():
                if key != "iteration" and isinstance(value, (int, float)):
                    writer.add_scalar(f"exit/{key}", value, k + 1)
            writer.flush()
            with self.metrics.open("a") as f:
                f.write(json.dumps(row) + "\n")
            history.append(row)
            if c.progress:
                print(_summary(row), flush=True)
        writer.close()
        return history

    def _labelled(self, k: int, teacher) -> tuple[dict, dict, dict[str, Any]]:
        """Iteration k's positions (recorded from `teacher`'s matches, N_k) and their
        values (read from the run folder where saved): the fitted part with its targets,
        the held-out part with its values, and the iteration's numbers so far."""
        c = self.config
        seed = c.seed * 7919 + k
        t0 = time.perf_counter()
        positions = record_positions(self.engine, teacher, c, seed)
        t1 = time.perf_counter()
        data, valued = label_positions(self.engine, positions, self.teacher_path(k), c, k,
                                       self.run_dir / f"labels_{k}")  # fmt: skip
        t2 = time.perf_counter()
        log_prior = log_policy(teacher, data["obs"], data["legal"])
        fitted, held = split(len(data["obs"]), c.holdout, seed)
        prior = log_prior if c.prior else None
        if c.temperature is None:
            half = fit_temperature(data["values"][:, held], _rows(prior, held))
        else:
            half = c.temperature * math.sqrt(2)
        # the mean of both halves, which the targets use, is sqrt 2 times less noisy
        temperature = half / math.sqrt(2)
        worth = target_worth(data["values"][:, held], half, _rows(prior, held))
        pi, v = targets(data["values"][:, fitted], temperature, _rows(prior, fitted))
        gain = search_gain(data["values"][:, held], log_prior[held].argmax(1))
        row: dict[str, Any] = {
            "iteration": k, "positions": int(positions.batch_size),
            "bid_positions": int((positions.phase == _BID).sum()),
            "play_s": t1 - t0, "label_s": t2 - t1,
            "labels_per_s": valued / (t2 - t1) if valued else float("nan"),
            "temperature": temperature,
            "target_gain_pp": 100 * (worth - gain["own_value"]),
            "search_gain_pp": gain["gain_pp"], "agreement_before": gain["agreement"],
        }  # fmt: skip
        part = {"obs": data["obs"][fitted], "legal": data["legal"][fitted], "pi": pi, "v": v}
        out = {"obs": data["obs"][held], "legal": data["legal"][held],
               "values": data["values"][:, held]}  # fmt: skip
        return part, out, row

    def _save(self, k: int) -> None:
        from train.checkpoint import save_policy

        extra = {"exit": self.config.to_dict(), "iteration": k}
        save_policy(self.run_dir / "policy.pt", self.net, self.rules, extra)
        save_policy(self.run_dir / f"iter_{k}.pt", self.net, self.rules, extra)

    def _evaluate(self, k: int) -> dict[str, float]:
        """Duplicate matches of N_{k+1} against the fixed opponent and against N_k."""
        from train.evaluate import evaluate_pair

        c = self.config
        if not c.eval_matches:
            return {}
        out: dict[str, float] = {}
        spec = f"neural:{self.run_dir / f'iter_{k}.pt'}"
        for tag, opponent in (("vs_opponent", c.eval_opponent),
                              ("vs_previous", f"neural:{self.teacher_path(k)}")):  # fmt: skip
            res = evaluate_pair(spec, opponent, matches=c.eval_matches,
                                seed=c.seed * 1_000_003 + k, rules=self.rules,
                                out_dir=self.run_dir / "eval" / f"iter_{k}_{tag}",
                                workers=max(1, min(2, c.workers)))  # fmt: skip
            for name in ("win_rate", "win_rate_low", "win_rate_high"):
                out[f"{tag}_{name}"] = res[f"eval/{name}"]
        return out


def _rows(x: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if x is None else x[rows]


def _summary(row: dict[str, Any]) -> str:
    parts = [f"iteration {row['iteration']}: {row['minutes']:.1f} min"]
    if "vs_opponent_win_rate" in row:
        parts.append(
            f"vs opponent {100 * row['vs_opponent_win_rate']:.1f}% "
            f"[{100 * row['vs_opponent_win_rate_low']:.1f}, {100 * row['vs_opponent_win_rate_high']:.1f}]"
        )
        parts.append(f"vs previous {100 * row['vs_previous_win_rate']:.1f}%")
    parts.append(f"search gain {row['search_gain_pp']:.2f} pp")
    parts.append(
        f"agreement {100 * row['agreement_before']:.0f}% -> {100 * row['agreement_after']:.0f}%"
    )
    parts.append(f"{row['labels_per_s']:.0f} labels/s")
    return ", ".join(parts)


def is_exit(path) -> bool:
    """The YAML at `path` (or bundled name) is a ``mode: exit`` config."""
    if path is None:
        return False
    values = load_yaml(config_path(path))
    return isinstance(values, dict) and values.get("mode") == "exit"


def _rate(row: dict[str, Any], tag: str) -> str:
    if f"{tag}_win_rate" not in row:
        return "-"
    rate, low, high = (100 * row[f"{tag}_win_rate{x}"] for x in ("", "_low", "_high"))
    return f"{rate:.1f}% [{low:.0f}, {high:.0f}]"


def results_table(history: list[dict[str, Any]]) -> str:
    """The run's iterations as a text table."""
    head = ("iter", "minutes", "labels/s", "gain pp", "agree", "vs opponent", "vs previous")
    rows = [head]
    for r in history:
        rows.append((str(r["iteration"]), f"{r['minutes']:.1f}", f"{r['labels_per_s']:.0f}",
                     f"{r['search_gain_pp']:.2f}",
                     f"{100 * r['agreement_before']:.0f}->{100 * r['agreement_after']:.0f}%",
                     _rate(r, "vs_opponent"), _rate(r, "vs_previous")))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(x.rjust(w) for x, w in zip(row, widths, strict=True)) for row in rows
    )
