"""Job planning: a tournament's games cut into jobs (one pairing, a chunk of match ids).

The split depends on the config only (`chunk_matches`), never on the number of workers, so
the agents of a job, seeded by job, play the same games whatever runs them.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from tournament.config import TournamentConfig

__all__ = ["SEEDING_SCHEME", "Job", "plan_jobs", "seeding_meta"]

SEEDING_SCHEME = "job-chunk"
"""How agents are seeded: by pairing, chunk of match ids, side and seat (`Job.agent_seed`)."""


@dataclass(frozen=True)
class Job:
    """One pairing and a chunk of its games, played by one process."""

    job_id: int
    pair: tuple[str, str]
    chunk: int
    games: tuple[tuple[int, int], ...]  # (match_id, orientation)
    rules: dict[str, Any]
    seed: int
    max_hands: int
    table_batch: int
    agent_modules: tuple[str, ...] = ()
    flush_seconds: float = 0.5

    def agent_seed(self, side: int, seat: int) -> int:
        """Seed of the instance of `side` (0: pair[0]) at `seat`, fixed by the config."""
        key = [self.seed, zlib.crc32(self.pair[0].encode()), zlib.crc32(self.pair[1].encode())]
        ss = np.random.SeedSequence([*key, self.chunk, side, seat])
        return int(ss.generate_state(1, np.uint32)[0])


def plan_jobs(
    cfg: TournamentConfig, done: set[tuple[str, str, int, int]] = frozenset()
) -> list[Job]:
    """The jobs still to play: chunks of match ids per pairing, without the finished games.

    Jobs are ordered chunk by chunk across pairings, so early results cover every pairing.
    """
    rules = cfg.effective_rules.to_dict()
    # A person plays one game at a time (in this process: see `run_tournament`).
    table_batch = 1 if cfg.interactive else cfg.table_batch
    jobs: list[Job] = []
    num_chunks = math.ceil(cfg.matches / cfg.chunk_matches)
    for chunk in range(num_chunks):
        ids = range(chunk * cfg.chunk_matches, min(cfg.matches, (chunk + 1) * cfg.chunk_matches))
        for pair in cfg.pairings():
            games = tuple(
                (m, o) for m in ids for o in (0, 1) if (pair[0], pair[1], m, o) not in done
            )
            if games:
                jobs.append(
                    Job(len(jobs), pair, chunk, games, rules, cfg.seed, cfg.max_hands,
                        table_batch, cfg.agent_modules, cfg.flush_seconds)
                )  # fmt: skip
    return jobs


def seeding_meta(cfg: TournamentConfig) -> dict[str, Any]:
    """What the results database records of how the agents were seeded, so that a game can
    be played again (:mod:`tournament.replay`): the scheme, the job split and the modules
    that register agents."""
    return {
        "scheme": SEEDING_SCHEME,
        "chunk_matches": cfg.chunk_matches,
        "agent_modules": list(cfg.agent_modules),
    }
