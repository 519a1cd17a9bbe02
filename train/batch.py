"""The data of a PPO update: groups of tables, the rollout they play, the batch it learns.

Data only: the collector (train/collect.py) fills them, the trainer (train/ppo.py) and the
objectives (train/objectives.py) read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from fourhundred_env.envs.vector import FourHundredVectorEnv


@dataclass
class Group:
    """Tables of one kind: rows offset..offset+size of the rollout batch."""

    kind: str  # "selfplay", "scripted", "snapshot", "bidding"
    env: FourHundredVectorEnv
    offset: int
    size: int
    opponent: str | None = None
    obs: dict[str, np.ndarray] = field(default_factory=dict)
    seat: np.ndarray | None = None  # (size,) int8: the seat to act at each table


@dataclass
class Rollout:
    """T steps at B tables, batch axes first. The optional fields belong to the objectives
    that fill them (train/objectives.py), and are None when those are off."""

    obs: np.ndarray  # (T, B, OBS) float32
    mask: np.ndarray  # (T, B, 66) bool
    action: np.ndarray  # (T, B) int64
    logp: np.ndarray  # (T, B) float32
    value: np.ndarray  # (T, B) float32
    seat: np.ndarray  # (T, B) int64: acting seat
    seat_rewards: np.ndarray  # (T, B, 4) float32, hand points of every seat (unscaled)
    done: np.ndarray  # (T, B) bool: an episode ended at this step
    thrown_in: np.ndarray  # (T, B) bool
    learner: np.ndarray  # (B, 4) bool: seats whose decisions the learner made
    extra: np.ndarray | None = None  # (T, B, F) float32: your bid features (config features)
    teacher: np.ndarray | None = None  # (T, B) int64: the teacher's action (Kickstart)
    hidden: np.ndarray | None = None  # (T, B, 3) uint64: other hands (OracleValue)
    scores_before: np.ndarray | None = None  # (T, B, 4) int32: pre-hand scores (MatchBonus)
    target: np.ndarray | None = None  # (T, B) int32: target in force (MatchBonus)
    dealer: np.ndarray | None = None  # (T, B) int8: this hand's dealer (MatchValue)
    hand_bids: np.ndarray | None = None  # (T, B, 4) int8: bids of the hand ended (BidReward)
    hand_tricks: np.ndarray | None = None  # (T, B, 4) int8: its tricks won (BidReward)
    bid_reward: np.ndarray | None = None  # (T, B, 4) float32: your own reward (BidReward)
    rollout_row: np.ndarray | None = None  # (T, B) int64: row of rollout_q, -1 where none
    rollout_q: np.ndarray | None = None  # (n, 66) float32: action values, -inf illegal
    rollout_own: np.ndarray | None = None  # (n,) int64: the teacher's own action


@dataclass
class Batch:
    """The learner's decisions in the hands of a rollout that ended, flattened to N rows:
    what one update learns from."""

    index: np.ndarray  # (N,) int64: positions in the rollout's flattened (T * B) steps
    obs: torch.Tensor  # (N, OBS) float32
    mask: torch.Tensor  # (N, 66) bool
    action: torch.Tensor  # (N,) int64
    logp: torch.Tensor  # (N,) float32: log-probability of the action when it was taken
    value: np.ndarray  # (N,) float32: the value estimate when it was taken
    advantage: torch.Tensor  # (N,) float32: GAE advantage
    ret: torch.Tensor  # (N,) float32: GAE return, the value target
    extra: torch.Tensor | None = None  # (N, F) float32: your bid features, as collected
