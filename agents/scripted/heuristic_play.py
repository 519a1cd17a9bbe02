"""The heuristic's card play, and its one decision (a bid or a card) per view record.

From the SeatView only: own hand, cards played (so the cards still out and the hearts
left), voids shown, bids and tricks (who still needs tricks). Following: don't overtake a
partner who wins the trick unless the partner has made and we need tricks (or the partner's
card may still be beaten); otherwise, when our side wants the trick (we need tricks, or an
opponent still does), win with the cheapest card that is sure to hold against the players
still to play; third hand high when nothing is sure; second hand low (a sure winner only when
we need the trick ourselves); ruff with the lowest heart that wins; else play low, discarding
from the shortest side suit to make voids and keeping masters. Leading, with tricks to make:
the top heart when no heart out beats it (draws trumps), then side-suit masters that cannot
be ruffed, then a singleton (to ruff that suit later), else low from the shortest side suit;
when we have made and the partner needs tricks, lead into the partner's void, or low; when
only the opponents need tricks, cash winners to deny them.
"""

from __future__ import annotations

import numpy as np

from fourhundred_agents.draws import nth_true, view_uniform
from fourhundred_agents.scripted.heuristic_bid import (
    DECK,
    NUM_FEATURES,
    above,
    at,
    card_set,
    heuristic_bid,
    minimum_bid,
)
from fourhundred_env._jit import ZERO, helper, highest_bit, kernel, lowest_bit, popcount
from fourhundred_env.kernels import BID, HEARTS, PLAY, SUITS
from fourhundred_env.streams import EXPLORE_SALT, PICK_SALT
from fourhundred_env.view import valid_view


# -- card play ------------------------------------------------------------------------------
@helper
def low_card(legal: np.uint64, unseen: np.uint64, have_led: bool) -> int:
    """The card to play when not trying to win a trick being followed: the lowest of the suit
    led, or a discard (lowest card of the shortest side suit, keeping masters and hearts)."""
    follow_low = lowest_bit(legal)
    if have_led:
        return follow_low
    best_key = 10**7
    best = -1  # lowest card of the suit with the smallest key, -1 if no side card
    for s in range(3):
        side = legal & SUITS[s]
        n = popcount(side)
        if n == 0:
            continue
        low = lowest_bit(side)
        masters = (unseen & SUITS[s] & above(low)) == ZERO  # nothing out beats even our lowest
        key = n * 16 + low % 13 + (1000 if masters else 0)
        if key < best_key:
            best_key = key
            best = low
    if best < 0:
        best = lowest_bit(legal & HEARTS)
    return best if best >= 0 else follow_low


@helper
def lead_card(hand: np.uint64, unseen: np.uint64, shown: int, may_hold: int, may_ruff: int,
              my_need: bool, p_need: bool, opp_need: bool, low: int) -> int:  # fmt: skip
    """The card to lead. `shown`, `may_hold`, `may_ruff`: the packed (rel seat, suit) tables
    of `play_card`."""
    my_h = hand & HEARTS
    n_h = popcount(my_h)
    top_h = highest_bit(my_h)
    master_h = top_h >= 0 and (unseen & HEARTS & above(top_h)) == ZERO
    safe_key = 0
    cash = -1  # safe master in the suit with most cards still out (least likely to be ruffed)
    single = -1  # singleton side card that is not a master: lead it to ruff that suit later
    short_key = -(10**7)
    short_low = -1  # low from the shortest side suit (towards a void; beat the longest)
    into_void = -1  # low in a suit the partner is void in (partner may ruff)
    for s in range(3):
        side = hand & SUITS[s]
        n = popcount(side)
        if n == 0:
            continue
        top = highest_bit(side)
        low = lowest_bit(side)
        master = (unseen & SUITS[s] & above(top)) == ZERO
        if master and not at(may_ruff, 1, s) and not at(may_ruff, 3, s):
            key = popcount(unseen & SUITS[s]) + 1
            if key > safe_key:
                safe_key = key
                cash = top
        if single < 0 and n == 1 and not master and n_h > 0:
            single = low
        key = -n * 16 - low % 13
        if key > short_key:
            short_key = key
            short_low = low
        if into_void < 0 and at(shown, 2, s) and at(may_hold, 2, 3):
            into_void = low
    if short_low < 0:
        short_low = lowest_bit(my_h)

    # With tricks to make: the top heart first (draws trumps; measured better than cashing
    # side masters first), then safe side masters, then a singleton, then low.
    if my_need:
        if master_h:
            lead = top_h
        elif cash >= 0:
            lead = cash
        elif single >= 0:
            lead = single
        else:
            lead = short_low
    elif p_need:
        lead = into_void if into_void >= 0 else short_low
    elif opp_need:
        lead = top_h if master_h else (cash if cash >= 0 else short_low)
    else:
        lead = short_low
    return lead if lead >= 0 else low


@helper
def play_card(v: np.ndarray, p: np.ndarray) -> int:
    """The heuristic's card (0..51) at a table in play (see the module docstring)."""
    me = np.int64(v["seat"])
    hand = v["hand_set"]
    legal = card_set(v["legal_mask"])
    played = v["played_set"]
    unseen = DECK & ~hand & ~(played[0] | played[1] | played[2] | played[3])  # held by others

    bids = v["bids"]
    won = v["tricks_won"]
    my_need = np.int64(bids[me]) > np.int64(won[me])
    mate = (me + 2) & 3
    p_need = np.int64(bids[mate]) > np.int64(won[mate])
    opp_need = False
    for rel in (1, 3):
        seat = (me + rel) & 3
        opp_need = opp_need or np.int64(bids[seat]) > np.int64(won[seat])
    worth = my_need or opp_need  # our side gains from winning this trick

    # (rel seat, suit) tables, packed 4 bits per rel seat (rel 0 me, 1 right, 2 partner,
    # 3 left): shown void, may still hold the suit, may be void in it, may ruff it.
    guess = p["void_guess"]
    out_suits = 0
    thin_suits = 0
    for s in range(4):
        n = popcount(unseen & SUITS[s])
        if n > 0:
            out_suits |= 1 << s
        if n <= guess:
            thin_suits |= 1 << s
    shown = 0
    may_hold = 0
    may_be_void = 0
    may_ruff = 0
    for rel in range(4):
        void = np.int64(v["shown_void"][(me + rel) & 3]) & 15
        hold = out_suits & ~void
        maybe = void | thin_suits
        shown |= void << (4 * rel)
        may_hold |= hold << (4 * rel)
        may_be_void |= maybe << (4 * rel)
        if hold & 8:  # may hold hearts: may ruff the side suits it may be void in
            may_ruff |= (maybe & 7) << (4 * rel)

    size = np.int64(v["trick_size"])
    leading = size == 0
    if leading:
        return lead_card(hand, unseen, shown, may_hold, may_ruff, my_need, p_need, opp_need,
                         lowest_bit(legal))  # fmt: skip
    led = np.int64(v["led_suit"])
    led_set = SUITS[led]
    w_rel = 0  # the card winning the trick so far, and its player
    w_card = -1
    best = -1
    for rel in range(4):
        c = np.int64(v["trick_cards"][(me + rel) & 3])
        if c < 0:
            continue
        suit = c // 13
        strength = c % 13 + (13 if suit == led else 0) + (26 if suit == 3 else 0)
        if strength > best:
            best = strength
            w_rel = rel
            w_card = c
    heart_wins = w_card >= 39 and led != 3  # a ruff is winning a side-suit trick
    opp1_later = size <= 2  # right-hand opponent still to play (the left-hand one has played)
    have_led = (hand & led_set) != ZERO

    # The cheapest card that beats the trick, and the cheapest sure winner: following suit,
    # or ruffing (void in a side suit led) with the lowest heart that wins.
    beat = -1
    sure = -1
    if have_led:
        if not heart_wins:
            beat = lowest_bit(legal & above(w_card))
            if not (opp1_later and at(may_ruff, 1, led)):
                thr = w_card
                if opp1_later and at(may_hold, 1, led):
                    thr = max(w_card, highest_bit(unseen & led_set))
                sure = lowest_bit(legal & above(thr))
    elif led != 3 and (legal & HEARTS) != ZERO:
        thr = w_card if heart_wins else -1
        beat = lowest_bit(legal & HEARTS & above(thr))
        if opp1_later and at(may_be_void, 1, led) and at(may_hold, 1, 3):  # may overruff
            thr = max(thr, highest_bit(unseen & HEARTS))
        sure = lowest_bit(legal & HEARTS & above(thr))
    low = low_card(legal, unseen, have_led)

    if w_rel == 2:
        # Is the partner's winning card safe from the right-hand opponent (the only one left)?
        if heart_wins:
            beaten = at(may_be_void, 1, led) and at(may_hold, 1, 3)
            beaten = beaten and (unseen & HEARTS & above(w_card)) != ZERO
        else:
            beaten = at(may_hold, 1, led) and (unseen & led_set & above(w_card)) != ZERO
            beaten = beaten or at(may_ruff, 1, led)
        partner_sure = not (opp1_later and beaten)
        if sure >= 0 and ((not p_need and my_need) or (not partner_sure and worth)):
            return sure  # overtake
        return low
    if worth:
        if sure >= 0:
            if size != 1 or my_need:  # second hand: a sure winner only for ourselves
                return sure
        elif beat >= 0:
            if size == 2:  # third hand high
                return highest_bit(legal & led_set) if have_led else beat
            if size == 1 and not have_led:  # second hand ruffs
                return beat
    return low


# -- kernels --------------------------------------------------------------------------------
@helper
def heuristic_one(v: np.ndarray, r: np.ndarray, p: np.ndarray, f: np.ndarray,
                  key: np.uint64) -> int:  # fmt: skip
    """The heuristic's action for the view record `v`: a bid or redeal where bidding (as
    `minbid` when p["min_bids"]), a card where playing, -1 otherwise. With p["epsilon"] > 0,
    that share of decisions is a uniformly random legal action instead, drawn from the
    agent's `key` and the position (fourhundred_agents.draws.view_uniform). f: feature scratch."""
    phase = v["phase"]
    if phase > PLAY:
        return -1
    eps = p["epsilon"]
    if eps > 0 and view_uniform(v, key, EXPLORE_SALT) < eps:
        row = v["legal_mask"]
        n = 0
        for a in range(row.shape[0]):
            if row[a]:
                n += 1
        return nth_true(row, np.int64(view_uniform(v, key, PICK_SALT) * n))
    if phase == BID:
        return minimum_bid(v, r) if p["min_bids"] else heuristic_bid(v, r, p, f)
    return play_card(v, p)


@kernel
def decide(views: np.ndarray, rules: np.ndarray, params: np.ndarray, key: np.uint64,
           out: np.ndarray) -> int:  # fmt: skip
    """`out` (K,) int64: `heuristic_one` at each of the K records of `views` (SeatView.DTYPE).
    params: (1,) PARAMS_DTYPE; rules: the engine's (1,) rules record; key: the agent's.
    Returns the first record that is not a valid view (nothing decided), or -1."""
    for j in range(views.shape[0]):
        if not valid_view(views[j]):
            return j
    r = rules[0]
    p = params[0]
    f = np.empty(NUM_FEATURES)
    for j in range(views.shape[0]):
        out[j] = heuristic_one(views[j], r, p, f, key)
    return -1
