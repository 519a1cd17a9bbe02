"""Counter-based seeds: every random stream of a training run is a pure function of its
coordinates, so an update draws the same numbers whether the run went straight through or
was stopped and resumed (``--resume`` continues bit for bit).

The streams of a run (`seed` is ``TrainConfig.seed``):

- ``(seed, 0)``: the networks' initial weights (``torch.manual_seed``);
- ``(seed, update, 1)``: the pool snapshot the snapshot tables play against;
- ``(seed, update, 2, group)``: the deals of a group of tables (their ``env.reset`` seed);
- ``(seed, update, 3)``: the learner's sampled actions;
- ``(seed, update, 4)``: the order of the minibatches;
- ``(seed, update, 5)``: the decisions given rollout values (train/objectives.py).

With rollouts on N > 1 Ray actors (train/ray_rollouts.py), actor i's deals and sampled actions
are ``(seed, update, 2, group, 1000 + i)`` and ``(seed, update, 3, 1000 + i)``; the other
streams are shared (the pool snapshot, the minibatches; the rollout-value picks are the same
stream in every part, over that part's own tables).
"""

from __future__ import annotations

import numpy as np

from fourhundred_env.engine import mix64


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers (counter-based: no hidden state)."""
    key = np.array([0x2545F4914F6CDD1D], dtype=np.uint64)
    for p in parts:
        key = mix64(key ^ np.array([p & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))
    return int(key[0] >> np.uint64(1))
