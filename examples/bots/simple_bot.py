#!/usr/bin/env python3
"""A bot for 400 in plain Python, speaking the fourhundred bot protocol (version 1).

It imports nothing from fourhundred: any program that reads JSON lines on stdin and writes
JSON lines on stdout can play the same way (docs/bot-protocol.md). Try it:

    fourhundred bot-check "python examples/bots/simple_bot.py"
    fourhundred tournament --agents "cmd:python examples/bots/simple_bot.py" heuristic random

Strategy (deliberately simple): bid the tricks its aces, guarded kings and hearts are worth;
when following, win the trick as cheaply as possible or else throw the lowest card; when
leading, cash an ace or lead low from its longest suit.
"""

import json
import sys

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
TRUMP = "H"  # hearts are always trump


def rank(card):
    return RANKS.index(card[:-1])


def suit(card):
    return card[-1]


def estimate_tricks(hand):
    """Tricks the hand should take: aces, kings with a guard, high and long hearts."""
    by_suit = {s: [c for c in hand if suit(c) == s] for s in "CDSH"}
    tricks = 0.0
    for s, cards in by_suit.items():
        ranks = sorted((rank(c) for c in cards), reverse=True)
        if 12 in ranks:
            tricks += 1
        if 11 in ranks and len(ranks) >= 2:
            tricks += 0.5
        if s == TRUMP:
            tricks += 0.5 * sum(1 for r in ranks if r in (10, 9)) + 0.7 * max(0, len(ranks) - 3)
    return tricks


def choose_bid(view, legal):
    if "redeal" in legal:
        return "redeal"  # only legal without A, K, Q or J: not a hand to bid on
    bids = sorted(int(a) for a in legal if a.isdigit())
    want = max(bids[0], round(estimate_tricks(view["hand"])))
    return str(max(b for b in bids if b <= want) if want >= bids[0] else bids[0])


def winning(trick):
    """The card winning the trick so far (the first card sets the suit led)."""
    led = suit(trick[0]["card"])
    best = trick[0]["card"]
    for play in trick[1:]:
        c = play["card"]
        if (suit(c) == TRUMP and (suit(best) != TRUMP or rank(c) > rank(best))) or (
            suit(c) == suit(best) == led and rank(c) > rank(best)
        ):
            best = c
    return best


def beats(card, best, led):
    if suit(card) == TRUMP:
        return suit(best) != TRUMP or rank(card) > rank(best)
    return suit(best) != TRUMP and suit(card) == led == suit(best) and rank(card) > rank(best)


def choose_card(view, legal):
    low_first = sorted(legal, key=lambda c: (suit(c) == TRUMP, rank(c)))
    trick = view["trick"]
    if not trick:  # leading: cash a side-suit ace, or lead low from the longest suit
        aces = [c for c in legal if rank(c) == 12 and suit(c) != TRUMP]
        if aces:
            return aces[0]
        longest = max("CDSH", key=lambda s: sum(suit(c) == s for c in legal))
        return min((c for c in legal if suit(c) == longest), key=rank)
    best = winning(trick)
    led = suit(trick[0]["card"])
    winners = [c for c in low_first if beats(c, best, led)]
    return winners[0] if winners else low_first[0]


def answer(message):
    if message["type"] == "hello":
        if message.get("version") != 1:
            print(
                f"simple_bot speaks version 1, was offered {message.get('version')}",
                file=sys.stderr,
            )
        return {"type": "ready", "name": "simple_bot", "version": 1}
    if message["type"] == "act":
        view, legal = message["view"], message["legal"]
        action = choose_bid(view, legal) if view["phase"] == "bid" else choose_card(view, legal)
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
