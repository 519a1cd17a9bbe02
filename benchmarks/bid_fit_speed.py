"""One fit step of the bidding network (agents/neural/bid_net.py) against the same network applied the
way it was before the eighth round of issue 20: its head's first layer on the trunk's output
concatenated with each bid's entries, so that the trunk's part is worked out 14 times a
position instead of once. Side by side in one process, median of --repeats rounds:

    .venv/bin/python benchmarks/bid_fit_speed.py --hidden 256 --head 128 --repeats 5

Both give the same values (the largest difference is printed); the ratio is what the fit of
configs/bidding_q.yaml gains per epoch.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from fourhundred_agents.neural.bid_net import PER_BID, SHARED_SIZE, BidNet, BidNetConfig
from fourhundred_env.cards import NUM_CARDS


def concatenated(net: BidNet, shared: torch.Tensor, per: torch.Tensor) -> torch.Tensor:
    """The bid values as the network gave them before: head(trunk output ++ bid entries)."""
    h = net.trunk(shared)
    out = net.bid_head(torch.cat([h[:, None, :].expand(-1, per.shape[1], -1), per], 2))
    return out[..., 0] if net.config.head_version == 1 else net._outcome_values(out, per)


def once_per_position(net: BidNet, shared: torch.Tensor, per: torch.Tensor) -> torch.Tensor:
    return net(shared, per)[0][:, NUM_CARDS:]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--head", type=int, default=128)
    p.add_argument("--head-version", type=int, default=2)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--steps", type=int, default=20, help="fit steps a round")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = BidNet(BidNetConfig(hidden=args.hidden, head=args.head, head_version=args.head_version))
    shared, per = torch.rand(args.batch, SHARED_SIZE), torch.rand(args.batch, 14, PER_BID)
    per[..., 24] = 0.0
    per[:, 3, 24] = 1.0  # heuristic-v1's bid
    with torch.no_grad():
        gap = float(
            (concatenated(net, shared, per) - once_per_position(net, shared, per)).abs().max()
        )
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    times: dict[str, list[float]] = {"concatenated (before)": [], "once a position (now)": []}
    for _ in range(args.repeats):
        for runs, f in zip(times.values(), (concatenated, once_per_position), strict=True):
            t = time.perf_counter()
            for _ in range(args.steps):
                loss = f(net, shared, per).square().mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            runs.append((time.perf_counter() - t) / args.steps * 1000)
    print(f"hidden {args.hidden}, head {args.head}, head version {args.head_version}, batch "
          f"{args.batch}, 1 torch thread; largest difference of the values {gap:.1e}")  # fmt: skip
    for name, runs in times.items():
        print(f"  {name:<24} {statistics.median(runs):8.1f} ms a fit step (median of {len(runs)})")
    a, b = (statistics.median(r) for r in times.values())
    print(f"  ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
