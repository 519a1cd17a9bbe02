#!/usr/bin/env python3
"""A cautious under-bidder for 400, speaking the fourhundred bot protocol (version 1).

It bids the minimum legal bid unless the hand is very strong (then its estimate less one),
asks for every redeal it may, and as dealer lets a short hand be thrown in rather than stretch.
In play it counts the tricks it still needs: it wins with the cheapest card sure to hold,
gambles only when few tricks are left for those it needs, and ducks with its lowest losing
card once its contract is made or while its partner is winning the trick.

Stdlib only and deterministic (no random numbers at all); try it:

    fourhundred bot-check "python examples/bots/cautious_bot.py"
"""

import json
import sys

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = "CDSH"
TRUMP = "H"  # hearts are always trump
DECK = [r + s for s in SUITS for r in RANKS]
STRONG = 3  # "very strong": an estimate this many tricks above the minimum bid
URGENT = 3  # it takes chances once fewer than this many tricks are left per trick it needs


def rank(card):
    return RANKS.index(card[:-1])


def suit(card):
    return card[-1]


def low_key(card):
    """Order of cards from the cheapest to give away: side cards before hearts, low first."""
    return (suit(card) == TRUMP, rank(card), SUITS.index(suit(card)))


def estimate_tricks(hand):
    """A sober estimate: side aces, guarded kings, heart honours with company, long hearts."""
    by_suit = {s: sorted((rank(c) for c in hand if suit(c) == s), reverse=True) for s in SUITS}
    tricks = 0.0
    for s, ranks in by_suit.items():
        n = len(ranks)
        if s == TRUMP:
            tricks += 1.0 if 12 in ranks else 0.0
            tricks += 0.7 if 11 in ranks and n >= 2 else 0.0
            tricks += 0.4 if 10 in ranks and n >= 3 else 0.0
            tricks += 0.7 * max(0, n - 4)
            continue
        if 12 in ranks and n <= 5:
            tricks += 1.0
        if 11 in ranks and 2 <= n <= 5:
            tricks += 0.5
    return tricks


def choose_bid(view, legal):
    if "redeal" in legal:
        return "redeal"  # no picture: never risk a bid on it
    bids = sorted(int(a) for a in legal if a.isdigit())
    if not bids:
        return legal[0]
    estimate = estimate_tricks(view["hand"])
    want = bids[0]
    if estimate >= bids[0] + STRONG:  # very strong: bid it, keeping a trick in hand
        want = int(estimate) - 1
    others = [b for i, b in enumerate(view["bids"]) if i != view["seat"]]
    if all(b is not None for b in others):  # the dealer: play the hand only at no risk
        short = view["required_total"] - sum(others)
        if want < short <= int(estimate):
            want = short
    return str(max((b for b in bids if b <= want), default=bids[0]))


def beats(card, best, led):
    if suit(card) == TRUMP:
        return suit(best) != TRUMP or rank(card) > rank(best)
    return suit(best) != TRUMP and suit(card) == led == suit(best) and rank(card) > rank(best)


def winning_play(trick):
    """The play (seat and card) winning the trick so far."""
    led = suit(trick[0]["card"])
    best = trick[0]
    for play in trick[1:]:
        if beats(play["card"], best["card"], led):
            best = play
    return best


def unseen_cards(view):
    """The cards neither in this hand nor played: the ones the other three may hold."""
    gone = set(view["hand"])
    for cards in view["played"]:
        gone.update(cards)
    return [c for c in DECK if c not in gone]


def is_sure(card, led, behind, view, unseen):
    """Whether `card`, played now, cannot be beaten by an opponent still to play (`behind`):
    no higher card of its suit is out, or (for a ruff) they must follow the suit led."""
    voids = view["void_suits"]
    opponents = [p for p in behind if p % 2 != view["seat"] % 2]
    if not opponents:
        return True
    hearts_out = any(suit(c) == TRUMP for c in unseen)
    may_ruff = hearts_out and any(led in voids[p] for p in opponents)
    if suit(card) == TRUMP and led != TRUMP:
        higher = any(suit(c) == TRUMP and rank(c) > rank(card) for c in unseen)
        return not higher or not may_ruff
    higher = any(suit(c) == suit(card) and rank(c) > rank(card) for c in unseen)
    return not higher and (suit(card) == TRUMP or not may_ruff)


def choose_lead(view, legal, need, unseen):
    side = [c for c in legal if suit(c) != TRUMP]
    if need <= 0:  # made: lead the card least likely to take a trick
        return min(legal, key=low_key)
    others = [(view["seat"] + k) % 4 for k in (1, 2, 3)]
    masters = [c for c in legal if is_sure(c, suit(c), others, view, unseen)]
    side_masters = [c for c in masters if suit(c) != TRUMP]
    if side_masters:  # cash a sure side-suit winner
        return max(side_masters, key=lambda c: (rank(c), SUITS.index(suit(c))))
    if masters and any(suit(c) == TRUMP for c in unseen):  # the top heart: draws trumps
        return max(masters, key=rank)
    if side:  # low from the longest side suit, keeping the honours for later
        length = {s: sum(suit(c) == s for c in side) for s in SUITS}
        return min(side, key=lambda c: (-length[suit(c)], rank(c), SUITS.index(suit(c))))
    return min(legal, key=low_key)


def choose_card(view, legal):
    seat = view["seat"]
    need = view["bids"][seat] - view["tricks_won"][seat]  # tricks still to take
    left = 13 - view["num_tricks"]  # tricks still to play, this one included
    unseen = unseen_cards(view)
    trick = view["trick"]
    if not trick:
        return choose_lead(view, legal, need, unseen)
    led = suit(trick[0]["card"])
    top = winning_play(trick)
    partner_wins = top["seat"] == (seat + 2) % 4
    low_first = sorted(legal, key=low_key)
    winners = [c for c in low_first if beats(c, top["card"], led)]
    losers = [c for c in low_first if c not in winners]
    if need <= 0 or partner_wins or not winners:  # duck: the lowest card that loses
        return losers[0] if losers else low_first[0]
    behind = [(seat + k) % 4 for k in range(1, 4 - len(trick))]
    sure = [c for c in winners if is_sure(c, led, behind, view, unseen)]
    if sure:
        return sure[0]  # the cheapest card that is sure to take it
    if need * URGENT >= left:  # tricks are running out: try a winner that may hold
        following = [c for c in winners if suit(c) == led]
        return following[-1] if following else winners[0]
    return losers[0] if losers else winners[0]


def answer(message):
    if message["type"] == "hello":
        if message.get("version") != 1:
            print(
                f"cautious_bot speaks version 1, was offered {message.get('version')}",
                file=sys.stderr,
            )
        return {"type": "ready", "name": "cautious_bot", "version": 1}
    if message["type"] == "act":
        view, legal = message["view"], message["legal"]
        action = choose_bid(view, legal) if view["phase"] == "bid" else choose_card(view, legal)
        if action not in legal:  # never answer an illegal action
            print(f"cautious_bot: {action!r} not legal, playing {legal[0]}", file=sys.stderr)
            action = legal[0]
        return {"type": "action", "id": message["id"], "action": action}
    return None  # "bye", or a message type from a later version: nothing to answer


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("type") == "bye":
            break
        reply = answer(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
