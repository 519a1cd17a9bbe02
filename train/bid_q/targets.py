"""The fitted Q: each bid's value made relative to the bid made (`relative_targets`) and the
network's bid logits fitted to it by squared error (`fit`)."""

from __future__ import annotations

import numpy as np

from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.observation import OBS_SCALE
from fourhundred_train.bid_q.config import BidQConfig


def relative_targets(q: np.ndarray, own: np.ndarray, clip: float) -> np.ndarray:
    """(n, NUM_BIDS) float32: q minus each row's value of bid index `own`, floored at -clip
    (0: not floored); -inf (illegal) stays."""
    rel = q - q[np.arange(len(q)), own][:, None]
    if clip > 0:
        rel = np.maximum(rel, -clip)
    return np.where(np.isfinite(q), rel, -np.inf).astype(np.float32)


def fit(net, inputs: tuple, q: np.ndarray, config: BidQConfig, seed: int,
        progress: bool = False) -> float:  # fmt: skip
    """Fit net's bid logits to q (n, NUM_BIDS) (-inf: illegal, not fitted) by squared error;
    `inputs` are the network's inputs, each (n, ...) (int8 observations are scaled);
    returns the last epoch's mean loss. The fit runs on `config.device`: elsewhere than the
    CPU, on a copy of `net` whose weights are copied back into `net` at the end (the order
    of the positions is drawn on the CPU, the same on every device)."""
    import torch
    from tqdm import tqdm

    from fourhundred_agents.neural.device import learner_copy, torch_device

    device = torch_device(config.device)
    learner = learner_copy(net, device)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(learner.parameters(), lr=config.learning_rate)
    scale = torch.from_numpy(OBS_SCALE.astype(np.float32)).to(device)
    legal = torch.from_numpy(np.isfinite(q)).to(device)
    target = torch.from_numpy(np.where(np.isfinite(q), q, 0.0).astype(np.float32)).to(device)
    tensors = [torch.from_numpy(x).to(device) for x in inputs]
    zero = torch.zeros((), device=device)
    floor = config.clip > 0 and getattr(net.config, "head_version", 1) == 2

    def batch(idx):
        return [t[idx].float() * scale if t.dtype == torch.int8 else t[idx] for t in tensors]

    learner.train()
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
            idx = perm[i : i + config.batch_size].to(device)
            pred = learner(*batch(idx))[0][:, NUM_CARDS:]
            if floor:  # the targets are floored: so is what is compared with them
                pred = torch.clamp(pred, min=-config.clip)
            m = legal[idx]
            err = torch.where(m, pred - target[idx], zero)
            loss = (err * err).sum() / m.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        last = total / count
        bar.set_postfix(loss=f"{last:.3f}")
    if learner is not net:  # the fitted weights back into the CPU network
        net.load_state_dict(learner.state_dict())
    net.eval()
    return last
