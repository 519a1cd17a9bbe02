"""Agents for the isolation tests (an --agent-module): `swallower` swallows every attempt to
interrupt its first move (it catches BaseException in its search loop, forever), `crasher`
kills its own interpreter on its first move; afterwards both play their lowest legal action.
Each misbehaves once per marker file: FOURHUNDRED_TEST_MARKER (from the environment), then
"-" and its name."""

import os
import time

import numpy as np

from fourhundred_agents import register_agent
from fourhundred_agents.protocol import Agent


def _first_time(name: str) -> bool:
    marker = os.environ["FOURHUNDRED_TEST_MARKER"] + "-" + name
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


class Swallower(Agent):
    def act(self, view):
        if _first_time("swallower"):
            while True:
                try:  # noqa: SIM105 (a timeout, a Ctrl-C...: it keeps searching)
                    time.sleep(0.05)
                except BaseException:
                    pass
        return np.argmax(view.legal_mask, axis=1).astype(np.int64)


class Crasher(Agent):
    def act(self, view):
        if _first_time("crasher"):
            os._exit(7)
        return np.argmax(view.legal_mask, axis=1).astype(np.int64)


register_agent("swallower", lambda rules, seed, s: Swallower(rules, seed), "test: hangs once")
register_agent("crasher", lambda rules, seed, s: Crasher(rules, seed), "test: dies once")
