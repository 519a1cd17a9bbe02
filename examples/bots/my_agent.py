"""A Python bot entered with ``--agent-module``: it registers the agent ``greedy``.

    fourhundred tournament --agent-module examples/bots/my_agent.py --agents greedy heuristic

(from any folder, with the path to this file; from this folder, ``--agent-module my_agent``
works too). A tournament plays it in processes of its own, one per seat, killed and restarted
if a move passes the hard limit (``isolation: auto``).

An agent gets a :class:`~fourhundred_env.view.SeatView` of K tables where its seat is to act
(numpy arrays, batch axis first: its hand, the bids, the trick, the scores, the legal mask)
and returns K legal action ids: 0-51 play the card ``13 * suit + rank``, 52-64 bid 1..13,
65 asks for a redeal.
"""

import numpy as np

from fourhundred_agents import register_agent
from fourhundred_agents.protocol import Agent
from fourhundred_env.cards import BID_OFFSET, NUM_CARDS


class GreedyAgent(Agent):
    """Bids the lowest legal bid; plays its highest legal card (hearts count as highest)."""

    name = "greedy"

    def act(self, view):
        mask = view.legal_mask
        bidding = mask[:, NUM_CARDS:].any(axis=1)
        lowest_bid = np.argmax(mask[:, BID_OFFSET + 1 :], axis=1) + BID_OFFSET + 1
        # cards 0-51 are ordered by suit then rank, hearts last: the highest legal id is the
        # highest heart if any, else the highest card of the highest suit
        highest_card = NUM_CARDS - 1 - np.argmax(mask[:, NUM_CARDS - 1 :: -1], axis=1)
        return np.where(bidding, lowest_bid, highest_card).astype(np.int64)


register_agent(
    "greedy",
    lambda rules, seed, settings: GreedyAgent(rules, seed),
    "example: lowest bid, highest card (examples/bots/my_agent.py)",
)
