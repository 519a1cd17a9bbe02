"""A bid reward of your own for either bid trainer: a bonus for bold bids that are made.

    fourhundred train bidding_q_short reward=examples/bid_reward.py:big_bid_bonus
    fourhundred train bidding_short reward=examples/bid_reward.py:big_bid_bonus

Every play-out (or, for PPO bidding, every hand) is worth what the trainer would pay for it
(``outcome.value``: the match-win change in percentage points under the fitted-Q bidder's
``value: match_value``; ``match_value_points`` x that change as a probability under PPO
bidding), plus 5 when the bidding seat bid 5 or more and made it. The fitted-Q bidder learns
to bid 5 and more more often (tests/test_bid_hooks.py); PPO is paid the bonus
(tests/test_ppo_bid_reward.py). The contract of a reward is in train/bid_q/hooks.py
(``BidOutcome``).
"""

import numpy as np

BONUS = 5.0
"""Paid, in the value's units, for a made bid of 5 or more."""


def big_bid_bonus(outcome):
    """The trainer's value, plus BONUS where the bidding seat bid 5 or more and made it."""
    rows = np.arange(outcome.seat.size)
    made = outcome.made[rows, outcome.seat]
    bold = outcome.bid >= 5
    return outcome.value + BONUS * (made & bold)
