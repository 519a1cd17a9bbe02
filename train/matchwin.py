"""Fit the match-win estimate (agents/value/matchwin.py) on self-play matches, under any rules.

Plays `matches` matches to the end with one policy at all four seats (deals seeded by
``(seed, match_id, hand)``), records the scores, target and dealer at the start of every hand
and which team won, and fits P(team of the first bidder wins) with a small network (binary
cross-entropy, Adam). Half of the matches' hands go to training, by match id, and half to a
held-out check; the log loss and calibration of both are printed.

    fourhundred fit-matchwin --rules pagat

fits the estimate of ``heuristic-v1``'s play (the compiled bot, about 10,000 matches a second
on one core) under the pagat rules and caches it where every command finds it
(agents/value/matchwin.py: ``cache_dir``). The bundled estimates were made by

    python -m fourhundred_train.matchwin --model agents/pretrained/selfplay.pt --matches 100000 \
        --out agents/pretrained/matchwin.npz
    python -m fourhundred_train.matchwin --model heuristic-v1 --matches 200000 \
        --out agents/pretrained/matchwin_h1.npz
    python -m fourhundred_train.matchwin --model heuristic-v1 --rules pagat --matches 200000 \
        --out agents/pretrained/matchwin_h1-pagat.npz

(a checkpoint's play is fitted under the checkpoint's own rules).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_agents.value.matchwin import (
    DEFAULT_PATH,
    NUM_FEATURES,
    MatchWin,
    cache_dir,
    features,
    rule_diff,
    same_game,
    variant_name,
)
from fourhundred_env.engine import Engine
from fourhundred_env.errors import FourHundredError
from fourhundred_env.loop import GameLoop
from fourhundred_env.rules import Rules

H1 = "heuristic-v1"


def hand_player(path: str, rules: Rules | None = None) -> tuple:
    """(rules, engine, play(state)): plays every table's hand to its end with a checkpoint's
    greedy play at all four seats (under the checkpoint's rules: `rules`, if given, must be
    them), or, for path ``heuristic-v1``, with that compiled bot's under `rules` (default
    wiki)."""
    if path == H1:
        from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent
        from fourhundred_agents.scripted.playout import Playout

        rules = rules if rules is not None else Rules()
        engine = Engine(rules)
        policy = HeuristicV1Agent(rules).compiled_policy()
        playout = Playout(dict.fromkeys(range(4), policy))
        never = np.zeros((4, 5), np.bool_)

        def play(state) -> None:
            ended = np.empty(state.batch_size, np.int64)
            if playout.run(state, engine._r, never, ended) < 0:
                raise ValueError("heuristic-v1 chose an illegal action")

        return rules, engine, play
    from fourhundred_agents.neural.checkpoint import load_policy, require_card_player
    from fourhundred_agents.search.policy_playout import NetRunner, PolicyPlayout

    net, trained, _ = load_policy(path)
    require_card_player(net, path)
    if rules is not None and not same_game(rules, trained):
        raise FourHundredError(
            f"--model {path!r} was trained under other rules than --rules asks "
            f"({rule_diff(trained, rules)}, checkpoint and asked): expected --model "
            f"{H1}, which plays any rules, or a checkpoint of these rules"
        )
    engine = Engine(trained)
    return trained, engine, PolicyPlayout(NetRunner(net), engine._r).run


def self_play(
    path: str,
    matches: int,
    seed: int,
    tables: int,
    max_hands: int = 200,
    rules: Rules | None = None,
    progress: bool = False,
) -> dict:
    """Hand starts of `matches` self-play matches: scores (n, 4), target (n,), dealer (n,),
    match id (n,), and the winner (n,) team (-1: stopped at max_hands). `path`: a policy
    checkpoint, or ``heuristic-v1`` (see hand_player, with `rules`)."""
    from tqdm import tqdm

    rules, engine, play = hand_player(path, rules)
    b = min(tables, matches)
    state = engine.init(b, seed=seed, match_id=np.arange(b, dtype=np.int64))
    rows: dict[str, list[np.ndarray]] = {k: [] for k in ("scores", "target", "dealer", "match")}
    winners: dict[int, int] = {}
    bar = tqdm(total=matches, unit="match", desc="self-play", disable=not progress,
               dynamic_ncols=True)  # fmt: skip

    def match_over(done: np.ndarray) -> None:
        for t in done.tolist():
            winners[int(state.match_id[t])] = int(state.winner[t])
        bar.update(done.size)

    loop = GameLoop(engine, state, max_hands=max_hands, matches=iter(range(b, matches)),
                    on_match_end=match_over)  # fmt: skip
    loop.deal()
    while loop.active.any():
        active = loop.active.copy()
        rows["scores"].append(state.scores_before[active].copy())
        rows["target"].append(state.target[active].copy())
        rows["dealer"].append(state.dealer[active].copy())
        rows["match"].append(state.match_id[active].copy())
        play(state)  # a hand at every table
        loop.end_hands(np.flatnonzero(active))
    bar.close()
    out = {k: np.concatenate(v) for k, v in rows.items()}
    out["winner"] = np.array([winners[int(m)] for m in out["match"]], np.int64)
    out["rules"] = rules
    return out


def default_out(model: str, rules: Rules) -> Path:
    """Where `fourhundred fit-matchwin` writes an estimate by default: the cache, under the
    name the commands look for (``matchwin_h1-pagat.npz`` for heuristic-v1's play under
    pagat; ``matchwin-...`` for a checkpoint's)."""
    base = "matchwin_h1.npz" if model == H1 else DEFAULT_PATH.name
    return cache_dir() / variant_name(base, rules)


def fit(
    x: np.ndarray, y: np.ndarray, hidden: int, epochs: int, seed: int, progress: bool = False
) -> Any:
    """A logistic MLP of P(y = 1 | x), trained with Adam on minibatches of 4,096: a module
    with layers l1, l2 and l3."""
    import torch
    from torch import nn
    from tqdm import tqdm

    class _Net(nn.Module):
        def __init__(self, hidden: int) -> None:
            super().__init__()
            self.l1 = nn.Linear(NUM_FEATURES, hidden)
            self.l2 = nn.Linear(hidden, hidden)
            self.l3 = nn.Linear(hidden, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.l3(torch.relu(self.l2(torch.relu(self.l1(x))))).squeeze(-1)

    torch.manual_seed(seed)
    net = _Net(hidden)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    for epoch in tqdm(range(epochs), unit="epoch", desc="fit", disable=not progress,
                      dynamic_ncols=True):  # fmt: skip
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


def fit_estimate(
    model: str = H1,
    rules: Rules | None = None,
    matches: int = 200000,
    seed: int = 20261201,
    tables: int = 4096,
    hidden: int = 64,
    epochs: int = 12,
    out: str | Path | None = None,
    progress: bool = False,
    echo=print,
) -> Path:
    """Play `matches` matches of `model` (``heuristic-v1`` or a checkpoint) under `rules`,
    fit the estimate and write its weights to `out` (default :func:`default_out`); the fit's
    log loss and calibration are echoed. Returns the file written."""
    if matches < 2:
        raise FourHundredError(f"--matches {matches}: expected at least 2 (half are held out)")
    import torch

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    data = self_play(model, matches, seed, tables, rules=rules, progress=progress)
    rules = data["rules"]
    out = Path(out) if out is not None else default_out(model, rules)
    done = data["winner"] >= 0
    first = (data["dealer"] + 1) % 4 % 2  # team of the first bidder
    x = features(data["scores"][done], data["target"][done], data["dealer"][done])
    y = (data["winner"][done] == first[done]).astype(np.float32)
    held = data["match"][done] % 2 == 1
    echo(
        f"{matches} matches, {len(done)} hands ({(~done).sum()} in unfinished matches) "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    net = fit(x[~held], y[~held], hidden, epochs, seed, progress)
    w = {
        "w1": net.l1.weight.detach().numpy().T.copy(),
        "b1": net.l1.bias.detach().numpy(),
        "w2": net.l2.weight.detach().numpy().T.copy(),
        "b2": net.l2.bias.detach().numpy(),
        "w3": net.l3.weight.detach().numpy()[0].copy(),
        "b3": np.float32(net.l3.bias.detach().numpy()[0]),
    }
    meta = {"model": model, "matches": matches, "seed": seed, "hands": int(done.sum()),
            "epochs": epochs}  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part.npz")  # renamed when whole: a killed fit leaves none
    np.savez(part, **w, rules=np.array(json.dumps(rules.to_dict())),
             meta=np.array(json.dumps(meta)))  # fmt: skip
    part.replace(out)
    estimate = MatchWin(out)
    for name, sel in (("train", ~held), ("held-out", held)):
        p = estimate.first_team(data["scores"][done][sel], data["target"][done][sel],
                                data["dealer"][done][sel])  # fmt: skip
        base = log_loss(np.full(sel.sum(), y[sel].mean()), y[sel])
        echo(f"{name}: log loss {log_loss(p, y[sel]):.4f} (constant {base:.4f})")
        bins = np.clip((p * 10).astype(int), 0, 9)
        cal = [
            f"{b / 10:.1f}:{y[sel][bins == b].mean():.2f}" for b in range(10) if (bins == b).any()
        ]
        echo("  calibration (predicted decile: observed) " + " ".join(cal))
    echo(f"wrote {out}")
    return out


def add_fit_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of the fit (the module's command line and ``fourhundred fit-matchwin``)."""
    ap.add_argument("--model", default=H1,
                    help=f"whose play: {H1} (any rules) or a checkpoint (its rules) (default {H1})")  # fmt: skip
    ap.add_argument("--rules", default=None,
                    help="rules preset, e.g. pagat (default: wiki, or the checkpoint's)")  # fmt: skip
    ap.add_argument("--matches", type=int, default=200000, help="matches played (default 200000)")
    ap.add_argument("--seed", type=int, default=20261201, help="seed of the deals")
    ap.add_argument("--tables", type=int, default=4096, help="matches played side by side")
    ap.add_argument("--hidden", type=int, default=64, help="width of the two hidden layers")
    ap.add_argument("--epochs", type=int, default=12, help="passes over the training hands")
    ap.add_argument("--out", default=None,
                    help="the weights file (default: the cache, where every command finds it)")  # fmt: skip
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")


def fit_from_args(args: argparse.Namespace) -> Path:
    """fit_estimate with the flags of add_fit_arguments."""
    rules = Rules.preset(args.rules) if args.rules is not None else None
    for name in ("tables", "hidden", "epochs"):
        if getattr(args, name) < 1:
            raise FourHundredError(f"--{name} {getattr(args, name)}: expected at least 1")
    return fit_estimate(args.model, rules, args.matches, args.seed, args.tables, args.hidden,
                        args.epochs, args.out, progress=not args.no_progress)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(ap)
    fit_from_args(ap.parse_args(argv))


if __name__ == "__main__":
    main()
