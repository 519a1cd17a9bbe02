"""The bid analyser: why does a bot bid 5? (``fourhundred bid-analyse``, notebooks).

For one hand in one match situation (the hand as text, or a seeded deal), :func:`analyse_bid`
gives the bidder's distribution over its legal bids and, for each bid, its estimated value by
play-outs: the seat's unseen cards are dealt at random into `worlds` worlds consistent with
what it has seen (agents/search/pimc.py's `determinize`; the deals ignore what the earlier bids say),
the bid is made in every world, the rest of the hand is played out (the bidder's partnership
bids with the bidder, the others with `play`; every card by `play`), and the seat's points,
its contract made or not, the hand thrown in or not and its team's change of match-win
estimate (agents/value/match_value.py) are averaged over the worlds. A fitted-Q network
(train/bid_q/, the bundled bidder) values every bid: its bid logits, shown as "net Q"; a
policy network's value head gives its own estimate of the position (one number: such a
network values positions, not bids).
A search bidder (``search:bidder``, alone or in a composition) adds its own value of every bid
(:meth:`fourhundred_agents.search.agent.SearchAgent.action_values`: its worlds weighted by the bids seen, its
match-win estimate and points weight), the number it bids the best of; it can differ from the
play-out columns, whose worlds ignore the bids.

:func:`play_hand` plays the hands of a batch of tables to their end with one agent per seat
for the bids and one for the cards (the bidding benchmark, train/bid_report.py, uses it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fourhundred_env.cards import NUM_CARDS, cards_to_set, parse_hand
from fourhundred_env.engine import Engine, State, mix64
from fourhundred_env.errors import FourHundredError
from fourhundred_env.loop import GameLoop
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view

BID_ACTION0 = NUM_CARDS - 1  # action 52 is bid 1: bid b is action BID_ACTION0 + b
REDEAL = 65


def play_hand(engine: Engine, state: State, bidders: list[Any], players: list[Any]) -> None:
    """Play the hand under way at every table of `state` to its end, in lockstep: seat s bids
    with ``bidders[s]`` and plays its cards with ``players[s]`` (one agent per seat, each
    fed only that seat's view)."""
    b = state.batch_size
    loop = GameLoop(engine, state)
    while True:
        mask = engine.legal_mask(state)
        pending = mask.any(axis=1)
        if not pending.any():
            return
        bidding = mask[:, NUM_CARDS:].any(axis=1)
        actions = np.full(b, -1, np.int64)
        for seat in range(4):
            here = pending & (state.to_play == seat)
            for sel, agents in ((here & bidding, bidders), (here & ~bidding, players)):
                idx = np.flatnonzero(sel)
                if idx.size:
                    actions[idx] = agents[seat].act(seat_view(engine, state, idx, seat))
        loop.step(actions, pending, end=False)


@dataclass(frozen=True)
class Position:
    """A bidding decision: the scores before the hand by seat, the dealer, the bids made so
    far (in bidding order, from the dealer's right), and the hands dealt (4,) uint64 by seat
    (only the bidding seat's are its own; the others are a stand-in the analysis re-deals)."""

    scores: tuple[int, int, int, int]
    dealer: int
    bids: tuple[int, ...]
    hands: tuple[int, int, int, int]
    target: int = 41

    @property
    def seat(self) -> int:
        """The seat to bid."""
        return (self.dealer + 1 + len(self.bids)) % 4


def position_from_text(
    hand: str, scores: tuple[int, ...] = (0, 0, 0, 0), dealer: int = 3,
    bids: tuple[int, ...] = (), rules: Rules | None = None,
) -> Position:  # fmt: skip
    """The position of the seat to bid after `bids`, holding `hand` (13 cards as text); the
    other seats' cards are a fixed stand-in. One clear FourHundredError for a hand with the
    wrong count, a duplicate or a bad card, bad scores, dealer or bids."""
    rules = rules or Rules()
    own = parse_hand(hand, expected=13)
    _check_situation(scores, dealer, bids)
    seat = (dealer + 1 + len(bids)) % 4
    rest = [c for c in range(NUM_CARDS) if c not in set(own)]
    hands = [0, 0, 0, 0]
    hands[seat] = int(cards_to_set(own))
    others = [s for s in range(4) if s != seat]
    for k, s in enumerate(others):
        hands[s] = int(cards_to_set(rest[13 * k : 13 * k + 13]))
    pos = Position(tuple(int(x) for x in scores), int(dealer), tuple(int(b) for b in bids),
                   tuple(hands), rules.target)  # fmt: skip
    start(Engine(rules), pos)  # the bids must be legal
    return pos


def position_from_seed(
    seed: int, seat: int, scores: tuple[int, ...] = (0, 0, 0, 0), dealer: int = 3,
    rules: Rules | None = None, play: str = "heuristic-v1",
) -> Position:  # fmt: skip
    """The seeded deal `seed` (as the engine deals match 0's first hand), with the seats
    before `seat` bidding as `play` does."""
    from fourhundred_env.registry import make_agent

    rules = rules or Rules()
    _check_situation(scores, dealer, ())
    if isinstance(seat, bool) or seat not in (0, 1, 2, 3):
        raise FourHundredError(f"seat={seat!r}: expected a seat 0 to 3")
    engine = Engine(rules)
    state = engine.init(1, seed=seed, dealer=dealer, scores=np.array(scores))
    loop = GameLoop(engine, state)
    loop.deal()
    hands = tuple(int(h) for h in state.hand_set[0])
    bids: list[int] = []
    while int(state.to_play[0]) != seat:
        agent = make_agent(play, rules, seed + int(state.to_play[0]))
        action = int(agent.act(seat_view(engine, state))[0])
        if action == REDEAL:
            raise FourHundredError(
                f"seed {seed}: seat {int(state.to_play[0])} asks for a redeal before seat "
                f"{seat} bids: expected another seed"
            )
        bids.append(action - BID_ACTION0)
        loop.step(np.array([action]), end=False)
    return Position(tuple(int(x) for x in scores), int(dealer), tuple(bids), hands, rules.target)


def _check_situation(scores: tuple[int, ...], dealer: int, bids: tuple[int, ...]) -> None:
    if len(scores) != 4:
        raise FourHundredError(f"scores {tuple(scores)}: expected four scores, by seat 0 to 3")
    if isinstance(dealer, bool) or dealer not in (0, 1, 2, 3):
        raise FourHundredError(f"dealer={dealer!r}: expected a seat 0 to 3")
    if len(bids) > 3:
        raise FourHundredError(f"bids {tuple(bids)}: expected at most 3 bids before this seat's")


def start(engine: Engine, pos: Position, copies: int = 1) -> State:
    """`copies` tables at the position (the bids made), the seat to bid to act."""
    state = engine.init(copies, dealer=pos.dealer, scores=np.array(pos.scores), target=pos.target)
    loop = GameLoop(engine, state)
    loop.deal(hands=np.tile(np.array(pos.hands, np.uint64), (copies, 1)))
    for b in pos.bids:
        action = BID_ACTION0 + b
        legal = engine.legal_mask(state)[0]
        if not (1 <= b <= 13) or not legal[action]:
            seat = int(state.to_play[0])
            allowed = [a - BID_ACTION0 for a in np.flatnonzero(legal[NUM_CARDS:65]) + NUM_CARDS]
            raise FourHundredError(
                f"bid {b} of seat {seat} is not legal here: expected one of {allowed}"
            )
        loop.step(np.full(copies, action), end=False)
    return state


@dataclass
class BidAnalysis:
    """The analyser's answer for one position (see the module docstring)."""

    position: Position
    bidder: str
    play: str
    worlds: int
    actions: np.ndarray  # (L,) int64 legal actions (bids, and 65 for the redeal request)
    probs: np.ndarray  # (L,) float64: the bidder's probabilities (one-hot if it has none)
    chosen: int  # the bidder's own action
    points: np.ndarray  # (L,) mean points of the seat
    points_se: np.ndarray  # (L,) their standard errors
    made: np.ndarray  # (L,) share of worlds where its contract was made (of played hands)
    thrown_in: np.ndarray  # (L,) share of worlds where the hand was thrown in
    value_change: np.ndarray  # (L,) mean change of its team's match-win estimate
    value_change_se: np.ndarray  # (L,)
    value_head: float | None = None  # the network's value of the position, if neural
    value_head_unit: str = ""
    search_value: np.ndarray | None = None  # (L,) a search bidder's own value of each bid
    net_value: np.ndarray | None = None  # (L,) a fitted-Q network's value of each bid
    net_value_unit: str = ""
    notes: list[str] = field(default_factory=list)

    def labels(self) -> list[str]:
        """The name of each of `actions` (L,): its bid as a number, or "redeal"."""
        return ["redeal" if a == REDEAL else str(a - BID_ACTION0) for a in self.actions]

    def table(self) -> str:
        """The analysis as a text table."""
        pos = self.position
        from fourhundred_env.cards import hand_text

        lines = [
            f"Seat {pos.seat} to bid (dealer {pos.dealer}; scores by seat {list(pos.scores)}; "
            f"bids so far {list(pos.bids) or 'none'})",
            f"Hand: {hand_text(pos.hands[pos.seat])}",
            f"Bidder {self.bidder}; play-outs: {self.worlds} worlds per bid, cards by {self.play}",
            "",
            f"  {'bid':>6} {'policy %':>9} {'points':>15} {'made %':>7} {'thrown %':>8} "
            f"{'dP(win) pp':>16}"
            + (f" {'search':>7}" if self.search_value is not None else "")
            + (f" {'net Q':>7}" if self.net_value is not None else ""),
        ]
        best = int(np.argmax(self.value_change))
        for k, label in enumerate(self.labels()):
            mark = ("<- bids" if self.actions[k] == self.chosen else "") + (
                "  (best dP)" if k == best else ""
            )
            lines.append(
                f"  {label:>6} {100 * self.probs[k]:9.1f} {self.points[k]:+7.2f} "
                f"+-{self.points_se[k]:5.2f} {100 * self.made[k]:7.1f} "
                f"{100 * self.thrown_in[k]:8.1f} {100 * self.value_change[k]:+7.2f} "
                f"+-{100 * self.value_change_se[k]:5.2f}"
                + (f" {self.search_value[k]:7.4f}" if self.search_value is not None else "")
                + (f" {self.net_value[k]:+7.2f}" if self.net_value is not None else "")
                + f"  {mark}"
            )
        if self.value_head is not None:
            lines += ["", f"  value head: {self.value_head:+.3f} {self.value_head_unit}"]
        lines += [f"  {n}" for n in self.notes]
        return "\n".join(lines)


def _bidding(agent: Any, has: tuple[str, ...]) -> Any:
    """The agent that makes `agent`'s bids (through compositions) if it has the attributes
    `has`, else None."""
    seen = 0
    while agent is not None and seen < 5:
        if all(hasattr(agent, a) for a in has):
            return agent
        agent = getattr(agent, "bidder", None)
        seen += 1
    return None


def analyse_bid(
    pos: Position,
    bidder: str,
    play: str = "heuristic-v1",
    worlds: int = 64,
    seed: int = 0,
    rules: Rules | None = None,
) -> BidAnalysis:
    """Analyse the bid of `pos.seat` by the agent `bidder` (see the module docstring)."""
    from fourhundred_agents.search.pimc import determinize
    from fourhundred_agents.search.settings import MAX_WORLDS
    from fourhundred_agents.value.match_value import hand_value_change
    from fourhundred_agents.value.matchwin import MatchWin
    from fourhundred_env.registry import make_agent

    rules = rules or Rules()
    if worlds < 2:
        raise FourHundredError(f"worlds={worlds}: expected at least 2")
    if worlds > MAX_WORLDS:
        raise FourHundredError(f"worlds={worlds}: expected at most {MAX_WORLDS:,}")
    engine = Engine(rules)
    state = start(engine, pos)
    view: SeatView = seat_view(engine, state)
    seat = pos.seat
    agent = make_agent(bidder, rules, seed, decides="bid")
    agent.reset(1)
    chosen, probs_all = agent.act_with_probs(view)
    chosen = int(chosen[0])
    mask = view.legal_mask[0]
    actions = np.flatnonzero(mask[NUM_CARDS:]) + NUM_CARDS
    if probs_all is None and hasattr(agent, "bidder"):
        _, probs_all = agent.bidder.act_with_probs(view)
    probs = (
        np.asarray(probs_all[0], np.float64)[actions] if probs_all is not None
        else (actions == chosen).astype(np.float64)
    )  # fmt: skip
    # the worlds: the unseen cards dealt anew, the same worlds for every bid
    keys = mix64(np.array([seed], np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
    worlds_state = determinize(engine, view, worlds, keys)
    n_act = actions.size
    branch = worlds_state.select(np.tile(np.arange(worlds), n_act))
    GameLoop(engine, branch).step(np.repeat(actions, worlds), end=False)
    ours = {seat, (seat + 2) % 4}
    bid_agents = [make_agent(bidder, rules, seed + s, decides="bid") if s in ours
                  else make_agent(play, rules, seed + s) for s in range(4)]  # fmt: skip
    play_agents = [make_agent(play, rules, seed + 10 + s) for s in range(4)]
    for a in (*bid_agents, *play_agents):
        a.reset(branch.batch_size)
    play_hand(engine, branch, bid_agents, play_agents)
    n = branch.batch_size
    pts = branch.hand_points[:, seat].astype(np.float64).reshape(n_act, worlds)
    thrown = branch.thrown_in.reshape(n_act, worlds)
    bid = branch.bids[:, seat].astype(np.int64)
    made = (branch.tricks_won[:, seat] >= bid).reshape(n_act, worlds) & ~thrown
    change = hand_value_change(
        engine, MatchWin.for_rules(rules), np.tile(np.array(pos.scores), (n, 1)),
        branch.hand_points, np.full(n, pos.target), np.full(n, pos.dealer), ~branch.thrown_in,
    )[:, seat].reshape(n_act, worlds)  # fmt: skip
    played = (~thrown).sum(1)
    out = BidAnalysis(
        position=pos, bidder=bidder, play=play, worlds=worlds, actions=actions, probs=probs,
        chosen=chosen, points=pts.mean(1), points_se=pts.std(1, ddof=1) / np.sqrt(worlds),
        made=np.where(played > 0, made.sum(1) / np.maximum(played, 1), np.nan),
        thrown_in=thrown.mean(1), value_change=change.mean(1),
        value_change_se=change.std(1, ddof=1) / np.sqrt(worlds),
    )  # fmt: skip
    search = _bidding(agent, ("action_values", "bid_worlds"))
    if search is not None:
        out.search_value = search.action_values(view)[0][actions]
        out.notes.append(
            f"search: the value the search bidder maximizes, its mean over its own "
            f"{search.bid_worlds} worlds weighted by the bids seen (match-win estimate after "
            f"the hand + {search.per_point:g} per point of the team)."
        )
    neural = _bidding(agent, ("net", "meta"))
    if neural is not None:
        logits, value = neural.outputs(view)
        extra = neural.meta.get("extra", {})
        raw = float(value.float()[0])
        scale = float(extra.get("reward_scale", 0) or 0)
        fitted_q = extra.get("bid_q")
        if isinstance(fitted_q, dict):  # train/bid_q/: its bid logits are its bids' values
            out.net_value = logits.float()[0].cpu().numpy()[actions].astype(np.float64)
            points = fitted_q.get("value") == "team_points"
            per_point = float(fitted_q.get("per_point", 0) or 0)
            out.net_value_unit = "points of the team" if points else "pp of match-win change"
            if per_point and not points:
                out.net_value_unit += f" + {100 * per_point:g} a point of the team"
            out.probs = (actions == chosen).astype(np.float64)  # it bids the best: no policy
            out.notes.append(
                f"net Q: the network's fitted value of each bid ({out.net_value_unit}, relative "
                f"to the bid its training bidder made; fitted to values floored at "
                f"-{fitted_q.get('clip', 0):g}, so lower ones only say: worse); "
                "it bids the best, so its policy % is all on that bid (its value head is not "
                "fitted)."
            )
        elif extra.get("reward") == "match_value" and scale and extra.get("match_value_points"):
            out.value_head = 100 * raw / (scale * float(extra["match_value_points"]))
            out.value_head_unit = "pp of match-win change expected for the team (its reward)"
        elif scale and extra.get("reward", "team_points") not in ("team_points", "hand_points"):
            out.value_head = raw / scale
            out.value_head_unit = f"reward expected (its own, {extra['reward']})"
        elif scale:
            out.value_head = raw / scale
            out.value_head_unit = f"points expected ({extra.get('reward', 'its reward')})"
        else:
            out.value_head = raw
            out.value_head_unit = "(in the network's reward units)"
    out.notes.append(
        "The play-outs' worlds ignore what the earlier bids say about the other hands; +- one "
        "standard error over the worlds."
    )
    return out
