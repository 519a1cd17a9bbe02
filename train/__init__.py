"""Learning for 400 (torch): the policy network, checkpoints and the self-play trainers.

Nothing in fourhundred_env or agents imports this package except the neural agent, which
loads checkpoints through `fourhundred_train.checkpoint` and `fourhundred_train.network`.
"""
