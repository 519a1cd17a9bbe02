#!/usr/bin/env python3
"""A card-counting, match-aware bot for 400, speaking the fourhundred bot protocol (version 1).

Its style is a careful club player's, not the project's bots': it bids a point count of its
hand (high cards, heart length, short side suits) shaded by the match (one more when that bid
would win the match and the partner is above zero, one less when the opponents are close to
the target and a set would hand it to them), and plays by counting: it knows which cards are
still out and who has shown a void. Second hand plays low, third hand plays the cheapest card
that wins, last hand wins as cheaply as it can; it draws trumps when it holds most of those
still out, cashes masters, avoids leading a suit an opponent is void in while that opponent
may still ruff, and discards from its shortest side suit to make a void it can ruff in. Once
its own bid is made it stops competing with its partner for tricks, and it spends its high
cards where an opponent still needs tricks for a contract.

Stdlib only and deterministic (no random numbers at all); try it:

    fourhundred bot-check "python examples/bots/counting_bot.py"
"""

import json
import sys

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = "CDSH"
TRUMP = "H"  # hearts are always trump
DECK = [r + s for s in SUITS for r in RANKS]


def rank(card):
    return RANKS.index(card[:-1])


def suit(card):
    return card[-1]


def count_tricks(hand):
    """The hand's tricks by a point count: aces and kings, queens with length, hearts by
    honours and length, and ruffs of short side suits that spare hearts make."""
    by_suit = {s: sorted((rank(c) for c in hand if suit(c) == s), reverse=True) for s in SUITS}
    hearts = by_suit[TRUMP]
    tricks = 0.0
    for r in hearts:
        tricks += {12: 1.0, 11: 0.9, 10: 0.6, 9: 0.3}.get(r, 0.0)
    tricks += 0.8 * max(0, len(hearts) - 3)  # long trumps take tricks at the end
    spare = max(0, len(hearts) - 2)  # hearts beyond two honours' guards can ruff
    for s in SUITS[:3]:
        ranks = by_suit[s]
        n = len(ranks)
        if 12 in ranks:
            tricks += 0.95 if n <= 4 else 0.75
        if 11 in ranks:
            tricks += 0.7 if n >= 2 else 0.2
        if 10 in ranks and n >= 3:
            tricks += 0.35
        if spare and n <= 1:  # a void ruffs twice, a singleton once
            ruffs = min(spare, 2 - n)
            tricks += 0.6 * ruffs
            spare -= ruffs
    return tricks


def choose_bid(view, legal):
    bids = sorted(int(a) for a in legal if a.isdigit())
    if not bids:
        return legal[0]
    honest = count_tricks(view["hand"])
    if "redeal" in legal and honest < 1.0:
        return "redeal"
    want = int(honest + 0.35)
    seat = view["seat"]
    partner = (seat + 2) % 4
    scores, target = view["scores"], view["target"]
    opponents = [(seat + 1) % 4, (seat + 3) % 4]
    if scores[seat] + want + 1 >= target and scores[partner] > 0 and honest + 0.8 >= want + 1:
        want += 1  # a bid that would win the match, if the hand nearly holds it
    elif max(scores[o] for o in opponents) >= target - 8:
        want = max(2, want - 1)  # near the end a set costs the match: bid what is sure
    return str(min(bids, key=lambda b: (abs(b - want), b)))  # the nearest, lower on a tie


def beats(card, best, led):
    if suit(card) == TRUMP:
        return suit(best) != TRUMP or rank(card) > rank(best)
    return suit(best) != TRUMP and suit(card) == led == suit(best) and rank(card) > rank(best)


def winning_play(trick):
    led = suit(trick[0]["card"])
    best = trick[0]
    for play in trick[1:]:
        if beats(play["card"], best["card"], led):
            best = play
    return best


def unseen_cards(view):
    gone = set(view["hand"])
    for cards in view["played"]:
        gone.update(cards)
    return [c for c in DECK if c not in gone]


def is_master(card, unseen):
    return not any(suit(c) == suit(card) and rank(c) > rank(card) for c in unseen)


def needs(view, seat):
    """Tricks `seat` still needs for its bid (0 once made)."""
    bid = view["bids"][seat] or 0
    return max(0, bid - view["tricks_won"][seat])


def void(view, seat, s):
    return s in view["void_suits"][seat]


def choose_lead(view, legal):
    seat = view["seat"]
    unseen = unseen_cards(view)
    trumps_out = [c for c in unseen if suit(c) == TRUMP]
    hearts = sorted((c for c in legal if suit(c) == TRUMP), key=rank)
    side = [c for c in legal if suit(c) != TRUMP]
    opponents = [(seat + 1) % 4, (seat + 3) % 4]
    # draw trumps while holding more than are out, from the top if it is the master
    if hearts and trumps_out and len(hearts) > len(trumps_out):
        return hearts[-1] if is_master(hearts[-1], unseen) else hearts[0]
    if not side:
        return hearts[-1] if is_master(hearts[-1], unseen) else hearts[0]

    def ruffable(s):  # an opponent void in s who may still hold a heart
        return trumps_out and any(void(view, o, s) and not void(view, o, TRUMP) for o in opponents)

    safe = [c for c in side if not ruffable(suit(c))] or side
    masters = [c for c in safe if is_master(c, unseen)]
    if masters and (needs(view, seat) or any(needs(view, o) for o in opponents)):
        return max(masters, key=rank)  # cash a sure trick while tricks still matter
    # else lead low from the longest safe suit (length sets up tricks and spares the honours)
    length = {s: sum(suit(c) == s for c in legal) for s in SUITS}
    return min(safe, key=lambda c: (-length[suit(c)], rank(c), SUITS.index(suit(c))))


def discard(view, legal):
    """No card wins or winning is not wanted: the lowest card of the shortest side suit (to
    make a void), keeping hearts."""
    side = [c for c in legal if suit(c) != TRUMP]
    if not side:
        return min(legal, key=rank)
    length = {s: sum(suit(c) == s for c in view["hand"]) for s in SUITS}
    return min(side, key=lambda c: (length[suit(c)], rank(c), SUITS.index(suit(c))))


def choose_card(view, legal):
    trick = view["trick"]
    if not trick:
        return choose_lead(view, legal)
    seat = view["seat"]
    partner = (seat + 2) % 4
    led = suit(trick[0]["card"])
    top = winning_play(trick)
    unseen = unseen_cards(view)
    cheap = sorted(legal, key=lambda c: (suit(c) == TRUMP, rank(c), SUITS.index(suit(c))))
    winners = [c for c in cheap if beats(c, top["card"], led)]
    following = [c for c in legal if suit(c) == led]
    last = len(trick) == 3
    if top["seat"] == partner:
        sure = last or is_master(top["card"], unseen) or suit(top["card"]) == TRUMP
        if sure or not needs(view, seat) or needs(view, partner):
            return min(following, key=rank) if following else discard(view, legal)
    if not winners:
        return min(following, key=rank) if following else discard(view, legal)
    team_needs = needs(view, seat) + needs(view, partner)
    opponents_need = sum(needs(view, o) for o in ((seat + 1) % 4, (seat + 3) % 4))
    if not team_needs and not opponents_need:
        return min(following, key=rank) if following else discard(view, legal)
    if len(trick) == 1 and following:  # second hand low, unless a sure winner is cheap
        sure = [c for c in winners if suit(c) == led and is_master(c, unseen)]
        if sure:
            return sure[0]
        return min(following, key=rank)
    if last:
        return winners[0]  # the cheapest card that takes it
    # third hand: the cheapest winner that no card still out can top, else the cheapest
    sure = [c for c in winners if suit(c) == TRUMP or is_master(c, unseen)]
    return sure[0] if sure else winners[0]


def answer(message):
    if message["type"] == "hello":
        if message.get("version") != 1:
            print(
                f"counting_bot speaks version 1, was offered {message.get('version')}",
                file=sys.stderr,
            )
        return {"type": "ready", "name": "counting_bot", "version": 1}
    if message["type"] == "act":
        view, legal = message["view"], message["legal"]
        action = choose_bid(view, legal) if view["phase"] == "bid" else choose_card(view, legal)
        if action not in legal:  # never answer an illegal action
            print(f"counting_bot: {action!r} not legal, playing {legal[0]}", file=sys.stderr)
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
