"""fourhundred: the 400 card game (Lebanon, Syria) as a fast batched engine for AI bots.

The rules core imports only numpy and numba (compiled kernels). Gymnasium environments, and
the OpenSpiel and RLCard games, live in ``fourhundred_env.envs``.
"""

from fourhundred_env.cards import NUM_ACTIONS, Suit, action_text, card_text, parse_card, parse_hand
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import CardError, FourHundredError, IllegalActionError, RulesError
from fourhundred_env.rules import Rules
from fourhundred_env.table import HandRecord, Table

__version__ = "0.1.0"

__all__ = [
    "NUM_ACTIONS",
    "CardError",
    "Engine",
    "FourHundredError",
    "HandRecord",
    "IllegalActionError",
    "Phase",
    "Rules",
    "RulesError",
    "State",
    "Suit",
    "Table",
    "__version__",
    "action_text",
    "card_text",
    "parse_card",
    "parse_hand",
]
