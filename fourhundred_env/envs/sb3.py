"""Stable-Baselines3 on the natively batched environment (needs the ``sb3`` extra).

SB3 steps environments through its ``VecEnv`` API; wrapping B single-table envs in a
``DummyVecEnv`` costs B Python envs per step. :class:`FourHundredSB3VecEnv` exposes one
:class:`~fourhundred_env.envs.vector.FourHundredVectorEnv` of B tables (SAME_STEP autoreset,
which is SB3's own convention) as that ``VecEnv``, with ``action_masks()`` for sb3-contrib's
MaskablePPO::

    from sb3_contrib import MaskablePPO
    from fourhundred_env.envs.sb3 import make_sb3_vec_env

    env = make_sb3_vec_env("FourHundred-v0", num_envs=64, seed=0, opponents="heuristic")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=1024)
    model.learn(200_000)

What SB3 gets, per table ``i``: the observation dict (``observation``, ``action_mask``), the
learner's reward (float32), ``done``; when an episode ends, ``infos[i]`` holds
``terminal_observation``, ``TimeLimit.truncated`` and the learner's result ("outcome",
"is_success" (logged by SB3 as ``rollout/success_rate``), "points", "contracts_made",
"contracts_bid"); ``illegal_action`` and ``thrown_in`` when the env reports them.
Wrap it in ``VecMonitor`` for episode returns and lengths.

The learner must be one seat or one partnership: SB3 learns one agent's returns, and
self-play over all four seats would mix the seats' rewards in one stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

import fourhundred_env.envs  # noqa: F401 - registers the ids
from fourhundred_env.envs.driver import RESULT_KEYS
from fourhundred_env.envs.vector import FourHundredVectorEnv
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_VERSION
from fourhundred_env.rules import Rules

_STEP_KEYS = ("illegal_action", "thrown_in", *RESULT_KEYS)


class FourHundredSB3VecEnv(VecEnv):
    """A :class:`FourHundredVectorEnv` (SAME_STEP autoreset, a learner that is not all four
    seats) as an SB3 ``VecEnv``. See the module docstring."""

    def __init__(self, env: FourHundredVectorEnv) -> None:
        if not isinstance(env, FourHundredVectorEnv):
            raise FourHundredError(f"env={env!r}: expected a FourHundredVectorEnv")
        if env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise FourHundredError(
                f"autoreset_mode={env.autoreset_mode.name}: expected SAME_STEP (SB3 restarts "
                "an episode in the step that ends it)"
            )
        if env.config.self_play:
            raise FourHundredError(
                "learner_seats=(0, 1, 2, 3): SB3 learns one agent's returns: expected one "
                "seat or a partnership, the other seats played by opponents"
            )
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    # -- the VecEnv API ---------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Start every table; the seed set with `seed` (table i: seed + i) is used once."""
        seed = self._seeds[0]
        obs, info = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{"seat": int(s)} for s in info["seat"]]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the (B,) actions for `step_wait`."""
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every table: (obs, rewards (B,) float32, dones (B,) bool, infos)."""
        if self._actions is None:
            raise FourHundredError("step_wait() without step_async(actions)")
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key in _STEP_KEYS:
            if key in info:
                values, valid = info[key], info[f"_{key}"]
                for i in np.flatnonzero(valid):
                    infos[i][key] = values[i].item()
        if dones.any():
            final = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = {k: v[i] for k, v in final.items()}
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, reward.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(B, 66) bool legal actions of the current observations (MaskablePPO's hook)."""
        return self.env.action_masks()

    def close(self) -> None:
        """Close the vector env."""
        self.env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One (H, W, 3) uint8 picture per table (render_mode "rgb_array")."""
        if self.env.render_mode != "rgb_array":
            return [None] * self.num_envs
        return list(self.env.render())

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute `attr_name`, once per index (the tables share it)."""
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the vector env (shared by every table)."""
        setattr(self.env, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kwargs: Any
    ) -> list[Any]:
        """``action_masks``: each table's (66,) row; any other method is the vector env's,
        called once, its result repeated per index."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self.env, method_name)(*method_args, **kwargs)
        return [result for _ in rows]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """No table is a wrapped ``gym.Env``."""
        return [False for _ in self._get_indices(indices)]


def make_sb3_vec_env(
    env_id: str = "FourHundred-v0",
    num_envs: int = 64,
    seed: int | None = None,
    render_mode: str | None = None,
    **options: Any,
) -> FourHundredSB3VecEnv:
    """An SB3 ``VecEnv`` of `num_envs` tables of the registered `env_id` ("FourHundred-v0" or
    "FourHundredBid-v0", with their registered defaults: learner at seat 0, illegal actions
    end the episode), seeded with `seed` (table i: seed + i) at its first reset. `options`
    are the env's keywords (``opponents="heuristic"``, ``episode="hand"``, EnvConfig fields)."""
    if env_id.split(":")[-1] not in ("FourHundred-v0", "FourHundredBid-v0"):
        raise FourHundredError(
            f"env_id={env_id!r}: expected 'FourHundred-v0' or 'FourHundredBid-v0'"
        )
    env = gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.SAME_STEP,
        render_mode=render_mode,
        **options,
    )
    vec = FourHundredSB3VecEnv(env.unwrapped)  # type: ignore[arg-type]
    if seed is not None:
        vec.seed(seed)
    return vec


def stamp_model(model: Any, rules: Rules | None = None) -> Any:
    """Record this game's observation version and `rules` (default: the standard rules) in an
    SB3 `model`, as plain JSON in the zip ``model.save`` writes next (``data["fourhundred"]``),
    so that ``sb3:model.zip`` refuses to play it under another layout or other rules, as
    ``neural:`` does. Returns `model`."""
    model.fourhundred = {
        "obs_version": OBS_VERSION,
        "rules": (rules if rules is not None else Rules()).to_dict(),
    }
    return model


def policy_scores(policy: Any, obs: Any) -> np.ndarray:
    """(K, 66) float32 scores of an SB3 `policy` (``model.policy``) at a batch of `obs` in the
    layout it was trained on: an actor-critic's logits (PPO, A2C, MaskablePPO: before its
    masks), a DQN's Q-values. Higher is better; the caller masks them."""
    import torch

    with torch.no_grad():
        tensor, _ = policy.obs_to_tensor(obs)
        if hasattr(policy, "q_net"):
            out = policy.q_net(tensor)
        else:
            out = policy.get_distribution(tensor).distribution.logits
    return out.float().cpu().numpy()


def masked_actions(
    scores: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None
) -> np.ndarray:
    """(K,) int64: per row of (K, 66) `scores`, the best legal action, or with `rng` one drawn
    from the softmax over the legal actions."""
    masked = np.where(masks, scores.astype(np.float64), -np.inf)
    if rng is None:
        return masked.argmax(axis=1).astype(np.int64)
    probs = np.exp(masked - masked.max(axis=1, keepdims=True))
    cum = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
    picks = (cum < rng.random((len(cum), 1))).sum(axis=1)
    last = masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)
    return np.minimum(picks, last).astype(np.int64)


def match_results(
    model: Any,
    opponents: str | Sequence[str] = "heuristic",
    num_matches: int = 200,
    seed: int = 0,
    deterministic: bool = True,
    **options: Any,
) -> dict[str, Any]:
    """Play `num_matches` whole matches, one per table of one batch, of an SB3 `model` (PPO,
    A2C, MaskablePPO, DQN on the dict observation) holding the partnership of seats 0 and 2
    against `opponents` at seats 1 and 3 (seeded: two models meet the same deals). The model
    chooses among the legal actions only (its scores masked), whether or not it was trained
    with masks. Each table's first match counts, so short matches are not over-represented.

    One opponent spec: {"win_rate", "draw_rate", "loss_rate", "points", "matches"}, shares of
    the matches and the partnership's mean points per match. Several: {spec: that dict}.
    For a full comparison with intervals and ratings, enter the saved model in a tournament
    (``sb3:model.zip``)."""
    if not isinstance(opponents, str):
        return {
            spec: match_results(model, spec, num_matches, seed, deterministic, **options)
            for spec in opponents
        }
    env = make_sb3_vec_env(
        "FourHundred-v0",
        num_envs=num_matches,
        seed=seed,
        learner_seats=(0, 2),
        opponents=opponents,
        episode="match",
        **options,
    )
    rng = None if deterministic else np.random.default_rng(seed)
    outcome = np.zeros(num_matches, np.int64)
    points = np.zeros(num_matches, np.int64)
    done = np.zeros(num_matches, bool)
    obs = env.reset()
    while not done.all():
        masks = env.action_masks()
        actions = masked_actions(policy_scores(model.policy, obs), masks, rng)
        obs, _, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones & ~done):
            outcome[i], points[i], done[i] = infos[i]["outcome"], infos[i]["points"], True
    env.close()
    return {
        "win_rate": float((outcome == 1).mean()),
        "draw_rate": float((outcome == 0).mean()),
        "loss_rate": float((outcome == -1).mean()),
        "points": float(points.mean()),
        "matches": float(num_matches),
    }
