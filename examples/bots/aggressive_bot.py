#!/usr/bin/env python3
"""An aggressive over-bidder for 400, speaking the fourhundred bot protocol (version 1).

It bids its honest trick estimate plus one (as dealer it raises further to get the hand
played), then plays to take tricks as early as it can: it leads its highest cards, covers with
its highest winner, takes its partner's trick when the partner has made and it has not, and
ruffs in readily. Holding many hearts it leads them from the top to draw the opponents' trumps.

Stdlib only and deterministic (no random numbers at all); try it:

    fourhundred bot-check "python examples/bots/aggressive_bot.py"
"""

import json
import sys

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = "CDSH"
TRUMP = "H"  # hearts are always trump
DECK = [r + s for s in SUITS for r in RANKS]
MANY_HEARTS = 4  # with this many hearts it leads them to draw trumps


def rank(card):
    return RANKS.index(card[:-1])


def suit(card):
    return card[-1]


def estimate_tricks(hand):
    """An honest estimate: aces, guarded kings and queens, heart honours and length, and
    ruffs from short side suits while hearts last."""
    by_suit = {s: sorted((rank(c) for c in hand if suit(c) == s), reverse=True) for s in SUITS}
    hearts = len(by_suit[TRUMP])
    tricks = 0.0
    for s, ranks in by_suit.items():
        n = len(ranks)
        if s == TRUMP:
            tricks += sum(1.0 for r in ranks if r == 12) + sum(0.8 for r in ranks if r == 11)
            tricks += 0.5 * sum(1 for r in ranks if r == 10) + 0.6 * max(0, n - 3)
            continue
        if 12 in ranks:
            tricks += 1.0 if n <= 5 else 0.7
        if 11 in ranks and n >= 2:
            tricks += 0.6
        if 10 in ranks and n >= 3:
            tricks += 0.3
        if hearts >= 2 and n <= 1:  # a void or a singleton to ruff
            tricks += 0.5 * min(hearts - 1, 2 - n)
    return tricks


def choose_bid(view, legal):
    bids = sorted(int(a) for a in legal if a.isdigit())
    if not bids:
        return legal[0]
    honest = estimate_tricks(view["hand"])
    if "redeal" in legal and honest < 0.5:
        return "redeal"  # not even an over-bidder plays a hand without pictures or hearts
    want = int(honest + 0.5) + 1  # the over-bid: one trick more than the hand is worth
    others = [b for i, b in enumerate(view["bids"]) if i != view["seat"]]
    if all(b is not None for b in others):  # the dealer: get the hand played if it can
        short = view["required_total"] - sum(others)
        if want < short <= int(honest + 0.5) + 2:
            want = short
    return str(min(bids, key=lambda b: (abs(b - want), -b)))  # the nearest legal bid


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


def higher_out(card, unseen):
    """Whether a higher card of the same suit is still out."""
    return any(suit(c) == suit(card) and rank(c) > rank(card) for c in unseen)


def choose_lead(view, legal):
    unseen = unseen_cards(view)
    hearts = [c for c in legal if suit(c) == TRUMP]
    if len(hearts) >= MANY_HEARTS and any(suit(c) == TRUMP for c in unseen):
        return max(hearts, key=rank)  # draw trumps, from the top
    side = [c for c in legal if suit(c) != TRUMP]
    if not side:
        return max(hearts, key=rank)
    length = {s: sum(suit(c) == s for c in legal) for s in SUITS}
    masters = [c for c in side if not higher_out(c, unseen)]
    # cash a side-suit master; else the highest side card, from the longer suit on a tie
    return max(masters or side, key=lambda c: (rank(c), length[suit(c)], SUITS.index(suit(c))))


def choose_card(view, legal):
    trick = view["trick"]
    if not trick:
        return choose_lead(view, legal)
    seat = view["seat"]
    partner = (seat + 2) % 4
    led = suit(trick[0]["card"])
    top = winning_play(trick)
    low_first = sorted(legal, key=lambda c: (suit(c) == TRUMP, rank(c), SUITS.index(suit(c))))
    winners = [c for c in low_first if beats(c, top["card"], led)]
    made = view["tricks_won"][seat] >= view["bids"][seat]
    partner_made = view["tricks_won"][partner] >= view["bids"][partner]
    if not winners or (top["seat"] == partner and (made or not partner_made)):
        return low_first[0]  # nothing wins, or the partner takes a trick it can use: low
    following = [c for c in winners if suit(c) == led]
    if not following or len(trick) == 3:
        return winners[0]  # ruff in with the lowest heart that wins; last: the cheapest
    unseen = unseen_cards(view)
    sure = [c for c in following if not higher_out(c, unseen)]
    # win in the suit led: the cheapest card no one can top, else the highest one held
    return sure[0] if sure else following[-1]


def answer(message):
    if message["type"] == "hello":
        if message.get("version") != 1:
            print(
                f"aggressive_bot speaks version 1, was offered {message.get('version')}",
                file=sys.stderr,
            )
        return {"type": "ready", "name": "aggressive_bot", "version": 1}
    if message["type"] == "act":
        view, legal = message["view"], message["legal"]
        action = choose_bid(view, legal) if view["phase"] == "bid" else choose_card(view, legal)
        if action not in legal:  # never answer an illegal action
            print(f"aggressive_bot: {action!r} not legal, playing {legal[0]}", file=sys.stderr)
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
