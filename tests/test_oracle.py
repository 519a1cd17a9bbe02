"""Tests of the reference oracle (tests/oracle.py) against the tables and examples of RULES.md."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fourhundred_env.rules import Rules
from tests import oracle
from tests.oracle import BID_OFFSET, REDEAL, OracleMatch, card, cards
from tests.rules_tables import (
    DELTA_ROWS,
    END_ROWS,
    LEGAL_ROWS,
    MIN_BID_ROWS,
    PAGAT,
    PLAYED_ROWS,
    TEAM_ROWS,
    TOTAL_ROWS,
    TRICK_ROWS,
    VALUE_ROWS,
    DeltaRow,
    EndRow,
    LegalRow,
    MinBidRow,
    PlayedRow,
    TeamRow,
    TotalRow,
    TrickRow,
    ValueRow,
    row_id,
)

WIKI_RULES = Rules()


# -- tables -------------------------------------------------------------------------------------
@pytest.mark.parametrize("row", VALUE_ROWS, ids=row_id)
def test_bid_value(row: ValueRow) -> None:
    assert oracle.bid_value(row.bid, row.score_before, Rules(**row.flags)) == row.value, row.quote


@pytest.mark.parametrize("bid", [0, 14, -1])
def test_bid_value_out_of_range(bid: int) -> None:
    with pytest.raises(ValueError):
        oracle.bid_value(bid, 0, WIKI_RULES)


@pytest.mark.parametrize("row", MIN_BID_ROWS, ids=row_id)
def test_min_bid(row: MinBidRow) -> None:
    assert oracle.min_bid(row.score, Rules(**row.flags)) == row.expected, row.quote


@pytest.mark.parametrize("row", TOTAL_ROWS, ids=row_id)
def test_required_total(row: TotalRow) -> None:
    assert oracle.required_total(row.scores, Rules(**row.flags)) == row.expected, row.quote


@pytest.mark.parametrize("row", PLAYED_ROWS, ids=row_id)
def test_hand_played(row: PlayedRow) -> None:
    rules = Rules(**row.flags)
    assert oracle.counted_total(row.bids, rules) == row.total, row.quote
    assert oracle.hand_played(row.bids, row.scores, rules) is row.played, row.quote


@pytest.mark.parametrize("row", DELTA_ROWS, ids=row_id)
def test_hand_deltas(row: DeltaRow) -> None:
    rules = Rules(**row.flags)
    # The example's seat in each of the four positions, the other seats bidding 2 from 0.
    for seat in range(4):
        bids, tricks, before = [2, 2, 2, 2], [0, 0, 0, 0], [0, 0, 0, 0]
        bids[seat], tricks[seat], before[seat] = row.bid, row.tricks, row.score_before
        deltas = oracle.hand_deltas(bids, tricks, before, rules)
        assert deltas[seat] == row.delta, row.quote
        assert before[seat] + deltas[seat] == row.after, row.quote
        assert [d for s, d in enumerate(deltas) if s != seat] == [-2, -2, -2], row.quote


@pytest.mark.parametrize("row", DELTA_ROWS, ids=row_id)
def test_forfeited_contract_is_missed(row: DeltaRow) -> None:
    """A bot that forfeits 'has its contract scored as missed for that hand'."""
    rules = Rules(**row.flags)
    bids, tricks = [row.bid] * 4, [row.tricks] * 4
    deltas = oracle.hand_deltas(
        bids, tricks, [row.score_before] * 4, rules, (False, True, False, True)
    )
    value = abs(row.delta)
    assert deltas == [row.delta, -value, row.delta, -value]


@pytest.mark.parametrize("row", TEAM_ROWS, ids=row_id)
def test_team_qualifies(row: TeamRow) -> None:
    rules = Rules(**row.flags)
    assert oracle.team_qualifies(row.scores, row.team, row.target, rules) is row.expected, row.quote


@pytest.mark.parametrize("row", END_ROWS, ids=row_id)
def test_end_of_game(row: EndRow) -> None:
    winner, next_target = oracle.end_of_game(row.scores, row.target_before, Rules(**row.flags))
    assert winner == row.winner, row.quote
    if winner is None:
        assert next_target == row.next_target, row.quote


@pytest.mark.parametrize("row", TRICK_ROWS, ids=row_id)
def test_trick_winner(row: TrickRow) -> None:
    assert oracle.trick_winner(cards(row.trick)) == row.winner, row.quote


@pytest.mark.parametrize("row", LEGAL_ROWS, ids=row_id)
def test_legal_cards(row: LegalRow) -> None:
    legal = oracle.legal_cards(cards(row.hand), cards(row.trick))
    assert legal == sorted(cards(row.legal)), row.quote


def test_card_encoding() -> None:
    """'Card id c = 13 * suit + rank, suits 0 clubs, 1 diamonds, 2 spades, 3 hearts'."""
    assert card("2C") == 0
    assert card("AC") == 12
    assert card("2D") == 13
    assert card("10S") == card("TS") == 2 * 13 + 8
    assert card("AH") == 51
    assert [oracle.card_text(c) for c in cards("2C 10S AH")] == ["2C", "10S", "AH"]


distinct_tricks = st.lists(st.integers(0, 51), min_size=4, max_size=4, unique=True)


@given(distinct_tricks, st.permutations([1, 2, 3]))
def test_trick_winner_ignores_order_after_the_lead(trick: list[int], order: list[int]) -> None:
    """Who wins depends on the card led and the set of the other cards, not their order."""
    shuffled = [trick[0]] + [trick[i] for i in order]
    assert shuffled[oracle.trick_winner(shuffled)] == trick[oracle.trick_winner(trick)]


@given(distinct_tricks)
def test_trick_winner_beats_every_other_card(trick: list[int]) -> None:
    """The winning card is a heart if any was played, and outranks every card of its suit."""
    best = trick[oracle.trick_winner(trick)]
    suits = [oracle.suit_of(c) for c in trick]
    assert oracle.suit_of(best) == (oracle.HEARTS if oracle.HEARTS in suits else suits[0])
    for c in trick:
        if oracle.suit_of(c) == oracle.suit_of(best):
            assert oracle.rank_of(c) <= oracle.rank_of(best)


# -- a whole hand, dealt explicitly -------------------------------------------------------------
# Seat 0: seven low hearts and the six top spades; seat 1: the six top hearts and seven top
# clubs; seat 2: all the diamonds; seat 3: seven low spades and six low clubs (no picture).
DEAL = [
    cards("2H 3H 4H 5H 6H 7H 8H AS KS QS JS 10S 9S"),
    cards("9H 10H JH QH KH AH AC KC QC JC 10C 9C 8C"),
    cards("2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD"),
    cards("2S 3S 4S 5S 6S 7S 8S 2C 3C 4C 5C 6C 7C"),
]
# (leader, cards in play order, winner), worked out by hand from "follow suit; the highest
# heart wins, else the highest card of the suit led; the winner leads the next trick".
SCRIPT = [
    (0, "AS 8C 2D 2S", 0),  # seat 1 void in spades discards a club; no heart: AS
    (0, "KS 9C 3D 3S", 0),
    (0, "QS 9H 4D 4S", 1),  # seat 1 ruffs
    (1, "AC 5D 2C 2H", 0),  # seat 3 must follow clubs; seat 0 ruffs with the 2H
    (0, "JS 10H 6D 5S", 1),
    (1, "KC 7D 3C 10S", 1),  # seat 0 void in clubs need not ruff
    (1, "QC 8D 4C 3H", 0),
    (0, "9S JC 9D 6S", 0),
    (0, "4H AH 10D 7S", 1),  # seat 1 must follow hearts
    (1, "10C JD 5C 5H", 0),
    (0, "6H JH QD 8S", 1),
    (1, "KH KD 6C 7H", 1),  # seat 0 must follow hearts under the KH
    (1, "QH AD 7C 8H", 1),
]
SCRIPT_TRICKS = [6, 7, 0, 0]
SCRIPT_BIDS = (6, 7, 2, 2)  # seats 0, 1, 2, 3: dealer 3 bids last


def test_script_is_a_deal() -> None:
    played = sorted(c for _, trick, _ in SCRIPT for c in cards(trick))
    assert played == list(range(52))
    for leader, trick, _ in SCRIPT:
        for i, c in enumerate(cards(trick)):
            assert c in DEAL[(leader + i) % 4]


def play_script(match: OracleMatch) -> None:
    """Play SCRIPT through `match`, checking turn order and every trick's winner."""
    for number, (leader, trick, winner) in enumerate(SCRIPT, start=1):
        assert match.phase == "play"
        assert match.to_play == leader, f"trick {number}"
        for i, c in enumerate(cards(trick)):
            assert match.to_play == (leader + i) % 4
            match.act(c)
        if number < 13:
            assert match.last_trick_winner == winner, f"trick {number}"
            assert match.to_play == winner


def bid_script(match: OracleMatch, bids: Sequence[int] = SCRIPT_BIDS) -> None:
    """Deal DEAL with dealer 3 and bid `bids` for seats 0, 1, 2, 3 in that order."""
    assert match.dealer == 3
    match.deal(DEAL)
    for seat, bid in enumerate(bids):
        assert match.phase == "bid"
        assert match.to_play == seat
        match.act(BID_OFFSET + bid)


@pytest.mark.parametrize(
    ("flags", "before", "after", "winner", "target"),
    [
        # 6 made +12, 7 made +14, the two 2s missed: -2 each.
        ({}, (0, 0, 0, 0), [12, 14, -2, -2], None, 41),
        # Thirty rule for seat 0 (6 is worth 6); seat 1 reaches 50 with partner at 3: team 1.
        ({}, (30, 36, 5, 5), [36, 50, 3, 3], 1, 41),
        # Same, but seat 3 falls to -2: "partner at zero or below does not win".
        ({}, (30, 36, 5, 0), [36, 50, 3, -2], None, 41),
        # Both teams qualify after the same hand: "the target rises to 51".
        ({}, (40, 36, 5, 5), [46, 50, 3, 3], None, 51),
        # pagat: values 6 and 14; bids 6 + 2*7 + 2 + 2 = 24 points >= 11.
        (PAGAT, (0, 0, 0, 0), [6, 14, -2, -2], None, 41),
    ],
)
def test_explicit_hand(
    flags: dict[str, object],
    before: tuple[int, int, int, int],
    after: list[int],
    winner: int | None,
    target: int,
) -> None:
    match = OracleMatch(Rules(**flags), dealer=3, scores=before)
    assert match.phase == "hand_over"
    bid_script(match)
    assert match.phase == "play"
    assert match.to_play == 0  # "The player on the dealer's right leads to the first trick"
    assert match.legal() == sorted(DEAL[0])
    play_script(match)
    assert match.tricks_won == SCRIPT_TRICKS
    assert match.bids == list(SCRIPT_BIDS)
    assert match.scores == after
    assert match.winner == winner
    assert match.target == target
    assert match.thrown_in is False
    assert match.hand_count == 1
    assert match.dealer == 0  # "the deal passes to the right"
    assert match.phase == ("hand_over" if winner is None else "match_over")
    assert match.legal() == []


def test_explicit_hand_legal_sets() -> None:
    """Follow suit if you can (and only then may you not), checked at chosen moments."""
    match = OracleMatch(WIKI_RULES, dealer=3)
    match.deal(DEAL)
    # Bidding: seat 3 alone holds no A, K, Q or J, so only it may ask for a redeal.
    for seat, bid in enumerate(SCRIPT_BIDS):
        expected = [BID_OFFSET + b for b in range(2, 14)] + ([REDEAL] if seat == 3 else [])
        assert match.legal() == expected
        match.act(BID_OFFSET + bid)
    for _, trick, _ in SCRIPT[:3]:
        for c in cards(trick):
            match.act(c)
    # Trick 4: seat 1 leads AC; seat 2 (void) may play anything; seat 3 must follow clubs.
    match.act(card("AC"))
    assert match.legal() == sorted(cards("5D 6D 7D 8D 9D 10D JD QD KD AD"))
    match.act(card("5D"))
    assert match.legal() == sorted(cards("2C 3C 4C 5C 6C 7C"))
    with pytest.raises(ValueError):
        match.act(card("7S"))
    with pytest.raises(ValueError):
        match.act(card("AD"))  # not in this seat's hand
    with pytest.raises(ValueError):
        match.act(BID_OFFSET + 3)  # not the bidding phase
    match.act(card("2C"))
    assert match.legal() == sorted(cards("2H 3H 4H 5H 6H 7H 8H JS 10S 9S"))  # void: anything
    match.act(card("2H"))
    assert match.last_trick_winner == 0


def test_forfeit_in_match() -> None:
    """A forfeited seat's contract is scored as missed even though it made its tricks."""
    match = OracleMatch(WIKI_RULES, dealer=3)
    bid_script(match)
    match.forfeit(1)
    play_script(match)
    assert match.scores == [12, -14, -2, -2]


# -- bidding flow -------------------------------------------------------------------------------
@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_bidding_order_and_first_lead(dealer: int) -> None:
    """'The player on the dealer's right bids first, the dealer last'; the right leads."""
    match = OracleMatch(WIKI_RULES, dealer=dealer)
    match.deal(DEAL)
    order = []
    for _ in range(4):
        order.append(match.to_play)
        match.act(BID_OFFSET + 3)
    assert order == [(dealer + k) % 4 for k in (1, 2, 3, 4)]
    assert match.phase == "play"
    assert match.to_play == (dealer + 1) % 4
    assert match.bids == [3, 3, 3, 3]


def test_min_bids_in_legal_actions() -> None:
    """Example 4 as legal bids: each bidder's minimum comes from their own pre-hand score."""
    scores = (63, -7, 30, 130)
    match = OracleMatch(WIKI_RULES, dealer=3, scores=scores)
    match.deal(DEAL)
    for seat, lowest in enumerate([6, 2, 3, 13]):
        legal = match.legal()
        bids = [a - BID_OFFSET for a in legal if a != REDEAL]
        assert bids == list(range(lowest, 14)), seat
        with pytest.raises(ValueError):
            match.act(BID_OFFSET + lowest - 1)
        match.act(BID_OFFSET + 13)
    assert match.phase == "play"


def test_pagat_bids_from_one() -> None:
    match = OracleMatch(Rules(**PAGAT), dealer=3, scores=(50, 0, 0, 0))
    match.deal(DEAL)
    assert match.legal()[:1] == [BID_OFFSET + 1]


def test_thrown_in_by_total() -> None:
    """'If the total is below the requirement, the hand is thrown in: no score'. And the end
    of the game is checked only after a played hand, even on qualifying scores."""
    match = OracleMatch(WIKI_RULES, dealer=3, scores=(45, 0, 5, 0))
    bid_script(match, (4, 2, 2, 2))  # 10 < 11 + (45 // 10 - 2) = 13
    assert match.thrown_in is True
    assert match.phase == "hand_over"
    assert match.winner is None
    assert match.scores == [45, 0, 5, 0]
    assert match.dealer == 0
    assert match.hand_count == 1
    assert match.tricks_won == [0, 0, 0, 0]


def test_hand_played_at_exact_total() -> None:
    match = OracleMatch(WIKI_RULES, dealer=3, scores=(45, 0, 5, 0))
    bid_script(match, (4, 2, 2, 5))  # 13 == 13
    assert match.phase == "play"


def test_five_to_run_in_match() -> None:
    match = OracleMatch(Rules(five_to_run=True), dealer=3)
    bid_script(match, (4, 4, 4, 4))
    assert match.thrown_in is True
    match = OracleMatch(Rules(five_to_run=True), dealer=3)
    bid_script(match, (2, 5, 2, 2))
    assert match.phase == "play"


def test_redeal_by_the_dealer() -> None:
    """'The hand is thrown in with no score and the deal passes to the right.'"""
    match = OracleMatch(WIKI_RULES, dealer=3, scores=(45, 0, 5, 0))
    match.deal(DEAL)
    for bid in (6, 7, 2):
        match.act(BID_OFFSET + bid)
    assert REDEAL in match.legal()
    match.act(REDEAL)
    assert match.thrown_in is True
    assert match.phase == "hand_over"
    assert match.scores == [45, 0, 5, 0]
    assert match.winner is None
    assert match.dealer == 0
    assert match.hand_count == 1


def test_redeal_by_the_first_bidder_stops_the_bidding() -> None:
    match = OracleMatch(WIKI_RULES, dealer=2)
    match.deal(DEAL)
    assert match.to_play == 3
    match.act(REDEAL)
    assert match.thrown_in is True
    assert match.phase == "hand_over"
    assert match.bids == [0, 0, 0, 0]
    assert match.dealer == 3
    # The next hand is dealt and played normally.
    bid_script(match)
    assert match.phase == "play"
    play_script(match)
    assert match.thrown_in is False
    assert match.hand_count == 2
    assert match.scores == [12, 14, -2, -2]


def test_redeal_not_allowed() -> None:
    """Only a hand without A, K, Q or J may ask; and only with the flag on."""
    match = OracleMatch(WIKI_RULES, dealer=3)
    match.deal(DEAL)
    assert REDEAL not in match.legal()  # seat 0 holds the AS
    with pytest.raises(ValueError):
        match.act(REDEAL)
    match = OracleMatch(Rules(no_face_redeal=False), dealer=2)
    match.deal(DEAL)
    assert match.to_play == 3
    assert REDEAL not in match.legal()
    with pytest.raises(ValueError):
        match.act(REDEAL)


def test_raised_target_carries_over() -> None:
    """Both teams qualify (target 51); a later hand: the next check uses the raised target."""
    match = OracleMatch(WIKI_RULES, dealer=3, scores=(40, 36, 5, 5))
    bid_script(match)
    play_script(match)
    assert (match.scores, match.target, match.winner) == ([46, 50, 3, 3], 51, None)
    # Dealer is now 0: seat 1 bids first. Throw a hand in: the target stays raised.
    match.deal(DEAL)
    for _ in range(4):
        match.act(match.legal()[0])  # minimum bids: 4 + 5 + 2 + 2 < required 14
    assert match.thrown_in is True
    assert match.target == 51
    assert match.dealer == 1


def test_deal_errors() -> None:
    match = OracleMatch(WIKI_RULES, dealer=0)
    with pytest.raises(ValueError):
        match.deal([DEAL[0], DEAL[1], DEAL[2]])
    with pytest.raises(ValueError):
        match.deal([DEAL[0], DEAL[0], DEAL[2], DEAL[3]])
    with pytest.raises(ValueError):
        match.deal([DEAL[0][:12], DEAL[1], DEAL[2], DEAL[3] + DEAL[0][12:]])
    match.deal(DEAL)
    with pytest.raises(ValueError):
        match.deal(DEAL)  # a hand is in progress
    with pytest.raises(ValueError):
        OracleMatch(WIKI_RULES, dealer=4)


def test_no_deal_after_match_over() -> None:
    match = OracleMatch(WIKI_RULES, dealer=3, scores=(30, 36, 5, 5))
    bid_script(match)
    play_script(match)
    assert match.phase == "match_over"
    with pytest.raises(ValueError):
        match.deal(DEAL)


def test_initial_state() -> None:
    match = OracleMatch(WIKI_RULES, dealer=1, scores=(1, 2, 3, 4), target=51)
    assert match.phase == "hand_over"
    assert match.dealer == 1
    assert match.scores == [1, 2, 3, 4]
    assert match.target == 51
    assert match.winner is None
    assert match.hand_count == 0
    assert OracleMatch(WIKI_RULES, dealer=0).target == 41


# -- random matches: invariants -----------------------------------------------------------------
PROFILES = [
    {},
    PAGAT,
    {"five_to_run": True},
    {"simultaneous_finish": "highest_player"},
    {"no_face_redeal": False, "partner_must_be_positive": False},
]
PROFILE_IDS = ["wiki", "pagat", "five_to_run", "highest_player", "no_redeal-partner_any"]


def _random_action(rng: random.Random, phase: str, legal: list[int]) -> int:
    """Random play; bids near 2-5 (at least the minimum) so that hands are often played."""
    if phase == "play":
        return rng.choice(legal)
    if REDEAL in legal and rng.random() < 0.3:
        return REDEAL
    return max(legal[0], BID_OFFSET + rng.choice([2, 3, 3, 4, 5]))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("flags", PROFILES, ids=PROFILE_IDS)
def test_random_matches(flags: dict[str, object], seed: int) -> None:
    """Random legal play: every invariant of RULES.md that holds whatever is played."""
    rules = Rules(**flags)
    rng = random.Random(seed)
    start = [rng.randint(-5, 45) for _ in range(4)]
    match = OracleMatch(rules, rng.randrange(4), start, rng.choice([41, 41, 51]))
    for _ in range(100):
        if match.phase == "match_over":
            break
        dealer, before, target = match.dealer, list(match.scores), match.target
        hands = oracle.random_hands(rng)
        match.deal(hands)
        played: list[int] = []
        while match.phase in ("bid", "play"):
            legal = match.legal()
            assert legal == sorted(legal) and legal
            action = _random_action(rng, match.phase, legal)
            if match.phase == "play":
                assert action in hands[match.to_play]
                played.append(action)
            match.act(action)
        assert match.dealer == (dealer + 1) % 4
        if match.thrown_in:
            assert match.scores == before
            assert match.target == target
            assert match.winner is None
            continue
        assert sorted(played) == list(range(52))
        assert sum(match.tricks_won) == 13
        assert oracle.hand_played(match.bids, before, rules)
        for seat in range(4):
            value = oracle.bid_value(match.bids[seat], before[seat], rules)
            made = match.tricks_won[seat] >= match.bids[seat]
            assert match.scores[seat] - before[seat] == (value if made else -value)
        winner, _ = oracle.end_of_game(match.scores, target, rules)
        assert match.winner == winner
