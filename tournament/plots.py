"""Figures of a tournament's results database (:mod:`fourhundred_tournament.db`), as PNG files.

    from fourhundred_tournament.plots import write_tournament_plots
    paths = write_tournament_plots("runs/tournament/results.sqlite", "runs/tournament/plots")

The numbers come from :func:`fourhundred_tournament.report.build_report` (win rates with Wilson intervals,
the pairwise matrix, Bradley-Terry Elo with bootstrap intervals), so the figures and the
text report always agree; only the per-hand figures (bids against tricks, score
trajectories) read the ``hands`` table themselves. A database alone is enough: the
tournament config is rebuilt from its stored fingerprint (agents, rules, seed, max_hands)
unless the caller passes the real one (:func:`fourhundred_tournament.report.config_from_db`). The
database is opened read-only.

Figures are built with the helpers of :mod:`fourhundred_tournament.figures` (Agg, no pyplot state).
Nothing else in :mod:`tournament` imports this module (matplotlib is the optional ``plots``
extra).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_tournament.config import TournamentConfig
from fourhundred_tournament.db import ReadOnlyResults, ResultsDB
from fourhundred_tournament.db.ladder import recorded_pairings
from fourhundred_tournament.figures import new_figure, save_figure
from fourhundred_tournament.report import build_report, config_from_db

#: Seat colours: team 0 (seats 0, 2) blue, team 1 (seats 1, 3) vermilion; partners share a hue.
SEAT_COLORS = ("#0072B2", "#D55E00", "#56B4E9", "#E69F00")
SEAT_STYLES = ("-", "-", "--", "--")


# -- reading -----------------------------------------------------------------------------------
def _hands(db: ResultsDB, cfg: TournamentConfig, columns: str, where: str = "") -> list[tuple]:
    """Rows of hands of finished games between different agents, in play order."""
    pairs = {p for p in cfg.pairings() if p[0] != p[1]}
    sql = (
        f"SELECT h.pair_a, h.pair_b, {columns} FROM hands h JOIN matches m "
        "ON m.pair_a = h.pair_a AND m.pair_b = h.pair_b AND m.match_id = h.match_id "
        f"AND m.orientation = h.orientation WHERE h.match_id < ? {where} "
        "ORDER BY h.pair_a, h.pair_b, h.match_id, h.orientation, h.hand_index"
    )
    return [r[2:] for r in db.query(sql, (cfg.matches,)) if (r[0], r[1]) in pairs]


def bids_and_tricks(db: ResultsDB, cfg: TournamentConfig) -> dict[str, np.ndarray]:
    """Per agent (by the name the report shows), (N, 2) int64 of (bid, tricks taken) over its
    contracts in played hands."""
    cols = "h.team0, h.team1, " + ", ".join(f"h.bid{s}, h.tricks{s}" for s in range(4))
    rows = _hands(db, cfg, cols, "AND h.thrown_in = 0")
    out: dict[str, list[tuple[int, int]]] = {a: [] for a in sorted(cfg.labels)}
    for team0, team1, *nums in rows:
        for seat in range(4):
            out[team0 if seat % 2 == 0 else team1].append((nums[2 * seat], nums[2 * seat + 1]))
    return {cfg.display(a): np.array(v, np.int64).reshape(-1, 2) for a, v in out.items()}


# -- drawing helpers ---------------------------------------------------------------------------
def _percent_axis(axis: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    axis.set_major_formatter(PercentFormatter(100, decimals=0))


def _subtitle(report: dict[str, Any]) -> str:
    c = report["config"]
    return (
        f"{len(c['agents'])} agents, {c['matches']} duplicate matches per pairing "
        f"({report['games']} games), rules {c['rules_name']}, seed {c['seed']}"
    )


def _ranked(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report["leaderboard"] if r["games"]]


# -- figures -----------------------------------------------------------------------------------
def figure_leaderboard(report: dict[str, Any]) -> Any:
    """Win rate of each agent (all its games against the others) with its Wilson 95% interval,
    in leaderboard order, best at the top."""
    from matplotlib.transforms import blended_transform_factory

    rows = _ranked(report)
    fig = new_figure(8.5, 1.6 + 0.55 * max(len(rows), 1))
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    rate = np.array([100 * r["win_rate"] for r in rows])
    low = np.array([100 * r["win_low"] for r in rows])
    high = np.array([100 * r["win_high"] for r in rows])
    ax.axvline(50, color="0.45", linestyle="--", linewidth=1, zorder=1)
    ax.errorbar(rate, y, xerr=[rate - low, high - rate], fmt="o", color="#0072B2",
                ecolor="#0072B2", elinewidth=2.2, capsize=5, markersize=7, zorder=3)  # fmt: skip
    ax.set_yticks(y, [f"{r['rank']}. {r['agent']}" for r in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(-2, 102)  # room for a marker at 0% or 100%
    ax.set_xticks(range(0, 101, 20))
    _percent_axis(ax.xaxis)
    ax.set_xlabel("games won against the other agents (%), unfinished = ½; bars: Wilson 95%")
    ax.grid(True, axis="x", alpha=0.3)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for yy, r in zip(y, rows, strict=True):
        ax.text(1.02, yy, f"{100 * r['win_rate']:.1f}%  ({r['games']} games)", transform=right,
                va="center", ha="left", fontsize=9)  # fmt: skip
    ax.set_title("Leaderboard: win rate to 41", fontsize=12, loc="left")
    fig.suptitle(_subtitle(report), fontsize=8.5, color="0.35", x=0.99, ha="right")
    return fig


def figure_pairwise(report: dict[str, Any]) -> Any:
    """Heatmap of the row agent's win rate against the column agent, cells annotated with the
    rate, its Wilson 95% interval and the number of games; diagonal: mirror games if played."""
    from matplotlib import colormaps

    order = [r["agent"] for r in report["leaderboard"]]
    n = len(order)
    cell: dict[tuple[str, str], tuple[float, float, float, int]] = {}
    for p in report["pairwise"]:
        a, b = p["agent"], p["opponent"]
        cell[(a, b)] = (p["rate"], p["low"], p["high"], p["games"])
        cell[(b, a)] = (1 - p["rate"], 1 - p["high"], 1 - p["low"], p["games"])
    for m in report["mirror"]:
        cell[(m["agent"], m["agent"])] = (m["rate"], m["low"], m["high"], m["games"])
    values = np.full((n, n), np.nan)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if (a, b) in cell:
                values[i, j] = 100 * cell[(a, b)][0]
    size = 2.2 + 1.35 * n
    fig = new_figure(size + 1.6, size)
    ax = fig.add_subplot()
    cmap = colormaps["RdBu"].with_extremes(bad="0.88")
    image = ax.imshow(values, cmap=cmap, vmin=0, vmax=100, aspect="equal")
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if (a, b) not in cell:
                ax.text(j, i, "–", ha="center", va="center", color="0.45", fontsize=12)
                continue
            rate, lo, hi, games = cell[(a, b)]
            dark = abs(rate - 0.5) > 0.3
            color = "white" if dark else "black"
            ax.text(j, i - 0.12, f"{100 * rate:.0f}%", ha="center", va="center", color=color,
                    fontsize=12, fontweight="bold")  # fmt: skip
            ax.text(j, i + 0.22, f"[{100 * lo:.0f}–{100 * hi:.0f}]\n{games} games", ha="center",
                    va="center", color=color, fontsize=7.5, linespacing=1.1)  # fmt: skip
    ax.set_xticks(range(n), order, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(n), order)
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("agent (row)")
    ax.set_xticks(np.arange(n + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(n + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label("row's win rate against column (%)")
    _percent_axis(bar.ax.yaxis)
    ax.set_title("Pairwise win rate (Wilson 95% in brackets)", fontsize=12)
    fig.suptitle(_subtitle(report), fontsize=8.5, color="0.35", x=0.99, ha="right")
    return fig


def figure_ratings(report: dict[str, Any]) -> Any:
    """Bradley-Terry Elo of each agent with its bootstrap 95% interval, best at the top."""
    from matplotlib.transforms import blended_transform_factory

    rows = [r for r in _ranked(report) if r["elo"] == r["elo"]]
    fig = new_figure(8.5, 1.6 + 0.55 * max(len(rows), 1))
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    elo = np.array([r["elo"] for r in rows])
    low = np.array([r["elo_low"] for r in rows])
    high = np.array([r["elo_high"] for r in rows])
    has_ci = np.isfinite(low) & np.isfinite(high)
    anchor = report["config"]["elo_anchor"]
    ax.axvline(1500, color="0.45", linestyle="--", linewidth=1, zorder=1)
    xerr = np.where(has_ci, [elo - low, high - elo], 0.0)
    ax.errorbar(elo, y, xerr=xerr, fmt="D", color="#009E73", ecolor="#009E73", elinewidth=2.2,
                capsize=5, markersize=7, zorder=3)  # fmt: skip
    ax.set_yticks(y, [f"{r['rank']}. {r['agent']}" for r in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    span = np.concatenate([elo, low[has_ci], high[has_ci], [1500.0]])
    pad = max(40.0, 0.08 * (span.max() - span.min()))
    ax.set_xlim(span.min() - pad, span.max() + pad)
    ref = f"{anchor} pinned at 1500" if anchor else "mean 1500"
    ax.set_xlabel(f"Elo (Bradley-Terry, {ref}); bars: bootstrap 95% interval")
    ax.grid(True, axis="x", alpha=0.3)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for yy, r, ok in zip(y, rows, has_ci, strict=True):
        ci = f"[{r['elo_low']:.0f}, {r['elo_high']:.0f}]" if ok else "(no bootstrap)"
        ax.text(1.02, yy, f"{r['elo']:.0f}  {ci}", transform=right, va="center", ha="left",
                fontsize=9)  # fmt: skip
    c = report["config"]
    ax.set_title(
        f"Ratings ({c['bootstrap']} bootstrap resamples of duplicate matches)",
        fontsize=12,
        loc="left",
    )
    fig.suptitle(_subtitle(report), fontsize=8.5, color="0.35", x=0.99, ha="right")
    return fig


def _grid(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(n, max_cols)
    return (n + cols - 1) // cols, cols


def figure_bid_vs_tricks(data: dict[str, np.ndarray], order: Sequence[str] | None = None) -> Any:
    """Per agent, a 2-D histogram of its bid (x) against the tricks it took (y), as a share of
    its contracts; cells on or above the staircase are contracts made."""
    from matplotlib.colors import LogNorm

    agents = [a for a in (order or sorted(data)) if len(data.get(a, ()))]
    if not agents:
        return _empty("Bids against tricks taken", "no played hands in the database")
    every = np.concatenate([data[a] for a in agents])
    bids = np.arange(max(every[:, 0].min(), 1), every[:, 0].max() + 1)
    tricks = np.arange(0, max(every[:, 1].max(), bids.max()) + 1)
    rows, cols = _grid(len(agents))
    fig = new_figure(2.2 + 2.9 * cols, 1.3 + 3.3 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)).ravel()
    norm = LogNorm(vmin=0.1, vmax=100)
    image = None
    for ax, agent in zip(axes, agents, strict=False):
        bt = data[agent]
        counts = np.zeros((len(tricks), len(bids)))
        np.add.at(counts, (bt[:, 1] - tricks[0], bt[:, 0] - bids[0]), 1)
        share = 100 * counts / len(bt)
        image = ax.imshow(
            np.where(share > 0, share, np.nan),
            origin="lower",
            aspect="auto",
            cmap="viridis",
            norm=norm,
            extent=(bids[0] - 0.5, bids[-1] + 0.5, tricks[0] - 0.5, tricks[-1] + 0.5),
        )
        edge = np.concatenate([bids - 0.5, [bids[-1] + 0.5]])
        ax.step(edge, np.concatenate([bids, [bids[-1]]]) - 0.5, where="post", color="#D55E00",
                linewidth=1.6)  # fmt: skip
        made = 100 * np.mean(bt[:, 1] >= bt[:, 0])
        ax.set_title(f"{agent}\n{len(bt)} contracts, {made:.0f}% made", fontsize=10)
        ax.set_facecolor("0.96")
        ax.set_xticks(bids)
        ax.tick_params(labelleft=True, labelbottom=True)
    for ax in axes[len(agents) :]:
        ax.set_visible(False)
    for ax in axes[: len(agents)]:
        ax.set_xlabel("bid (tricks)")
        ax.set_ylabel("tricks taken")
    bar = fig.colorbar(image, ax=list(axes[: len(agents)]), shrink=0.85)
    bar.set_ticks([0.1, 1, 10, 100], labels=["0.1%", "1%", "10%", "100%"])
    bar.set_label("share of the agent's contracts (log scale)")
    fig.suptitle(
        "Bid against tricks taken (above the orange staircase: contract made)", fontsize=12
    )
    return fig


def figure_bid_margin(data: dict[str, np.ndarray], order: Sequence[str] | None = None) -> Any:
    """Grouped bars: share of each agent's contracts by tricks taken minus bid (>= 0: made)."""
    agents = [a for a in (order or sorted(data)) if len(data.get(a, ()))]
    if not agents:
        return _empty("Tricks taken minus bid", "no played hands in the database")
    margins = {a: data[a][:, 1] - data[a][:, 0] for a in agents}
    every = np.concatenate(list(margins.values()))
    lo, hi = int(max(every.min(), -8)), int(min(every.max(), 10))
    x = np.arange(lo, hi + 1)
    fig = new_figure(max(8.0, 0.55 * len(x) + 2.5), 5.0)
    ax = fig.add_subplot()
    width = 0.8 / len(agents)
    colors = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
    for k, a in enumerate(agents):
        m = np.clip(margins[a], lo, hi)
        share = 100 * np.array([(m == v).mean() for v in x])
        ax.bar(x - 0.4 + width * (k + 0.5), share, width, color=colors[k % len(colors)],
               label=f"{a} ({len(m)} contracts)")  # fmt: skip
    ax.axvline(-0.5, color="0.3", linestyle="--", linewidth=1)
    ax.text(-0.6, 1.0, "missed ◀", transform=ax.get_xaxis_transform(), ha="right", va="bottom",
            fontsize=9, color="0.3")  # fmt: skip
    ax.text(-0.4, 1.0, "▶ made", transform=ax.get_xaxis_transform(), ha="left", va="bottom",
            fontsize=9, color="0.3")  # fmt: skip
    labels = [str(v) for v in x]
    if every.min() < lo:
        labels[0] = f"≤{lo}"
    if every.max() > hi:
        labels[-1] = f"≥{hi}"
    ax.set_xticks(x, labels)
    ax.set_xlabel("tricks taken − bid (tricks)")
    ax.set_ylabel("share of contracts (%)")
    _percent_axis(ax.yaxis)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title("How far contracts were made or missed", fontsize=12, pad=18)
    fig.legend(loc="outside lower center", ncols=min(len(agents), 4), frameon=False)
    return fig


def pick_games(db: ResultsDB, cfg: TournamentConfig, num_games: int = 4) -> list[tuple]:
    """Game keys of a few finished games to show: both halves (orientations) of the first
    duplicate match of each pairing, pairings in order, then later matches if too few."""
    pairs = [p for p in cfg.pairings() if p[0] != p[1]] or cfg.pairings()
    rows = db.query(
        "SELECT pair_a, pair_b, match_id, orientation FROM matches WHERE match_id < ? "
        "ORDER BY match_id, pair_a, pair_b, orientation",
        (cfg.matches,),
    )
    keys = [tuple(r) for r in rows if (r[0], r[1]) in pairs]
    by_pair: dict[tuple[str, str], list[tuple]] = {p: [] for p in pairs}
    for k in keys:
        by_pair[(k[0], k[1])].append(k)
    picked: list[tuple] = []
    depth = 0
    while len(picked) < num_games and any(len(v) > depth for v in by_pair.values()):
        for games in by_pair.values():
            picked.extend(games[depth : depth + 2][: num_games - len(picked)])
        depth += 2
    return picked[:num_games]


def figure_score_trajectories(
    db: ResultsDB, cfg: TournamentConfig, games: Sequence[tuple] | None = None
) -> Any:
    """Running score of each seat after every hand of a few games (`games`: game keys, default
    :func:`pick_games`), with the target marked."""
    games = list(games) if games is not None else pick_games(db, cfg)
    if not games:
        return _empty("Score trajectories", "no finished games in the database")
    from matplotlib.lines import Line2D

    target = cfg.effective_rules.target
    rows, cols = _grid(len(games), 2)
    fig = new_figure(6.2 * cols, 1.4 + 3.6 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, key in zip(axes, games, strict=False):
        _draw_trajectory(ax, db, key, target, cfg.display)
    for ax in axes[len(games) :]:
        ax.set_visible(False)
    handles = [
        Line2D([], [], color=SEAT_COLORS[s], linestyle=SEAT_STYLES[s], linewidth=1.8)
        for s in (0, 2, 1, 3)
    ]
    labels = ["seat 0 (team 0)", "seat 2 (team 0)", "seat 1 (team 1)", "seat 3 (team 1)"]
    fig.legend(handles, labels, loc="outside lower center", ncols=4, frameon=False)
    fig.suptitle(
        "Score trajectories (a and b: the two halves of a duplicate match, same deals)",
        fontsize=12,
    )
    return fig


def _draw_trajectory(
    ax: Any, db: ResultsDB, key: tuple, target: int, show: Callable[[str], str] = str
) -> None:
    """The scores of one game (game key `key`) hand by hand on `ax`, with the rules' target
    and the raised target the game ended at, if it rose; `show`: an agent's label -> what
    is shown."""
    from matplotlib.ticker import MaxNLocator

    hands = db.query(
        "SELECT hand_index, team0, team1, score0, score1, score2, score3 FROM hands "
        "WHERE pair_a = ? AND pair_b = ? AND match_id = ? AND orientation = ? "
        "ORDER BY hand_index",
        key,
    )
    (match,) = db.query(
        "SELECT team0, team1, winner_team, finished, num_hands, target FROM matches "
        "WHERE pair_a = ? AND pair_b = ? AND match_id = ? AND orientation = ?",
        key,
    )
    team0, team1, winner_team, finished, num_hands, final_target = match
    team0, team1 = show(team0), show(team1)
    x = np.array([0] + [h[0] + 1 for h in hands])
    scores = np.array([[0, 0, 0, 0]] + [h[3:] for h in hands], np.float64)
    for seat in range(4):
        ax.plot(x, scores[:, seat], color=SEAT_COLORS[seat], linestyle=SEAT_STYLES[seat],
                linewidth=1.7, marker="o", markersize=2.5)  # fmt: skip
    ax.axhline(target, color="0.2", linestyle=":", linewidth=1.3)
    ax.text(0.01, target, f" {target} (target)", transform=ax.get_yaxis_transform(),
            va="bottom", ha="left", fontsize=8.5, color="0.2")  # fmt: skip
    if final_target and final_target != target:
        ax.axhline(final_target, color="0.5", linestyle=":", linewidth=1)
        ax.text(0.01, final_target, f" {final_target} (raised target)",
                transform=ax.get_yaxis_transform(), va="bottom", ha="left", fontsize=8,
                color="0.4")  # fmt: skip
    ax.axhline(0, color="0.6", linewidth=0.8)
    top = max(scores.max(), final_target or target, target)
    ax.set_ylim(min(scores.min(), 0) - 5, top + 9)
    ax.set_xlim(0, x[-1] + max(0.5, 0.02 * x[-1]))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    result = (
        f"won by {team0 if winner_team == 0 else team1} (team {winner_team})"
        if finished
        else f"unfinished after {num_hands} hands (draw)"
    )
    ax.set_title(
        f"match {key[2]}{'ab'[key[3]]}: team 0 {team0} v team 1 {team1}\n{result}",
        fontsize=9.5,
    )
    ax.set_xlabel("hands played")
    ax.set_ylabel("score (points)")
    ax.grid(True, alpha=0.3)


def _empty(title: str, message: str) -> Any:
    fig = new_figure(6.0, 2.5)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", color="0.4", fontsize=11)
    ax.set_title(title, fontsize=12)
    return fig


def write_tournament_plots(
    db_path: str | Path,
    out_dir: str | Path,
    cfg: TournamentConfig | None = None,
    report: dict[str, Any] | None = None,
    accept_unchecked: bool = False,
) -> list[Path]:
    """Write the tournament figures of the database at `db_path` into `out_dir`
    (`accept_unchecked`: of a database whose row checks were switched off).

    `cfg`: the tournament's config (default: rebuilt from the database, see
    :func:`config_from_db`); `report`: its :func:`fourhundred_tournament.report.build_report` dict if already
    built (saves refitting the ratings). Returns the paths of leaderboard.png, pairwise.png,
    ratings.png, bid_vs_tricks.png, bid_margin.png and score_trajectories.png.
    """
    out = Path(out_dir)
    with ReadOnlyResults(db_path, accept_unchecked=accept_unchecked) as db:
        cfg = cfg if cfg is not None else config_from_db(db)
        if report is None:
            report = build_report(db, cfg, pairings=recorded_pairings(db))
        order = [r["agent"] for r in report["leaderboard"]]
        data = bids_and_tricks(db, cfg)
        figures = {
            "leaderboard.png": figure_leaderboard(report),
            "pairwise.png": figure_pairwise(report),
            "ratings.png": figure_ratings(report),
            "bid_vs_tricks.png": figure_bid_vs_tricks(data, order),
            "bid_margin.png": figure_bid_margin(data, order),
            "score_trajectories.png": figure_score_trajectories(db, cfg),
        }
    return [save_figure(fig, out / name) for name, fig in figures.items()]
