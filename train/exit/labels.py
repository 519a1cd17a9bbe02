"""Expert iteration's positions and labels: the network's own matches (`record_positions`), and
every legal action of their positions valued by the search over it, chunk by chunk in worker
processes or Ray tasks (`label_positions`).
"""

from __future__ import annotations

import itertools
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import ConfigError
from fourhundred_env.loop import GameLoop
from fourhundred_env.observation import OBS_SIZE, encode_observation
from fourhundred_env.rules import Rules
from fourhundred_env.view import seat_view
from fourhundred_train.exit.config import ExitConfig

_BID, _PLAY = int(Phase.BID), int(Phase.PLAY)
KEEP_BID, KEEP_PLAY = 0.5, 0.1
"""Chance that a recorded match's bid, or card with a choice, is kept as a position: a hand
gives a few of each, so the positions of one hand are few and the matches many."""


# -- positions ------------------------------------------------------------------------------
def record_positions(engine: Engine, net, config: ExitConfig, seed: int,
                     desc: str = "play") -> State:  # fmt: skip
    """`config.positions` positions (as one State, each at its seat's decision) from matches
    of `net` at all four seats, `bid_share` of them bids, in the order they were reached
    (progress bar labelled `desc`)."""
    from tqdm import tqdm

    from fourhundred_agents.neural.agent import NeuralAgent

    agent = NeuralAgent("<live>", engine.rules, seed=seed, sample=config.sample, net=net)
    rng = np.random.default_rng(seed)
    want_bid = round(config.positions * config.bid_share)
    want = {_BID: want_bid, _PLAY: config.positions - want_bid}
    keep = {_BID: KEEP_BID, _PLAY: KEEP_PLAY}
    parts: dict[int, list[State]] = {_BID: [], _PLAY: []}
    got = {_BID: 0, _PLAY: 0}
    tables = config.num_tables
    state = engine.init(tables, seed=seed, match_id=np.arange(tables, dtype=np.int64))
    loop = GameLoop(engine, state, max_hands=config.max_hands, matches=itertools.count(tables))
    loop.deal()
    bar = tqdm(total=config.positions, unit="position", desc=desc,
               disable=not config.progress, dynamic_ncols=True, smoothing=0.05)  # fmt: skip
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
                bar.update(rows.size)
        view = seat_view(engine, state, legal_mask=legal)  # one call: every table's seat
        loop.step(agent.act(view), validate=False)
    bar.close()
    return State.concat([*parts[_BID], *parts[_PLAY]])


# -- values ---------------------------------------------------------------------------------
class Labeller:
    """The search over one network, valuing every legal action of positions: (2, K, 66)
    float32 values of the two halves of the worlds (-inf where illegal)."""

    def __init__(self, rules: Rules, model: str, config: ExitConfig, iteration: int) -> None:
        from fourhundred_agents.search.agent import SearchAgent, SearchSettings

        settings = SearchSettings(model=model, worlds=config.worlds // 2,
                                  bid_worlds=config.bid_worlds // 2,
                                  candidates=max(config.candidates // 2, config.worlds // 2))  # fmt: skip
        self.engine = Engine(rules)
        base = config.seed * 1_000_003 + 2 * iteration
        self.halves = [SearchAgent(rules, seed=base + h, settings=settings) for h in (0, 1)]

    def __call__(self, positions: State) -> np.ndarray:
        """(2, K, 66) float32 values of every legal action at the K `positions`, one row
        per half of the worlds, -inf where illegal."""
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
    tasks with backend ray) each set up by start(*args), or here for 1 local worker. A script
    that calls this (or label_positions) with more than one local worker keeps its own work
    under ``if __name__ == "__main__":``: each spawned process imports the script again."""
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
        from fourhundred_train.ray_rollouts import start_ray

        started = start_ray(config.ray_address, config.workers)
        try:
            with Pool(config.workers, initializer=start, initargs=args) as pool:
                yield from pool.imap(work, items)
        finally:
            if started:
                ray.shutdown()
    else:
        from fourhundred_train.workers import in_processes

        yield from in_processes(items, count, config.workers, start, args, work)


def read_chunk(path: Path, size: int | None = None) -> dict[str, np.ndarray] | None:
    """A valued chunk saved by an earlier run, or None if it is missing or damaged (it is
    then valued again) or does not hold `size` positions (None: any number)."""
    try:
        with np.load(path) as d:
            chunk = {k: d[k] for k in ("obs", "legal", "values")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    n = len(chunk["obs"]) if size is None else size
    shapes = (chunk["obs"].shape, chunk["legal"].shape, chunk["values"].shape)
    if shapes != ((n, OBS_SIZE), (n, NUM_ACTIONS), (2, n, NUM_ACTIONS)):
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
