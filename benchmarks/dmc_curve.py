"""The learning curve of an RLCard DMC run against ``heuristic-v1``, beside PPO's and expert
iteration's (issue 60).

    python examples/rlcard_dmc.py --total-minutes 60 --save-interval 5 --run-dir runs/dmc60
    python benchmarks/dmc_curve.py runs/dmc60 --matches 16 --seed 6003 --plot docs/dmc_curve.png

Each snapshot the example kept (``dmc/snapshots/<frames>/``, with its training minutes in
``snapshot.json``) plays `--matches` duplicate matches against ``heuristic-v1`` on the same
public deals (one seed for all, so the snapshots meet the same cards), through the tournament
machinery (:func:`fourhundred_tournament.parallel.run_tournament`, a database per snapshot under
``dmc/curve/``). The win rates, with Wilson 95% intervals, go to ``dmc/curve.json``; a snapshot
already there is not played again, so the script can follow a run that is still training.

PPO's and expert iteration's curves are not re-measured: they are the figures BENCHMARKS.md
records (:data:`PPO_CURVE`, :data:`EXIT_CURVE`), drawn as given.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from fourhundred_tournament.config import config_from_mapping
from fourhundred_tournament.figures import new_figure, save_figure
from fourhundred_tournament.report.statistics import load_report
from fourhundred_tournament.tournament import run_tournament

OPPONENT = "heuristic-v1"

PPO_CURVE = [(12, 41.5), (25, 46.5), (38, 52.5), (50, 63.0), (63, 57.5), (75, 63.0),
             (88, 54.0), (100, 59.0), (113, 66.5)]  # fmt: skip
"""(minutes from nothing, win % vs heuristic-v1): PPO self-play's own evaluations, the run that
made ``selfplay.pt`` (BENCHMARKS.md, "Expert iteration (issue 34)": "its own evaluations by
minute"; 100 duplicate matches each, configs/selfplay.yaml's ``eval_matches``)."""

EXIT_CURVE = [(13.6, 73.2, 68.7, 77.4), (17.0, 70.8, 66.1, 75.0), (20.6, 72.5, 67.9, 76.6),
              (23.8, 73.5, 69.0, 77.6), (27.2, 72.8, 68.2, 76.9)]  # fmt: skip
"""(minutes of its own, win %, Wilson low, high; 400 games each): the run that made today's
``exit.pt``, its iterations 0-4 (BENCHMARKS.md, "A new exit.pt: the average distilled first").
It starts from ``selfplay.pt``, so it is drawn after PPO's 113 minutes."""

PPO_MINUTES = 113.0


def snapshots(run: Path) -> list[tuple[Path, dict]]:
    """(folder, its snapshot.json) of each snapshot of the run (its folder or its ``dmc``),
    fewest frames first."""
    folder = run / "dmc" if (run / "dmc").is_dir() else run
    found = []
    for meta in sorted((folder / "snapshots").glob("*/snapshot.json")):
        found.append((meta.parent, json.loads(meta.read_text())))
    return sorted(found, key=lambda s: s[1]["frames"])


def evaluate(snapshot: Path, out: Path, matches: int, seed: int, workers: int) -> dict:
    """`snapshot` (as ``rlcard:<folder>``) against heuristic-v1 in `matches` duplicate matches:
    its win rate to 41 with the Wilson 95% interval and its hand statistics."""
    spec = f"rlcard:{snapshot}"
    cfg = config_from_mapping(
        {"agents": [spec, OPPONENT], "matches": matches, "seed": seed, "deals": "public",
         "workers": workers, "out_dir": str(out), "progress": False, "bootstrap": 0}
    )  # fmt: skip
    t0 = time.perf_counter()
    run_tournament(cfg, overwrite=True)
    seconds = time.perf_counter() - t0
    _, report = load_report(cfg.db_path, cfg)
    (pair,) = report["pairwise"]
    flip = pair["agent"] != spec
    rate, low, high = pair["rate"], pair["low"], pair["high"]
    if flip:
        rate, low, high = 1 - rate, 1 - high, 1 - low
    board = {row["agent"]: row for row in report["leaderboard"]}
    return {
        "games": pair["games"], "rate": rate, "low": low, "high": high,
        "sweeps": pair["swept"] if flip else pair["sweeps"],
        "swept": pair["sweeps"] if flip else pair["swept"],
        "points_per_hand": board[spec].get("points_per_hand"),
        "bid_success": board[spec].get("bid_success"),
        "mean_bid": board[spec].get("mean_bid"),
        "opponent_points_per_hand": board[OPPONENT].get("points_per_hand"),
        "seconds": round(seconds, 1),
    }  # fmt: skip


def plot(curve: list[dict], path: Path, title: str) -> Path:
    """Left: DMC's curve (win % against training minutes, Wilson bars) beside PPO's and ExIt's.
    Right: DMC's points a hand against heuristic-v1's in the same games."""
    fig = new_figure(10.0, 4.2)
    ax, pts = fig.subplots(1, 2, width_ratios=[2.2, 1])
    xs = [c["minutes"] for c in curve]
    ys = [100 * c["rate"] for c in curve]
    err = [[100 * (c["rate"] - c["low"]) for c in curve], [100 * (c["high"] - c["rate"]) for c in curve]]  # fmt: skip
    games = curve[0]["games"] if curve else 0
    ax.plot(*zip(*PPO_CURVE, strict=True), marker="s", color="tab:blue",
            label="PPO self-play (its own evaluations, 200 games a point)")  # fmt: skip
    ex = [PPO_MINUTES + m for m, *_ in EXIT_CURVE]
    ey = [r for _, r, *_ in EXIT_CURVE]
    eerr = [[r - lo for _, r, lo, _ in EXIT_CURVE], [hi - r for _, r, _, hi in EXIT_CURVE]]
    ax.errorbar(ex, ey, yerr=eerr, marker="^", capsize=3, color="tab:green",
                label="expert iteration from selfplay.pt (after PPO's 113 min; 400 games)")  # fmt: skip
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color="tab:red",
                label=f"RLCard DMC, 1 actor ({games} games a point)")  # fmt: skip
    ax.axhline(50, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("training minutes on the 2-core machine (from nothing)")
    ax.set_ylabel("win % to 41 vs heuristic-v1 (Wilson 95%)")
    ax.set_ylim(-3, 100)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    pts.plot(xs, [c["points_per_hand"] for c in curve], marker="o", color="tab:red", label="DMC")
    pts.plot(xs, [c["opponent_points_per_hand"] for c in curve], marker="s", color="grey",
             label="heuristic-v1")  # fmt: skip
    pts.axhline(0, color="grey", lw=0.8, ls="--")
    pts.set_xlabel("DMC's training minutes")
    pts.set_ylabel("a seat's points a hand (its contract's score)")
    pts.set_title("the same games: points a hand", fontsize=10)
    pts.grid(alpha=0.3)
    pts.legend(fontsize=8)
    return save_figure(fig, path)


def table(curve: list[dict]) -> str:
    """The curve as a Markdown table."""
    lines = ["| minutes | frames | win % vs `heuristic-v1` | points a hand (h1) | contracts made | mean bid |",
             "|---:|---:|---|---:|---:|---:|"]  # fmt: skip
    for c in curve:
        lines.append(
            f"| {c['minutes']:.1f} | {c['frames']:,} | {100 * c['rate']:.1f} "
            f"[{100 * c['low']:.1f}, {100 * c['high']:.1f}] | {c['points_per_hand']:+.2f} "
            f"({c['opponent_points_per_hand']:+.2f}) | {100 * c['bid_success']:.1f}% | "
            f"{c['mean_bid']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="the DMC run's folder (or its dmc folder)")
    parser.add_argument("--matches", type=int, default=16, help="duplicate matches a snapshot")
    parser.add_argument("--seed", type=int, default=6003, help="seed of the public deals")
    parser.add_argument("--workers", type=int, default=1, help="tournament processes")
    parser.add_argument("--plot", type=Path, default=None, help="PNG of the curves")
    parser.add_argument("--title", default="Win rate against heuristic-v1 by training minutes")
    parser.add_argument("--no-play", action="store_true", help="only plot what curve.json holds")
    args = parser.parse_args()
    folder = args.run / "dmc" if (args.run / "dmc").is_dir() else args.run
    path = folder / "curve.json"
    done = json.loads(path.read_text()) if path.is_file() else []
    seen = {(c["frames"], c["matches"], c["seed"]) for c in done}
    if not args.no_play:
        for snapshot, meta in snapshots(args.run):
            if (meta["frames"], args.matches, args.seed) in seen:
                continue
            out = folder / "curve" / snapshot.name
            result = evaluate(snapshot, out, args.matches, args.seed, args.workers)
            done.append({**meta, "matches": args.matches, "seed": args.seed, **result})
            done.sort(key=lambda c: (c["matches"], c["seed"], c["frames"]))
            path.write_text(json.dumps(done, indent=1) + "\n")
            print(f"{meta['minutes']:6.1f} min {meta['frames']:>10,} frames: "
                  f"{100 * result['rate']:.1f}% [{100 * result['low']:.1f}, "
                  f"{100 * result['high']:.1f}] ({result['seconds']} s)", flush=True)  # fmt: skip
    curve = [c for c in done if c["matches"] == args.matches and c["seed"] == args.seed]
    print(table(curve))
    if args.plot is not None:
        print(f"figure: {plot(curve, args.plot, args.title)}")


if __name__ == "__main__":
    main()
