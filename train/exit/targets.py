"""Expert iteration's targets and fit: the network's policy improved by the search's values
(`improved_policy`, its temperature fitted on held-out positions), the held-out judgements
(`search_gain`), and the fit (`fit`).
"""

from __future__ import annotations

import math

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.observation import OBS_FIELDS, OBS_SCALE
from fourhundred_env.symmetry import (
    ACTION_GATHERS,
    NUM_RENAMINGS,
    OBS_GATHERS,
    mean_over_renamings,
    stack_renamed,
)
from fourhundred_train.exit.config import ExitConfig

TEMPERATURES = np.geomspace(1e-4, 1.0, 81)
"""The temperatures tried when one is fitted (match-win chance units)."""
BID_GROUP = 13
"""The temperature group of bidding positions; card positions' group is the number of tricks
completed (0-12)."""


# -- targets --------------------------------------------------------------------------------
def improved_policy(values: np.ndarray, temperature: float | np.ndarray,
                    log_prior: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """(n, 66) float64: softmax over each row's legal (finite) actions of values / temperature
    (one for all rows, or (n,) one per row), plus `log_prior` (n, 66) when given (prior x
    exp(value / temperature)); 0 elsewhere."""
    legal = np.isfinite(values)
    t = np.asarray(temperature, np.float64)
    z = np.where(legal, values, -np.inf).astype(np.float64) / (t[:, None] if t.ndim else t)
    if log_prior is not None:
        z = z + np.where(legal, log_prior, 0.0)
    z = z - z.max(axis=1, keepdims=True)
    e = np.where(legal, np.exp(z), 0.0)
    return e / e.sum(axis=1, keepdims=True)


def target_worth(values: np.ndarray, temperature: float | np.ndarray,
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


def temperature_groups(obs: np.ndarray) -> np.ndarray:
    """(n,) int64 group of each position (int8 observations) for its own temperature:
    BID_GROUP for a bid, else the tricks completed in the hand. The values' noise falls as
    the hand goes on (fewer unseen cards, shorter play-outs), so one temperature for all
    would make the early tricks' targets a choice of noise."""
    bidding = obs[:, OBS_FIELDS["phase"].start] > 0
    tricks = np.clip(obs[:, OBS_FIELDS["num_tricks"].start].astype(np.int64), 0, 12)
    return np.where(bidding, BID_GROUP, tricks)


def fit_temperatures(values: np.ndarray, groups: np.ndarray,
                     log_prior: np.ndarray | None = None) -> dict[int, float]:  # fmt: skip
    """The temperature of each group (`fit_temperature` of its positions, values (2, n, 66),
    groups (n,)), by group."""
    out = {}
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        prior = None if log_prior is None else log_prior[rows]
        out[int(g)] = fit_temperature(values[:, rows], prior)
    return out


def targets(values: np.ndarray, temperature: float | np.ndarray,
            log_prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The fit's targets from values (2, n, 66): the policy's (n, 66) improved policy of the
    mean of both halves at `temperature` (one, or (n,) one per position), and the value
    head's (n,) expected value under it."""
    mean = values.mean(axis=0)
    pi = improved_policy(mean, temperature, log_prior)
    v = (pi * np.where(np.isfinite(mean), mean, 0.0)).sum(axis=1)
    return pi.astype(np.float32), v.astype(np.float32)


def split(n: int, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fitted, held out) position indices of an iteration: a seeded random `share` out."""
    order = np.random.default_rng(seed).permutation(n)
    cut = round(n * share)
    return np.sort(order[cut:]), np.sort(order[:cut])


_BATCH = 4096
"""Rows the network reads at a time in :func:`log_policy`."""
_CHUNK_STEP = _BATCH // math.gcd(_BATCH, NUM_RENAMINGS)
"""Positions whose six renamings fill whole batches: :func:`symmetric_log_policy`'s chunks are
multiples of it, so that the network reads the same batches whatever the chunk."""


def log_policy(net, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """(n, 66) float64 log-probabilities of the network's policy at int8 observations
    (-inf where illegal)."""
    import torch

    scale = torch.from_numpy(OBS_SCALE.astype(np.float32))
    out = [np.zeros((0, NUM_ACTIONS))]
    with torch.no_grad():
        for lo in range(0, len(obs), _BATCH):
            logits = net(torch.from_numpy(obs[lo : lo + _BATCH]).float() * scale)[0].double()
            mask = torch.from_numpy(legal[lo : lo + _BATCH])
            logp = torch.log_softmax(torch.where(mask, logits, -torch.inf), -1)
            out.append(logp.numpy())
    return np.concatenate(out)


def symmetric_log_policy(
    net, obs: np.ndarray, legal: np.ndarray, chunk: int = 6 * _CHUNK_STEP
) -> np.ndarray:
    """(n, 66) float64: the network's policy averaged over the six renamings of the plain
    suits (fourhundred_env/symmetry.py; the normalised mean of its log-probabilities at each
    renamed position, mapped back), -inf where illegal. `chunk` positions at a time (a
    multiple of `_CHUNK_STEP`, 2,048, so that the network reads the same batches of renamed
    rows whatever the chunk): memory stays that of a chunk's six renamings."""
    if chunk % _CHUNK_STEP:
        raise ValueError(f"chunk={chunk}: expected a multiple of {_CHUNK_STEP}")
    out = [np.zeros((0, NUM_ACTIONS))]
    for lo in range(0, len(obs), chunk):
        part = legal[lo : lo + chunk]
        logp = log_policy(
            net, stack_renamed(obs[lo : lo + chunk]), stack_renamed(part, ACTION_GATHERS)
        )
        mean = np.where(part, mean_over_renamings(np.where(np.isfinite(logp), logp, 0.0)), -np.inf)
        top = mean.max(axis=1, keepdims=True)
        out.append(mean - top - np.log(np.exp(mean - top).sum(axis=1, keepdims=True)))
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
def advantages(values: np.ndarray) -> np.ndarray:
    """(n, 66) float32: the mean of both halves' values (2, n, 66) less its mean over each
    position's legal actions (0 where illegal), what the value objective weighs."""
    legal = np.isfinite(values[0])
    mean = np.where(legal, values.mean(axis=0), 0.0)
    centre = mean.sum(axis=1, keepdims=True) / np.maximum(legal.sum(axis=1, keepdims=True), 1)
    return np.where(legal, mean - centre, 0.0).astype(np.float32)


def fit(net, obs: np.ndarray, legal: np.ndarray, pi: np.ndarray, v: np.ndarray,
        config: ExitConfig, seed: int, desc: str = "fit",
        value_terms: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        ) -> dict[str, float]:  # fmt: skip
    """Train `net` on the positions for `config.epochs` passes: its masked policy by
    `config.objective` plus value_coef x squared error of its value to `v`; returns the last
    epoch's mean losses.

    "cross_entropy": the cross-entropy of the policy to `pi`. "value": with `value_terms`
    (advantages (n, 66), temperatures (n,), log-prior (n, 66)), KL(policy || prior) minus the
    policy's expected advantage / temperature. Both are smallest at the same policy, `pi`
    (prior x exp(advantage / temperature)); where the network cannot reach it, cross-entropy
    spends its errors alike on every action, the value objective where they cost least.

    The fit runs on `config.device`: elsewhere than the CPU, on a copy of `net` there, whose
    weights are copied back into `net` at the end. The draws (the order of the positions,
    the renamings) come from a CPU generator, the same on every device.
    """
    import torch
    from tqdm import tqdm

    from fourhundred_agents.neural.device import learner_copy, torch_device
    from fourhundred_agents.neural.network import masked_logits

    device = torch_device(config.device)
    learner = learner_copy(net, device)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(learner.parameters(), lr=config.learning_rate)
    scale = torch.from_numpy(OBS_SCALE.astype(np.float32)).to(device)
    obs_t, legal_t = torch.from_numpy(obs).to(device), torch.from_numpy(legal).to(device)
    pi_t, v_t = torch.from_numpy(pi).to(device), torch.from_numpy(v).to(device)
    by_value = config.objective == "value"
    if by_value:
        if value_terms is None:
            raise ValueError("objective 'value' needs value_terms")
        adv, temps, log_prior = value_terms
        adv_t = torch.from_numpy((adv / temps[:, None]).astype(np.float32)).to(device)
        prior_t = torch.from_numpy(np.where(legal, log_prior, 0.0).astype(np.float32)).to(device)
    n = len(obs)
    renamed = config.symmetry == "suits"
    if renamed:  # gathers of the six renamings: (6, 588) and (6, 66)
        obs_maps = torch.from_numpy(np.stack(OBS_GATHERS)).to(device)
        action_maps = torch.from_numpy(np.stack(ACTION_GATHERS)).to(device)
    steps = config.epochs * math.ceil(n / config.batch_size)
    bar = tqdm(total=steps, unit="step", desc=desc, disable=not config.progress,
               dynamic_ncols=True)  # fmt: skip
    learner.train()
    stats = {"policy_loss": 0.0, "value_loss": 0.0}
    for _ in range(config.epochs):
        perm = torch.randperm(n, generator=gen)
        totals = [0.0, 0.0]
        for lo in range(0, n, config.batch_size):
            idx = perm[lo : lo + config.batch_size].to(device)
            if renamed:  # each position under a renaming drawn for this pass
                which = torch.randint(len(OBS_GATHERS), (len(idx),), generator=gen).to(device)
                o_src, a_src = obs_maps[which], action_maps[which]
            else:
                o_src = a_src = None
            logits, value = learner(_take(obs_t, idx, o_src).float() * scale)
            mask = _take(legal_t, idx, a_src)
            logp = torch.log_softmax(masked_logits(logits, mask), -1)
            if by_value:
                p = torch.exp(logp)
                kl = (p * torch.where(mask, logp - _take(prior_t, idx, a_src), 0.0)).sum(1)
                policy_loss = (kl - (p * _take(adv_t, idx, a_src)).sum(1)).mean()
            else:
                policy_loss = (
                    -(_take(pi_t, idx, a_src) * torch.where(mask, logp, 0.0)).sum(1).mean()
                )
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
    if learner is not net:  # the fitted weights back into the CPU network
        net.load_state_dict(learner.state_dict())
    net.eval()
    return stats


def _take(x, idx, src):
    """Rows `idx` of tensor `x`, each gathered by its row of `src` (a renaming) if given."""
    return x[idx] if src is None else x[idx].gather(1, src)
