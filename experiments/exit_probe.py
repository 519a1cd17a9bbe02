"""How much of the search's gain a network's fit carries to positions it was not fitted on.

Reads the search's labels of an expert-iteration run (the chunks a run folder keeps in
``labels_K/``: observations, legal masks and every legal action's value in two halves of the
worlds), holds out a share of the positions, fits the card network of a checkpoint on the
first N of the others for each N of ``--sizes`` (the fit of ``configs/exit.yaml``: the value
objective, a temperature per trick), and judges each fit's greedy choice by the search's
values (the mean of both halves) against the checkpoint's own choice, in percentage points
of match-win chance a position: at the held-out positions and at the fitted ones. The
search's own gain at the held-out positions (each half's best judged by the other half) is
the ceiling::

    .venv/bin/python experiments/exit_probe.py runs/exit__1__TIME/labels_0 \\
        --model agents/pretrained/exit.pt --sizes 12000,24000,48000 --tricks 8-13

BENCHMARKS.md, "Expert iteration", has its figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_FIELDS, OBS_SIZE

_TRICKS = OBS_FIELDS["num_tricks"].start
_BID_PHASE = OBS_FIELDS["phase"].start


def read_labels(folders: list[str]) -> dict[str, np.ndarray]:
    """The chunks (chunk_*.npz) of each folder, in order, joined: obs (n, OBS_SIZE) int8,
    legal (n, 66) bool, values (2, n, 66). A folder with none, or a chunk that is not one, is
    refused in one line (FourHundredError)."""
    from fourhundred_train.exit import read_chunk

    parts: list[dict[str, np.ndarray]] = []
    for folder in folders:
        files = sorted(Path(folder).glob("chunk_*.npz"))
        files = [f for f in files if not f.name.endswith(".part.npz")]
        if not files:
            raise FourHundredError(
                f"{folder!r} holds no labels: expected a folder of chunk_NNNNN.npz files, as "
                "an expert-iteration run keeps in RUN_DIR/labels_K"
            )
        for path in files:
            chunk = read_chunk(path)
            if chunk is None:
                raise FourHundredError(
                    f"{str(path)!r} is not a chunk of labels (unreadable, damaged or of other "
                    f"shapes): expected an npz of obs (n, {OBS_SIZE}), legal (n, {NUM_ACTIONS}) "
                    f"and values (2, n, {NUM_ACTIONS}) as `fourhundred train` writes them"
                )
            parts.append(chunk)
    return {k: np.concatenate([p[k] for p in parts], axis=1 if k == "values" else 0)
            for k in ("obs", "legal", "values")}  # fmt: skip


def trick_range(text: str) -> tuple[int, int]:
    """``A-B`` (or ``A``): the tricks of the hand, 1 to 13, whose card positions are kept."""
    try:
        lo, _, hi = text.partition("-")
        first, last = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected A-B, tricks 1 to 13") from None
    if not 1 <= first <= last <= 13:
        raise argparse.ArgumentTypeError(f"{text!r}: expected A-B with 1 <= A <= B <= 13")
    return first, last


def sizes(text: str) -> list[int]:
    """Comma-separated positive numbers of positions."""
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive integers, e.g. 1000,4000")
    return out


def worth(values: np.ndarray, choice: np.ndarray, base: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) of the value of `choice` less that of `base` (n,) by the mean
    of both halves' values (2, n, 66), in percentage points."""
    mean = values.astype(np.float64).mean(axis=0)
    rows = np.arange(len(choice))
    d = 100 * (mean[rows, choice] - mean[rows, base])
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("labels", nargs="+", help="folders of label chunks (RUN_DIR/labels_K)")
    p.add_argument(
        "--model",
        default="agents/pretrained/exit.pt",
        help="the checkpoint whose card network is fitted (the labels' network)",
    )
    p.add_argument(
        "--sizes",
        type=sizes,
        default=None,
        help="positions fitted, comma-separated (default: a quarter, a half, all)",
    )
    p.add_argument(
        "--tricks",
        type=trick_range,
        default=(1, 13),
        help="keep the card positions of these tricks of the hand, A-B",
    )
    p.add_argument(
        "--symmetry",
        choices=("none", "suits"),
        default="none",
        help="suits: each position shown to the fit in a renaming of the plain suits drawn "
        "anew each pass (the config's `symmetry: suits`)",
    )
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument("--holdout", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    if args.epochs < 1 or args.learning_rate <= 0 or not 0 < args.holdout < 1:
        p.error("--epochs must be at least 1, --learning-rate above 0, --holdout within (0, 1)")
    try:
        return _run(args)
    except FourHundredError as e:
        print(f"exit_probe: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    import torch

    from fourhundred_agents.neural.checkpoint import load_policy, require_card_player
    from fourhundred_train.exit import ExitConfig
    from fourhundred_train.exit.targets import (
        advantages,
        fit,
        fit_temperatures,
        log_policy,
        search_gain,
        split,
        targets,
        temperature_groups,
    )

    torch.set_num_threads(args.threads)
    data = read_labels(args.labels)
    tricks = data["obs"][:, _TRICKS].astype(np.int64) + 1  # the trick being played
    first, last = args.tricks
    keep = (data["obs"][:, _BID_PHASE] == 0) & (tricks >= first) & (tricks <= last)
    data = {k: (v[:, keep] if k == "values" else v[keep]) for k, v in data.items()}
    n = len(data["obs"])
    if n < 20:
        raise FourHundredError(
            f"{n} card positions of tricks {first}-{last} in the labels: expected at least 20"
        )
    fitted, held = split(n, args.holdout, args.seed)
    wanted = args.sizes or [len(fitted) // 4, len(fitted) // 2, len(fitted)]
    if max(wanted) > len(fitted):
        raise FourHundredError(
            f"--sizes asks for {max(wanted)} positions fitted: expected at most {len(fitted)}, "
            f"the labels' {n} card positions of tricks {first}-{last} less the held-out share"
        )
    net, _, _ = load_policy(args.model)
    card = require_card_player(net, args.model)
    state = {k: v.clone() for k, v in card.state_dict().items()}
    prior = log_policy(card, data["obs"], data["legal"])
    base = prior.argmax(1)
    gain = search_gain(data["values"][:, held], base[held])
    print(f"{n} card positions of tricks {first}-{last}: {len(fitted)} to fit, {len(held)} held "
          f"out; at those the search's best is worth {gain['gain_pp']:+.3f} pp over "
          f"{args.model}'s card, which is its best at {100 * gain['agreement']:.1f}%")  # fmt: skip
    groups = temperature_groups(data["obs"])
    config = ExitConfig(
        learning_rate=args.learning_rate, epochs=args.epochs, symmetry=args.symmetry
    )
    rows = []
    for size in wanted:
        t0 = time.perf_counter()
        card.load_state_dict(state)
        part = fitted[:size]
        by_group = fit_temperatures(data["values"][:, part], groups[part], prior[part])
        temp = np.array([by_group[int(g)] for g in groups[part]]) / math.sqrt(2)
        vals = data["values"][:, part]
        pi, v = targets(vals, temp, prior[part])
        terms = (advantages(vals), temp.astype(np.float32), prior[part].astype(np.float32))
        torch.manual_seed(args.seed)
        fit(card, data["obs"][part], data["legal"][part], pi, v, config, seed=args.seed,
            desc=f"fit {size}", value_terms=terms)  # fmt: skip
        card.eval()
        seen = part[:20000]  # the fitted positions judged
        judged = np.concatenate([held, seen])
        after = log_policy(card, data["obs"][judged], data["legal"][judged]).argmax(1)
        after_held, after_seen = after[: len(held)], after[len(held) :]
        h, h_se = worth(data["values"][:, held], after_held, base[held])
        f, f_se = worth(data["values"][:, seen], after_seen, base[seen])
        agree = search_gain(data["values"][:, held], after_held)["agreement"]
        rows.append((size, h, h_se, f, f_se, agree, time.perf_counter() - t0))
    print()
    print(
        "| positions fitted | held-out worth, pp (s.e.) | fitted positions' worth, pp (s.e.) "
        "| held-out agreement with the search | seconds |"
    )
    print("|---|---|---|---|---|")
    for size, h, h_se, f, f_se, agree, secs in rows:
        print(
            f"| {size:,} | {h:+.4f} ({h_se:.4f}) | {f:+.4f} ({f_se:.4f}) | "
            f"{100 * agree:.1f}% | {secs:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
