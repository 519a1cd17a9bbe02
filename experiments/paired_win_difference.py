"""Paired difference of two agents' win rates against the same opponent, from two tournament
databases played with the same seed (so match i has the same deals in both).

    .venv/bin/python experiments/paired_win_difference.py A.sqlite B.sqlite --opponent heuristic-v1

For each duplicate match id present in both, each agent's score is its wins over the two
games (a draw counts half); the difference A - B per match, averaged and halved, is the
difference of win rates, with a 95% normal interval over the matches (BENCHMARKS.md, "Bidding").
"""

from __future__ import annotations

import argparse
import sqlite3

import numpy as np


def match_scores(path: str, opponent: str) -> dict[int, float]:
    """{match_id: games won (of 2) by the agent that is not `opponent`}."""
    rows = sqlite3.connect(path).execute(
        "select match_id, team0, team1, finished, winner_team from matches"
    )
    out: dict[int, float] = {}
    for match_id, team0, team1, finished, winner in rows:
        agent_team = 0 if team1 == opponent else 1
        assert (team0, team1)[1 - agent_team] == opponent, (team0, team1)
        score = 0.5 if not finished or winner < 0 else float(winner == agent_team)
        out[match_id] = out.get(match_id, 0.0) + score
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--opponent", default="heuristic-v1")
    args = p.parse_args()
    a, b = match_scores(args.a, args.opponent), match_scores(args.b, args.opponent)
    ids = sorted(set(a) & set(b))
    diff = np.array([a[i] - b[i] for i in ids]) / 2
    half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
    wa = np.mean([a[i] for i in ids]) / 2
    wb = np.mean([b[i] for i in ids]) / 2
    print(f"{len(ids)} duplicate matches in both: A {100 * wa:.1f}%, B {100 * wb:.1f}%")
    print(
        f"A - B: {100 * diff.mean():+.1f} [{100 * (diff.mean() - half):+.1f}, "
        f"{100 * (diff.mean() + half):+.1f}] percentage points (95%, paired by match)"
    )


if __name__ == "__main__":
    main()
