"""400 as an OpenSpiel game (the ``openspiel`` extra): ``import fourhundred_env.envs.openspiel``
registers ``"fourhundred"`` with ``pyspiel`` as a Python game.

    import pyspiel
    import fourhundred_env.envs.openspiel  # registers the game
    game = pyspiel.load_game("fourhundred")                       # one hand, team points
    game = pyspiel.load_game("fourhundred(episode=match,reward=match_result)")
    game = load_fourhundred(Rules.preset("pagat"), episode="hand")  # a Rules profile

The game is the engine's (:class:`~fourhundred_env.engine.Engine`, a batch of one), seen
through OpenSpiel's API:

- **Chance nodes deal.** With ``start_dealer=-1`` (the default) a first chance node draws the
  dealer (outcomes 0-3, uniform). Each hand is then dealt one card at a time, 52 chance nodes:
  outcome ``c`` is card id ``c`` among the cards not dealt yet (uniform), and the k-th card
  dealt goes to the seat ``(dealer + 1 + k) % 4``, as the dealing goes round to the right.
- **Actions are ours**, 66 of them (:mod:`fourhundred_env.cards`): 0-51 play card ``c``,
  52-64 bid 1-13, 65 ask for a no-picture redeal. Players are the seats 0-3 (teams 0-2 and
  1-3). An illegal action raises :class:`~fourhundred_env.errors.IllegalActionError`, as the
  engine and every environment refuse it, and changes nothing.
- **Parameters** are every flag of :class:`~fourhundred_env.rules.Rules` that changes the game
  (``five_six_face_value_from=-1`` stands for None, the thirty rule off; the conduct flags
  are not the game's), and:

  ``episode``: ``"hand"`` (default: the game ends with the first hand, played or thrown in)
  or ``"match"`` (until a team wins, or after ``max_hands`` hands, thrown-in ones included).
  ``reward``: ``"team_points"`` (default: the seat's and its partner's score change, at the
  end of each hand), ``"hand_points"`` (the seat's own) or ``"match_result"`` (+1 for the
  seats of the team that wins the match, -1 for the others, 0 otherwise; zero-sum).
  ``max_hands`` (100), ``start_scores`` (``"0 0 0 0"``: the seats' scores when the game
  starts), ``start_dealer`` (-1: drawn by chance), ``start_target`` (0: the rules' target).

- **Returns** come as rewards at the end of each hand; ``returns()`` is their sum. Where
  the only reward comes at the end of the game (``episode="hand"``, the default, or
  ``reward="match_result"``) the game type says so (``RewardModel.TERMINAL``, which
  OpenSpiel's ``MCTSBot`` requires); a match of per-hand rewards is ``RewardModel.REWARDS``.
- **Tensors** are the one observation encoder's (:mod:`fourhundred_env.observation`,
  588 float32 entries, version :data:`~fourhundred_env.observation.OBS_VERSION`), as named
  slices (``hand``, ``played`` (4, 52), ``trick`` (4, 52), ``bids`` (4, 14)...): the
  observation tensor and the information-state tensor are the same vector. That vector is
  not of perfect recall (the order of earlier tricks is not in it); the information-state
  *string* is: the seat's own cards as dealt and every public action since the game began,
  hand by hand.
- ``resample_from_infostate(player, sampler)`` deals the cards `player` cannot see anew,
  uniformly among the deals consistent with what that seat saw (its own cards, every card
  played, the suits each seat has shown void in), and plays the game's actions again on
  that deal: IS-MCTS samples its worlds with it.
- A state made by :func:`state_from_view` starts at a seat's view of a hand in progress (a
  tournament's position): its history starts there, and its information-state strings start
  with that position's public facts.

Serialization is OpenSpiel's for Python games (the history, and the state's attributes as a
pickle): deserialize only states you serialized yourself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

import numpy as np

from fourhundred_env.cards import (
    FULL_DECK,
    NUM_ACTIONS,
    NUM_CARDS,
    SUIT_LETTERS,
    SUIT_SETS,
    action_text,
    card_text,
    hand_text,
    set_to_cards,
)
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import FourHundredError, short
from fourhundred_env.loop import GameLoop
from fourhundred_env.observation import OBS_FIELDS, OBS_SIZE, encode_observation
from fourhundred_env.rules import CONDUCT_FLAGS, Rules
from fourhundred_env.view import SeatView, seat_view, world_state

try:
    import pyspiel
except ImportError as e:  # one line naming the extra, never a traceback of ours
    raise FourHundredError(
        f"the OpenSpiel game needs OpenSpiel ({e.name} is missing): pip install "
        "'fourhundred[openspiel]'"
    ) from None

GAME_NAME = "fourhundred"
"""The short name 400 is registered under: ``pyspiel.load_game("fourhundred")``."""
NUM_PLAYERS = 4
THIRTY_OFF = -1
"""The parameter ``five_six_face_value_from`` that stands for None (the thirty rule off)."""
EPISODES = ("hand", "match")
REWARDS = ("team_points", "hand_points", "match_result")

RULES_PARAMETERS: dict[str, Any] = {
    f.name: (THIRTY_OFF if f.default is None else f.default)
    for f in fields(Rules)
    if f.name not in CONDUCT_FLAGS
}
"""The rules flags that are game parameters, with their defaults (the "wiki" profile)."""
GAME_PARAMETERS: dict[str, Any] = {
    **RULES_PARAMETERS,
    "episode": "hand",
    "reward": "team_points",
    "max_hands": 100,
    "start_scores": "0 0 0 0",
    "start_dealer": -1,
    "start_target": 0,
}
"""Every parameter of the game and its default."""

_HAND_LENGTH = 4 + NUM_CARDS  # the most decisions of one hand: four bids and 52 cards
_PENDING = int(Phase.PLAY)
_MATCH_OVER = int(Phase.MATCH_OVER)
_SUIT_SETS = [int(s) for s in SUIT_SETS]
_FULL = int(FULL_DECK)

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="400 (fourhundred)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,  # the default: one hand
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=True,
    parameter_specification=GAME_PARAMETERS,
)


def rules_from_parameters(params: Mapping[str, Any]) -> Rules:
    """The Rules of a game's parameters (the rules flags among them; others ignored)."""
    values = {k: params[k] for k in RULES_PARAMETERS if k in params}
    if values.get("five_six_face_value_from") == THIRTY_OFF:
        values["five_six_face_value_from"] = None
    return Rules(**values)


def game_parameters(rules: Rules | None = None, **options: Any) -> dict[str, Any]:
    """The parameters of the game of `rules` (default: the standard rules) with `options`
    (``episode``, ``reward``, ``max_hands``, ``start_scores`` as 4 integers or text,
    ``start_dealer``, ``start_target``): what ``pyspiel.load_game(GAME_NAME, params)`` takes."""
    rules = rules if rules is not None else Rules()
    unknown = sorted(set(options) - (set(GAME_PARAMETERS) - set(RULES_PARAMETERS)))
    if unknown:
        raise FourHundredError(
            f"OpenSpiel game option(s) {unknown}: expected some of "
            f"{sorted(set(GAME_PARAMETERS) - set(RULES_PARAMETERS))} (rules flags go in `rules`)"
        )
    params = {k: getattr(rules, k) for k in RULES_PARAMETERS}
    if params["five_six_face_value_from"] is None:
        params["five_six_face_value_from"] = THIRTY_OFF
    scores = options.get("start_scores")
    if scores is not None and not isinstance(scores, str):
        options["start_scores"] = " ".join(str(int(s)) for s in scores)
    params.update(options)
    return params


def load_fourhundred(rules: Rules | None = None, **options: Any) -> FourHundredGame:
    """``pyspiel.load_game("fourhundred", game_parameters(rules, **options))``."""
    return pyspiel.load_game(GAME_NAME, game_parameters(rules, **options))


def _scores(text: str) -> np.ndarray:
    try:
        values = [int(s) for s in str(text).replace(",", " ").split()]
    except ValueError:
        values = []
    if len(values) != 4 or any(abs(v) > 2**31 - 1 for v in values):
        raise FourHundredError(
            f"OpenSpiel game start_scores={short(text)}: expected 4 integers, as in '12 31 -4 27'"
        )
    return np.array(values, np.int64)


class FourHundredGame(pyspiel.Game):
    """400 with the rules and options of its parameters (see the module docstring)."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = {**GAME_PARAMETERS, **(params or {})}
        self.rules = rules_from_parameters(params)
        self.episode, self.reward = str(params["episode"]), str(params["reward"])
        if self.episode not in EPISODES or self.reward not in REWARDS:
            raise FourHundredError(
                f"OpenSpiel game episode={short(self.episode)}, reward={short(self.reward)}: "
                f"expected an episode among {list(EPISODES)} and a reward among {list(REWARDS)}"
            )
        self.max_hands = int(params["max_hands"])
        self.start_scores = _scores(params["start_scores"])
        self.start_dealer = int(params["start_dealer"])
        self.start_target = int(params["start_target"]) or self.rules.target
        if not 1 <= self.max_hands <= 10_000 or not -1 <= self.start_dealer <= 3:
            raise FourHundredError(
                f"OpenSpiel game max_hands={self.max_hands}, start_dealer={self.start_dealer}: "
                "expected 1 to 10,000 hands and a dealer -1 (by chance) to 3"
            )
        if self.start_target < 1:
            raise FourHundredError(
                f"OpenSpiel game start_target={self.start_target}: expected 0 (the rules' "
                "target) or a positive target"
            )
        self.engine = Engine(self.rules)
        hands = 1 if self.episode == "hand" else self.max_hands
        top = float(self.rules.value_table().max()) * (2 if self.reward == "team_points" else 1)
        low, high = (-1.0, 1.0) if self.reward == "match_result" else (-top * hands, top * hands)
        terminal = self.episode == "hand" or self.reward == "match_result"
        game_type = _game_type(
            pyspiel.GameType.Utility.ZERO_SUM
            if self.reward == "match_result"
            else pyspiel.GameType.Utility.GENERAL_SUM,
            pyspiel.GameType.RewardModel.TERMINAL
            if terminal
            else pyspiel.GameType.RewardModel.REWARDS,
        )
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=NUM_PLAYERS,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0 if self.reward == "match_result" else None,
            max_game_length=_HAND_LENGTH * hands,
        )
        super().__init__(game_type, info, params)
        self._max_chance = (1 if self.start_dealer < 0 else 0) + NUM_CARDS * hands

    def new_initial_state(self, *_: Any) -> FourHundredState:
        """The state before the deal (and before the dealer is drawn, with start_dealer=-1)."""
        return FourHundredState(self)

    def max_chance_nodes_in_history(self) -> int:
        """The dealer's draw (if by chance) and 52 cards a hand."""
        return self._max_chance

    def make_py_observer(
        self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None
    ) -> FourHundredObserver:
        """The observer of `iig_obs_type` (default: the observation)."""
        return FourHundredObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params, self
        )


def _game_type(utility: Any, reward_model: Any) -> Any:
    """The registered game type with `utility` and `reward_model` (TERMINAL where the only
    reward comes as the game ends: one hand, or the match's result)."""
    t = _GAME_TYPE
    return pyspiel.GameType(
        short_name=t.short_name, long_name=t.long_name, dynamics=t.dynamics,
        chance_mode=t.chance_mode, information=t.information, utility=utility,
        reward_model=reward_model, max_num_players=t.max_num_players,
        min_num_players=t.min_num_players,
        provides_information_state_string=t.provides_information_state_string,
        provides_information_state_tensor=t.provides_information_state_tensor,
        provides_observation_string=t.provides_observation_string,
        provides_observation_tensor=t.provides_observation_tensor,
        provides_factored_observation_string=t.provides_factored_observation_string,
        parameter_specification=GAME_PARAMETERS,
    )  # fmt: skip


class FourHundredState(pyspiel.State):
    """One game of 400 in OpenSpiel. Its attributes are plain values (OpenSpiel deep-copies
    them to clone a state and pickles them to serialize one): the engine's record of the
    table, the cards dealt so far, and the log of the hands."""

    def __init__(self, game: FourHundredGame) -> None:
        super().__init__(game)
        dealer = max(game.start_dealer, 0)
        state = game.engine.init(
            1, dealer=dealer, scores=game.start_scores, target=game.start_target
        )
        self._records = state.records
        self._dealer_known = game.start_dealer >= 0
        self._dealing = (0, 0, 0, 0)  # card sets dealt so far, by seat
        self._num_dealt = 0
        self._log: tuple[tuple[int, int], ...] = ()  # (seat, action) of the hand in play
        self._past: tuple[tuple[int, tuple[int, ...], tuple[tuple[int, int], ...]], ...] = ()
        self._hands = 0  # hands dealt (thrown-in ones included)
        self._returns = (0.0, 0.0, 0.0, 0.0)
        self._rewards = (0.0, 0.0, 0.0, 0.0)
        self._over = False
        self._origin = ""  # the public facts where a state made from a view starts

    # -- what OpenSpiel asks ------------------------------------------------------------------
    def _state(self) -> State:
        return State._wrap(self._records, seed=0)

    def current_player(self) -> int:
        """The seat to act, CHANCE while dealing, TERMINAL at the end."""
        if self._over:
            return pyspiel.PlayerId.TERMINAL
        r = self._records[0]
        if r["phase"] <= _PENDING:
            return int(r["to_play"])
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player: int) -> list[int]:
        mask = self.get_game().engine.legal_mask(self._state())[0]
        return np.flatnonzero(mask).tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The dealer's draw (0-3), then the cards not dealt yet, uniform."""
        if not self._dealer_known:
            return [(seat, 0.25) for seat in range(4)]
        left = _FULL & ~(self._dealing[0] | self._dealing[1] | self._dealing[2] | self._dealing[3])
        cards = set_to_cards(left)
        p = 1.0 / len(cards)
        return [(c, p) for c in cards]

    def _apply_action(self, action: int) -> None:
        self._rewards = (0.0, 0.0, 0.0, 0.0)
        if self.current_player() == pyspiel.PlayerId.CHANCE:
            self._deal_one(int(action))
            return
        game = self.get_game()
        r = self._records[0]
        seat = int(r["to_play"])
        GameLoop(game.engine, self._state()).step(np.array([action], np.int64), end=False)
        self._log = (*self._log, (seat, int(action)))
        if r["phase"] > _PENDING:
            self._end_hand(game)

    def _deal_one(self, action: int) -> None:
        if not self._dealer_known:
            if not 0 <= action <= 3:
                raise FourHundredError(f"dealer draw {action}: expected a seat 0 to 3")
            self._records[0]["dealer"] = action
            self._dealer_known = True
            return
        dealt = self._dealing[0] | self._dealing[1] | self._dealing[2] | self._dealing[3]
        if not 0 <= action < NUM_CARDS or dealt >> action & 1:
            raise FourHundredError(f"deal of card {action}: expected a card id 0-51 not dealt yet")
        seat = (int(self._records[0]["dealer"]) + 1 + self._num_dealt) % 4
        sets = list(self._dealing)
        sets[seat] |= 1 << action
        self._dealing, self._num_dealt = tuple(sets), self._num_dealt + 1
        if self._num_dealt == NUM_CARDS:
            game = self.get_game()
            GameLoop(game.engine, self._state()).deal(np.array([0]), np.array([sets], np.uint64))
            self._dealing, self._num_dealt = (0, 0, 0, 0), 0
            self._hands += 1

    def _end_hand(self, game: FourHundredGame) -> None:
        r = self._records[0]
        points = [float(p) for p in r["hand_points"]]
        if game.reward == "team_points":
            rewards = [points[s] + points[(s + 2) % 4] for s in range(4)]
        elif game.reward == "hand_points":
            rewards = points
        else:
            winner = int(r["winner"]) if r["phase"] == _MATCH_OVER else -1
            rewards = [0.0 if winner < 0 else (1.0 if s % 2 == winner else -1.0) for s in range(4)]
        self._rewards = tuple(rewards)
        self._returns = tuple(a + b for a, b in zip(self._returns, rewards, strict=True))
        dealt = tuple(int(x) for x in r["dealt_set"])
        self._past = (*self._past, (int(self._hand_dealer()), dealt, self._log))
        self._log = ()
        self._over = (
            game.episode == "hand" or r["phase"] == _MATCH_OVER or self._hands >= game.max_hands
        )

    def _hand_dealer(self) -> int:
        """The dealer of the hand in play (or just ended: the engine has passed the deal on)."""
        d = int(self._records[0]["dealer"])
        return d if self._records[0]["phase"] <= _PENDING else (d - 1) % 4

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"Dealer {action}" if not self._dealer_known else f"Deal {card_text(action)}"
        return action_text(action)

    def is_terminal(self) -> bool:
        """The hand (episode "hand") or the match is over, or max_hands hands were dealt."""
        return self._over

    def returns(self) -> list[float]:
        """The rewards of every hand so far, by seat."""
        return list(self._returns)

    def rewards(self) -> list[float]:
        """The rewards of the last action (non-zero only on the action that ends a hand)."""
        return list(self._rewards)

    def __str__(self) -> str:
        r = self._records[0]
        lines = [
            f"hand {self._hands} dealer {self._hand_dealer() if self._hands else int(r['dealer'])}"
            f" scores {' '.join(str(int(s)) for s in r['scores'])} target {int(r['target'])}"
        ]
        if r["phase"] <= _PENDING:
            for seat in range(4):
                lines.append(f"seat {seat}: {hand_text(r['hand_set'][seat])}")
            lines.append(_public_text(r))
        elif self._num_dealt:
            lines.append(f"dealing: {self._num_dealt} cards dealt")
        return "\n".join(lines)

    # -- IS-MCTS ---------------------------------------------------------------------------
    def resample_from_infostate(self, player_id: int, probability_sampler: Callable) -> Any:
        """A state `player_id` cannot tell from this one, its unseen cards dealt anew
        (uniformly among the deals consistent with what the seat saw), with the same actions
        played on it. `probability_sampler()` gives the one uniform in [0, 1) that seeds the
        deal (a ``pyspiel.UniformProbabilitySampler`` or any callable)."""
        if self.current_player() == pyspiel.PlayerId.CHANCE or self._over:
            return self.clone()
        rng = np.random.default_rng(int(float(probability_sampler()) * 2**53))
        r = self._records[0]
        played = [int(d) & ~int(h) for d, h in zip(r["dealt_set"], r["hand_set"], strict=True)]
        held = [int(h) for h in r["hand_set"]]
        hidden = [0 if s == player_id else held[s] for s in range(4)]
        new_held = _deal_unseen(
            sum(hidden), [_count(h) for h in hidden], [int(v) for v in r["shown_void"]], rng
        )
        new_held[player_id] = held[player_id]
        game = self.get_game()
        if self._origin:
            return self._replayed_from_origin(game, new_held, played)
        new = game.new_initial_state()
        past = list(self._past)
        # earlier hands: the cards played are their seats'; a thrown-in hand's unseen cards
        # are dealt anew (nothing can tell them apart either)
        first = True
        for dealer, dealt, log in past:
            mine = dealt[player_id]
            seen = [0, 0, 0, 0]
            for seat, action in log:
                if action < NUM_CARDS:
                    seen[seat] |= 1 << action
            seen[player_id] = mine
            unseen = _FULL & ~(seen[0] | seen[1] | seen[2] | seen[3])
            counts = [13 - _count(seen[s]) for s in range(4)]
            extra = _deal_unseen(unseen, counts, [0, 0, 0, 0], rng)
            hands = [seen[s] | extra[s] for s in range(4)]
            _replay_hand(new, dealer, hands, log, draw_dealer=first)
            first = False
        dealer = self._hand_dealer()
        hands = [new_held[s] | played[s] for s in range(4)]
        _replay_hand(new, dealer, hands, self._log, draw_dealer=first)
        return new

    def _replayed_from_origin(
        self, game: FourHundredGame, new_held: list[int], played_now: list[int]
    ) -> FourHundredState:
        new = game.new_initial_state()
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_records"})
        records = self._origin_records.copy()
        o = records[0]
        since = [0, 0, 0, 0]
        for seat, action in self._log:
            if action < NUM_CARDS:
                since[seat] |= 1 << action
        for s in range(4):
            before = int(o["dealt_set"][s]) & ~int(o["hand_set"][s])
            o["hand_set"][s] = new_held[s] | since[s]
            o["dealt_set"][s] = new_held[s] | since[s] | before
        new._records, new._origin_records = records, records.copy()
        new._log, new._over = (), False
        new._returns = self._origin_returns
        for _seat, action in self._log:
            new.apply_action(action)
        return new


def _replay_hand(
    state: FourHundredState,
    dealer: int,
    hands: list[int],
    log: tuple[tuple[int, int], ...],
    draw_dealer: bool,
) -> None:
    """Deal `hands` (by seat) at `state` (dealing order: round from the dealer's right, each
    seat's cards in ascending order) and play the hand's `log` on it."""
    if draw_dealer and not state._dealer_known:
        state.apply_action(dealer)
    cards = [set_to_cards(h) for h in hands]
    for k in range(NUM_CARDS):
        seat = (dealer + 1 + k) % 4
        state.apply_action(cards[seat][k // 4])
    for _seat, action in log:
        state.apply_action(action)


def _count(card_set: int) -> int:
    return int(card_set).bit_count()


def _deal_unseen(
    unseen: int, counts: list[int], voids: list[int], rng: np.random.Generator
) -> list[int]:
    """The cards of `unseen` dealt to the seats, counts[s] to seat s, none of a suit a seat
    has shown void in (bit s of voids[seat]), uniformly among such deals: up to 64 shuffles
    until one fits (exactly uniform when one does), else by counting the deals suit by suit
    (exactly uniform too)."""
    cards = np.array(set_to_cards(unseen), np.int64)
    void_sets = [sum(_SUIT_SETS[s] for s in range(4) if voids[seat] >> s & 1) for seat in range(4)]
    if not any(void_sets[s] for s in range(4) if counts[s]):
        return _cut(rng.permutation(cards), counts)
    for _ in range(64):
        hands = _cut(rng.permutation(cards), counts)
        if all(hands[s] & void_sets[s] == 0 for s in range(4)):
            return hands
    return _deal_by_suits(cards, counts, voids, rng)


def _cut(cards: np.ndarray, counts: list[int]) -> list[int]:
    out, start = [], 0
    for n in counts:
        out.append(sum(1 << int(c) for c in cards[start : start + n]))
        start += n
    return out


def _deal_by_suits(
    cards: np.ndarray, counts: list[int], voids: list[int], rng: np.random.Generator
) -> list[int]:
    """`_deal_unseen` by counting: how many deals fit for every split of each suit among the
    seats that may hold it, then one split per suit drawn in proportion."""
    by_suit = [[int(c) for c in cards if c // 13 == s] for s in range(4)]

    @functools.cache
    def ways(suit: int, left: tuple[int, ...]) -> int:
        if suit == 4:
            return 1 if not any(left) else 0
        return sum(w * ways(suit + 1, rest) for w, rest in splits(suit, left))

    def splits(suit: int, left: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        m = len(by_suit[suit])
        seats = [s for s in range(4) if left[s] and not voids[s] >> suit & 1]
        out = []

        def go(i: int, remaining: int, taken: list[int], weight: int) -> None:
            if i == len(seats):
                if remaining == 0:
                    rest = list(left)
                    for s, n in zip(seats, taken, strict=True):
                        rest[s] -= n
                    out.append((weight, tuple(rest)))
                return
            for n in range(min(remaining, left[seats[i]]) + 1):
                go(i + 1, remaining - n, [*taken, n], weight * _choose(remaining, n))

        go(0, m, [], 1)
        return out

    left = tuple(counts)
    if ways(0, left) == 0:
        raise FourHundredError("no deal fits what the seat saw: expected a state of a real game")
    hands = [0, 0, 0, 0]
    for suit in range(4):
        options = [(w * ways(suit + 1, rest), rest) for w, rest in splits(suit, left)]
        options = [(w, rest) for w, rest in options if w > 0]
        pick = rng.random() * sum(w for w, _ in options)
        chosen = options[-1][1]  # the last one if rounding leaves `pick` at 0 or above
        for w, rest in options:
            pick -= w
            if pick < 0:
                chosen = rest
                break
        suit_cards = list(rng.permutation(by_suit[suit]))
        for s in range(4):
            for _ in range(left[s] - chosen[s]):
                hands[s] |= 1 << int(suit_cards.pop())
        left = chosen
    return hands


@functools.cache
def _choose(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


# -- text --------------------------------------------------------------------------------------
def _public_text(r: np.void) -> str:
    bids = " ".join(str(int(b)) if b else "-" for b in r["bids"])
    trick = " ".join(card_text(int(c)) if c >= 0 else "-" for c in r["trick_cards"])
    won = " ".join(str(int(t)) for t in r["tricks_won"])
    return f"bids {bids} | trick {trick} | tricks {won}"


def _played_text(r: np.void) -> str:
    parts = []
    for s in range(4):
        played = int(r["dealt_set"][s]) & ~int(r["hand_set"][s])
        parts.append(hand_text(played) if played else "-")
    voids = " ".join(
        "".join(SUIT_LETTERS[x] for x in range(4) if int(v) >> x & 1) or "-"
        for v in r["shown_void"]
    )
    return f"played {' / '.join(parts)} | void {voids}"


def _info_string(state: FourHundredState, player: int) -> str:
    """Perfect recall: the seat's own cards as dealt and every public action, hand by hand."""
    game = state.get_game()
    head = (
        f"seat {player} scores {' '.join(str(int(s)) for s in game.start_scores)} "
        f"target {game.start_target}"
    )
    lines = [head]
    if state._origin:
        lines.append(state._origin)
    for dealer, dealt, log in state._past:
        lines.append(_hand_line(dealer, dealt[player], log))
    r = state._records[0]
    if r["phase"] <= _PENDING:
        lines.append(_hand_line(state._hand_dealer(), int(r["dealt_set"][player]), state._log))
    elif state._num_dealt:
        lines.append(f"dealt {hand_text(state._dealing[player])}")
    return "\n".join(lines)


def _hand_line(dealer: int, mine: int, log: tuple[tuple[int, int], ...]) -> str:
    actions = " ".join(f"{seat}:{action_text(a)}" for seat, a in log)
    return f"dealer {dealer} cards {hand_text(mine)} | {actions}"


def _observation_string(state: FourHundredState, player: int) -> str:
    r = state._records[0]
    return f"seat {player} hand {hand_text(r['hand_set'][player])} | {_shared_string(state)}"


def _shared_string(state: FourHundredState) -> str:
    r = state._records[0]
    head = f"scores {' '.join(str(int(s)) for s in r['scores_before'])} target {int(r['target'])}"
    if r["phase"] > _PENDING:
        return f"{head} | between hands, dealer {int(r['dealer'])}"
    return f"{head} | dealer {state._hand_dealer()} | {_public_text(r)} | {_played_text(r)}"


# -- observers ---------------------------------------------------------------------------------
_SHAPES = {"played": (4, NUM_CARDS), "trick": (4, NUM_CARDS), "bids": (4, 14), "shown_void": (4, 4)}


class FourHundredObserver:
    """OpenSpiel's observer (``make_py_observer``): the encoder's vector as named slices, and
    the strings. Perfect recall: the information state; public only, private only, or both
    (the default observation) otherwise."""

    def __init__(self, iig_obs_type: Any, params: Mapping[str, Any] | None, game: FourHundredGame):
        if params:
            raise FourHundredError(
                f"OpenSpiel observer parameters {short(dict(params))}: expected none"
            )
        self.game = game
        public = iig_obs_type.public_info
        private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.kind = (
            "info"
            if iig_obs_type.perfect_recall
            else ("observation" if public and private else ("public" if public else "private"))
        )
        self.tensor: np.ndarray | None = None
        self.dict: dict[str, np.ndarray] = {}
        if self.kind in ("info", "observation"):
            self.tensor = np.zeros(OBS_SIZE, np.float32)
            for name, f in OBS_FIELDS.items():
                self.dict[name] = self.tensor[f.slice].reshape(_SHAPES.get(name, (f.size,)))

    def set_from(self, state: FourHundredState, player: int) -> None:
        """Write the observation of seat `player` at `state` into `tensor`."""
        if self.tensor is None:
            return
        view = seat_view(self.game.engine, state._state(), np.zeros(1, np.int64), player)
        encode_observation(view, out=self.tensor.reshape(1, OBS_SIZE))

    def string_from(self, state: FourHundredState, player: int) -> str:
        """The string of this observer's kind for seat `player`."""
        if self.kind == "info":
            return _info_string(state, player)
        if self.kind == "observation":
            return _observation_string(state, player)
        if self.kind == "public":
            return _shared_string(state)
        return f"seat {player} hand {hand_text(state._records[0]['hand_set'][player])}"


# -- states from a seat's view ---------------------------------------------------------------------
def game_for_view(view: SeatView, k: int, rules: Rules, **options: Any) -> FourHundredGame:
    """The one-hand game (team points unless `options` say otherwise) that starts where the
    hand at row `k` of `view` started: its scores before the hand, its dealer, its target."""
    r = view.records[k]
    dealer = int(r["dealer"]) if r["phase"] <= _PENDING else (int(r["dealer"]) - 1) % 4
    options = {"episode": "hand", "reward": "team_points", **options}
    return load_fourhundred(
        rules,
        start_scores=[int(s) for s in r["scores_before"]],
        start_dealer=dealer,
        start_target=int(r["target"]),
        **options,
    )


def state_from_view(
    game: FourHundredGame, view: SeatView, k: int, rng: np.random.Generator
) -> FourHundredState:
    """A state of `game` at the position of row `k` of `view` (a decision pending), the cards
    the seat cannot see dealt by `rng` among those consistent with the view. Its history
    starts here; its information-state strings start with the position's public facts."""
    r = view.records[k]
    if r["phase"] > _PENDING:
        raise FourHundredError(
            f"state_from_view: view {k} is between hands: expected a decision pending"
        )
    seat = int(r["seat"])
    played = [int(p) for p in r["played_set"]]
    unseen = _FULL & ~(int(r["hand_set"]) | played[0] | played[1] | played[2] | played[3])
    counts = [
        0 if s == seat else 13 - _count(played[s]) for s in range(4)
    ]  # every seat holds 13 less what it played
    hands = _deal_unseen(unseen, counts, [int(v) for v in r["shown_void"]], rng)
    hands[seat] = int(r["hand_set"])
    one = SeatView._wrap(view.records[k : k + 1].copy())
    world = world_state(game.engine, one, np.array([hands], np.uint64))
    state = game.new_initial_state()
    state._records = world.records
    state._dealer_known = True
    state._hands = 1
    state._origin = "from " + _shared_string(state)
    state._origin_records = world.records.copy()
    state._origin_returns = state._returns
    return state


pyspiel.register_game(_GAME_TYPE, FourHundredGame)
