"""A plain, independent reference implementation of 400, written from shared/RULES.md alone.

This module is the oracle the fast batched engine is compared against. It uses only lists and
ints, no numpy and no bitmasks, and recomputes every rule from the flags of a `Rules` object
(it reads the fields only and never calls the functions of `fourhundred_env.rules`).

Encodings (RULES.md): card id ``c = 13 * suit + rank``, suits 0 clubs, 1 diamonds, 2 spades,
3 hearts (always trump); rank 0 is the 2 and rank 12 the ace. Actions: 0-51 play card ``c``;
52-64 bid 1..13 (``51 + bid``); 65 asks for a no-picture redeal. Seats 0..3 in play order,
``next(i) = (i + 1) % 4``; team 0 is seats {0, 2}, team 1 seats {1, 3}.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fourhundred_env.rules import Rules

CLUBS, DIAMONDS, SPADES, HEARTS = 0, 1, 2, 3
TRUMP = HEARTS
BID_OFFSET = 51
REDEAL = 65
FACE_RANKS = (9, 10, 11, 12)  # J, Q, K, A
SUIT_LETTERS = "CDSH"
RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")

# The value table of RULES.md, "wiki" profile: bid -> value. 10 to 13 are all worth 40.
WIKI_VALUES = {
    1: 1,
    2: 2,
    3: 3,
    4: 4,
    5: 10,
    6: 12,
    7: 14,
    8: 16,
    9: 27,
    10: 40,
    11: 40,
    12: 40,
    13: 40,
}


# -- cards and seats ---------------------------------------------------------------------------
def suit_of(card: int) -> int:
    """Suit of a card id (0 clubs, 1 diamonds, 2 spades, 3 hearts)."""
    return card // 13


def rank_of(card: int) -> int:
    """Rank of a card id (0 is the 2, 12 the ace)."""
    return card % 13


def card(text: str) -> int:
    """Card id of ``"AH"``, ``"10S"``, ``"TS"`` or ``"2C"``."""
    t = text.strip().upper()
    rank_text, suit_text = t[:-1], t[-1]
    if rank_text == "T":
        rank_text = "10"
    if suit_text not in SUIT_LETTERS or rank_text not in RANK_TEXT:
        raise ValueError(f"not a card: {text!r}")
    return 13 * SUIT_LETTERS.index(suit_text) + RANK_TEXT.index(rank_text)


def cards(text: str) -> list[int]:
    """Card ids of space-separated card texts, in the order written."""
    return [card(t) for t in text.split()]


def card_text(c: int) -> str:
    """``"AH"``, ``"10S"``, ``"2C"``."""
    return RANK_TEXT[rank_of(c)] + SUIT_LETTERS[suit_of(c)]


def next_seat(seat: int) -> int:
    """The player on `seat`'s right, who plays after them."""
    return (seat + 1) % 4


def team_of(seat: int) -> int:
    """Team of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3."""
    return seat % 2


def has_face(hand: Sequence[int]) -> bool:
    """True if the hand holds an A, K, Q or J."""
    return any(rank_of(c) in FACE_RANKS for c in hand)


def random_hands(rng: random.Random) -> list[list[int]]:
    """A uniformly random deal: four sorted hands of 13 cards, by seat."""
    deck = list(range(52))
    rng.shuffle(deck)
    return [sorted(deck[13 * s : 13 * s + 13]) for s in range(4)]


# -- play ---------------------------------------------------------------------------------------
def trick_winner(trick: Sequence[int]) -> int:
    """Index (in play order, 0 = the card led) of the card winning a trick (or a trick so far).

    The highest heart wins; with no heart in the trick, the highest card of the suit led.
    """
    if not 1 <= len(trick) <= 4:
        raise ValueError(f"a trick has 1 to 4 cards, got {list(trick)}")
    hearts = [i for i, c in enumerate(trick) if suit_of(c) == HEARTS]
    if hearts:
        candidates = hearts
    else:
        led = suit_of(trick[0])
        candidates = [i for i, c in enumerate(trick) if suit_of(c) == led]
    best = candidates[0]
    for i in candidates:
        if rank_of(trick[i]) > rank_of(trick[best]):
            best = i
    return best


def legal_cards(hand: Sequence[int], trick_so_far: Sequence[int]) -> list[int]:
    """Cards of `hand` that may be played to the trick so far, sorted.

    Any card may be led; after that a player must follow the suit led if they can, otherwise
    they may play any card (no duty to ruff).
    """
    if not trick_so_far:
        return sorted(hand)
    led = suit_of(trick_so_far[0])
    following = [c for c in hand if suit_of(c) == led]
    if following:
        return sorted(following)
    return sorted(hand)


# -- bidding and scoring ------------------------------------------------------------------------
def bid_value(bid: int, score_before: int, rules: Rules) -> int:
    """Points a bid wins when made and loses when missed, from the bidder's pre-hand score."""
    if not 1 <= bid <= 13:
        raise ValueError(f"bid {bid} is out of range 1..13")
    if rules.score_table == "wiki":
        value = WIKI_VALUES[bid]
    elif rules.score_table == "pagat":
        value = bid if bid <= 6 else 2 * bid
    else:
        raise ValueError(f"unknown score table {rules.score_table!r}")
    # Thirty rule: from this pre-hand score on, 5 and 6 are worth their face value.
    thirty = rules.five_six_face_value_from
    if thirty is not None and score_before >= thirty and bid in (5, 6):
        value = bid
    return value


def min_bid(score: int, rules: Rules) -> int:
    """Lowest bid allowed to a player whose own score before the hand is `score`."""
    if not rules.min_bid_escalates:
        return rules.min_bid_base
    return min(13, max(rules.min_bid_base, score // 10))


def required_total(scores: Sequence[int], rules: Rules) -> int:
    """Total the four bids must reach, from the four pre-hand scores."""
    if not rules.escalate_total:
        return rules.min_total_bids
    top = max(scores)
    return rules.min_total_bids + max(0, top // 10 - 2)


def counted_total(bids: Sequence[int], rules: Rules) -> int:
    """The four bids added up: as they are in tricks; bids of 7+ count double in points."""
    total = 0
    for b in bids:
        if rules.total_counted_in == "points" and b >= 7:
            total += 2 * b
        else:
            total += b
    return total


def hand_played(bids: Sequence[int], scores_before: Sequence[int], rules: Rules) -> bool:
    """True if the hand is played after these four bids, False if it is thrown in."""
    if rules.five_to_run:
        return any(b >= 5 for b in bids)
    return counted_total(bids, rules) >= required_total(scores_before, rules)


def hand_deltas(
    bids: Sequence[int],
    tricks: Sequence[int],
    scores_before: Sequence[int],
    rules: Rules,
    forfeited: Sequence[bool] = (False, False, False, False),
) -> list[int]:
    """Score change of each seat after a played hand: +value if made, -value if missed.

    A forfeited seat's contract counts as missed whatever tricks it took.
    """
    deltas = []
    for seat in range(4):
        value = bid_value(bids[seat], scores_before[seat], rules)
        made = tricks[seat] >= bids[seat] and not forfeited[seat]
        deltas.append(value if made else -value)
    return deltas


# -- end of the game ----------------------------------------------------------------------------
def team_qualifies(scores: Sequence[int], team: int, target: int, rules: Rules) -> bool:
    """One player of `team` has at least `target` and (if required) the partner is above zero."""
    a, b = scores[team], scores[team + 2]
    if rules.partner_must_be_positive:
        return (a >= target and b > 0) or (b >= target and a > 0)
    return a >= target or b >= target


def _one_team(qualified: list[bool]) -> int | None:
    """The team that qualifies if exactly one does, else None."""
    if qualified[0] and not qualified[1]:
        return 0
    if qualified[1] and not qualified[0]:
        return 1
    return None


def end_of_game(
    scores_after: Sequence[int], target_before: int, rules: Rules
) -> tuple[int | None, int]:
    """Decide the game after a played hand: ``(winning team or None, target for the next hand)``.

    `target_before` is the target in force for this hand (``rules.target``, or higher after
    earlier simultaneous finishes). On a win the target is returned unchanged.
    """
    base = rules.target
    at_target = [team_qualifies(scores_after, t, target_before, rules) for t in (0, 1)]
    team = _one_team(at_target)
    if team is not None:
        return team, target_before
    if at_target[0] and at_target[1]:
        mode = rules.simultaneous_finish
        if mode == "extend":
            return None, target_before + rules.target_step
        if mode == "highest_player":
            # A team's individual score is its higher player's score.
            a = max(scores_after[0], scores_after[2])
            b = max(scores_after[1], scores_after[3])
        elif mode == "highest_team_total":
            a = scores_after[0] + scores_after[2]
            b = scores_after[1] + scores_after[3]
        else:
            raise ValueError(f"unknown simultaneous_finish {mode!r}")
        if a > b:
            return 0, target_before
        if b > a:
            return 1, target_before
        return None, target_before  # a tie plays another hand
    # Neither team qualifies at the target in force.
    if target_before <= base:
        return None, target_before
    # The target was raised: look again at the base target.
    at_base = [team_qualifies(scores_after, t, base, rules) for t in (0, 1)]
    team = _one_team(at_base)
    if team is not None:
        return team, target_before  # the other team fell below
    if at_base[0] and at_base[1]:
        return None, target_before  # both still qualify at the base target: play on
    return None, base  # neither does: the target returns to the base


# -- a whole match ------------------------------------------------------------------------------
class OracleMatch:
    """A match of 400 played one action at a time, exactly as RULES.md describes.

    Phases: "hand_over" (also at the start: waiting for `deal`), "bid", "play", "match_over".
    `hand_count` counts finished hands, played or thrown in.
    """

    def __init__(
        self,
        rules: Rules,
        dealer: int,
        scores: Sequence[int] = (0, 0, 0, 0),
        target: int | None = None,
    ) -> None:
        if dealer not in (0, 1, 2, 3):
            raise ValueError(f"dealer must be a seat 0..3, got {dealer}")
        if len(scores) != 4:
            raise ValueError(f"need 4 scores, got {list(scores)}")
        self.rules = rules
        self.dealer = dealer
        self.scores = [int(s) for s in scores]
        self.target = rules.target if target is None else target
        self.phase = "hand_over"
        self.winner: int | None = None
        self.thrown_in = False
        self.hand_count = 0
        self.to_play = next_seat(dealer)
        self.hands: list[list[int]] = [[], [], [], []]
        self.bids = [0, 0, 0, 0]
        self.tricks_won = [0, 0, 0, 0]
        self.forfeited = [False, False, False, False]
        self.scores_before = list(self.scores)
        self.trick: list[int] = []
        self.trick_leader = self.to_play
        self.tricks_played = 0
        self.last_trick: list[int] = []
        self.last_trick_winner: int | None = None
        self.last_deltas = [0, 0, 0, 0]

    # -- dealing --
    def deal(self, hands: Sequence[Sequence[int]]) -> None:
        """Start a hand with these four hands (13 card ids each, by seat)."""
        if self.phase != "hand_over":
            raise ValueError(f"cannot deal in phase {self.phase!r}")
        if len(hands) != 4 or any(len(h) != 13 for h in hands):
            raise ValueError("a deal is 4 hands of 13 cards")
        everything = sorted(c for h in hands for c in h)
        if everything != list(range(52)):
            raise ValueError("a deal must hold each of the 52 cards exactly once")
        self.hands = [sorted(h) for h in hands]
        self.bids = [0, 0, 0, 0]
        self.tricks_won = [0, 0, 0, 0]
        self.forfeited = [False, False, False, False]
        self.scores_before = list(self.scores)
        self.trick = []
        self.tricks_played = 0
        self.last_trick = []
        self.last_trick_winner = None
        self.last_deltas = [0, 0, 0, 0]
        self.phase = "bid"
        self.to_play = next_seat(self.dealer)  # the player on the dealer's right bids first
        self.trick_leader = self.to_play

    # -- actions --
    def legal(self) -> list[int]:
        """Sorted legal action ids for the player to act (empty between hands)."""
        seat = self.to_play
        if self.phase == "bid":
            lowest = min_bid(self.scores[seat], self.rules)
            actions = [BID_OFFSET + b for b in range(lowest, 14)]
            if self.rules.no_face_redeal and not has_face(self.hands[seat]):
                actions.append(REDEAL)
            return actions
        if self.phase == "play":
            return legal_cards(self.hands[seat], self.trick)
        return []

    def forfeit(self, seat: int) -> None:
        """Mark `seat`'s contract for this hand as missed, whatever tricks it takes."""
        if self.phase not in ("bid", "play"):
            raise ValueError(f"no hand in progress (phase {self.phase!r})")
        self.forfeited[seat] = True

    def act(self, action: int) -> None:
        """Apply the action of the player to act; ValueError if it is not legal."""
        if action not in self.legal():
            raise ValueError(
                f"action {action} is not legal for seat {self.to_play} in phase {self.phase!r}"
            )
        if self.phase == "bid":
            self._bid(action)
        else:
            self._play(action)

    def _bid(self, action: int) -> None:
        if action == REDEAL:
            self._finish_hand(thrown_in=True)
            return
        self.bids[self.to_play] = action - BID_OFFSET
        if self.to_play != self.dealer:
            self.to_play = next_seat(self.to_play)
            return
        # The dealer bid last: play the hand or throw it in.
        if hand_played(self.bids, self.scores_before, self.rules):
            self.phase = "play"
            self.to_play = next_seat(self.dealer)  # the dealer's right leads to trick 1
            self.trick_leader = self.to_play
        else:
            self._finish_hand(thrown_in=True)

    def _play(self, c: int) -> None:
        seat = self.to_play
        self.hands[seat].remove(c)
        if not self.trick:
            self.trick_leader = seat
        self.trick.append(c)
        if len(self.trick) < 4:
            self.to_play = next_seat(seat)
            return
        winner = (self.trick_leader + trick_winner(self.trick)) % 4
        self.tricks_won[winner] += 1
        self.tricks_played += 1
        self.last_trick = self.trick
        self.last_trick_winner = winner
        self.trick = []
        self.to_play = winner
        self.trick_leader = winner
        if self.tricks_played == 13:
            self._finish_hand(thrown_in=False)

    def _finish_hand(self, thrown_in: bool) -> None:
        self.thrown_in = thrown_in
        if not thrown_in:
            deltas = hand_deltas(
                self.bids, self.tricks_won, self.scores_before, self.rules, self.forfeited
            )
            self.last_deltas = deltas
            self.scores = [s + d for s, d in zip(self.scores_before, deltas, strict=True)]
            self.winner, self.target = end_of_game(self.scores, self.target, self.rules)
        self.hand_count += 1
        self.dealer = next_seat(self.dealer)
        self.to_play = next_seat(self.dealer)
        self.phase = "match_over" if self.winner is not None else "hand_over"
