"""A fast yardstick for tuning the search bot: how much its decisions gain over the policy's
own, measured on the true deals.

    python benchmarks/search_proxy.py --positions 2000 --specs search search:worlds=64

Positions are decisions (bids and cards, in matches at every stage) of games of
`selfplay.pt` against itself. At each, every legal action is played out on the *true* table,
the rest of the hand by the policy at all seats (greedy, bfloat16), and valued by the
match-win estimate for the acting seat's team: V(a). A bot's decision at the position (from
its own view only) is worth V(chosen) - V(policy's choice). The mean over positions, with its
standard error, is the one-step improvement over the policy (under the policy's own play
afterwards), paired position by position: differences of a few thousandths of a match show up
in minutes, where a tournament needs hours. It is a proxy: the tournaments decide.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np


def positions(engine, playout, runner, count: int, seed: int, bid_share: float, opponent=None):
    """(state (n,), at a decision with a choice): positions of policy self-play matches, or of
    the policy (seats 0 and 2) against `opponent` (seats 1 and 3; positions of seats 0, 2)."""
    from fourhundred_env.engine import Phase
    from fourhundred_env.observation import encode_observation
    from fourhundred_env.view import seat_view

    rng = np.random.default_rng(seed)
    b = 512
    state = engine.init(b, seed=seed, match_id=np.arange(b, dtype=np.int64))
    state.stream = rng.integers(0, 2**63, b).astype(np.uint64)
    engine.deal(state)
    picked = []
    n_bid = n_card = 0
    want_bid = int(count * bid_share)
    while n_bid + n_card < count:
        live = state.phase <= Phase.PLAY
        idx = np.flatnonzero(live)
        view = seat_view(engine, state, idx)
        logits, _ = runner(encode_observation(view))
        logits = np.where(view.legal_mask, logits, -np.inf)
        actions = np.zeros(b, np.int64)
        actions[idx] = logits.argmax(1)
        choice = view.legal_mask.sum(1) > 1
        if opponent is not None:
            theirs = view.seat % 2 == 1
            if theirs.any():
                actions[idx[theirs]] = opponent.act(view.select(np.flatnonzero(theirs)))
            choice &= ~theirs
        bid = view.phase == Phase.BID
        take = choice & (rng.random(idx.size) < np.where(bid, 0.25, 0.04))
        take &= np.where(bid, n_bid < want_bid, n_card < count - want_bid)
        if take.any():
            picked.append(state.select(idx[take]))
            n_bid += int((take & bid).sum())
            n_card += int((take & ~bid).sum())
        engine.step(state, actions, active=live)
        over = np.flatnonzero(state.phase >= Phase.HAND_OVER)
        done = over[state.phase[over] == Phase.MATCH_OVER]
        if done.size:
            engine.new_match(state, done, rng.integers(10**6, 10**9, done.size))
        if over.size:
            engine.deal(state, over)
    from fourhundred_env.engine import State

    return State.concat(picked)


def true_values(engine, playout, runner, matchwin, state, opponent=None) -> np.ndarray:
    """(n, 66): V(a) of each legal action on the true table (NaN for illegal ones), the rest
    of the hand played by the policy, or by the policy for the acting seat's team and by
    `opponent` for the others."""
    from fourhundred_agents.search.agent import playout_values
    from fourhundred_env.engine import Phase
    from fourhundred_env.observation import encode_observation
    from fourhundred_env.view import seat_view

    legal = engine.legal_mask(state)
    t, a = np.nonzero(legal)
    branch = state.select(t)
    engine.step(branch, a, validate=False)
    if opponent is None:
        playout.run(branch)
    else:
        team = state.to_play[t] % 2
        while True:
            live = branch.phase <= Phase.PLAY
            if not live.any():
                break
            idx = np.flatnonzero(live)
            view = seat_view(engine, branch, idx)
            actions = np.zeros(branch.batch_size, np.int64)
            ours = view.seat % 2 == team[idx]
            if ours.any():
                v = view.select(np.flatnonzero(ours))
                logits, _ = runner(encode_observation(v))
                actions[idx[ours]] = np.where(v.legal_mask, logits, -np.inf).argmax(1)
            if (~ours).any():
                actions[idx[~ours]] = opponent.act(view.select(np.flatnonzero(~ours)))
            engine.step(branch, actions, validate=False, active=live)
    v = np.empty(t.size)
    seats = state.to_play[t].astype(np.int64)
    playout_values(branch.records, seats, False, 0.0, *matchwin.weights, v)
    out = np.full(legal.shape, np.nan)
    out[t, a] = v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", nargs="+", default=["search"])
    ap.add_argument("--positions", type=int, default=2000)
    ap.add_argument("--bid-share", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=5150)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--opponent", default=None, help="e.g. heuristic-v1 (default: the policy)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from fourhundred_agents import make_agent
    from fourhundred_agents.neural.checkpoint import load_policy
    from fourhundred_agents.search.policy_playout import NetRunner, PolicyPlayout
    from fourhundred_agents.value.matchwin import MatchWin
    from fourhundred_env import Engine, Rules
    from fourhundred_env.engine import Phase
    from fourhundred_env.view import seat_view

    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rules = Rules()
    engine = Engine(rules)
    net, _, _ = load_policy("agents/pretrained/selfplay.pt")
    runner = NetRunner(net)
    playout = PolicyPlayout(runner, engine._r)
    matchwin = MatchWin(rules=rules)
    opponent = make_agent(args.opponent, rules, seed=99) if args.opponent else None
    state = positions(engine, playout, runner, args.positions, args.seed, args.bid_share, opponent)
    values = true_values(engine, playout, runner, matchwin, state, opponent)
    view = seat_view(engine, state)
    bid = view.phase == Phase.BID
    policy = make_agent("search:time_per_move=0", rules, seed=0).act(view)
    rows = np.arange(state.batch_size)
    base = values[rows, policy]
    best = np.nanmax(values, axis=1)
    print(f"{state.batch_size} positions ({bid.sum()} bids); the best action on the true deal "
          f"gains {np.mean(best - base):.4f} (bids {np.mean((best - base)[bid]):.4f}, "
          f"cards {np.mean((best - base)[~bid]):.4f})")  # fmt: skip
    for spec in args.specs:
        agent = make_agent(spec, rules, seed=1)
        t0 = time.perf_counter()
        chosen = np.concatenate([
            agent.act(view.select(np.arange(i, min(i + args.batch, view.size))))
            for i in range(0, view.size, args.batch)
        ])  # fmt: skip
        dt = time.perf_counter() - t0
        gain = values[rows, chosen] - base
        parts = []
        for name, sel in (("all", slice(None)), ("bids", bid), ("cards", ~bid)):
            g = gain[sel]
            parts.append(f"{name} {g.mean():+.4f} +- {g.std() / np.sqrt(g.size):.4f}")
        changed = (chosen != policy).mean()
        print(f"{spec}: {'; '.join(parts)}; changed {100 * changed:.1f}%; "
              f"{1000 * dt / view.size:.1f} ms/decision")  # fmt: skip
    print("load after: ", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
