"""Neural bots: the policy-value network, its checkpoints, the neural agent and the bid network."""
