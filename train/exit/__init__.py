"""Expert iteration (``mode: exit``, configs/exit.yaml): the search's strength trained into the
network, and the search run again over the better network.

Each iteration k, with the network of the moment N_k (the ``init`` checkpoint for k = 0):

1. **Positions from N_k's own matches.** `num_tables` matches to 41 are played from 0-0 by
   N_k at all four seats (actions sampled from its policy, ``sample: true``, so the games
   vary), and decisions with more than one legal action are kept at random (bids more often
   than cards) until `positions` are kept, a `bid_share` of them bids: the bids and cards of
   every seat, in the match situations real matches reach.
2. **Every legal action valued by the search over N_k.** ``search`` (agents/search/agent.py)
   with N_k as its prior, its play-out policy and its model of the other seats values every
   legal action of each position by its mean over `worlds` worlds (`bid_worlds` for bids)
   dealt from the seat's view and weighted by the others' inferred models: the match-win
   estimate after the hand (1 or 0 if the hand ends the match). Two independent halves of
   the worlds are kept apart (two search keys), so that the noise of the values can be
   measured. Positions are valued in chunks of `chunk` by `workers` processes (or Ray tasks,
   ``backend: ray``); a chunk's values depend on nothing but its positions and the seed, and
   each chunk is written to the run folder as it is done.
3. **The fit.** The policy's target at a position is a softmax of its actions' values (the
   mean of both halves) at a temperature: `temperature`, or by default one fitted for each
   group of positions (``temperature_by: trick``: the bids, and each trick of the hand, whose
   values grow less noisy as the hand goes on), the one at which the softmax of one half's
   values is worth most by the other half's on the group's fitted positions (divided by
   sqrt 2 for the mean of both halves, whose noise is that much smaller;
   ``temperature_by: all`` fits one for every position on the held-out ones). The value head
   is fitted to the target's expected value (the position's match-win chance under the
   search). N_k is trained on the positions of the last `window` iterations for `epochs`
   passes, its value by squared error and its policy (``objective: value``, the default)
   by its expected value by the search's values less its KL divergence from its own policy
   times the temperature, whose best is the target too but whose errors, where the network
   cannot reach it, go where they cost least (``objective: cross_entropy``: the
   cross-entropy to the target): N_{k+1}.
4. **Evaluation.** N_{k+1} plays duplicate matches against `eval_opponent` and against N_k
   (the tournament runner, Wilson intervals); the held-out positions give the search's
   gain over N_k (the value of the search's best action minus that of N_k's choice) and
   their agreement. With a `gate`, N_{k+1} is kept only if it wins at least that share
   against N_k (AlphaGo Zero's gate); if not, iteration k + 1 searches over and fits N_k
   again, with the positions of both iterations in its window.

The run folder holds config.yaml, labels_K/chunk_NNNNN.npz (the values), iter_K.pt (the
network fitted in iteration K, a policy checkpoint), policy.pt (the newest one kept; with
``bidder``, init.pt is the run's start), metrics.jsonl (a row per iteration) and TensorBoard's event files. A rerun of the folder (``--resume``)
goes on from the last finished iteration and its valued chunks, with the weights of a
straight run.
"""

from fourhundred_train.exit.config import (
    DEFAULT_INIT,
    RESUMABLE,
    ExitConfig,
    is_exit,
    load_exit_config,
    resume_config,
)
from fourhundred_train.exit.labels import (
    KEEP_BID,
    KEEP_PLAY,
    Labeller,
    in_workers,
    label_positions,
    read_chunk,
    record_positions,
)
from fourhundred_train.exit.targets import (
    BID_GROUP,
    TEMPERATURES,
    advantages,
    fit,
    fit_temperature,
    fit_temperatures,
    improved_policy,
    log_policy,
    search_gain,
    split,
    symmetric_log_policy,
    target_worth,
    targets,
    temperature_groups,
)
from fourhundred_train.exit.trainer import ExitTrainer, results_table

__all__ = [
    "BID_GROUP",
    "DEFAULT_INIT",
    "KEEP_BID",
    "KEEP_PLAY",
    "RESUMABLE",
    "TEMPERATURES",
    "ExitConfig",
    "ExitTrainer",
    "Labeller",
    "advantages",
    "fit",
    "fit_temperature",
    "fit_temperatures",
    "improved_policy",
    "in_workers",
    "is_exit",
    "label_positions",
    "load_exit_config",
    "log_policy",
    "read_chunk",
    "record_positions",
    "results_table",
    "resume_config",
    "search_gain",
    "split",
    "symmetric_log_policy",
    "target_worth",
    "targets",
    "temperature_groups",
]
