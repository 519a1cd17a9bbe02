"""Bots playing models trained with other RL libraries: ``sb3:PATH`` (a model zip saved by
Stable-Baselines3 or sb3-contrib, :mod:`fourhundred_agents.libraries.sb3`) and ``torch:PATH`` (any torch
module ``policy(obs, mask) -> logits`` saved with a manifest, :mod:`fourhundred_agents.libraries.torch_policy`,
what ``examples/cleanrl_ppo.py`` saves). :mod:`fourhundred_agents.libraries.agent` registers both and is
the only module imported with the registry: torch and SB3 load when such a bot is made.
"""
