"""Evaluation during training: duplicate matches to 41 against a fixed agent, played and
scored by the tournament runner (the same code, database and Wilson intervals as
`fourhundred tournament`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fourhundred_env.rules import Rules
from fourhundred_train.config import TrainConfig


def evaluate_pair(
    spec: str,
    opponent: str,
    matches: int,
    seed: int,
    rules: Rules | str,
    out_dir: str | Path,
    workers: int = 2,
) -> dict[str, Any]:
    """Play `matches` duplicate matches (2 games each) of `spec` against `opponent`.

    Returns win rate to 41 of `spec` with its Wilson 95% interval, and its points per hand
    and contract success rate, under ``eval/*`` names. Results stay in `out_dir`.
    """
    from fourhundred_tournament.config import TournamentConfig
    from fourhundred_tournament.db import ResultsDB
    from fourhundred_tournament.report import build_report, write_report
    from fourhundred_tournament.tournament import run_tournament

    rules = Rules.preset(rules) if isinstance(rules, str) else rules
    cfg = TournamentConfig(
        agents=(spec, opponent), matches=matches, rules=rules, seed=seed, out_dir=str(out_dir),
        workers=workers, bootstrap=0, progress=False, deals="public",
    )  # fmt: skip
    # public deals: a run's evaluations are a function of its seed on any machine (secret
    # deals would draw a secret each run; no bot here is a stranger's)
    run_tournament(cfg, overwrite=True)
    with ResultsDB(cfg.db_path, cfg.fingerprint()) as db:
        report = build_report(db, cfg)
    write_report(report, out_dir)
    (entry,) = report["pairwise"]
    rate, low, high = entry["rate"], entry["low"], entry["high"]
    if entry["agent"] != spec:  # the pair is stored in label order
        rate, low, high = 1 - rate, 1 - high, 1 - low
    board = {row["agent"]: row for row in report["leaderboard"]}
    mine = board.get(spec, {})
    return {
        "eval/win_rate": rate,
        "eval/win_rate_low": low,
        "eval/win_rate_high": high,
        "eval/games": float(entry["games"]),
        "eval/points_per_hand": float(mine.get("points_per_hand", float("nan"))),
        "eval/bid_success_rate": float(mine.get("bid_success", float("nan"))),
    }


def eval_seed(seed: int, update: int) -> int:
    """The tournament seed of the evaluation of update `update` of a run seeded `seed`: below
    2**63 as a tournament's must be, for any run seed (the same as before for seeds < 2**43)."""
    return (seed * 1_000_003 + update) % 2**63


def make_evaluator(
    config: TrainConfig, run_dir: Path
) -> Callable[[Path, int], dict[str, Any]] | None:
    """`evaluate(policy_path, update)` for the trainer, or None when evaluations are off."""
    if not config.eval_every:
        return None
    bids = None
    if config.mode == "bidding" and config.eval_bid_deals:
        from fourhundred_train.bid_report import BidEval

        bids = BidEval(config.play_policy, config.eval_bid_deals, config.seed, config.rules)
        if bids.off is not None:
            print(f"eval/bid_* off: {bids.off}")

    def evaluate(policy_path: Path, update: int) -> dict[str, Any]:
        kind = "neural-bid" if config.mode == "bidding" else "neural"
        # a copy per evaluation: the tournament fingerprints the file, and policy.pt changes
        snap = Path(run_dir) / "eval" / f"update_{update:05d}" / "policy.pt"
        snap.parent.mkdir(parents=True, exist_ok=True)
        snap.write_bytes(Path(policy_path).read_bytes())
        # your bid features named again, as the checkpoint is played anywhere
        spec = f"{kind}:{snap}" + (f",features={config.features}" if config.features else "")
        out = evaluate_pair(
            spec, config.eval_opponent, matches=config.eval_matches,
            seed=eval_seed(config.seed, update), rules=config.rules, out_dir=snap.parent,
        )  # fmt: skip
        if bids is not None:  # the bidding benchmark's hands, its own seeds
            out.update(bids(spec))
        return out

    return evaluate


def compare_bidders(
    bidder: str,
    baseline: str = "heuristic",
    play_policy: str = "heuristic",
    tables: int = 1024,
    rounds: int = 20,
    seed: int = 0,
    rules: Rules | str = "wiki",
) -> dict[str, float]:
    """Points per hand of two bidders on the same hands, card play held fixed (paired).

    Both bidders bid for seat 0 of FourHundredBid-v0 at `tables` tables for `rounds` rounds,
    the environments seeded alike, so hand i has the same cards, scores and earlier bids for
    both; everything else is `play_policy`. Returns each mean, the mean paired difference
    (bidder - baseline) and its 95% interval (normal approximation over tables x rounds).
    """
    import numpy as np

    from fourhundred_agents.registry import make_agent
    from fourhundred_env.engine import Engine
    from fourhundred_env.envs.bidding import FourHundredBidVectorEnv
    from fourhundred_env.view import seat_view

    rules = Rules.preset(rules) if isinstance(rules, str) else rules
    engine = Engine(rules)  # stateless but for the rules: reads the env's state
    points = []
    for spec in (bidder, baseline):
        agent = make_agent(spec, rules, seed, decides="bid")  # it only bids here
        env = FourHundredBidVectorEnv(tables, seat=0, policy=play_policy, rules=rules)
        env.reset(seed=seed)
        got = []
        for _ in range(rounds):
            view = seat_view(engine, env.state, seat=np.zeros(tables, np.int8))
            _, _, _, _, info = env.step(agent.act(view))
            got.append(info["seat_rewards"][:, 0].astype(np.float64))
        env.close()
        points.append(np.concatenate(got))
    diff = points[0] - points[1]
    half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
    return {
        "hands": float(diff.size),
        "bidder_points_per_hand": float(points[0].mean()),
        "baseline_points_per_hand": float(points[1].mean()),
        "difference": float(diff.mean()),
        "difference_low": float(diff.mean() - half),
        "difference_high": float(diff.mean() + half),
        "changed_bids_share": float(np.mean(diff != 0)),
    }
