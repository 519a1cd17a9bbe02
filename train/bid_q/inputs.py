"""The network's inputs at the recorded positions: the bidding seats' int8 observations
(`observations`), or the bid_features network's inputs of saved seat views (`bid_inputs`,
worked out in worker processes)."""

from __future__ import annotations

import numpy as np

from fourhundred_env.engine import Engine, State
from fourhundred_env.observation import encode_observation
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view
from fourhundred_train.workers import in_processes


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
    from fourhundred_agents.neural.bid_net import BidFeatures

    global _FEATURES
    _FEATURES = BidFeatures(rules)


def _features_in_worker(views: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    assert _FEATURES is not None
    return _FEATURES(SeatView.from_records(views))


def observations(engine: Engine, positions: State, blank: tuple) -> np.ndarray:
    """(n, OBS_SIZE) int8 observations of the bidding seats (blanked fields zero)."""
    from fourhundred_agents.neural.agent import blank_fields

    obs = encode_observation(seat_view(engine, positions), dtype=np.int8)
    return blank_fields(obs, blank)
