"""Time per decision of the `search` bot (or any bot), decision by decision, in real games.

    python benchmarks/search_timing.py                          # search, one table at a time
    python benchmarks/search_timing.py --spec search:strong --games 4
    python benchmarks/search_timing.py --tables 64              # 64 games in lockstep
    python benchmarks/search_timing.py --spec "neural:agents/pretrained/exit.pt,symmetric=true"

Plays `games` games to 41 of the search bot (seats 0 and 2, one instance per seat as in a
tournament) against `neural:agents/pretrained/selfplay.pt` (seats 1 and 3), `tables` games
in lockstep, in this process with one torch thread. Every call of the search bot is timed;
with one table each call is one decision, so the distribution is that of a person's wait at
the table; with more tables a call's time is split over its decisions as the tournament
report does. Printed: decisions, mean, median, 90th and 99th percentiles and maximum in ms,
by kind of decision (bids, card play before the endgame, endgame), and `uptime` before and
after (other load on the machine slows every figure).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="search")
    ap.add_argument("--opponent", default="neural:agents/pretrained/selfplay.pt")
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--tables", type=int, default=1)
    ap.add_argument("--seed", type=int, default=424242)
    ap.add_argument("--max-hands", type=int, default=60)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from fourhundred_agents import make_agent
    from fourhundred_env import Engine, Rules
    from fourhundred_env.engine import Phase
    from fourhundred_env.view import seat_view
    from fourhundred_tournament.runner import game_streams

    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rules = Rules()
    engine = Engine(rules)
    search = [make_agent(args.spec, rules, seed=s) for s in range(4)]
    other = [make_agent(args.opponent, rules, seed=10 + s) for s in range(4)]
    endgame = getattr(search[0], "endgame", 0)  # a bot without an endgame: all "play"
    times: dict[str, list[float]] = {"bid": [], "play": [], "endgame": []}
    for start in range(0, args.games, args.tables):
        b = min(args.tables, args.games - start)
        ids = np.arange(start, start + b, dtype=np.int64)
        state = engine.init(b, seed=args.seed, match_id=ids)
        state.stream = game_streams(args.seed, ids, np.zeros(b, np.int64))
        engine.deal(state)
        while True:
            live = state.phase <= Phase.PLAY
            if not live.any():
                break
            actions = np.zeros(b, np.int64)
            for seat in range(4):
                idx = np.flatnonzero(live & (state.to_play == seat))
                if idx.size == 0:
                    continue
                view = seat_view(engine, state, idx, np.int8(seat))
                if seat % 2 == 0:
                    t0 = time.perf_counter()
                    actions[idx] = search[seat].act(view)
                    dt = (time.perf_counter() - t0) / idx.size
                    for j in range(idx.size):
                        if view.phase[j] == Phase.BID:
                            kind = "bid"
                        else:
                            kind = "endgame" if 13 - view.num_tricks[j] <= endgame else "play"
                        times[kind].append(dt)
                else:
                    actions[idx] = other[seat].act(view)
            engine.step(state, actions, active=live)
            over = np.flatnonzero(state.phase == Phase.HAND_OVER)
            over = over[state.hand_index[over] < args.max_hands]
            if over.size:
                engine.deal(state, over)
    print("load after: ", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"{args.spec} against {args.opponent}: {args.games} games, {args.tables} in lockstep")
    print(
        f"{'decisions':<10} {'n':>6} {'mean':>8} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}  (ms)"
    )
    every = [t for v in times.values() for t in v]
    for name, v in (*times.items(), ("all", every)):
        if not v:
            continue
        ms = 1000 * np.array(v)
        print(
            f"{name:<10} {ms.size:>6} {ms.mean():8.2f} {np.percentile(ms, 50):8.2f} "
            f"{np.percentile(ms, 90):8.2f} {np.percentile(ms, 99):8.2f} {ms.max():8.2f}"
        )


if __name__ == "__main__":
    main()
