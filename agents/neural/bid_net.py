"""A bidding network that reads what each bid would do, not only the observation
(``net: bid_features`` in configs/bidding_q.yaml, played by ``neural-bid:PATH``).

A plain network (agents/neural/network.py) must learn from the 588 entries of the observation alone
what a hand is worth and what a bid does to the match: that making 5 from 31 points ends it,
that the thirty rule halves a 5. Fitted on play-out values it stayed near heuristic-v1's own
bids (BENCHMARKS.md, "Bidding"). This network is also given, worked out here:

* **for the position** (`SHARED_SIZE` entries: the observation, then 58 more): heuristic-v1's
  evaluation of the hand (its 21 features, its expected tricks before and after the others'
  bids), the suit lengths, the four scores from the bidder's seat (as they are, to the
  target, past the thirty rule, above zero), the danger heuristic-v1 sees, the dealer's
  position, the bids so far, the minimum bids and what the total still needs;
* **for each bid** (`PER_BID` entries for each of the 14 bid actions): the bid, the points it
  wins or loses, whether making it wins the match, the scores it leaves, heuristic-v1's chance
  of making it and its utility, whether the dealer's bid gets the hand played, whether it is
  legal, whether it is the bid heuristic-v1 makes, and (version 2) the match-win estimate
  (``matchwin_h1.npz``) if the bidder makes it and if it misses it, the other seats' scores
  as they are, and their mix by heuristic-v1's chance of making it; (version 3) the same
  three with the other seats' bids made or missed too (each made 3 times in 4: their bids
  so far, the minimum bid of those yet to bid).

A shared trunk reads the position; one head, the same for every bid, reads the trunk's output
with the bid's entries and gives the bid's value, or (head version 2, the outcome head) the
bid's chance of being made and a correction, the value then being that chance's mix of the
match-win change if made and if missed, plus the correction. Its bid logits are those values;
its card logits and value are 0 (it only bids). Everything it reads is in the bidder's SeatView.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from fourhundred_agents.neural.network import (
    MAX_HIDDEN,
    extra_bound,
    size_problem,
    without_zero_extra,
)
from fourhundred_agents.scripted.heuristic_bid import (
    NUM_FEATURES,
    expected_tricks_kernel,
    hand_features,
)
from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent
from fourhundred_agents.value.match_value import team_values
from fourhundred_agents.value.matchwin import MatchWin
from fourhundred_env.cards import NUM_ACTIONS, NUM_CARDS
from fourhundred_env.engine import Engine
from fourhundred_env.kernels import rules_record
from fourhundred_env.observation import OBS_SIZE, encode_observation
from fourhundred_env.rules import Rules
from fourhundred_env.symmetry import (
    OBS_GATHERS,
    SUIT_PERMUTATIONS,
    repeat_for_renamings,
    stack_renamed,
)
from fourhundred_env.view import SeatView

FEATURES_VERSION = 3
"""Layout version of the features below; bump it whenever they change."""
PER_BID_SIZES = {1: 26, 2: 30, 3: 33}
"""Per-bid entries of each layout version this release reads (version 1: without the
match-win entries; version 2: without those that count the other bids' outcomes)."""
OTHERS_MADE = 0.75
"""The chance the version-3 entries give each other seat's bid of being made (the bid it made
before the bidder's, or its minimum bid if it bids after): heuristic-v1's made rate in its
own matches (75.1%, BENCHMARKS.md, "Bidding")."""
NUM_BIDS = NUM_ACTIONS - NUM_CARDS  # actions 52..65: bids 1..13 and the redeal
SHARED_SIZE = OBS_SIZE + 58
PER_BID = PER_BID_SIZES[FEATURES_VERSION]
HEAD_VERSIONS = (1, 2)
"""Head versions this release reads (BidNetConfig.head_version)."""
POINTS, PLAYED, OWN_BID, MATCH_WIN, MATCH_WIN_JOINT = 15, 21, 24, 26, 30
"""Per-bid entries the outcome head reads as well as writes: the bid's points / 40, whether
the hand is played, heuristic-v1's bid, and the first of the version-2 and version-3
match-win entries (if made, if missed, ...)."""
SUIT_LENGTHS = OBS_SIZE + NUM_FEATURES + 2
"""Where the shared entries' four suit lengths start (after the observation, heuristic-v1's
features and its two trick estimates)."""
MATCHWIN = "matchwin_h1.npz"
"""The match-win estimate the version-2 entries read (fitted on heuristic-v1's matches)."""


class BidFeatures:
    """The network's inputs at K bidding tables: (shared (K, SHARED_SIZE), per-bid (K, 14,
    PER_BID_SIZES[version])) float32, for one set of rules."""

    def __init__(self, rules: Rules, version: int = FEATURES_VERSION) -> None:
        self.rules, self.version = rules, version
        self.per_bid = PER_BID_SIZES[version]
        if version >= 2:  # refuses rules the estimate was not fitted under, in one line
            self.matchwin = MatchWin.for_rules(rules, MATCHWIN)
            self.engine = Engine(rules)
        r = rules_record(rules)[0]
        self.values = r["values"].astype(np.float64)  # (2, 14): by the thirty rule's row
        self.weights = r["weights"].astype(np.float64)  # (14,)
        self.thirty = int(r["thirty"])
        self.five_to_run = bool(r["five_to_run"])
        self.partner_positive = bool(r["partner_must_be_positive"])
        self.heuristic = HeuristicV1Agent(rules)

    def __call__(self, view: SeatView) -> tuple[np.ndarray, np.ndarray]:
        """(shared (K, SHARED_SIZE), per-bid (K, 14, self.per_bid)) float32 at `view`'s K tables."""
        n = view.size
        obs = encode_observation(view)
        bidding = view.legal_mask[:, NUM_CARDS:].any(axis=1)
        own = np.full(n, -1, np.int64)
        if bidding.any():
            rows = np.flatnonzero(bidding)
            own[rows] = self.heuristic.act(view.select(rows)) - NUM_CARDS
        seat = view.seat.astype(np.int64)
        rel = (seat[:, None] + np.arange(4)[None, :]) % 4  # me, next, partner, previous
        k = np.arange(n)[:, None]
        sc = view.scores_before[k, rel].astype(np.float64)
        bids = view.bids[k, rel].astype(np.float64)
        min_bid = view.min_bid[k, rel].astype(np.float64)
        target = view.target.astype(np.float64)
        hands = np.ascontiguousarray(view.hand_set, np.uint64)
        hf = hand_features(hands)
        e = np.empty(n)
        expected_tricks_kernel(hands, e)
        num_prev = view.num_bids.astype(np.float64)
        others = bids.sum(1)
        e_adj = e + 0.3 - 0.12 * np.maximum(others - 3 * num_prev, 0)  # heuristic-v1's
        suit = np.stack([np.bitwise_count((hands >> np.uint64(13 * s)) & np.uint64(0x1FFF))
                         for s in range(4)], 1).astype(np.float64)  # fmt: skip
        opp_best = np.maximum(np.where(sc[:, 3] > 0, sc[:, 1], -99),
                              np.where(sc[:, 1] > 0, sc[:, 3], -99))  # fmt: skip
        danger = (opp_best >= target - 10) & (np.maximum(sc[:, 0], sc[:, 2]) < target - 15)
        dealer = num_prev == 3
        required = view.required_total.astype(np.float64)
        prev_weight = self.weights[view.bids.astype(np.int64)].sum(1)
        shared = np.concatenate([
            obs.astype(np.float32),
            hf / 3.0, e[:, None] / 5, e_adj[:, None] / 5, suit / 6,
            sc / 41, (target[:, None] - sc) / 41, target[:, None] / 41,
            (sc >= self.thirty).astype(np.float64), (sc > 0).astype(np.float64),
            danger[:, None].astype(np.float64), dealer[:, None].astype(np.float64),
            num_prev[:, None] / 3, required[:, None] / 13, (required - others)[:, None] / 13,
            bids / 13, min_bid / 13, others[:, None] / 13,
        ], 1).astype(np.float32)  # fmt: skip

        b = np.arange(1, 14, dtype=np.float64)[None, :]
        val = self.values[(sc[:, 0] >= self.thirty).astype(np.int64)][:, 1:14]  # (n, 13)
        partner_ok = sc[:, 2:3] > 0 if self.partner_positive else np.ones((n, 1), bool)
        finish = ((sc[:, :1] + val >= target[:, None]) & partner_ok).astype(np.float64)
        p = 0.5 * (
            1 + torch.erf(torch.from_numpy((e_adj[:, None] - b + 0.5) / np.sqrt(2.0))).numpy()
        )
        u = val * (p - (1 - p)) + 20 * p * finish
        if self.five_to_run:
            reached = (bids.max(1)[:, None] >= 5) | (b >= 5)
        else:
            reached = prev_weight[:, None] + self.weights[1:14][None, :] >= required[:, None]
        played = np.where(dealer[:, None], reached, True).astype(np.float64)
        per = np.zeros((n, NUM_BIDS, self.per_bid), np.float32)
        per[:, :, :NUM_BIDS] = np.eye(NUM_BIDS, dtype=np.float32)[None]
        per[:, :13, 14] = b / 13
        per[:, :13, POINTS] = val / 40
        per[:, :13, 16] = finish
        per[:, :13, 17] = (sc[:, :1] + val - target[:, None]) / 41
        per[:, :13, 18] = (sc[:, :1] - val - target[:, None]) / 41
        per[:, :13, 19] = p
        per[:, :13, 20] = u / 20
        per[:, :13, PLAYED] = played
        per[:, :13, 22] = (e_adj[:, None] - b) / 3
        per[:, :, 23] = view.legal_mask[:, NUM_CARDS:]
        has = own >= 0
        per[np.flatnonzero(has), own[has], OWN_BID] = 1.0
        per[:, :13, 25] = finish * p
        if self.version >= 2:
            per[:, :13, MATCH_WIN : MATCH_WIN + 4] = self._match_win(view, val, p)
        if self.version >= 3:
            for lo in range(0, n, 4096):  # in parts: 8 outcomes of the others a bid and table
                rows = np.arange(lo, min(n, lo + 4096))
                part = view.select(rows)
                joint = self._match_win_joint(part, val[rows], p[rows])
                per[rows, :13, MATCH_WIN_JOINT : MATCH_WIN_JOINT + 3] = joint
        return shared, per

    def _now(self, view: SeatView) -> tuple[np.ndarray, ...]:
        """The bidder's seat, the scores, the target, the dealer (int64) and the match-win
        estimate of the bidder's team now."""
        seat = view.seat.astype(np.int64)
        scores = view.scores_before.astype(np.int64)
        target = view.target.astype(np.int64)
        dealer = view.dealer.astype(np.int64)
        now = team_values(self.matchwin, scores, target, dealer)[np.arange(view.size), seat]
        return seat, scores, target, dealer, now

    def _after(self, after: np.ndarray, target: np.ndarray, dealer: np.ndarray,
               seat: np.ndarray) -> np.ndarray:  # fmt: skip
        """The match-win estimate of `seat`'s team once the hand dealt by `dealer` leaves the
        scores `after` (the match over where the rules say), the next hand dealt by the next
        seat."""
        winner, next_target = self.engine.end_of_game(after, target)
        v = team_values(self.matchwin, after, next_target, dealer + 1, winner)
        return v[np.arange(len(seat)), seat]

    def _match_win(self, view: SeatView, val: np.ndarray, p: np.ndarray) -> np.ndarray:
        """(n, 13, 4): for bids 1..13 (points val (n, 13), heuristic-v1's chance p of making
        them), the match-win estimate of the bidder's team if the bidder makes the bid and if
        it misses it (the other seats' scores unchanged, the match over at 41 as the rules
        say), their mix by p, each minus the estimate now (x 5: 20 percentage points read
        1), and the estimate now."""
        n = view.size
        seat, scores, target, dealer, now = self._now(view)
        rows = np.repeat(np.arange(n), 13)
        out = np.empty((n, 13, 4))
        for j, sign in enumerate((1, -1)):
            after = scores[rows].copy()
            after[np.arange(n * 13), seat[rows]] += sign * val.reshape(-1).astype(np.int64)
            v = self._after(after, target[rows], dealer[rows], seat[rows])
            out[:, :, j] = v.reshape(n, 13) - now[:, None]
        out[:, :, 2] = p * out[:, :, 0] + (1 - p) * out[:, :, 1]
        out[:, :, :3] *= 5
        out[:, :, 3] = now[:, None]
        return out

    def _match_win_joint(self, view: SeatView, val: np.ndarray, p: np.ndarray) -> np.ndarray:
        """(n, 13, 3): as the first three of _match_win, but each other seat's bid (the one it
        made before the bidder's, or its minimum bid if it bids after) is made with chance
        OTHERS_MADE and missed otherwise, scored as the rules score it: where the match ends
        also depends on the others' outcomes (a partner at 38 who bid 3, an opponent at 40)."""
        n = view.size
        seat, scores, target, dealer, now = self._now(view)
        other = np.arange(4)[None, :] != seat[:, None]  # (n, 4)
        bid = view.bids.astype(np.int64)  # by seat, 0: not bid yet (then: its minimum)
        bid = np.where(other, np.where(bid > 0, bid, view.min_bid.astype(np.int64)), 0)
        row = (scores >= self.thirty).astype(np.int64)
        theirs = self.values[row, bid].astype(np.int64)  # (n, 4), the bidder's 0
        # the 8 outcomes of the other seats a table (made bits by seat, the bidder's 0), and
        # their chance
        combos = (np.arange(16)[:, None] >> np.arange(4)[None, :]) & 1  # (16, 4)
        pos, combo = np.nonzero(combos[:, seat].T == 0)  # (8n,), table by table
        made = combos[combo] == 1
        chance = np.where(other[pos], np.where(made, OTHERS_MADE, 1 - OTHERS_MADE), 1.0).prod(1)
        delta = np.where(made, theirs[pos], -theirs[pos])
        rows = np.repeat(pos, 13)
        mine = np.tile(np.arange(13), pos.size)
        out = np.zeros((n, 13, 3))
        for j, sign in enumerate((1, -1)):
            after = np.repeat(scores[pos] + delta, 13, axis=0)  # (8n * 13, 4)
            after[np.arange(rows.size), seat[rows]] += sign * val[rows, mine].astype(np.int64)
            v = self._after(after, target[rows], dealer[rows], seat[rows]) - now[rows]
            out[:, :, j] = (np.repeat(chance, 13) * v).reshape(n, 8, 13).sum(1)
        out[:, :, 2] = p * out[:, :, 0] + (1 - p) * out[:, :, 1]
        return out * 5


def _shared_gather(obs_src: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
    """The gather of the shared entries in the game with the plain suits renamed by `perm`
    (``perm[old suit] = new suit``): the observation's part by the observation's gather
    `obs_src`, the suit lengths by suit. The other entries are the same in every renaming
    (heuristic-v1's features count over the plain suits; scores and bids name no suit), and
    so are the per-bid entries."""
    src = np.arange(SHARED_SIZE, dtype=np.int64)
    src[:OBS_SIZE] = obs_src
    src[SUIT_LENGTHS + np.asarray(perm, np.int64)] = SUIT_LENGTHS + np.arange(4)
    return src


SHARED_GATHERS: tuple[np.ndarray, ...] = tuple(
    _shared_gather(o, p) for o, p in zip(OBS_GATHERS, SUIT_PERMUTATIONS, strict=True)
)
"""Each renaming's gather of the shared entries (fourhundred_env.symmetry's order)."""


def renamed_bid_inputs(shared: np.ndarray, per: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A BidNet's inputs at K tables -> the same at 6K, each table in the six renamings of
    the plain suits (fourhundred_env.symmetry.stack_renamed's order)."""
    return stack_renamed(shared, SHARED_GATHERS), repeat_for_renamings(per)


@dataclass(frozen=True)
class BidNetConfig:
    """Shape of a BidNet (written into its checkpoint's ``net``)."""

    obs_size: int = OBS_SIZE
    """Length of the observation vector the features start with."""
    bid_features: int = FEATURES_VERSION
    """Layout version of the features (BidFeatures)."""
    hidden: int = 256
    """Width of the trunk's first layer (the second is half of it)."""
    head: int = 128
    """Width of the per-bid head's first layer (the second is half of it)."""
    head_version: int = 1
    """1: the head gives each bid's value. 2 (the outcome head; features version 2): it gives
    each bid a chance of being made and a correction, and the bid's value is that chance's mix
    of the match-win change if made and if missed (the features' entries) and of the points,
    plus the correction, minus the same for heuristic-v1's bid."""
    extra_inputs: int = 0
    """Inputs the trunk reads after the shared entries: the columns of its owner's feature
    function (agents/neural/extra_features.py); 0: none (the field is then not stored)."""

    def to_dict(self) -> dict[str, int]:
        """The fields by name, as the checkpoint stores them (extra_inputs only if any)."""
        return without_zero_extra(asdict(self))

    def num_parameters(self) -> int:
        """The number of weights a BidNet of this shape has (worked out, not built; the
        features version must be one of PER_BID_SIZES)."""
        h, k = self.hidden, self.head
        trunk = (SHARED_SIZE + self.extra_inputs + 1) * h + (h + 1) * (h // 2)
        head = (h // 2 + PER_BID_SIZES[self.bid_features] + 1) * k + (k + 1) * (k // 2)
        out = (k // 2 + 1) * self.head_version + (2 if self.head_version == 2 else 0)
        return trunk + head + out

    def size_problem(self) -> str | None:
        """What makes this shape too big to build (the field, its value and the bound
        MAX_HIDDEN, or the number of weights above MAX_PARAMETERS; agents/neural/network.py),
        or None: checked before anything is allocated."""
        return size_problem(
            {"hidden": (self.hidden, MAX_HIDDEN, "MAX_HIDDEN"),
             "head": (self.head, MAX_HIDDEN, "MAX_HIDDEN"),
             **extra_bound(self.extra_inputs)},
            self,
        )  # fmt: skip


class BidNet(nn.Module):
    """(shared (N, SHARED_SIZE), per-bid (N, 14, PER_BID_SIZES[version]), with extra_inputs
    extra (N, extra_inputs)) -> (logits (N, 66): the bids' values, cards 0; value (N,) 0)."""

    def __init__(self, config: BidNetConfig | None = None) -> None:
        super().__init__()
        self.config = c = config or BidNetConfig()
        if c.head_version not in HEAD_VERSIONS or (c.head_version == 2 and c.bid_features < 2):
            raise ValueError(
                f"head version {c.head_version} with bid features version {c.bid_features}: "
                "expected 1, or 2 with features version 2 or later"
            )
        problem = c.size_problem()
        if problem is not None:  # before any weight is allocated
            raise ValueError(f"network too big: {problem}")
        self.trunk = nn.Sequential(
            nn.Linear(SHARED_SIZE + c.extra_inputs, c.hidden), nn.ReLU(),
            nn.Linear(c.hidden, c.hidden // 2), nn.ReLU(),
        )  # fmt: skip
        self.bid_head = nn.Sequential(
            nn.Linear(c.hidden // 2 + PER_BID_SIZES[c.bid_features], c.head), nn.ReLU(),
            nn.Linear(c.head, c.head // 2), nn.ReLU(),
            nn.Linear(c.head // 2, c.head_version),
        )  # fmt: skip
        if c.head_version == 2:  # the weights of the match-win change and of the points
            self.match_weight = nn.Parameter(torch.tensor(1.0))
            self.point_weight = nn.Parameter(torch.tensor(0.0))
        self._features: BidFeatures | None = None
        # its owner's feature function (extra_features.FeatureHook) when it reads extra
        # inputs: set by whoever trains or loads it, never stored in a checkpoint
        self.extra_features = None

    def forward(
        self, shared: torch.Tensor, per: torch.Tensor, extra: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (N, 66) with the bids' values (cards 0), and a zero value (N,); with
        extra_inputs, `extra` (N, extra_inputs) is read after the shared entries."""
        if extra is not None:
            shared = torch.cat([shared, extra.to(shared.dtype)], -1)
        h = self.trunk(shared)
        # the head's first layer reads (trunk output, bid's entries): its trunk part is worked
        # out once per position, not once per bid (the same sum, a third of the fit's time)
        first, width = self.bid_head[0], h.shape[1]
        own = nn.functional.linear(h, first.weight[:, :width], first.bias)
        z = own[:, None, :] + nn.functional.linear(per, first.weight[:, width:])
        out = self.bid_head[1:](z)
        q = out[..., 0] if self.config.head_version == 1 else self._outcome_values(out, per)
        cards = q.new_zeros((q.shape[0], NUM_CARDS))
        return torch.cat([cards, q], 1), q.new_zeros(q.shape[0])

    def _outcome_values(self, out: torch.Tensor, per: torch.Tensor) -> torch.Tensor:
        """The outcome head's bid values (N, 14), in the targets' units (percentage points of
        match-win change, relative to heuristic-v1's bid): for a bid made with chance s, the
        match-win change s * (if made) + (1 - s) * (if missed) and the points it scores,
        (2s - 1) x its points, when the hand is played; plus the correction."""
        s = torch.sigmoid(out[..., 0])
        i = MATCH_WIN_JOINT if self.config.bid_features >= 3 else MATCH_WIN
        made, missed = 20 * per[..., i], 20 * per[..., i + 1]  # the entries: x 5 of a fraction
        points = 40 * per[..., POINTS]
        v = (
            per[..., PLAYED]
            * (
                self.match_weight * (missed + s * (made - missed))
                + self.point_weight * points * (2 * s - 1)
            )
            + out[..., 1]
        )
        return v - (v * per[..., OWN_BID]).sum(1, keepdim=True)

    @staticmethod
    def renamed_inputs(inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """Its inputs at K tables (view_inputs) -> the same at 6K tables, each table in the six
        renamings of the plain suits (stack_renamed's order)."""
        return renamed_bid_inputs(*inputs)

    def view_inputs(self, view: SeatView, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
        """The network's inputs at a view's tables (BidFeatures, kept for the rules)."""
        if self._features is None or self._features.rules != rules:
            self._features = BidFeatures(rules, self.config.bid_features)
        return self._features(view)
