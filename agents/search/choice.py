"""Which action a search plays: the candidate with the best mean value over the worlds scored,
when it beats the policy's own choice, paired world by world, by more than a margin plus a
number of standard errors; else the policy's own choice."""

from __future__ import annotations

import numpy as np


def choose(cand: np.ndarray, own: np.ndarray, values: np.ndarray, mult: np.ndarray,
           margin: float, confidence: float) -> np.ndarray:  # fmt: skip
    """(K,) int64: the action of each decision. cand (K, A) int64 the candidate actions (-1
    past the last; the policy's own among them), own (K,) the policy's own choices, values
    (K, W, A) each candidate's value in each world (NaN for worlds not scored), mult (K, W)
    the worlds' counts. A candidate replaces the policy's own when its mean difference over
    the scored worlds (weighted by the counts) exceeds `margin` plus `confidence` standard
    errors of that mean (the effective number of worlds from the counts); the best such mean
    wins. A decision with no world scored keeps the policy's own."""
    out = own.copy()
    for j in range(cand.shape[0]):
        done = ~np.isnan(values[j, :, 0])
        if not done.any():
            continue
        v = values[j, done]
        m = mult[j, done]
        mine = int(np.flatnonzero(cand[j] == own[j])[0])
        d = v - v[:, mine : mine + 1]  # (worlds, A): paired differences
        total = m.sum()
        mean = (m[:, None] * d).sum(0) / total
        var = (m[:, None] * (d - mean) ** 2).sum(0) / total
        n_eff = total**2 / (m**2).sum()
        se = np.sqrt(var / max(n_eff - 1.0, 1.0))
        ok = (cand[j] >= 0) & (mean > margin + confidence * se)
        if ok.any():
            out[j] = cand[j, int(np.argmax(np.where(ok, mean, -np.inf)))]
    return out
