"""Learning curves of training runs, from their TensorBoard event files, as PNG files.

    from fourhundred_train.plots import load_runs, write_training_plots
    paths = write_training_plots(["runs/selfplay__1__...", "runs/selfplay__2__..."], "plots/")

Event files are read with TensorBoard's own reader (`EventAccumulator`), which also drops
the events a resumed run purged. Runs are overlaid, one colour each: the raw values faint,
an exponential moving average (debiased, as TensorBoard draws it) on top. The win rate
against the evaluation opponent carries its Wilson 95% band (``eval/win_rate_low`` /
``eval/win_rate_high``). The x axis is the number of learner decisions trained on when every
run logged ``charts/decisions`` (read from it, so runs logged with the update as their step
still plot right), else the TensorBoard step.

Figures are built on `matplotlib.figure.Figure` directly (the Agg renderer writes the PNGs),
so importing this module neither selects nor disturbs a pyplot backend, e.g. in a notebook.
Nothing here imports torch.

The package's modules, one job each: `runs` (reading run folders), `curves` (what the figures
share: colours, smoothing, the x axis, the legend), `ppo` and `exit` (each mode's figures),
`episodes` (the training episodes' results, as the examples log them), `bids` (the bidding
benchmark at each evaluation, ``eval/bid_*``, and the fitted-Q bidder's fit), `write` (which figures
a set of runs gets, written as PNGs). Runs of the SB3 and CleanRL examples plot too.
"""

from fourhundred_train.plots.bids import figure_bid_eval, figure_bid_q
from fourhundred_train.plots.curves import COLORS, DECISIONS, POSITIONS, auto_smoothing, ema
from fourhundred_train.plots.episodes import figure_episodes
from fourhundred_train.plots.exit import EXIT, figure_exit
from fourhundred_train.plots.ppo import (
    LOSS_PANELS,
    WIN_HIGH,
    WIN_LOW,
    WIN_RATE,
    figure_bidding,
    figure_losses,
    figure_points_per_hand,
    figure_win_rate,
)
from fourhundred_train.plots.runs import (
    SB3_TAGS,
    NoRunsError,
    Run,
    Series,
    find_runs,
    load_runs,
    read_scalars,
)
from fourhundred_train.plots.write import TRAINING_FIGURES, write_training_plots

__all__ = [
    "COLORS",
    "DECISIONS",
    "EXIT",
    "LOSS_PANELS",
    "POSITIONS",
    "SB3_TAGS",
    "TRAINING_FIGURES",
    "WIN_HIGH",
    "WIN_LOW",
    "WIN_RATE",
    "NoRunsError",
    "Run",
    "Series",
    "auto_smoothing",
    "ema",
    "figure_bid_eval",
    "figure_bid_q",
    "figure_bidding",
    "figure_episodes",
    "figure_exit",
    "figure_losses",
    "figure_points_per_hand",
    "figure_win_rate",
    "find_runs",
    "load_runs",
    "read_scalars",
    "write_training_plots",
]
