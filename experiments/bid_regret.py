"""Bidders' gain per bid over heuristic-v1's bids, valued by the bid search itself.

    .venv/bin/python experiments/bid_regret.py "neural-bid:agents/pretrained/bidder.pt" \
        --positions 4000 --seed 4343 --values /tmp/bid_regret_4343.npz

Positions are drawn at random from the bids of seats 0 and 2 in matches of heuristic-v1
(`train/bid_q/`'s `record_positions`, a pool of `--pool` positions: every hand of a match,
not only the first). At each, every legal bid is valued twice by `search:bidder` (512 worlds
of 8,192 deals, heuristic-v1 at every seat of the play-outs, the match-win estimate plus 0.003
a point), with two independent seeds, A and B, in percentage points of match-win chance. A
bidder's gain is the mean of (A + B) / 2 at its bid minus that at heuristic-v1's bid; its
regret is what the search's own choice gains over it, chosen by one seed and valued by the
other (so the search's winner's curse does not count): the search's own gain is the first
line. Both are split by the highest score at the table, where the match is decided. The
values take about 75 ms a position per seed on one core; `--values FILE` keeps them, and a
rerun with the same file, seed and positions reads them instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from tqdm import tqdm

from fourhundred_agents import make_agent
from fourhundred_agents.search.agent import SearchAgent, SearchSettings
from fourhundred_env import Engine, FourHundredError, Rules
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.view import seat_view
from fourhundred_train.bid_q import QBidder, record_positions
from fourhundred_train.bid_report import mean_interval

CHUNK = 250
BANDS = ((0, 0), (1, 19), (20, 29), (30, 999))


def in_chunks(engine: Engine, positions, decide, desc: str | None = None) -> np.ndarray:
    """decide(view) of the positions' seat views, CHUNK tables at a time, joined."""
    starts = range(0, positions.batch_size, CHUNK)
    out = []
    for lo in tqdm(starts, desc=desc, unit="chunk", disable=desc is None):
        rows = np.arange(lo, min(positions.batch_size, lo + CHUNK))
        out.append(np.asarray(decide(seat_view(engine, positions, index=rows))))
    return np.concatenate(out)


def search_values(engine: Engine, positions, seed: int) -> np.ndarray:
    """(n, 14) float64: search:bidder's value of every bid (pp), -inf where illegal."""
    agent = SearchAgent(engine.rules, seed=seed, settings=SearchSettings(preset="bidder"))
    values = in_chunks(engine, positions, agent.action_values, f"search values, seed {seed}")
    return 100.0 * values[:, NUM_CARDS:]


def bids(engine: Engine, positions, agent) -> np.ndarray:
    """(n,) the bid index (0..13) `agent` makes at each position."""
    return in_chunks(engine, positions, agent.act) - NUM_CARDS


def interval(x: np.ndarray) -> str:
    mean, lo, hi = mean_interval(x)
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bidders", nargs="+", help="agent specs (their bids are used)")
    p.add_argument("--positions", type=int, default=4000)
    p.add_argument(
        "--pool",
        type=int,
        default=100_000,
        help="positions recorded to draw from (every hand of the matches)",
    )
    p.add_argument("--seed", type=int, default=4343)
    p.add_argument("--values", type=Path, help="npz to keep the search's values in")
    args = p.parse_args()
    rules = Rules()
    engine = Engine(rules)
    try:  # a bad spec or checkpoint is refused before the values are computed
        agents = {spec: make_agent(spec, rules, seed=0, decides="bid")
                  for spec in ["heuristic-v1", *args.bidders]}  # fmt: skip
    except FourHundredError as e:
        raise SystemExit(f"bid_regret: {e}") from None
    pool = record_positions(engine, QBidder(engine), args.pool, args.seed, 2048, 200, 0)
    pick = np.sort(np.random.default_rng(args.seed).choice(args.pool, args.positions, False))
    positions = pool.select(pick)
    key = np.array([args.seed, args.positions, args.pool])
    if args.values and args.values.is_file():
        with np.load(args.values) as d:
            if not np.array_equal(d["key"], key):
                raise SystemExit(f"{args.values}: values of seed/positions/pool {d['key'].tolist()}"
                                 f": expected {key.tolist()} (another file, or delete it)")  # fmt: skip
            qa, qb = d["a"], d["b"]
    else:
        qa = search_values(engine, positions, args.seed + 1)
        qb = search_values(engine, positions, args.seed + 2)
        if args.values:
            np.savez(args.values, key=key, a=qa, b=qb)
    k = np.arange(args.positions)
    own = bids(engine, positions, agents["heuristic-v1"])
    both = (qa + qb) / 2
    top = seat_view(engine, positions).scores_before.max(axis=1)
    cross = (qa[k, qb.argmax(1)] - qa[k, own] + qb[k, qa.argmax(1)] - qb[k, own]) / 2
    rows = [("search:bidder (A chooses, B values, and back)", cross, np.zeros_like(cross))]
    for spec in args.bidders:
        c = bids(engine, positions, agents[spec])
        gain = both[k, c] - both[k, own]
        rows.append((spec, gain, cross - gain))
    print(f"\n{args.positions} positions (seed {args.seed}); pp of match-win chance per bid, "
          "against heuristic-v1's bids")  # fmt: skip
    print(f"{'bidder':<48} {'gain':>24} {'regret':>24}")
    for name, gain, regret in rows:
        print(f"{name[:48]:<48} {interval(gain):>24} {interval(regret):>24}")
    print("\ngain by the highest score at the table (share of positions):")
    head = "".join(f"{f'{lo}-{hi}' if hi < 999 else f'{lo}+':>10}" for lo, hi in BANDS)
    print(f"{'bidder':<48}{head}")
    print(f"{'(share)':<48}" + "".join(f"{np.mean((top >= lo) & (top <= hi)):>10.2f}"
                                         for lo, hi in BANDS))  # fmt: skip
    for name, gain, _ in rows:
        parts = [gain[(top >= lo) & (top <= hi)] for lo, hi in BANDS]
        cells = "".join(f"{x.mean():>+10.3f}" if x.size else f"{'-':>10}" for x in parts)
        print(f"{name[:48]:<48}{cells}")


if __name__ == "__main__":
    main()
