"""Bid features of your own for either bid trainer: the hearts above the ten and the
partner's bid, two things the plain network (``net: mlp``) must otherwise dig out of the
observation.

    fourhundred train bidding_q_short net=mlp worlds=0 \\
        features=examples/bid_features.py:honours_and_partner
    fourhundred train bidding_short features=examples/bid_features.py:honours_and_partner
    fourhundred bid-eval \\
        neural-bid:runs/.../policy.pt,features=examples/bid_features.py:honours_and_partner

The checkpoint records only the function's name (``honours_and_partner``) and its width (3):
it is played with the same ``features=`` named again, and refused without it. The contract
of a feature function is in agents/neural/extra_features.py and docs/bidding.md.
"""

import numpy as np

from fourhundred_env.cards import SUIT_SETS, Suit

HIGH_HEARTS = np.uint64(int(SUIT_SETS[Suit.HEARTS]) & ~((1 << (13 * Suit.HEARTS + 9)) - 1))
"""The jack, queen, king and ace of hearts (hearts are always trump)."""


def honours_and_partner(view):
    """(K, 3) float32 at the bidding seat's K tables: its hearts above the ten (of 4), whether
    its partner has bid yet, and the partner's bid (/ 13; 0 if not yet)."""
    rows = np.arange(view.size)
    partner = (view.seat.astype(np.int64) + 2) % 4
    bid = view.bids[rows, partner].astype(np.float32)
    high = np.bitwise_count(view.hand_set & HIGH_HEARTS).astype(np.float32)
    return np.stack([high / 4, (bid > 0).astype(np.float32), bid / 13], axis=1)
