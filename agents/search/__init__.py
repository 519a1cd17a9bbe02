"""Search bots: worlds from a view, policy play-outs, the endgame solver, rollout values, pimc and search.

``from agents.search import X`` for what :mod:`agents.search.agent` defines is the path of the flat
layout, forwarded with a DeprecationWarning for one release.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    from agents._moved import forward

    return forward(__name__, "agents.search.agent", name)
