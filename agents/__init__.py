"""Bots for 400: one protocol (`Agent`) for every kind, and a registry of names and specs.

The wings: :mod:`fourhundred_agents.protocol` (the protocol), :mod:`fourhundred_agents.registry`, :mod:`fourhundred_agents.draws`
(the per-view random streams), :mod:`fourhundred_agents.compiled` (scripted bots as compiled play-outs
run them); ``scripted/`` (random, heuristic, heuristic-v1, minbid and their play-outs),
``neural/`` (network, checkpoints, the neural agent, the bid network), ``search/`` (worlds,
play-outs, the endgame solver, rollout values, pimc and search), ``value/`` (match-win
estimates), ``remote/`` (bots in their own processes: cmd:, isolated Python bots, modules);
``compose``, ``human`` and the bid analyser beside them.
"""

from fourhundred_agents.protocol import Agent
from fourhundred_agents.registry import available_agents, make_agent, register_agent
from fourhundred_agents.scripted.random import RandomAgent

__all__ = ["Agent", "RandomAgent", "available_agents", "make_agent", "register_agent"]
