"""Engine analysis: the values of a decision's legal actions by an agent that can give them
(:mod:`fourhundred_agents.analysis.values`), and a whole game's decisions analysed with them, where each
seat lost value and its largest mistakes (:mod:`fourhundred_agents.analysis.game`)."""

from fourhundred_agents.analysis.game import (
    NOISE,
    Analysis,
    DecisionAnalysis,
    SeatSummary,
    ValuedAction,
    analyse_decisions,
    analyse_record,
)
from fourhundred_agents.analysis.values import (
    VALUERS,
    ActionValuer,
    ActionValues,
    SearchValuer,
    make_valuer,
    world_stats,
)

__all__ = [
    "NOISE",
    "VALUERS",
    "ActionValuer",
    "ActionValues",
    "Analysis",
    "DecisionAnalysis",
    "SearchValuer",
    "SeatSummary",
    "ValuedAction",
    "analyse_decisions",
    "analyse_record",
    "make_valuer",
    "world_stats",
]
