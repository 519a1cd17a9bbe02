"""Fit the match-win estimate of the search bot (agents/value/matchwin.py) on self-play matches.

Plays `matches` matches to the end with a policy checkpoint's greedy play at all four seats
(deals seeded by ``(seed, match_id, hand)``), records the scores, target and dealer at the
start of every hand and which team won, and fits P(team of the first bidder wins) with a
small network (binary cross-entropy, Adam). Half of the matches' hands go to training, by
match id, and half to a held-out check; the log loss and calibration of both are printed.

    .venv/bin/python -m fourhundred_train.matchwin --matches 60000 --out agents/pretrained/matchwin.npz

The bundled ``agents/pretrained/matchwin.npz`` was made by that command (see its README).
With ``--model heuristic-v1`` the matches are the compiled ``heuristic-v1`` against itself
(about 10,000 matches a second on one core); ``agents/pretrained/matchwin_h1.npz``, the value
of the fitted-Q bidder's play-outs (train/bid_q/), was made by

    .venv/bin/python -m fourhundred_train.matchwin --model heuristic-v1 --matches 200000 --tables 4096 \
        --out agents/pretrained/matchwin_h1.npz
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from fourhundred_agents.neural.checkpoint import load_policy, require_card_player
from fourhundred_agents.search.policy_playout import NetRunner, PolicyPlayout
from fourhundred_agents.value.matchwin import NUM_FEATURES, MatchWin, features
from fourhundred_env.engine import Engine, Phase
from fourhundred_env.rules import Rules


def hand_player(path: str) -> tuple:
    """(rules, engine, play(state)): plays every table's hand to its end with a checkpoint's
    greedy play at all four seats, or, for path ``heuristic-v1``, with that compiled bot's."""
    if path == "heuristic-v1":
        from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent
        from fourhundred_agents.scripted.playout import Playout

        rules = Rules()
        engine = Engine(rules)
        policy = HeuristicV1Agent(rules).compiled_policy()
        playout = Playout(dict.fromkeys(range(4), policy))
        never = np.zeros((4, 5), np.bool_)

        def play(state) -> None:
            ended = np.empty(state.batch_size, np.int64)
            if playout.run(state, engine._r, never, ended) < 0:
                raise ValueError("heuristic-v1 chose an illegal action")

        return rules, engine, play
    net, rules, _ = load_policy(path)
    require_card_player(net, path)
    engine = Engine(rules)
    return rules, engine, PolicyPlayout(NetRunner(net), engine._r).run


def self_play(path: str, matches: int, seed: int, tables: int, max_hands: int = 200) -> dict:
    """Hand starts of `matches` self-play matches: scores (n, 4), target (n,), dealer (n,),
    match id (n,), and the winner (n,) team (-1: stopped at max_hands). `path`: a policy
    checkpoint, or ``heuristic-v1`` (see hand_player)."""
    rules, engine, play = hand_player(path)
    todo = list(range(matches))
    b = min(tables, matches)
    state = engine.init(b, seed=seed, match_id=np.array(todo[:b], np.int64))
    todo = todo[b:]
    active = np.ones(b, bool)
    rows: dict[str, list[np.ndarray]] = {k: [] for k in ("scores", "target", "dealer", "match")}
    winners: dict[int, int] = {}
    engine.deal(state)
    while active.any():
        rows["scores"].append(state.scores_before[active].copy())
        rows["target"].append(state.target[active].copy())
        rows["dealer"].append(state.dealer[active].copy())
        rows["match"].append(state.match_id[active].copy())
        play(state)
        over = active & ((state.phase == Phase.MATCH_OVER) | (state.hand_index >= max_hands))
        for t in np.flatnonzero(over):
            winners[int(state.match_id[t])] = int(state.winner[t])
        refill = np.flatnonzero(over)[: len(todo)]
        if refill.size:
            engine.new_match(state, refill, np.array(todo[: refill.size], np.int64))
            todo = todo[refill.size :]
        active &= ~over
        active[refill] = True
        engine.deal(state, np.flatnonzero(active))
    out = {k: np.concatenate(v) for k, v in rows.items()}
    out["winner"] = np.array([winners[int(m)] for m in out["match"]], np.int64)
    out["rules"] = rules
    return out


class _Net(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.l1 = nn.Linear(NUM_FEATURES, hidden)
        self.l2 = nn.Linear(hidden, hidden)
        self.l3 = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(x))))).squeeze(-1)


def fit(x: np.ndarray, y: np.ndarray, hidden: int, epochs: int, seed: int) -> _Net:
    """A logistic MLP of P(y = 1 | x), trained with Adam on minibatches of 4,096."""
    torch.manual_seed(seed)
    net = _Net(hidden)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        for g in opt.param_groups:
            g["lr"] = 3e-3 * (0.5 ** (epoch // max(1, epochs // 4)))
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), 4096):
            idx = perm[i : i + 4096]
            loss = nn.functional.binary_cross_entropy_with_logits(net(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    """The mean binary cross-entropy of probabilities p (n,) to outcomes y (n,) in {0, 1},
    p clipped to [1e-6, 1 - 1e-6]."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def main(argv: list[str] | None = None) -> None:
    """Command line (see the module docstring): plays the matches, fits the network and
    writes its weights to ``--out`` (.npz)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--model", default="agents/pretrained/selfplay.pt", help="a checkpoint, or heuristic-v1"
    )
    ap.add_argument("--matches", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--tables", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--out", default="agents/pretrained/matchwin.npz")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    data = self_play(args.model, args.matches, args.seed, args.tables)
    done = data["winner"] >= 0
    first = (data["dealer"] + 1) % 4 % 2  # team of the first bidder
    x = features(data["scores"][done], data["target"][done], data["dealer"][done])
    y = (data["winner"][done] == first[done]).astype(np.float32)
    held = data["match"][done] % 2 == 1
    print(
        f"{args.matches} matches, {len(done)} hands ({(~done).sum()} in unfinished matches) "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    net = fit(x[~held], y[~held], args.hidden, args.epochs, args.seed)
    w = {
        "w1": net.l1.weight.detach().numpy().T.copy(),
        "b1": net.l1.bias.detach().numpy(),
        "w2": net.l2.weight.detach().numpy().T.copy(),
        "b2": net.l2.bias.detach().numpy(),
        "w3": net.l3.weight.detach().numpy()[0].copy(),
        "b3": np.float32(net.l3.bias.detach().numpy()[0]),
    }
    rules: Rules = data["rules"]
    meta = {"model": args.model, "matches": args.matches, "seed": args.seed,
            "hands": int(done.sum()), "epochs": args.epochs}  # fmt: skip
    np.savez(
        Path(args.out), **w, rules=np.array(json.dumps(rules.to_dict())),
        meta=np.array(json.dumps(meta)),
    )  # fmt: skip
    model = MatchWin(args.out)
    for name, sel in (("train", ~held), ("held-out", held)):
        p = model.first_team(data["scores"][done][sel], data["target"][done][sel],
                             data["dealer"][done][sel])  # fmt: skip
        base = log_loss(np.full(sel.sum(), y[sel].mean()), y[sel])
        print(f"{name}: log loss {log_loss(p, y[sel]):.4f} (constant {base:.4f})")
        bins = np.clip((p * 10).astype(int), 0, 9)
        cal = [
            f"{b / 10:.1f}:{y[sel][bins == b].mean():.2f}" for b in range(10) if (bins == b).any()
        ]
        print("  calibration (predicted decile: observed) " + " ".join(cal))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
