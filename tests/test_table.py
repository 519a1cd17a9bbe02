"""The single-table API: golden games with explicit deals, worked examples, and bad input."""

from __future__ import annotations

import pytest

from fourhundred_env import CardError, FourHundredError, IllegalActionError, Rules, Table
from fourhundred_env.cards import card_text, parse_card, parse_hand
from fourhundred_env.engine import deal_sets

SPADES = "AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S"
HEARTS = "AH KH QH JH 10H 9H 8H 7H 6H 5H 4H 3H 2H"
DIAMONDS = "AD KD QD JD 10D 9D 8D 7D 6D 5D 4D 3D 2D"
CLUBS = "AC KC QC JC 10C 9C 8C 7C 6C 5C 4C 3C 2C"


def play_out(t: Table) -> None:
    """Play the rest of the hand with each seat's first legal card."""
    while t.phase == "play":
        t.act(t.legal()[0])


# -- golden match ------------------------------------------------------------------------------
def test_golden_match_with_explicit_deals() -> None:
    """A deal written as text, its outcome worked out by hand.

    Dealer S3, scores 0, 5, 0, 3. S0 holds the spades, S1 every heart, S2 the diamonds, S3
    the clubs. Bids 2, 13, 2, 2 (total 19 >= 11). S1 ruffs the first trick with the 2 of
    hearts and leads hearts to the end: 13 tricks, +40 (45); the others miss: -2 each. S1 has
    45 and partner S3 has 1 > 0: team 1 wins the match.
    """
    t = Table(dealer=3, scores=(0, 5, 0, 3), name="golden")
    # Hand 1: S0 spades, S1 hearts, S2 diamonds, S3 clubs.
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    assert (t.phase, t.to_play, t.required_total()) == ("bid", 0, 11)
    for bid in ("2", "13", "2", "2"):
        t.act(bid)
    assert t.bids == (2, 13, 2, 2)
    assert (t.phase, t.to_play) == ("play", 0)
    t.act("AS")
    assert sorted(t.legal()) == sorted(HEARTS.split())  # S1 cannot follow spades: any card
    t.act("2H")
    t.act("AD")
    t.act("AC")
    assert t.tricks_won == (0, 1, 0, 0) and t.to_play == 1  # the 2 of hearts wins
    play_out(t)
    assert t.phase == "match_over"  # S1 45, partner S3 at 1 > 0: team 1 wins
    assert t.scores == (-2, 45, -2, 1)
    assert t.winner == 1
    record = t.history[-1]
    assert (record.number, record.dealer, record.bids, record.thrown_in) == (
        1,
        3,
        (2, 13, 2, 2),
        False,
    )
    assert record.points == (-2, 40, -2, -2)
    assert len(record.plays) == 52
    with pytest.raises(IllegalActionError, match="match is over"):
        t.deal()
    with pytest.raises(IllegalActionError, match="match is over"):
        t.act("2")


def test_golden_thrown_in_and_redeal_hands() -> None:
    t = Table(dealer=0, scores=(10, 20, 30, 5))
    # Required total: top score 30 -> 12. S2 (score 30) must bid at least 3.
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    assert t.required_total() == 12
    assert t.to_play == 1
    t.act("2")
    assert "2" not in t.legal() and t.legal()[0] == "3"  # S2's minimum is 3
    t.act("3")
    t.act("2")
    t.act("4")  # total 11 < 12: thrown in
    assert t.phase == "hand_over"
    assert t.scores == (10, 20, 30, 5)
    assert t.dealer == 1  # the deal passed to the right
    assert t.history[-1].thrown_in and t.history[-1].bids == (4, 2, 3, 2)

    # S2 holds no picture card and asks for a redeal at its turn (S1 deals, S2 bids first).
    no_face = "10C 9C 8C 7C 6C 5C 4C 3C 2C 10D 9D 8D 7D"
    rest = [c for c in parse_hand(SPADES + " " + HEARTS + " " + DIAMONDS + " " + CLUBS, 52)]
    rest = [c for c in rest if c not in parse_hand(no_face)]
    others = [" ".join(card_text(c) for c in rest[i * 13 : (i + 1) * 13]) for i in range(3)]
    t.deal(hands=[others[0], others[1], no_face, others[2]])
    assert t.to_play == 2 and "redeal" in t.legal()
    t.act("redeal")
    assert t.phase == "hand_over" and t.dealer == 2
    assert t.history[-1].redeal_seat == 2 and t.history[-1].thrown_in
    assert t.scores == (10, 20, 30, 5)
    sheet = t.score_sheet()
    assert "thrown in (bids 11 < 12)" in sheet and "S2 asked for a redeal" in sheet


def test_between_hands_the_minimum_bid_is_the_next_hands() -> None:
    """S1 (25) bids 13 with every heart and makes it: 65, so its next minimum is 6. Its
    partner S3 misses and is at -2, so the match goes on; the table and its picture say 6
    before the next deal as after it."""
    t = Table(dealer=3, scores=(0, 25, 0, 0))
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    assert t.min_bid(1) == 2
    for bid in ("2", "13", "2", "2"):
        t.act(bid)
    play_out(t)
    assert t.phase == "hand_over" and t.scores == (-2, 65, -2, -2)
    assert [t.min_bid(seat) for seat in range(4)] == [2, 6, 2, 2]
    assert "min bid  6" in t.render()
    t.deal()
    assert t.to_play == 1 and t.min_bid(1) == 6 and t.legal()[0] == "6"


def test_score_sheet_says_why_a_five_to_run_hand_was_thrown_in() -> None:
    t = Table(rules=Rules(five_to_run=True), dealer=3)
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    for bid in ("4", "4", "4", "4"):  # 16 tricks bid, but nobody 5 or more
        t.act(bid)
    assert t.phase == "hand_over" and t.history[-1].thrown_in
    sheet = t.score_sheet()
    assert "thrown in (no bid of 5 or more)" in sheet and "bids 16" not in sheet


def test_redeal_needs_a_hand_without_pictures_and_the_flag() -> None:
    t = Table(dealer=3)
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    assert "redeal" not in t.legal()
    with pytest.raises(IllegalActionError, match="redeal needs a hand without"):
        t.act("redeal")
    t2 = Table(rules=Rules(no_face_redeal=False), dealer=3)
    no_face = "10C 9C 8C 7C 6C 5C 4C 3C 2C 10D 9D 8D 7D"
    full = parse_hand(" ".join([SPADES, HEARTS, DIAMONDS, CLUBS]), 52)
    rest = [card_text(c) for c in full if c not in parse_hand(no_face)]
    t2.deal(hands=[no_face, " ".join(rest[:13]), " ".join(rest[13:26]), " ".join(rest[26:])])
    assert "redeal" not in t2.legal()


@pytest.mark.parametrize(
    ("trick", "winner"),
    [
        # RULES.md example 6: lead spade K, then spade A, heart 2, spade 3: the heart 2 wins.
        (["KS", "AS", "2H", "3S"], 2),
        # Lead diamond 5, then club A, diamond 9, spade K: the diamond 9 wins.
        (["5D", "AC", "9D", "KS"], 2),
        (["AH", "2H", "KH", "3C"], 0),  # hearts led: the highest heart
        (["2C", "3C", "AD", "4C"], 3),  # off-suit ace loses
    ],
)
def test_worked_example_6_tricks(trick: list[str], winner: int) -> None:
    """Each trick is the first of a deal built around it (S0 leads, voids where needed)."""
    cards = [parse_card(c) for c in trick]
    led = cards[0] // 13
    hands: list[list[int]] = [[c] for c in cards]
    pool = [c for c in range(52) if c not in cards]
    # a seat that did not follow the suit led must be void in it
    void = [k > 0 and cards[k] // 13 != led for k in range(4)]
    for seat in range(4):
        if not void[seat]:
            continue
        for c in [c for c in pool if c // 13 != led]:
            if len(hands[seat]) == 13:
                break
            hands[seat].append(c)
            pool.remove(c)
    for seat in range(4):
        while len(hands[seat]) < 13:
            hands[seat].append(pool.pop())
    t = Table(dealer=3)
    t.deal(hands=[" ".join(card_text(c) for c in h) for h in hands])
    for bid in ("3", "3", "3", "3"):
        t.act(bid)
    for seat, c in enumerate(trick):
        t.act(c, seat=seat)
    assert t.tricks_won[winner] == 1 and t.to_play == winner


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ([SPADES, HEARTS, DIAMONDS], "needs 4 hands"),
        ([SPADES, HEARTS, DIAMONDS, "AC KC"], "has 2 cards: expected 13"),
        ([SPADES, HEARTS, DIAMONDS, CLUBS.replace("2C", "AS")], "dealt to seat 0 and to seat 3"),
        ([SPADES, HEARTS, DIAMONDS, CLUBS.replace("2C", "AC")], "duplicate card 'AC'"),
        ([SPADES, HEARTS, DIAMONDS, CLUBS.replace("2C", "1C")], "unknown rank '1'"),
        ([SPADES, HEARTS, DIAMONDS, CLUBS.replace("2C", "2X")], "unknown suit 'X'"),
    ],
)
def test_malformed_deals_are_refused_and_change_nothing(hands, message: str) -> None:
    t = Table(dealer=1, name="t1")
    before = t.state.copy()
    with pytest.raises(CardError, match=message):
        t.deal(hands=hands)
    assert t.state.equals(before)
    assert t.phase == "hand_over"


def test_illegal_actions_name_table_seat_given_and_legal_and_change_nothing() -> None:
    t = Table(dealer=3, name="west")
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    before = t.state.copy()
    with pytest.raises(
        IllegalActionError, match=r"table 'west', seat 0 \(bid\): illegal action 'AS'.*legal: 2 3"
    ):
        t.act("AS")
    with pytest.raises(IllegalActionError, match="out of turn"):
        t.act("3", seat=1)
    with pytest.raises(IllegalActionError, match="bid '14' is out of range"):
        t.act("14")
    with pytest.raises(IllegalActionError, match="unknown suit"):
        t.act("QX")
    with pytest.raises(IllegalActionError, match="a hand is in progress"):
        t.deal(seed=1)
    assert t.state.equals(before)
    for bid in ("2", "2", "2", "5"):
        t.act(bid)
    before = t.state.copy()
    with pytest.raises(IllegalActionError, match="does not hold AH"):
        t.act("AH")
    t.act("KS")
    with pytest.raises(IllegalActionError, match="a bid, but this is the card play"):
        t.act("2")
    t.act("2H")
    t.act("2D")
    assert t.to_play == 3  # S3, void in spades, may play any card
    before = t.state.copy()
    with pytest.raises(IllegalActionError):
        t.act(70)
    assert t.state.equals(before)


def test_must_follow_suit_message() -> None:
    t = Table(dealer=3)
    mixed = ["AS KS QS JS 10S 9S 8S 7S 6S AH KH QH JH", "5S 4S 3S 2S 10H 9H 8H 7H 6H 5H 4H 3H 2H"]
    t.deal(hands=[*mixed, DIAMONDS, CLUBS])
    for bid in ("2", "2", "2", "5"):
        t.act(bid)
    t.act("AS")
    with pytest.raises(IllegalActionError, match="must follow the suit led"):
        t.act("10H")
    assert t.legal() == ["2S", "3S", "4S", "5S"]  # in action-id order


def test_bad_table_arguments() -> None:
    with pytest.raises(FourHundredError, match="dealer=4"):
        Table(dealer=4)
    with pytest.raises(FourHundredError, match="expected 4 integers"):
        Table(scores=(1, 2, 3))
    with pytest.raises(FourHundredError, match="give hands or seed"):
        Table().deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS], seed=3)


def test_seeded_deal_is_the_engine_stream() -> None:
    t = Table(seed=0)
    t.deal(seed=7)
    expected = deal_sets(7, [0], [0])[0]
    assert [int(x) for x in t.state.dealt_set[0]] == [int(x) for x in expected]
    assert sorted(t.hand(0), key=parse_card) == sorted(
        (card_text(c) for c in range(52) if int(expected[0]) >> c & 1), key=parse_card
    )


def test_render_shows_hands_trick_and_bids() -> None:
    t = Table(dealer=3, scores=(12, 31, -4, 27))
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    t.act("2")
    screen = t.render(viewer=1)
    assert "hand S1: AH KH QH" in screen and "hand S0" not in screen
    assert "S1 to bid: legal 3 4" in screen
    full = t.render()
    assert all(f"hand S{s}" in full for s in range(4))


def test_score_sheet_columns_line_up_in_both_header_rows() -> None:
    """The seat names of the second header row stand over the numbers of their column: every
    column rule (``|``) of both header rows is where the hands' rows have theirs."""
    t = Table(dealer=3)
    t.deal(hands=[SPADES, HEARTS, DIAMONDS, CLUBS])
    for bid in ("2", "13", "2", "2"):
        t.act(bid)
    play_out(t)
    lines = t.score_sheet().splitlines()
    head, seats, hand = lines[1], lines[2], lines[4]

    def rules(line: str) -> list[int]:
        return [i for i, ch in enumerate(line) if ch == "|"]

    assert rules(hand) == rules(head) == rules(seats)
    assert seats[rules(seats)[0] + 1 :].startswith("  S0  S1  S2  S3|")
    col = rules(hand)[0] + 1  # the first bid (S0's) ends under "S0"
    assert hand[col : col + 4].strip() == "2" and seats[col : col + 4] == "  S0"
