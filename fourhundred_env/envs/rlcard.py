"""400 as an RLCard environment (the ``rlcard`` extra): ``import fourhundred_env.envs.rlcard``
registers ``"fourhundred"`` with RLCard.

    import rlcard
    import fourhundred_env.envs.rlcard  # registers the env
    env = rlcard.make("fourhundred", config={"seed": 0, "game_reward": "team_points"})

RLCard's trainers (DMC, DQN, NFSP) and ``env.run`` use it as they use DouDizhu: four players
(the seats 0-3; teams 0-2 and 1-3), ``num_actions`` 66 (our action ids: 0-51 cards, 52-64
bids 1-13, 65 a redeal), ``state_shape`` 588 per player and ``action_shape`` None (one-hot
action features, DMC's default). A state is a dict: ``obs`` the one observation encoder's
float32 vector (:mod:`fourhundred_env.observation`) of the seat to act, ``legal_actions`` an
ordered dict of the legal action ids, ``raw_obs`` the same facts as text, ``raw_legal_actions``
the actions as text ("AH", "4", "redeal"). An illegal action raises
:class:`~fourhundred_env.errors.IllegalActionError` and changes nothing, as the engine and the
other environments refuse it.

The config's own keys (beside RLCard's ``seed`` and ``allow_step_back``):

- ``game_episode``: "hand" (default: one hand, played or thrown in) or "match" (until a team
  wins, or ``game_max_hands`` hands were dealt, thrown-in ones included).
- ``game_reward``: the payoffs: "team_points" (default: the seat's and its partner's score
  change), "hand_points" (the seat's own) or "match_result" (+1 the winners, -1 the others,
  0 otherwise). Over a match, the points of every hand are added.
- ``game_max_hands`` (100), ``game_rules`` (a Rules, a preset name or a mapping of flags).

Why our own Env rather than the PettingZoo route (RLCard's DMC also trains on PettingZoo
environments): DMC's PettingZoo path reads the observation and mask from PettingZoo's dict but
assumes every agent's episode ends together and plays no more than one env a process; the
RLCard Env is what DMC, DQN, NFSP and ``rlcard.utils.tournament`` all take unchanged.

Deals come from the engine's counter-based streams: episode n of an env seeded with s is the
same hand (or match) whatever else ran, so the same seed gives the same games.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS, action_text, hand_text, parse_action
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import FourHundredError, IllegalActionError, short
from fourhundred_env.loop import GameLoop
from fourhundred_env.observation import OBS_SIZE, encode_observation
from fourhundred_env.rules import Rules
from fourhundred_env.view import seat_view

try:
    from rlcard.envs import Env
    from rlcard.envs.registration import register, registry
except ImportError as e:
    raise FourHundredError(
        f"the RLCard environment needs RLCard ({e.name} is missing): pip install "
        "'fourhundred[rlcard]'"
    ) from None

ENV_ID = "fourhundred"
"""The id 400 is registered under: ``rlcard.make("fourhundred")``."""
EPISODES = ("hand", "match")
REWARDS = ("team_points", "hand_points", "match_result")
DEFAULT_GAME_CONFIG: dict[str, Any] = {
    "game_episode": "hand",
    "game_reward": "team_points",
    "game_max_hands": 100,
    "game_rules": "wiki",
}
"""The env's own config keys and their defaults."""
_PENDING = int(Phase.PLAY)
_MATCH_OVER = int(Phase.MATCH_OVER)
_ONE = np.zeros(1, np.int64)


def _rules(value: Any) -> Rules:
    if isinstance(value, Rules):
        return value
    if isinstance(value, str):
        return Rules.preset(value)
    if isinstance(value, Mapping):
        return Rules.from_dict(value)
    raise FourHundredError(
        f"RLCard config game_rules={short(value)}: expected a Rules, a preset name or a mapping"
    )


class FourHundredGame:
    """The game RLCard's Env drives: one table of the engine (see the module docstring).
    RLCard sets ``np_random`` (its seeded RandomState) before the first deal."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        unknown = sorted(
            k for k in config if k.startswith("game_") and k not in DEFAULT_GAME_CONFIG
        )
        if unknown:
            raise FourHundredError(
                f"RLCard config key(s) {unknown}: expected some of {sorted(DEFAULT_GAME_CONFIG)}"
            )
        values = {
            **DEFAULT_GAME_CONFIG,
            **{k: v for k, v in config.items() if k.startswith("game_")},
        }
        self.rules = _rules(values["game_rules"])
        self.episode, self.reward = values["game_episode"], values["game_reward"]
        self.max_hands = values["game_max_hands"]
        if (
            self.episode not in EPISODES
            or self.reward not in REWARDS
            or isinstance(self.max_hands, bool)
            or not isinstance(self.max_hands, int)
            or not 1 <= self.max_hands <= 10_000
        ):
            raise FourHundredError(
                f"RLCard config game_episode={short(self.episode)}, game_reward="
                f"{short(self.reward)}, game_max_hands={short(self.max_hands)}: expected an "
                f"episode among {list(EPISODES)}, a reward among {list(REWARDS)} and 1 to "
                "10,000 hands"
            )
        self.engine = Engine(self.rules)
        self.allow_step_back = False
        self.np_random = np.random.RandomState()
        self.state: State | None = None
        self.payoffs = np.zeros(4, np.float64)
        self._history: list[tuple[State, np.ndarray]] = []

    # -- what RLCard's Env asks -----------------------------------------------------------------
    def get_num_players(self) -> int:
        """Four seats."""
        return 4

    def get_num_actions(self) -> int:
        """66 action ids."""
        return NUM_ACTIONS

    def init_game(self) -> tuple[dict[str, Any], int]:
        """A new match at a fresh deal drawn from ``np_random``: (the state of the seat to act,
        that seat)."""
        match_id = int(self.np_random.randint(0, 2**62))
        self.state = self.engine.init(1, seed=0, match_id=np.array([match_id], np.int64))
        self.payoffs = np.zeros(4, np.float64)
        self._history = []
        GameLoop(self.engine, self.state).deal()
        return self.get_state(self.get_player_id()), self.get_player_id()

    def step(self, action: int | str) -> tuple[dict[str, Any], int]:
        """Play `action` (an id, or text with ``raw_action``) for the seat to act; deals the next
        hand of a match. IllegalActionError (nothing changed) for an action not legal now."""
        state = self._live()
        if self.is_over():
            raise IllegalActionError(
                f"RLCard fourhundred: the game is over; got action {short(action)}: expected reset()"
            )
        try:
            a = parse_action(action)
        except FourHundredError as e:
            raise IllegalActionError(f"RLCard fourhundred: {e}") from None
        if self.allow_step_back:
            self._history.append((state.copy(), self.payoffs.copy()))
        # a match deals its next hand as one ends (a hand episode ends with it)
        loop = GameLoop(self.engine, state, deal_next=self.episode == "match",
                        max_hands=self.max_hands, on_hand_end=self._end_hand)  # fmt: skip
        loop.step(np.array([a], np.int64))
        player = self.get_player_id()
        return self.get_state(player), player

    def _end_hand(self, t: np.ndarray) -> None:
        """The loop's end of a hand: its payoffs."""
        self.payoffs += self._hand_payoffs(self.state.records[0])

    def step_back(self) -> bool:
        """Undo the last action (with ``allow_step_back``); False at the start."""
        if not self._history:
            return False
        self.state, self.payoffs = self._history.pop()
        return True

    def get_player_id(self) -> int:
        """The seat to act (between hands or at the end: the last dealer's right, 0 if none)."""
        r = self._live().records[0]
        return int(r["to_play"]) if r["phase"] <= _PENDING else 0

    def is_over(self) -> bool:
        """The hand (episode "hand"), the match, or max_hands hands are over."""
        r = self._live().records[0]
        if r["phase"] <= _PENDING:
            return False
        return (
            self.episode == "hand"
            or r["phase"] == _MATCH_OVER
            or int(r["hand_index"]) >= self.max_hands
        )

    def get_state(self, player: int) -> dict[str, Any]:
        """What seat `player` may know: its observation, its legal actions (empty unless it is
        to act) and the same as text."""
        state = self._live()
        view = seat_view(self.engine, state, _ONE, player)
        obs = encode_observation(view)[0]
        legal = np.flatnonzero(view.legal_mask[0]).tolist()
        v = view.records[0]
        raw = {
            "seat": player,
            "hand": hand_text(v["hand_set"]),
            "bids": [int(b) for b in v["bids"]],
            "trick": [int(c) for c in v["trick_cards"]],
            "tricks_won": [int(t) for t in v["tricks_won"]],
            "scores": [int(s) for s in v["scores_before"]],
            "legal_actions": legal,
        }
        return {"obs": obs, "legal_actions": legal, "raw": raw}

    def _hand_payoffs(self, r: np.void) -> np.ndarray:
        points = r["hand_points"].astype(np.float64)
        if self.reward == "hand_points":
            return points
        if self.reward == "team_points":
            return points + np.roll(points, 2)
        if r["phase"] != _MATCH_OVER:
            return np.zeros(4)
        winner = int(r["winner"])
        return np.array([1.0 if s % 2 == winner else -1.0 for s in range(4)])

    def _live(self) -> State:
        if self.state is None:
            raise FourHundredError("RLCard fourhundred: no game yet: expected reset() first")
        return self.state


class FourHundredRLCardEnv(Env):
    """400 as an RLCard Env (see the module docstring). `config`: RLCard's ``seed`` and
    ``allow_step_back``, and the ``game_*`` keys of :data:`DEFAULT_GAME_CONFIG`."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = {"allow_step_back": False, "seed": None, **(config or {})}
        self.name = ENV_ID
        self.default_game_config = DEFAULT_GAME_CONFIG
        self.game = FourHundredGame(config)
        super().__init__(config)
        self.state_shape = [[OBS_SIZE] for _ in range(self.num_players)]
        self.action_shape = [None for _ in range(self.num_players)]

    def _extract_state(self, state: dict[str, Any]) -> dict[str, Any]:
        return {
            "obs": state["obs"],
            "legal_actions": OrderedDict((a, None) for a in state["legal_actions"]),
            "raw_obs": state["raw"],
            "raw_legal_actions": [action_text(a) for a in state["legal_actions"]],
            "action_record": self.action_recorder,
        }

    def _decode_action(self, action_id: int) -> int:
        return action_id

    def get_payoffs(self) -> np.ndarray:
        """(4,) float64: each seat's payoff so far (the whole episode's once it is over)."""
        return self.game.payoffs.copy()

    def _get_legal_actions(self) -> list[int]:
        return self.game.get_state(self.game.get_player_id())["legal_actions"]

    def get_perfect_information(self) -> dict[str, Any]:
        """Every seat's cards and the public facts (for people and debugging)."""
        r = self.game._live().records[0]
        return {
            "hands": [hand_text(h) for h in r["hand_set"]],
            "bids": [int(b) for b in r["bids"]],
            "current_player": self.game.get_player_id(),
            "legal_actions": self._get_legal_actions(),
        }


if ENV_ID not in registry.env_specs:
    register(ENV_ID, "fourhundred_env.envs.rlcard:FourHundredRLCardEnv")
