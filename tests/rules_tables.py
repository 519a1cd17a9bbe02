"""Expectation tables taken from shared/RULES.md, shared by the oracle and rules.py tests.

Every row quotes the RULES.md line it tests. Rules profiles are given as flag overrides (a
dict passed to ``Rules(**flags)``); the pagat flags are written out from the "Presets" section
rather than taken from ``Rules.preset``, so the tables stay independent of rules.py.
"""

from __future__ import annotations

from typing import Any, NamedTuple

Flags = dict[str, Any]

WIKI: Flags = {}
"""The default ("wiki") profile."""

PAGAT: Flags = {
    "min_bid_base": 1,
    "min_bid_escalates": False,
    "escalate_total": False,
    "total_counted_in": "points",
    "score_table": "pagat",
    "five_six_face_value_from": None,
    "simultaneous_finish": "highest_team_total",
}
"""'"pagat": minimum bid 1 with no escalation; required total 11 counted in points (bids of 7+
count double); value = bid for 1-6 and double the bid from 7 up; no thirty rule; on a
simultaneous finish the higher team total wins.' "Required total 11" is read as a fixed 11
(escalate_total off), as in pagat's own "41" rules."""

TABLE = "Value table: | value | 2 | 3 | 4 | 10 | 12 | 14 | 16 | 27 | 40 | (bids 2..9, 10-13)"
THIRTY = (
    "Thirty rule: score before the hand 30 or more: 5 is worth 5 and 6 is worth 6, made or "
    "missed; 7 and up keep their table value"
)
THIRTY_OFF = "flag five_six_face_value_from: off means 10 and 12 always"
THIRTY_20 = "flag five_six_face_value_from (default 30), here set to 20"
PAGAT_VALUE = "pagat: value = bid for 1-6 and double the bid from 7 up; no thirty rule"


class ValueRow(NamedTuple):
    """bid_value(bid, score_before, Rules(**flags)) == value."""

    quote: str
    flags: Flags
    bid: int
    score_before: int
    value: int


_WIKI_TABLE = {2: 2, 3: 3, 4: 4, 5: 10, 6: 12, 7: 14, 8: 16, 9: 27, 10: 40, 11: 40, 12: 40, 13: 40}

VALUE_ROWS: list[ValueRow] = (
    [ValueRow(TABLE, WIKI, bid, 0, value) for bid, value in _WIKI_TABLE.items()]
    + [ValueRow("A bid of 1 (possible only in the pagat preset) is worth 1.", WIKI, 1, 0, 1)]
    + [ValueRow(TABLE + " (below 30)", WIKI, bid, 29, _WIKI_TABLE[bid]) for bid in (5, 6, 7)]
    + [ValueRow(TABLE + " (negative score)", WIKI, bid, -12, _WIKI_TABLE[bid]) for bid in (5, 6)]
    + [
        ValueRow(THIRTY, WIKI, 5, 30, 5),
        ValueRow(THIRTY, WIKI, 6, 30, 6),
        ValueRow(THIRTY, WIKI, 5, 77, 5),
        ValueRow(THIRTY, WIKI, 6, 45, 6),
        ValueRow(THIRTY, WIKI, 4, 30, 4),
        ValueRow(THIRTY, WIKI, 7, 30, 14),
        ValueRow(THIRTY, WIKI, 8, 35, 16),
        ValueRow(THIRTY, WIKI, 9, 40, 27),
        ValueRow(THIRTY, WIKI, 10, 50, 40),
        ValueRow(THIRTY, WIKI, 13, 99, 40),
        ValueRow(THIRTY_OFF, {"five_six_face_value_from": None}, 5, 60, 10),
        ValueRow(THIRTY_OFF, {"five_six_face_value_from": None}, 6, 30, 12),
        ValueRow(THIRTY_20, {"five_six_face_value_from": 20}, 5, 20, 5),
        ValueRow(THIRTY_20, {"five_six_face_value_from": 20}, 6, 19, 12),
    ]
    + [ValueRow(PAGAT_VALUE, PAGAT, bid, 0, bid) for bid in range(1, 7)]
    + [ValueRow(PAGAT_VALUE, PAGAT, bid, 0, 2 * bid) for bid in range(7, 14)]
    + [ValueRow(PAGAT_VALUE + " (high score)", PAGAT, bid, 45, bid) for bid in (5, 6)]
)


class MinBidRow(NamedTuple):
    """min_bid(score, Rules(**flags)) == expected."""

    quote: str
    flags: Flags
    score: int
    expected: int


EX4 = "Example 4. Minimum bids: -7 -> 2, 29 -> 2, 30 -> 3, 49 -> 4, 63 -> 6."
MIN_BID = (
    "Minimum bid: 2 below 30 (negatives included), 3 at 30-39, 4 at 40-49, 5 at 50-59, and so on: "
    "min(13, max(2, score // 10)). Maximum bid 13."
)

MIN_BID_ROWS: list[MinBidRow] = [
    MinBidRow(EX4, WIKI, -7, 2),
    MinBidRow(EX4, WIKI, 29, 2),
    MinBidRow(EX4, WIKI, 30, 3),
    MinBidRow(EX4, WIKI, 49, 4),
    MinBidRow(EX4, WIKI, 63, 6),
    MinBidRow(MIN_BID, WIKI, 0, 2),
    MinBidRow(MIN_BID, WIKI, -150, 2),
    MinBidRow(MIN_BID, WIKI, 39, 3),
    MinBidRow(MIN_BID, WIKI, 40, 4),
    MinBidRow(MIN_BID, WIKI, 50, 5),
    MinBidRow(MIN_BID, WIKI, 59, 5),
    MinBidRow(MIN_BID, WIKI, 129, 12),
    MinBidRow(MIN_BID, WIKI, 130, 13),
    MinBidRow(MIN_BID, WIKI, 500, 13),
    MinBidRow("flag min_bid_base: max(base, score // 10), base 3", {"min_bid_base": 3}, 35, 3),
    MinBidRow("flag min_bid_base: max(base, score // 10), base 3", {"min_bid_base": 3}, 45, 4),
    MinBidRow("flag min_bid_escalates off: the base alone", {"min_bid_escalates": False}, 63, 2),
    MinBidRow("pagat: minimum bid 1 with no escalation", PAGAT, 0, 1),
    MinBidRow("pagat: minimum bid 1 with no escalation", PAGAT, -20, 1),
    MinBidRow("pagat: minimum bid 1 with no escalation", PAGAT, 63, 1),
]


class TotalRow(NamedTuple):
    """required_total(scores, Rules(**flags)) == expected."""

    quote: str
    flags: Flags
    scores: tuple[int, int, int, int]
    expected: int


EX5 = (
    "Example 5. Required totals for pre-hand scores [12, 35, 8, -4] -> 12; [41, 33, 30, 2] -> 13; "
    "[29, 29, 29, 29] -> 11."
)
TOTAL = (
    "Required total: 11, raised by the highest score at the table before the hand: 12 when it is "
    "30-39, 13 at 40-49, 14 at 50-59: 11 + max(0, top // 10 - 2)"
)
SECOND_30 = "A second player crossing 30 does not raise it again."

TOTAL_ROWS: list[TotalRow] = [
    TotalRow(EX5, WIKI, (12, 35, 8, -4), 12),
    TotalRow(EX5, WIKI, (41, 33, 30, 2), 13),
    TotalRow(EX5, WIKI, (29, 29, 29, 29), 11),
    TotalRow(TOTAL, WIKI, (0, 0, 0, 0), 11),
    TotalRow(TOTAL, WIKI, (-5, -30, -1, -99), 11),
    TotalRow(TOTAL, WIKI, (0, 0, 30, 0), 12),
    TotalRow(TOTAL, WIKI, (0, 39, 0, 0), 12),
    TotalRow(TOTAL, WIKI, (40, 0, 0, 0), 13),
    TotalRow(TOTAL, WIKI, (0, 0, 0, 50), 14),
    TotalRow(TOTAL, WIKI, (0, 59, 0, 0), 14),
    TotalRow(TOTAL + " (either team)", WIKI, (10, 75, -40, 3), 16),
    TotalRow(SECOND_30, WIKI, (31, 35, 0, 0), 12),
    TotalRow(SECOND_30, WIKI, (31, 35, 38, 30), 12),
    TotalRow("flag escalate_total off", {"escalate_total": False}, (55, 0, 0, 0), 11),
    TotalRow("flag min_total_bids 12", {"min_total_bids": 12}, (0, 0, 0, 0), 12),
    TotalRow("flag min_total_bids 12", {"min_total_bids": 12}, (44, 0, 0, 0), 14),
    TotalRow("pagat: required total 11", PAGAT, (0, 20, 29, -5), 11),
    TotalRow("pagat: required total 11, fixed at any score", PAGAT, (45, 20, 63, -5), 11),
]


class PlayedRow(NamedTuple):
    """hand_played(bids, scores, Rules(**flags)) == played; bids counted to `total`."""

    quote: str
    flags: Flags
    bids: tuple[int, int, int, int]
    scores: tuple[int, int, int, int]
    total: int
    played: bool


BELOW = "If the total is below the requirement, the hand is thrown in: no score, deal passes right."
POINTS = "pagat: required total 11 counted in points (bids of 7+ count double)"
FIVE = (
    "Variant five_to_run: the hand is played if and only if some player bid 5 or more; the total "
    "test is not applied."
)
_FIVE: Flags = {"five_to_run": True}
_Z = (0, 0, 0, 0)

PLAYED_ROWS: list[PlayedRow] = [
    PlayedRow(BELOW, WIKI, (3, 3, 3, 2), _Z, 11, True),
    PlayedRow(BELOW, WIKI, (3, 3, 2, 2), _Z, 10, False),
    PlayedRow(BELOW, WIKI, (2, 2, 2, 2), _Z, 8, False),
    PlayedRow(BELOW, WIKI, (13, 13, 13, 13), _Z, 52, True),
    PlayedRow(BELOW + " (counted in tricks: 7 counts 7)", WIKI, (7, 2, 1, 1), _Z, 11, True),
    PlayedRow(BELOW + " (counted in tricks: 7 counts 7)", WIKI, (7, 1, 1, 1), _Z, 10, False),
    PlayedRow(BELOW + " (top 35 -> 12)", WIKI, (3, 3, 3, 2), (0, 35, 0, 0), 11, False),
    PlayedRow(BELOW + " (top 35 -> 12)", WIKI, (3, 3, 3, 3), (0, 35, 0, 0), 12, True),
    PlayedRow(BELOW + " (top 41 -> 13)", WIKI, (4, 3, 3, 2), (41, 33, 30, 2), 12, False),
    PlayedRow(BELOW + " (top 41 -> 13)", WIKI, (4, 3, 3, 3), (41, 33, 30, 2), 13, True),
    PlayedRow(POINTS, PAGAT, (7, 1, 1, 1), _Z, 17, True),
    PlayedRow(POINTS, PAGAT, (6, 2, 1, 1), _Z, 10, False),
    PlayedRow(POINTS, PAGAT, (4, 4, 2, 1), _Z, 11, True),
    PlayedRow(POINTS, PAGAT, (1, 1, 1, 1), _Z, 4, False),
    PlayedRow(POINTS, PAGAT, (13, 13, 13, 13), _Z, 104, True),
    PlayedRow(POINTS, {"total_counted_in": "points"}, (8, 1, 1, 2), _Z, 20, True),
    PlayedRow(FIVE, _FIVE, (5, 2, 2, 2), _Z, 11, True),
    PlayedRow(FIVE, _FIVE, (2, 2, 2, 5), _Z, 11, True),
    PlayedRow(FIVE, _FIVE, (4, 4, 4, 4), _Z, 16, False),
    PlayedRow(FIVE, _FIVE, (5, 2, 2, 2), (50, 50, 50, 50), 11, True),
    PlayedRow(FIVE, _FIVE, (2, 2, 2, 2), _Z, 8, False),
    PlayedRow(FIVE, {"five_to_run": True, "min_bid_base": 1}, (5, 1, 1, 1), _Z, 8, True),
]


class DeltaRow(NamedTuple):
    """One seat's result: from `score_before`, bid `bid`, took `tricks`: score changes by
    `delta` to `after`."""

    quote: str
    flags: Flags
    score_before: int
    bid: int
    tricks: int
    delta: int
    after: int


EX1 = "Example 1. Score 28, bids 5, takes 5: +10, now 38. Score 32, bids 5, takes 6: +5, now 37."
EX2 = "Example 2. Score 20, bids 7, takes 6: -14, now 6. Score 5, bids 10, takes 10: +40, now 45."
EX3 = (
    "Example 3. Score 29, bids 6, takes 8: +12 (the thirty rule looks at the score before the "
    "hand), now 41."
)
MADE = "Made (tricks >= bid): +value(bid). Missed: -value(bid). Extra tricks count nothing."

DELTA_ROWS: list[DeltaRow] = [
    DeltaRow(EX1, WIKI, 28, 5, 5, 10, 38),
    DeltaRow(EX1, WIKI, 32, 5, 6, 5, 37),
    DeltaRow(EX2, WIKI, 20, 7, 6, -14, 6),
    DeltaRow(EX2, WIKI, 5, 10, 10, 40, 45),
    DeltaRow(EX3, WIKI, 29, 6, 8, 12, 41),
    DeltaRow(MADE, WIKI, 0, 2, 13, 2, 2),
    DeltaRow(MADE, WIKI, 0, 2, 1, -2, -2),
    DeltaRow(MADE, WIKI, -10, 13, 12, -40, -50),
    DeltaRow(MADE, WIKI, 10, 9, 9, 27, 37),
    DeltaRow(THIRTY, WIKI, 30, 5, 4, -5, 25),
    DeltaRow(THIRTY, WIKI, 36, 6, 0, -6, 30),
    DeltaRow(THIRTY, WIKI, 40, 7, 7, 14, 54),
    DeltaRow(PAGAT_VALUE, PAGAT, 0, 1, 0, -1, -1),
    DeltaRow(PAGAT_VALUE, PAGAT, 35, 6, 6, 6, 41),
    DeltaRow(PAGAT_VALUE, PAGAT, 12, 8, 7, -16, -4),
]


class EndRow(NamedTuple):
    """end_of_game(scores, target_before, Rules(**flags)) gives `winner`; when nobody wins,
    the target for the next hand is `next_target`."""

    quote: str
    flags: Flags
    scores: tuple[int, int, int, int]
    target_before: int
    winner: int | None
    next_target: int


QUAL = (
    "A team qualifies when one of its players has at least the target (41) and the partner's "
    "score is above zero (> 0). Exactly one team qualifies: it wins."
)
ZERO = (
    "A player at 41+ whose partner is at zero or below does not win; play continues with the "
    "same rules, and either team may still finish first."
)
EX7 = "Example 7. After a hand: seat 0 has 42, seat 2 has -5, team 1 has 17 and 12: nobody wins."
BOTH = "Both teams qualify after the same hand: the target rises to 51 and play continues."
RAISED_ONE = "After each later hand: exactly one team qualifies at the raised target: it wins"
RAISED_BOTH = "both do: the target rises by another 10"
AT_41 = "otherwise exactly one team still qualifies at 41: it wins (the other fell below)"
NEITHER = "neither does: the target returns to 41"
STILL = "both still do: play on"
NOT_POS = "flag partner_must_be_positive off: one player at the target is enough"
HP = 'simultaneous_finish "highest_player": higher individual score wins at once'
HT = 'simultaneous_finish "highest_team_total": higher sum of partners wins at once'
TIE = "a tie under either of those plays another hand"
PAGAT_FINISH = "pagat: on a simultaneous finish the higher team total wins"
_HP: Flags = {"simultaneous_finish": "highest_player"}
_HT: Flags = {"simultaneous_finish": "highest_team_total"}

END_ROWS: list[EndRow] = [
    EndRow(EX7, WIKI, (42, 17, -5, 12), 41, None, 41),
    EndRow(QUAL, WIKI, (41, 0, 1, 0), 41, 0, 41),
    EndRow(QUAL, WIKI, (1, -7, 41, 30), 41, 0, 41),
    EndRow(QUAL, WIKI, (10, 45, 3, 2), 41, 1, 41),
    EndRow(QUAL, WIKI, (10, 1, 3, 60), 41, 1, 41),
    EndRow(QUAL, WIKI, (40, 40, 40, 40), 41, None, 41),
    EndRow(QUAL + " (the other team's partner is at 0)", WIKI, (44, 50, 2, 0), 41, 0, 41),
    EndRow(ZERO, WIKI, (41, 10, 0, 5), 41, None, 41),
    EndRow(ZERO, WIKI, (-3, 10, 55, 5), 41, None, 41),
    EndRow(ZERO, WIKI, (5, 48, 20, -1), 41, None, 41),
    EndRow(ZERO + " (both players at 41+ qualify)", WIKI, (41, 0, 45, 0), 41, 0, 41),
    EndRow(BOTH, WIKI, (45, 42, 1, 3), 41, None, 51),
    EndRow(BOTH, WIKI, (1, 41, 41, 1), 41, None, 51),
    EndRow(BOTH + " (target_step 5)", {"target_step": 5}, (45, 42, 1, 3), 41, None, 46),
    EndRow(RAISED_ONE, WIKI, (52, 44, 1, 3), 51, 0, 51),
    EndRow(RAISED_ONE, WIKI, (45, 3, 2, 51), 51, 1, 51),
    EndRow(RAISED_ONE + " (other team lost its partner)", WIKI, (52, 60, 2, -4), 51, 0, 51),
    EndRow(RAISED_ONE + " (target 61)", WIKI, (61, 55, 1, 3), 61, 0, 61),
    EndRow(RAISED_BOTH, WIKI, (52, 55, 1, 3), 51, None, 61),
    EndRow(RAISED_BOTH, WIKI, (62, 1, 1, 70), 61, None, 71),
    EndRow(AT_41, WIKI, (45, 44, 1, -2), 51, 0, 51),
    EndRow(AT_41, WIKI, (45, 30, 0, 50), 51, 1, 51),
    EndRow(AT_41 + " (target 61, both at 51 before)", WIKI, (55, 44, 1, 0), 61, 0, 61),
    EndRow(NEITHER, WIKI, (45, 44, -1, -2), 51, None, 41),
    EndRow(NEITHER, WIKI, (40, 30, 20, 10), 51, None, 41),
    EndRow(NEITHER + " (from 61)", WIKI, (30, 30, 30, 30), 61, None, 41),
    EndRow(STILL, WIKI, (45, 44, 1, 2), 51, None, 51),
    EndRow(STILL + " (target 61: both at 41 but not 61)", WIKI, (55, 44, 1, 2), 61, None, 61),
    EndRow(NOT_POS, {"partner_must_be_positive": False}, (41, 10, 0, 5), 41, 0, 41),
    EndRow(NOT_POS, {"partner_must_be_positive": False}, (-20, 10, 45, -5), 41, 0, 41),
    EndRow(NOT_POS, {"partner_must_be_positive": False}, (5, 41, 1, -50), 41, 1, 41),
    EndRow(NOT_POS, {"partner_must_be_positive": False}, (41, 41, -3, -3), 41, None, 51),
    EndRow(NOT_POS, {"partner_must_be_positive": False}, (40, 20, -3, 40), 41, None, 41),
    EndRow(HP, _HP, (45, 50, 1, 1), 41, 1, 41),
    EndRow(HP, _HP, (50, 45, 1, 1), 41, 0, 41),
    EndRow(HP + " (team score = its higher player's)", _HP, (41, 44, 43, 1), 41, 1, 41),
    EndRow(HP + " (only one team qualifies)", _HP, (45, 50, 1, 0), 41, 0, 41),
    EndRow(TIE + " (highest_player)", _HP, (45, 45, 1, 30), 41, None, 41),
    EndRow(HT, _HT, (41, 44, 43, 1), 41, 0, 41),
    EndRow(HT, _HT, (45, 42, 1, 10), 41, 1, 41),
    EndRow(TIE + " (highest_team_total)", _HT, (45, 44, 1, 2), 41, None, 41),
    EndRow(TIE + " (highest_team_total)", _HT, (41, 50, 20, 11), 41, None, 41),
    EndRow(PAGAT_FINISH, PAGAT, (41, 44, 43, 1), 41, 0, 41),
    EndRow(TIE + " (pagat)", PAGAT, (10, 41, 50, 19), 41, None, 41),
    EndRow("flag target 31", {"target": 31}, (31, 30, 1, 1), 31, 0, 31),
]


class TrickRow(NamedTuple):
    """trick_winner of the four cards (text, in play order) is index `winner`."""

    quote: str
    trick: str
    winner: int


EX6 = (
    "Example 6. Lead spade K, then spade A, heart 2, spade 3: the heart 2 wins. Lead diamond 5, "
    "then club A, diamond 9, spade K: the diamond 9 wins."
)
WINS = "The highest heart wins the trick; with no heart in it, the highest card of the suit led."

TRICK_ROWS: list[TrickRow] = [
    TrickRow(EX6, "KS AS 2H 3S", 2),
    TrickRow(EX6, "5D AC 9D KS", 2),
    TrickRow(WINS, "AS KS QS JS", 0),
    TrickRow(WINS, "2C 3C 4C 5C", 3),
    TrickRow(WINS, "10C JC 9C AC", 3),
    TrickRow(WINS, "2C AD AS 3C", 3),
    TrickRow(WINS, "2D AD AC AS", 1),
    TrickRow(WINS, "AS 3H 10H 2H", 2),
    TrickRow(WINS, "2S 3S 2H 4S", 2),
    TrickRow(WINS + " (hearts led)", "2H AS AD 3H", 3),
    TrickRow(WINS + " (hearts led)", "KH AH QH JH", 1),
    TrickRow(WINS + " (hearts led)", "AH KS KD KC", 0),
    TrickRow(WINS, "10D 2H 3H AD", 2),
]


class LegalRow(NamedTuple):
    """legal_cards(hand, trick so far) is `legal` (all card texts)."""

    quote: str
    hand: str
    trick: str
    legal: str


FOLLOW = "Players must follow the suit led if they can; otherwise any card (no duty to ruff)."
LEAD = "any card may be led, hearts too."

LEGAL_ROWS: list[LegalRow] = [
    LegalRow(LEAD, "2C AS 3S 5H", "", "2C AS 3S 5H"),
    LegalRow(LEAD, "2H 3H", "", "2H 3H"),
    LegalRow(FOLLOW, "2C AS 3S 5H", "KS", "AS 3S"),
    LegalRow(FOLLOW, "2C AS 3S 5H", "KS 2H", "AS 3S"),
    LegalRow(FOLLOW, "2C AS 3S 5H", "4C AD", "2C"),
    LegalRow(FOLLOW, "2C AS 3S 5H", "4D", "2C AS 3S 5H"),
    LegalRow(FOLLOW + " (void, no hearts)", "2C AS 3S", "4D 5D 6D", "2C AS 3S"),
    LegalRow(FOLLOW + " (hearts led)", "2C AS 3S 5H KH", "4H", "5H KH"),
    LegalRow(FOLLOW + " (hearts led, void)", "2C AS 3S", "4H", "2C AS 3S"),
    LegalRow(FOLLOW, "QD", "4D AS", "QD"),
]


class TeamRow(NamedTuple):
    """team_qualifies(scores, team, target, Rules(**flags)) == expected."""

    quote: str
    flags: Flags
    scores: tuple[int, int, int, int]
    team: int
    target: int
    expected: bool


TEAMS = "Team 0 = seats {0, 2}, team 1 = seats {1, 3}."

TEAM_ROWS: list[TeamRow] = [
    TeamRow(QUAL, WIKI, (41, 0, 1, 0), 0, 41, True),
    TeamRow(QUAL, WIKI, (41, 0, 1, 0), 1, 41, False),
    TeamRow(QUAL + " " + TEAMS, WIKI, (1, 0, 41, 0), 0, 41, True),
    TeamRow(QUAL + " " + TEAMS, WIKI, (0, 1, 0, 41), 1, 41, True),
    TeamRow(QUAL + " " + TEAMS, WIKI, (0, 41, 0, 1), 1, 41, True),
    TeamRow(QUAL + " " + TEAMS, WIKI, (0, 41, 0, 1), 0, 41, False),
    TeamRow(QUAL, WIKI, (40, 0, 40, 0), 0, 41, False),
    TeamRow(ZERO, WIKI, (41, 0, 0, 0), 0, 41, False),
    TeamRow(ZERO, WIKI, (41, 0, -1, 0), 0, 41, False),
    TeamRow(ZERO, WIKI, (-1, 50, 60, 0), 0, 41, False),
    TeamRow(ZERO, WIKI, (-1, 50, 60, 0), 1, 41, False),
    TeamRow(QUAL + " (raised target)", WIKI, (50, 0, 1, 0), 0, 51, False),
    TeamRow(QUAL + " (raised target)", WIKI, (51, 0, 1, 0), 0, 51, True),
    TeamRow(NOT_POS, {"partner_must_be_positive": False}, (41, 0, -30, 0), 0, 41, True),
    TeamRow(NOT_POS, {"partner_must_be_positive": False}, (40, 0, -30, 0), 0, 41, False),
    TeamRow(NOT_POS, {"partner_must_be_positive": False}, (0, -5, 0, 41), 1, 41, True),
]


def row_id(row: NamedTuple) -> str:
    """A short pytest id for a table row: its flags, then its other fields (quote left out)."""
    parts = []
    for name, value in row._asdict().items():
        if name == "quote":
            continue
        if name == "flags":
            if value is PAGAT:
                parts.append("pagat")
            elif not value:
                parts.append("wiki")
            else:
                parts.append(",".join(f"{k}={v}" for k, v in value.items()))
        elif isinstance(value, str):
            parts.append(value.replace(" ", "_") or "-")
        else:
            parts.append(f"{name}={value}")
    return "-".join(parts).replace(" ", "")
