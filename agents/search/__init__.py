"""Search bots: worlds from a view, policy play-outs, the endgame solver, rollout values, pimc and search."""
