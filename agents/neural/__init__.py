"""Neural bots: the policy-value network, its checkpoints, the neural agent and the bid network.

``from agents.neural import X`` for what :mod:`agents.neural.agent` defines is the path of the flat
layout, forwarded with a DeprecationWarning for one release.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    from agents._moved import forward

    return forward(__name__, "agents.neural.agent", name)
