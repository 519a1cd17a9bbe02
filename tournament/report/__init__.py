"""The tournament report: leaderboard, pairwise matrix, Bradley-Terry Elo, conduct; text, JSON, CSV.

:func:`build_report` reads a results database (:mod:`fourhundred_tournament.db`) and returns a plain dict
(the JSON written by :func:`write_report`); :func:`load_report` does so from the database file
alone (:func:`config_from_db`). Definitions:

- *win rate*: (wins + 0.5 unfinished) / games over the agent's games against other agents
  (mirror games excluded), with a Wilson 95% interval.
- *points per hand*: mean score change of the agent's seats over the hands that were played.
- *bid success*: contracts made (tricks >= bid, not forfeited) / contracts played.
- *thrown in caused*: hands thrown in because the agent asked for a redeal, or because it was
  the dealer (who bids last and can make the total) and the total fell short; per 100 hands.
- *ms per move*: agent time per decision (a batched call's time split over its tables).
- *Elo*: Bradley-Terry fit of all game results (unfinished = draw) on the Elo scale, with
  percentile intervals from bootstrap resamples of duplicate matches within each pairing.

One module per job, each name importable from here: :mod:`~fourhundred_tournament.report.statistics`
(the numbers, from a database), :mod:`~fourhundred_tournament.report.text` (the text tables) and
:mod:`~fourhundred_tournament.report.export` (JSON, CSV, TensorBoard).
"""

from fourhundred_tournament.report.export import log_tensorboard, write_report
from fourhundred_tournament.report.statistics import (
    FORFEIT_KINDS,
    build_report,
    config_from_db,
    load_report,
)
from fourhundred_tournament.report.text import format_report

__all__ = [
    "FORFEIT_KINDS",
    "build_report",
    "config_from_db",
    "format_report",
    "load_report",
    "log_tensorboard",
    "write_report",
]
