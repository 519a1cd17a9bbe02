"""Evaluation during training: duplicate matches to 41 against a fixed agent, by the
tournament runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from train.config import TrainConfig


def make_evaluator(config: TrainConfig) -> Callable[[Path, int], dict[str, float]] | None:
    """`evaluate(policy_path, update)` -> {"eval/win_rate": ..., "eval/win_rate_low": ...}."""
    if not config.eval_every:
        return None

    def evaluate(policy_path: Path, update: int) -> dict[str, float]:
        from agents.tournament import evaluate_pair  # the tournament runner (agents issue)

        spec = f"neural-bid:{policy_path}" if config.mode == "bidding" else f"neural:{policy_path}"
        return evaluate_pair(
            spec, config.eval_opponent, matches=config.eval_matches, seed=config.seed + update,
            rules=config.rules,
        )  # fmt: skip

    return evaluate
