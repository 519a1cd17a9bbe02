"""The batched core under every environment: B tables played episode by episode (numpy only).

:class:`TableDriver` owns an engine :class:`~fourhundred_env.engine.State` of B tables and
knows what an episode is (one hand, or a match truncated after ``max_hands``), which decisions
are the learner's and which are made by opponent agents, and what each seat is rewarded. The
Gymnasium and PettingZoo environments are thin layers over it; a single table is a batch of one.

Seeding. ``seed(s)`` gives table ``i`` the table seed ``s + i`` (as Gymnasium's
``SyncVectorEnv`` seeds its sub-environments), and everything random at a table comes from
counter-based hashes of its table seed: the match id of its ``e``-th episode (hence its
deals, from the engine's ``(0, match_id, hand_index)`` stream, and its first dealer), its
pre-hand scores, the replacement of penalized illegal actions, and the stream key of each
episode (``state.stream``) from which the opponents draw (a hash of their seat's seed, that
key and the position they see: the scripted bots and a sampling neural agent). So table
``i`` of a batch seeded ``s`` plays exactly as a batch of one seeded ``s + i``, whatever the
batch size, and the native vector env as ``SyncVectorEnv`` (tests/test_envs_seeding.py), with
every bundled bot but ``pimc``, whose worlds come from a generator of its own, drawn in batch
order.

When every opponent is a scripted bot, they are played by one compiled play-out per call
(:class:`fourhundred_agents.scripted.playout.Playout`, reached through the bots' ``compiled_policy()``, so this
module imports no agent code): the same games as calling their `act` round by round.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import ONE, U64, kernel, nth_bit, popcount
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.engine import Engine, Phase, State, mix64
from fourhundred_env.envs.config import EnvConfig
from fourhundred_env.errors import ConfigError, FourHundredError, IllegalActionError
from fourhundred_env.loop import GameLoop
from fourhundred_env.observation import OBS_SCALE, OBS_SIZE, observe_tables
from fourhundred_env.registry import AgentLike, make_agent, spec_settings
from fourhundred_env.streams import (
    ENV_AGENT_SALT,
    ENV_STREAM_SALTS,
    ILLEGAL_SALT,
    SCORE_SALT,
    SEAT_SALTS,
    TABLE_SALT,
    ZERO_SALT,
)
from fourhundred_env.view import SeatView, seat_view

_BID, _PLAY, _HAND_OVER, _MATCH_OVER = (int(p) for p in Phase)
_MASK64 = (1 << 64) - 1
_ONE = np.uint64(1)
_PARTNER = np.array([2, 3, 0, 1])
_RAISE, _END, _PENALIZE = 0, 1, 2
_ON_ILLEGAL = {"raise": _RAISE, "end": _END, "penalize": _PENALIZE}
RESULT_KEYS = ("outcome", "is_success", "points", "contracts_made", "contracts_bid")
"""The keys of :meth:`TableDriver.results`, in the info of the step that ends an episode."""
_SCORE_ATTEMPTS = 32


_ONES_INT8 = np.ones(OBS_SIZE, np.int8)


def _unit(x: np.ndarray) -> np.ndarray:
    """uint64 hashes -> float64 uniforms in [0, 1)."""
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


@kernel
def _pending_groups(
    s: np.ndarray, decides: np.ndarray, group: np.ndarray, counts: np.ndarray
) -> int:
    """group[i]: the seat whose decision an agent (not the learner) makes next at table i, or
    -1; counts (4,): tables per seat. Returns the number of such tables. decides[phase,
    to_play + 1]: the learner makes that decision."""
    for seat in range(4):
        counts[seat] = 0
    n = 0
    for i in range(s.shape[0]):
        phase = s[i]["phase"]
        seat = np.int64(s[i]["to_play"])
        if phase <= K.PLAY and not decides[phase, seat + 1]:
            group[i] = seat
            counts[seat] += 1
            n += 1
        else:
            group[i] = -1
    return n


@kernel
def _hands_ended(s: np.ndarray, group: np.ndarray, out: np.ndarray) -> int:
    """out[:n] = the tables with group >= 0 whose hand is now over; returns n."""
    n = 0
    for i in range(s.shape[0]):
        if group[i] >= 0 and s[i]["phase"] >= K.HAND_OVER:
            out[n] = i
            n += 1
    return n


@kernel
def _learner_step(s: np.ndarray, rules: np.ndarray, actions: np.ndarray, active: np.ndarray,
                  on_illegal: int, table_key: np.ndarray, episode: np.ndarray,
                  num_decisions: np.ndarray, actor: np.ndarray, illegal: np.ndarray,
                  last_seat: np.ndarray, ended: np.ndarray) -> int:  # fmt: skip
    """The learner's action at each `active` table: actor[i] the seat that acts (-1 where not
    active). An illegal action (illegal[i] set) is, by `on_illegal`: _RAISE, nothing changes
    and -1 - i is returned; _END, not applied (the caller ends the episode); _PENALIZE,
    replaced by a legal one drawn from the table's hash. Then the actions are applied,
    last_seat and num_decisions updated, and ended[:n] gets the tables whose hand ended;
    returns n."""
    r = rules[0]
    b = s.shape[0]
    for i in range(b):
        t = s[i]
        actor[i] = t["to_play"] if active[i] else -1
        if not active[i] or t["phase"] > K.PLAY:
            continue
        local = actions[i] - (0 if t["phase"] == K.PLAY else K.NUM_CARDS)
        legal = K.legal_set(t, r)
        if 0 <= local < 64 and ((legal >> U64(local)) & ONE) != 0:
            continue
        if on_illegal == _RAISE:
            return -1 - i
        illegal[i] = True
    n = 0
    for i in range(b):
        if not active[i]:
            continue
        last_seat[i] = actor[i]
        t = s[i]
        phase = t["phase"]
        if phase > K.PLAY:
            num_decisions[i] += 1
            continue
        a = actions[i]
        if illegal[i] and on_illegal == _END:
            num_decisions[i] += 1
            continue
        if illegal[i]:
            key = K.mix64(table_key[i] ^ K.mix64(K.to_u64(episode[i]) ^ ILLEGAL_SALT))
            word = K.mix64(K.wrapping_add(key, K.to_u64(num_decisions[i])))
            legal = K.legal_set(t, r)
            u = np.float64(word >> U64(11)) * (1.0 / 9007199254740992.0)
            a = nth_bit(legal, np.int64(u * popcount(legal))) + (
                0 if phase == K.PLAY else K.NUM_CARDS
            )
        if phase == K.BID:
            K.apply_bid(t, a, r)
        else:
            K.apply_card(t, a, r)
        num_decisions[i] += 1
        if t["phase"] >= K.HAND_OVER:
            ended[n] = i
            n += 1
    return n


def _stream_keys(table_key: np.ndarray, episode: np.ndarray) -> np.ndarray:
    """The stream key of each table's episode: the sum of two different hashes of (table key,
    episode), so that the key (which agents see) does not give back the table key (which
    fixes the deals). Not a cryptographic guarantee: it keeps the hidden cards out of reach
    of an honest bot, and out of an observation."""
    k = mix64(table_key ^ mix64(episode.astype(np.uint64) ^ ENV_STREAM_SALTS[0]))
    return mix64(k ^ ENV_STREAM_SALTS[1]) + mix64(k ^ ENV_STREAM_SALTS[2])


def _playout(agents: dict) -> object | None:
    """A compiled play-out of the opponents when every one is a scripted bot, else None."""
    policies = {}
    for seat, agent in agents.items():
        get = getattr(agent, "compiled_policy", None)
        policy = get() if get is not None else None
        if policy is None:
            return None
        policies[seat] = policy
    players = {policy.player for policy in policies.values()}
    if len(players) != 1:
        return None
    return players.pop()(policies)


class TableDriver:
    """B tables, their episodes, their opponent agents and their rewards. See the module doc.

    Invariant between calls: every table either has an episode over (``terminated`` or
    ``truncated``) or has a learner decision pending.
    """

    def __init__(self, num_tables: int, config: EnvConfig) -> None:
        self.config = config
        self.num_tables = b = int(num_tables)
        self.engine = Engine(config.rules)
        self.rows = np.arange(b, dtype=np.int64)
        learner = np.zeros((4, 5), bool)  # [phase, to_play + 1]: the learner makes this decision
        for seat in config.learner_seats:
            learner[_BID, seat + 1] = True
            learner[_PLAY, seat + 1] = config.learner_decides == "all"
        self._learner_decides = learner
        self.agent_seats = tuple(
            s for s in range(4) if not (learner[_BID, s + 1] and learner[_PLAY, s + 1])
        )
        for seat in self.agent_seats:  # a bad spec is refused as the env is made, not at reset
            who = config.opponents[seat]
            if isinstance(who, str):
                try:
                    spec_settings(who)  # the name and its settings, a device included
                except FourHundredError as e:
                    raise ConfigError(f"opponents (seat {seat}): {e}") from None
        self.agents: dict[int, AgentLike] = {}
        self.state: State = self.engine.init(b, seed=0)
        # a match episode ends when a team wins or at max_hands; a hand episode with its hand
        self.loop = GameLoop(
            self.engine, self.state, on_hand_end=self._reward_hands,
            on_match_end=self._end_episodes, on_match_start=self._episodes_started,
            max_hands=1 if config.episode == "hand" else config.max_hands,
        )  # fmt: skip
        self._rewards = np.zeros((b, 4), np.float32)  # the call's seat rewards (see act)
        self.base_seed: int | None = None
        self.table_key = np.zeros(b, np.uint64)
        self.episode = np.full(b, -1, np.int64)
        self.terminated = np.zeros(b, bool)
        self.truncated = np.zeros(b, bool)
        self.last_seat = np.full(b, -1, np.int8)
        self.num_decisions = np.zeros(b, np.int64)
        # the episode so far, per seat: points, contracts bid (hands played) and made
        self.ep_points = np.zeros((b, 4), np.int32)
        self.ep_bid = np.zeros((b, 4), np.int16)
        self.ep_made = np.zeros((b, 4), np.int16)
        self.ended_illegally = np.zeros(b, bool)
        self._obs_dtype = np.dtype(config.observation_dtype)
        self._scale = OBS_SCALE if self._obs_dtype == np.float32 else _ONES_INT8
        self._scratch = np.zeros(1, SeatView.DTYPE)
        # buffers of the opponents' rounds (see _autoplay)
        self._group = np.empty(b, np.int8)
        self._counts = np.zeros(4, np.int64)
        self._actions = np.full(b, -1, np.int64)
        self._ended = np.empty(b, np.int64)
        self._seats = [np.full(b, seat, np.int8) for seat in range(4)]

    # -- seeding and episodes ---------------------------------------------------------------
    def seed(self, seed: int) -> None:
        """Table seeds ``seed + i``; episode counters restart; opponent agents are re-created."""
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise FourHundredError(f"seed={seed!r}: expected an integer or None")
        self.base_seed = int(seed) & _MASK64
        table_seeds = np.uint64(self.base_seed) + np.arange(self.num_tables, dtype=np.uint64)
        self.table_key = mix64(table_seeds ^ TABLE_SALT)
        self.episode[:] = -1
        # Seat seeds do not depend on the batch's seed: a scripted bot's draws come from the
        # game's stream key (set per table and episode in _new_episodes) and the position.
        agent_seeds = mix64(ENV_AGENT_SALT ^ SEAT_SALTS)
        self.agents = {}
        for seat in self.agent_seats:
            who = self.config.opponents[seat]
            if isinstance(who, str):
                agent = make_agent(who, self.config.rules, seed=int(agent_seeds[seat]))
            else:  # a factory
                agent = who(self.config.rules, int(agent_seeds[seat]))
            agent.reset(self.num_tables)
            self.agents[seat] = agent
        self._playout = _playout(self.agents)

    def start(self, index: np.ndarray) -> None:
        """Start the next episode at the tables `index` and play until the learner is to act.

        An episode that ends before the learner's first decision (a hand thrown in by an
        opponent's redeal request, in one-hand episodes) is skipped for the next one.
        """
        idx = np.asarray(index, dtype=np.intp)
        scratch = np.zeros((self.num_tables, 4), np.float32)
        while idx.size:
            self._new_episodes(idx)
            self._autoplay(scratch)
            idx = idx[self.terminated[idx] | self.truncated[idx]]

    def _new_episodes(self, idx: np.ndarray) -> None:
        self.episode[idx] += 1
        match_id = (self.table_key[idx] >> np.uint64(2)).astype(np.int64) + self.episode[idx]
        self.loop.start(idx, match_id)
        self.terminated[idx] = False
        self.truncated[idx] = False
        self.last_seat[idx] = -1
        self.num_decisions[idx] = 0
        self.ep_points[idx] = 0
        self.ep_bid[idx] = 0
        self.ep_made[idx] = 0
        self.ended_illegally[idx] = False

    def _episodes_started(self, idx: np.ndarray, match_ids: list) -> None:
        """The loop's match start: the episodes' game streams and drawn scores, before the deal."""
        self.state.stream[idx] = _stream_keys(self.table_key[idx], self.episode[idx])
        if self.config.episode == "hand" and self.config.hand_scores is not None:
            self.state.scores[idx] = self._draw_scores(idx)

    def _draw_scores(self, idx: np.ndarray) -> np.ndarray:
        """(n, 4) int32 pre-hand scores from `config.hand_scores`, redrawn while a team has won."""
        dist = self.config.hand_scores
        assert dist is not None
        key = mix64(self.table_key[idx] ^ mix64(self.episode[idx].astype(np.uint64) ^ SCORE_SALT))
        span = np.uint64(dist.high - dist.low + 1)
        scores = np.zeros((idx.size, 4), np.int32)
        todo = np.arange(idx.size)
        base_target = self.config.rules.target
        for attempt in range(_SCORE_ATTEMPTS):
            words = mix64((key[todo] + np.uint64(attempt))[:, None] ^ SEAT_SALTS)
            draw = (words % span).astype(np.int32) + np.int32(dist.low)
            winner, target = self.engine.end_of_game(draw, np.full(todo.size, base_target))
            ok = (winner < 0) & (target == base_target)
            scores[todo[ok]] = draw[ok]
            todo = todo[~ok]
            if not todo.size:
                break
        zero = _unit(mix64(key ^ ZERO_SALT)) < dist.zero_prob
        scores[zero] = 0  # and rows never drawn in time stay 0
        return scores

    # -- acting -----------------------------------------------------------------------------
    def act(
        self, actions: np.ndarray, active: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply the learner's actions (B,) at the `active` (B,) bool tables; others ignore theirs.

        Then opponents play until the learner is to act again or the episode ends. Returns
        (seat_rewards (B, 4) float32 earned during the call, actor (B,) int8 seat that acted
        or -1, illegal (B,) bool the learner's action was illegal: replaced under
        illegal_action="penalize", the episode ended under "end").
        """
        state = self.state
        cfg = self.config
        b = self.num_tables
        seat_rewards = np.zeros((b, 4), np.float32)
        actor = np.empty(b, np.int8)
        illegal = np.zeros(b, np.bool_)
        n = _learner_step(state.records, self.engine._r, actions, active,
                          _ON_ILLEGAL[cfg.illegal_action],
                          self.table_key, self.episode, self.num_decisions, actor, illegal,
                          self.last_seat, self._ended)  # fmt: skip
        if n < 0:  # an illegal action under illegal_action="raise": nothing changed
            self.loop.step(np.where(active, actions, -1), active, end=False)
            raise AssertionError("unreachable: the engine refuses the action")  # pragma: no cover
        if np.count_nonzero(illegal):
            t = np.flatnonzero(illegal)
            seats = actor[t].astype(np.intp)
            seat_rewards[t, seats] += cfg.illegal_penalty
            if cfg.team_reward:
                seat_rewards[t, _PARTNER[seats]] += cfg.illegal_penalty
            if cfg.illegal_action == "end":  # the engine's state stays as it was
                self.terminated[t] = True
                self.ended_illegally[t] = True
        if n:
            self._finish_hands(self._ended[:n].copy(), seat_rewards)
        self._autoplay(seat_rewards)
        return seat_rewards, actor, illegal

    def learner_reward(self, seat_rewards: np.ndarray, actor: np.ndarray) -> np.ndarray:
        """(B,) float32 reward of the learner: the acting seat's in self-play, else the held
        seat's, or the partnership's (its two seats' points added, unless already a team reward)."""
        seats = self.config.learner_seats
        if self.config.self_play:
            reward = seat_rewards[self.rows, np.maximum(actor, 0)]
            return np.where(actor >= 0, reward, np.float32(0))
        if len(seats) == 1 or self.config.team_reward:
            return seat_rewards[:, seats[0]].copy()
        return seat_rewards[:, seats[0]] + seat_rewards[:, seats[1]]

    def _step_where(self, actions: np.ndarray, active: np.ndarray) -> None:
        """A step at the `active` tables only; other tables with a decision are frozen (the
        hands it ended are found and finished by the caller)."""
        self.loop.step(actions, active, end=False)

    def _autoplay(self, seat_rewards: np.ndarray) -> None:
        """Opponent agents decide until every table has the learner to act or is over: in
        rounds, each agent called once per round with the tables where its seat is to act."""
        if not self.agents:
            return
        if self._playout is not None:  # every opponent is a scripted bot: compiled play-outs
            while True:
                n = self._playout.run(
                    self.state, self.engine._r, self._learner_decides, self._ended
                )
                if n < 0:
                    t = -1 - n
                    specs = ", ".join(
                        f"seat {s}: {self.config.opponents[s]!r}" for s in self.agents
                    )
                    raise IllegalActionError(
                        f"an opponent agent ({specs}) chose an illegal action at table {t}"
                    )
                if n == 0:
                    return
                self._finish_hands(self._ended[:n].copy(), seat_rewards)
        state, records = self.state, self.state.records
        group, counts, actions, ended = self._group, self._counts, self._actions, self._ended
        b = self.num_tables
        while True:
            if not _pending_groups(records, self._learner_decides, group, counts):
                return
            for seat, agent in self.agents.items():
                c = counts[seat]
                if not c:
                    continue
                idx = self.rows if c == b else np.flatnonzero(group == seat)
                view = seat_view(self.engine, state, idx, seat=self._seats[seat][:c])
                actions[idx] = agent.act(view)
            try:
                self._step_where(actions, group >= 0)
            except IllegalActionError as e:
                specs = ", ".join(f"seat {s}: {self.config.opponents[s]!r}" for s in self.agents)
                raise IllegalActionError(f"an opponent agent ({specs}) chose badly: {e}") from e
            n = _hands_ended(records, group, ended)
            if n:
                self._finish_hands(ended[:n].copy(), seat_rewards)

    def _finish_hands(self, t: np.ndarray, seat_rewards: np.ndarray) -> None:
        """Reward the hands that just ended at tables `t`; end episodes or deal the next hand
        (the loop's end of hands, with its hooks below)."""
        if not t.size:
            return
        self._rewards = seat_rewards
        self.loop.end_hands(t)

    def _reward_hands(self, t: np.ndarray) -> None:
        """The loop's end of a hand: its points (or the match's result) as seat rewards."""
        state, cfg, seat_rewards = self.state, self.config, self._rewards
        played = ~state.thrown_in[t][:, None]
        self.ep_points[t] += state.hand_points[t]
        self.ep_bid[t] += played
        made = (state.tricks_won[t] >= state.bids[t]) & ~state.forfeit[t]
        self.ep_made[t] += played & made
        if cfg.reward == "match_result":
            winner = state.winner[t].astype(np.int64)[:, None]
            side = np.where(np.arange(4) % 2 == winner, 1.0, -1.0)
            seat_rewards[t] += np.where(winner >= 0, side, 0.0).astype(np.float32)
        else:
            points = state.hand_points[t].astype(np.float32)
            if cfg.reward == "team_points":
                points = points + points[:, _PARTNER]
            seat_rewards[t] += points

    def _end_episodes(self, t: np.ndarray) -> None:
        """The loop's end of a match: the episode is over, won (or a hand episode's hand
        played) or truncated at max_hands; the table waits for the next episode's start."""
        if self.config.episode == "hand":
            self.terminated[t] = True
            return
        won = self.state.phase[t] == _MATCH_OVER
        self.terminated[t[won]] = True
        self.truncated[t[~won]] = True

    def results(self, t: np.ndarray) -> dict[str, np.ndarray]:
        """What the episodes just ended at tables `t` (K,) gave the learner: its seat's
        (one seat), its two seats' (a partnership) or, in self-play, the seat of the last
        decision's.

        Every value is (K,):

        - "outcome" int8: +1 won, -1 lost, 0 drawn. A match: won or lost by its team, drawn
          when truncated undecided. A hand: its team's points against the other team's
          (0 when thrown in). An episode ended by the learner's illegal action is lost.
        - "is_success" bool: outcome == +1 (the key SB3 averages as ``rollout/success_rate``).
        - "points" int32: the score change over the episode (a match from 0: the final score).
        - "contracts_bid" int16: hands played (not thrown in), one contract each per seat;
          "contracts_made" int16: of those, contracts made (tricks >= bid, not forfeited).
        """
        t = np.asarray(t, np.intp)
        seats = self.config.learner_seats
        if self.config.self_play:
            side = np.maximum(self.last_seat[t], 0).astype(np.intp)[:, None]
        else:
            side = np.broadcast_to(np.asarray(seats, np.intp), (t.size, len(seats)))
        rows = t[:, None]
        team = side[:, 0] % 2
        state = self.state
        if self.config.episode == "match":
            winner = state.winner[t].astype(np.int64)
            outcome = np.where(winner < 0, 0, np.where(winner == team, 1, -1))
        else:
            points = state.hand_points[t]
            diff = points[:, 0] + points[:, 2] - points[:, 1] - points[:, 3]
            outcome = np.sign(np.where(team == 0, diff, -diff))
        outcome = np.where(self.ended_illegally[t], -1, outcome).astype(np.int8)
        return {
            "outcome": outcome,
            "is_success": outcome == 1,
            "points": self.ep_points[rows, side].sum(axis=1, dtype=np.int32),
            "contracts_made": self.ep_made[rows, side].sum(axis=1, dtype=np.int16),
            "contracts_bid": self.ep_bid[rows, side].sum(axis=1, dtype=np.int16),
        }

    # -- observing --------------------------------------------------------------------------
    @property
    def over(self) -> np.ndarray:
        """(B,) bool: the table's episode has ended (terminated or truncated)."""
        return self.terminated | self.truncated

    def obs_seats(self) -> np.ndarray:
        """(B,) int8 seat each observation is for: the seat to act, or after an episode ended,
        the seat of the learner's last decision."""
        return np.where(self.over, self.last_seat, self.state.to_play).astype(np.int8)

    def observe(
        self,
        seats: np.ndarray | None = None,
        index: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Observations of `seats` (default `obs_seats()`) at tables `index` (default all).

        Returns (observation (K, OBS_SIZE) float32 or int8 (``config.observation_dtype``),
        written into `out` if given, and
        action_mask (K, 66) int8, new); the mask is all 0 where that seat has no decision.
        """
        idx = self.rows if index is None else np.asarray(index, dtype=np.int64)
        if seats is None:
            seats = self.obs_seats()
            if index is not None:
                seats = seats[idx]
        seats = np.asarray(seats, dtype=np.int8)
        k = idx.shape[0]
        if out is None:
            out = np.empty((k, OBS_SIZE), self._obs_dtype)
        masks = np.empty((k, NUM_ACTIONS), np.int8)
        bad = observe_tables(self.state.records, idx, seats, self.engine._r, self._scale,
                             self._scratch, out, masks)  # fmt: skip
        if bad >= 0:
            raise FourHundredError(
                f"observe: table {int(idx[bad])}, seat {int(seats[bad])}: expected tables 0 to "
                f"{self.num_tables - 1} and seats 0 to 3"
            )
        return out, masks
