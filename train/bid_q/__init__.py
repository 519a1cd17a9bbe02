"""A bidder by fitted Q-iteration over exact play-outs (``mode: bid_q``, configs/bidding_q.yaml).

A bid is a one-shot decision and the rest of the hand is cheap to play exactly, so instead of
a policy gradient this trains a regression of Q(situation, hand, bid), the value of each bid:

1. **Situations from real matches.** Matches are played to their end, the learner bidding
   for seats 0 and 2 (its partnership) with its bidder of the moment (``heuristic-v1`` in
   the first iteration), ``heuristic-v1`` bidding for seats 1 and 3 and playing every card.
   Every bid of a learner seat is recorded with the whole table (the match scores, the
   target, the bids so far and the deal): the positions a match really reaches, not scores
   drawn at random.
2. **Every legal bid played out.** From each recorded position every legal bid (and the
   redeal, where allowed) is played out on the same deal: the later bids of the learner's
   partner by the learner's bidder of the moment, the opponents' by ``heuristic-v1``, all
   cards by ``heuristic-v1`` (common random numbers: the bids differ only in the bid). Each
   play-out is valued by what it did to the team's chance of winning the match
   (``value: match_value``: 100 x the change of the match-win estimate over the hand,
   agents/value/match_value.py, in percentage points) or by the team's points in the hand
   (``value: team_points``). No play-out sees a hidden card; only the deal is the true one.
3. **A fitted Q.** A network reads the bidding seat's own observation (match fields blanked
   with ``match_features: false``) and outputs one value per bid; it is fitted by squared
   error to the played-out values of every legal bid of every position. The bidder is the
   argmax of the fitted values: the noise of one deal averages out in the fit, so the
   choice is not the maximum of noisy play-outs (the winner's curse).
4. **Iterate.** The next iteration's matches and play-outs use the new bidder for the
   learner's seats (in a match both seats of a team bid with it), and the network is
   fitted again (warm-started) on the positions of all iterations so far (or of the last
   ``window`` iterations: the fit's time and memory then stay bounded).

**The shipped config** (configs/bidding_q.yaml) values each bid by its mean over 64 worlds
instead of the one true deal (``worlds``: the bid search of ``search:bidder``, far less
noisy targets; computed by ``workers`` processes), adds the team's points (``per_point``), and
fits a network that also reads heuristic-v1's evaluation of the hand and what each bid would
do to the match (``net: bid_features``, agents/neural/bid_net.py), in one iteration.

Either network's bid logits are the Q-values (in value units, relative to the bid made: see
``clip``): greedy ``neural-bid:PATH`` plays it, with ``heuristic-v1``'s card play recorded as
its play policy; the value head (``net: mlp``, a PolicyValueNet) is not fitted and is 0.
The fit runs on ``torch_threads`` threads (the worlds' values in their own processes); each
iteration's positions and values are saved in the run folder as it ends (``iter_N.npz``)
with the network after it (``iter_N.pt``), and a rerun of the same folder (``--resume``)
continues from the last finished iteration with exactly the result of a straight run; an
iteration stopped in its fit starts again from its saved values (the fit's settings may then
be changed: the values do not depend on them).

The package's modules, one job each: `config` (`BidQConfig`), `positions` (the bidder of the
moment and its recorded bids), `values` (every legal bid valued, in worker processes with
``worlds``), `inputs` (the network's inputs), `targets` (the relative targets and the fit),
`trainer` (`BidQTrainer`, the run).
"""

from fourhundred_train.bid_q.config import BID_HEADS, BidQConfig, is_bid_q, load_bid_q_config
from fourhundred_train.bid_q.inputs import bid_inputs, observations
from fourhundred_train.bid_q.positions import NUM_BIDS, QBidder, record_positions
from fourhundred_train.bid_q.targets import fit, relative_targets
from fourhundred_train.bid_q.trainer import BidQTrainer
from fourhundred_train.bid_q.values import play_out_values, world_values

__all__ = [
    "BID_HEADS",
    "NUM_BIDS",
    "BidQConfig",
    "BidQTrainer",
    "QBidder",
    "bid_inputs",
    "fit",
    "is_bid_q",
    "load_bid_q_config",
    "observations",
    "play_out_values",
    "record_positions",
    "relative_targets",
    "world_values",
]
