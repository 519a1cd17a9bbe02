"""`FourHundredVectorEnv`: B tables of 400 as one natively batched Gymnasium ``VectorEnv``.

No per-table Python objects and no ``SyncVectorEnv``: one engine state of B tables, one
observation encoder call per step. By default all four seats act through it (self-play):

- ``observation["observation"]`` (B, 588) float32 is what the seat to act may know (see
  :mod:`fourhundred_env.observation`; ``observation_dtype="int8"`` gives the raw-integer
  encoding), ``observation["action_mask"]`` (B, 66) int8 its legal actions (also
  :meth:`~FourHundredVectorEnv.action_masks`, as bool); ``info["seat"]`` (B,) int8 says which
  seat that is.
- ``actions`` (B,) ints are the action ids of :mod:`fourhundred_env.cards`.
- ``reward`` (B,) float64 (the dtype ``SyncVectorEnv`` gives) is the reward of the seat that
  acted at this step. Every seat's reward is in ``info["seat_rewards"]`` (B, 4) float32
  (absolute seats) at every step, so a trainer can credit each seat's decisions: in
  self-play a hand ends on one seat's card, but all four seats are scored then.
- ``terminated``: the episode (one hand, or a match) ended; ``truncated``: a match reached
  ``max_hands`` hands. After an episode ends, the observation is the final position seen by
  the seat that made the last decision. It has no decision left, so its action mask allows
  only ``AUTORESET_ACTION`` (0), the action that NEXT_STEP's restarting step ignores: no
  mask row is ever all 0 (a masked softmax stays finite). With ``episode="hand"``,
  ``info["thrown_in"]`` (B,) bool marks episodes that ended with the hand thrown in (a redeal
  request, or bids short of the required total: every seat scores 0), and
  ``info["bids"]`` and ``info["tricks_won"]`` (B, 4) int8 by seat how the hand ended (a bid
  of 0: a redeal request, or no bid made), valid where a hand episode ended: what a reward
  of the hand's play (the bid trainers' own rewards) reads.
- The step that ends an episode reports its result from the learner's side in ``info``:
  "outcome" (+1 won, 0 drawn, -1 lost), "is_success", "points", "contracts_made",
  "contracts_bid" (see :meth:`TableDriver.results
  <fourhundred_env.envs.driver.TableDriver.results>`), valid where ``info["_outcome"]``.
- Every info key ``k`` comes with Gymnasium's mask ``info["_k"]`` (B,) bool, the tables it is
  meaningful for, as ``SyncVectorEnv`` builds them (other rows hold zeros; a key valid
  nowhere is left out): "seat" and "seat_rewards" everywhere, the step's keys
  ("illegal_action", "thrown_in") at the tables that stepped (not those NEXT_STEP restarted),
  the results where an episode ended.
- Illegal actions: see ``EnvConfig.illegal_action`` (this class raises by default; the
  registered ids ``gym.make_vec("FourHundred-v0", ...)`` end the episode, as their
  single-agent envs do).

In a match episode a hand's end is not a step of its own: the step that ends a hand scores
it (``seat_rewards``) and returns the next hand's first decision.

With ``learner_seats`` one seat or one partnership, the other seats are played by agents
(``opponents``) inside `step`: observations are only ever for the learner's seats, and the
reward is the learner's (its seat's; a partnership's is its team's). See `EnvConfig`.

Autoreset (``metadata["autoreset_mode"]``, chosen with ``autoreset_mode=``):

- ``NEXT_STEP`` (default, as Gymnasium's): the step after an episode ended starts the next
  one at that table; that table's action is ignored, its reward is 0, terminated and
  truncated are False, and the observation is the new episode's first.
- ``SAME_STEP``: the step that ends an episode also starts the next; the observation and
  ``info["seat"]`` are the new episode's, the ended episode's last observation is in
  ``info["final_obs"]`` (a dict of (B, ...) arrays, rows valid where ``info["_final_obs"]``)
  and its seat in ``info["final_info"]["seat"]``.
- ``DISABLED``: a finished table stays finished; stepping it raises, and
  ``reset(options={"reset_mask": mask})`` restarts the tables where mask (B,) bool is True.

Seeding: ``reset(seed=s)`` gives table ``i`` the stream of seed ``s + i``, as
``SyncVectorEnv`` seeds its sub-environments, and every opponent kind draws per table (see
:mod:`fourhundred_env.envs.driver`): the native env and ``gym.make_vec(...,
vectorization_mode="sync")`` play the same trajectories for the same seed. A later
``reset()`` without a seed continues with new deals.

Render modes: "ansi" (a text per table), "rgb_array" (an (H, W, 3) uint8 picture per
table, needs Pillow), "human" (prints the texts at every reset and step).
"""

from __future__ import annotations

import importlib.util
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.engine import State, sample_legal_actions
from fourhundred_env.envs.config import EnvConfig
from fourhundred_env.envs.driver import TableDriver
from fourhundred_env.errors import FourHundredError, IllegalActionError
from fourhundred_env.observation import OBS_HIGH, OBS_HIGH_INT8, OBS_LOW, OBS_LOW_INT8, OBS_SIZE

ObsDict = dict[str, np.ndarray]
__all__ = [
    "AUTORESET_ACTION",
    "FourHundredVectorEnv",
    "sample_legal_actions",
    "single_observation_space",
]


AUTORESET_ACTION = 0
"""The one action a finished table's mask allows (no row is ever all 0, so a masked softmax
never gives NaN): the step that restarts the table (NEXT_STEP autoreset) ignores it."""


def _add_info(
    info: dict[str, Any], key: str, value: np.ndarray, mask: np.ndarray | None = None
) -> None:
    """``info[key] = value`` and Gymnasium's ``info["_" + key] = mask`` (the rows where the
    value is meaningful; None: every row), as ``SyncVectorEnv`` gathers its sub-environments'
    infos: a key whose mask is all False is left out, and rows outside the mask hold zeros."""
    if mask is None:
        info[key] = value
        info[f"_{key}"] = np.full(value.shape[0], True)
    elif np.count_nonzero(mask):
        info[key] = value
        info[f"_{key}"] = mask.copy()


def _scatter(values: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """(K,) arrays of the `rows` (B,) bool into (B,) arrays, zeros elsewhere."""
    out = {}
    for key, value in values.items():
        full = np.zeros(rows.shape[0], value.dtype)
        full[rows] = value
        out[key] = full
    return out


def can_draw() -> bool:
    """Whether Pillow can be imported (looked up, not imported): "rgb_array" needs it."""
    try:
        return importlib.util.find_spec("PIL") is not None
    except (ImportError, ValueError):
        return False


def render_modes() -> list[str]:
    """The render modes this installation can serve: "ansi" and "human", and "rgb_array"
    when Pillow is installed (the ``plots`` extra). The envs declare only these, so that
    Gymnasium's ``check_env``, which tries every declared mode, passes on a core install."""
    return ["ansi", "human", *(["rgb_array"] if can_draw() else [])]


def check_render_mode(render_mode: str | None, modes: list[str]) -> None:
    """Refuse a render mode not in `modes` (None is always accepted) in one line."""
    if render_mode == "rgb_array" and render_mode not in modes:
        raise FourHundredError(
            "render_mode='rgb_array' needs Pillow, which is not installed: pip install "
            "'fourhundred[plots]' (or pillow); expected None, 'ansi' or 'human' without it"
        )
    if render_mode is not None and render_mode not in modes:
        raise FourHundredError(f"render_mode={render_mode!r}: expected None or one of {modes}")


def single_observation_space(dtype: str = "float32") -> spaces.Dict:
    """``Dict(observation=Box(OBS_SIZE,) float32 (or int8), action_mask=Box(66,) int8 0/1)``."""
    if dtype == "int8":
        box = spaces.Box(OBS_LOW_INT8, OBS_HIGH_INT8, (OBS_SIZE,), np.int8)
    else:
        box = spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32)
    return spaces.Dict(
        {"observation": box, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)}
    )


def _autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    for m in AutoresetMode:
        if str(mode).lower().replace("_", "") in (m.value.lower(), m.name.lower().replace("_", "")):
            return m
    raise FourHundredError(
        f"autoreset_mode={mode!r}: expected one of {[m.name for m in AutoresetMode]}"
    )


class FourHundredVectorEnv(VectorEnv):
    """B tables of 400, natively batched. See the module docstring for the whole contract.

    Args: `num_envs` tables; `autoreset_mode`; `render_mode` None, "ansi", "rgb_array" or
    "human" (see `render`); `copy` (as ``SyncVectorEnv``'s: False writes
    ``observation["observation"]`` into one buffer that every reset and step overwrite:
    faster, for callers that copy it away at once); `config` (an :class:`EnvConfig`) and/or
    its fields as keywords.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": render_modes(),
        "render_fps": 2,
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        copy: bool = True,
        config: EnvConfig | None = None,
        **options: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise FourHundredError(f"num_envs={num_envs!r}: expected a positive integer")
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.config = EnvConfig.build(config, **options)
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.driver = TableDriver(self.num_envs, self.config)
        self.single_observation_space = single_observation_space(self.config.observation_dtype)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, bool)
        self._everywhere = np.ones(self.num_envs, bool)  # `active` at every table (never written)
        self._started = False
        self.copy = bool(copy)
        dtype = np.dtype(self.config.observation_dtype)
        self._obs_buffer = None if self.copy else np.zeros((self.num_envs, OBS_SIZE), dtype)
        self._masks = np.zeros((self.num_envs, NUM_ACTIONS), np.int8)
        self._masks[:, AUTORESET_ACTION] = 1

    # -- Gymnasium API ----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsDict, dict[str, Any]]:
        """Start an episode at every table (or, with ``options["reset_mask"]``, at some).

        `seed` an int (table i gets seed + i) or None (continue with new deals). Other
        `options` keys are ignored. Returns (observations, info with "seat" (B,) int8 and
        "seat_rewards" (B, 4) zeros).
        """
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise FourHundredError(
                    f"options['reset_mask'] has shape {mask.shape} and dtype {mask.dtype}: "
                    f"expected ({self.num_envs},) bool"
                )
            if not self._started or seed is not None:
                raise FourHundredError(
                    "reset with a reset_mask restarts some tables of a seeded batch: call a "
                    "full reset(seed=...) first, and give no seed with the mask"
                )
            index = np.flatnonzero(mask)
        else:
            index = np.arange(self.num_envs)
        super().reset(seed=seed)
        driver = self.driver
        if seed is not None:
            driver.seed(seed)
        elif driver.base_seed is None:
            driver.seed(int(self.np_random.integers(2**63)))
        driver.start(index)
        self._autoreset[index] = False
        self._started = True
        seats = driver.obs_seats()
        obs = self._observe(seats)
        info: dict[str, Any] = {}
        _add_info(info, "seat", seats)
        _add_info(info, "seat_rewards", np.zeros((self.num_envs, 4), np.float32))
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(
        self, actions: np.ndarray
    ) -> tuple[ObsDict, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision at every table: actions (B,) ints. See the module docstring."""
        if not self._started:
            raise FourHundredError("step() before reset(): call reset() first")
        actions = self._check_actions(actions)
        driver = self.driver
        mode = self.autoreset_mode
        if mode is AutoresetMode.NEXT_STEP:
            restart = self._autoreset
            active = ~restart
        else:
            active = self._everywhere
            if mode is AutoresetMode.DISABLED and np.count_nonzero(driver.over):
                t = np.flatnonzero(driver.over)
                raise IllegalActionError(
                    f"tables {t[:8].tolist()}{'...' if t.size > 8 else ''}: the episode is over "
                    "(autoreset disabled): reset them with reset(options={'reset_mask': mask})"
                )
        seat_rewards, actor, illegal = driver.act(actions, active)
        reward = driver.learner_reward(seat_rewards, actor).astype(np.float64)
        terminated = driver.terminated & active  # not the tables restarted at this step
        truncated = driver.truncated & active
        ended = terminated | truncated
        info: dict[str, Any] = {}
        _add_info(info, "seat_rewards", seat_rewards)
        if self.config.illegal_action != "raise":
            _add_info(info, "illegal_action", illegal, active)
        if self.config.episode == "hand":
            _add_info(info, "thrown_in", terminated & driver.state.thrown_in, active)
        if np.count_nonzero(ended):
            if self.config.episode == "hand":  # copies: a restart below deals the next hand
                for key in ("bids", "tricks_won"):
                    value = np.where(ended[:, None], getattr(driver.state, key), 0).astype(np.int8)
                    _add_info(info, key, value, ended)
            results = _scatter(driver.results(np.flatnonzero(ended)), ended)
            for key, value in results.items():
                _add_info(info, key, value, ended)
        if mode is AutoresetMode.NEXT_STEP:
            if np.count_nonzero(restart):
                driver.start(np.flatnonzero(restart))
            self._autoreset = ended
        elif mode is AutoresetMode.SAME_STEP and np.count_nonzero(ended):
            t = np.flatnonzero(ended)
            final_seats = driver.obs_seats()
            final_obs = {
                "observation": np.zeros((self.num_envs, OBS_SIZE), self.config.observation_dtype),
                "action_mask": np.zeros((self.num_envs, NUM_ACTIONS), np.int8),
            }
            final_obs["observation"][t] = driver.observe(final_seats[t], t)[0]
            final_obs["action_mask"][:, AUTORESET_ACTION] = 1  # every row is a finished table's
            info["final_obs"] = final_obs
            info["_final_obs"] = ended
            info["final_info"] = {"seat": final_seats, "_seat": ended.copy()}
            info["_final_info"] = ended.copy()
            driver.start(t)
        seats = driver.obs_seats()
        _add_info(info, "seat", seats)
        obs = self._observe(seats)
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """(B, 66) bool: the current observations' action masks (``observation["action_mask"]``),
        the method MaskablePPO (sb3-contrib) looks for. A finished table's row (NEXT_STEP
        autoreset, before its restart) has only `AUTORESET_ACTION` set: the action the
        restarting step ignores."""
        return self._masks.astype(bool)

    def render(self) -> tuple[str, ...] | tuple[np.ndarray, ...] | None:
        """One frame per table, only its seat to act's hand shown: "ansi" a text,
        "rgb_array" an (H, W, 3) uint8 picture (the other hands face down) (:mod:`fourhundred_env.envs.image`,
        needs Pillow); "human" prints the texts (called by `reset` and `step`) and returns
        None; None without a render mode."""
        if self.render_mode is None:
            return None
        driver = self.driver
        seats = driver.obs_seats()
        if self.render_mode == "rgb_array":
            from fourhundred_env.envs.image import table_image

            return tuple(
                table_image(driver.engine, driver.state, i, int(seats[i]))
                for i in range(self.num_envs)
            )
        from fourhundred_env.envs.text import table_text

        texts = tuple(
            table_text(driver.engine, driver.state, i, int(seats[i])) for i in range(self.num_envs)
        )
        if self.render_mode == "human":
            print("\n\n".join(texts), flush=True)
            return None
        return texts

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the environment holds only numpy arrays."""

    # -- helpers ----------------------------------------------------------------------------
    @property
    def state(self) -> State:
        """The engine :class:`~fourhundred_env.engine.State` of the B tables, for trainers and
        tools that need what the engine knows and no seat may see: every hand (an oracle
        critic's input), the pre-hand scores and target, a position to play out from the true
        table (rollout values).

        Read-only by contract: it is the live state, not a copy (copying it at every step would
        cost what reading it saves), so it changes at the next step or reset; never write to
        it, and copy (``state.select(...)``, ``np.copy``) what must outlive the step.
        """
        return self.driver.state

    @property
    def match_ids(self) -> np.ndarray:
        """(B,) int64 match id of each table's episode: its deals are the engine's
        ``deal_sets(0, match_id, hand_index)``; ``Table(seed=0, match_index=id)`` replays them."""
        return self.driver.state.match_id.copy()

    def _observe(self, seats: np.ndarray) -> ObsDict:
        """The observations of `seats` (``driver.obs_seats()``) at every table."""
        obs, mask = self.driver.observe(seats, out=self._obs_buffer)
        over = self.driver.over
        if np.count_nonzero(over):  # a finished table: no decision, so mark the action
            # its restart ignores
            mask[over] = 0
            mask[over, AUTORESET_ACTION] = 1
        self._masks = mask
        return {"observation": obs, "action_mask": mask}

    def _check_actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"actions have shape {a.shape} and dtype {a.dtype}: expected ({self.num_envs},) "
                f"integers, one action id 0-{NUM_ACTIONS - 1} per table"
            )
        return a.astype(np.int64)
