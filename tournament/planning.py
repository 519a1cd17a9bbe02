"""Job planning: a tournament's games cut into jobs (one pairing, a chunk of match ids).

The split depends on the config only (`chunk_matches`), never on the number of workers. An
agent's seed depends on the tournament seed, the pairing, its side and its seat, never on
the job: with the game's stream key (`fourhundred_tournament.runner.game_streams`) and the position, it
fixes every random draw of the bundled bots, so a game plays the same whatever the chunking,
the batch, the workers or a resume.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fourhundred_env.registry import starts_processes
from fourhundred_tournament.config import TournamentConfig
from fourhundred_tournament.deals import DealSecret

__all__ = ["SEEDING_SCHEME", "Job", "Pairing", "agent_seed", "plan_jobs", "seeding_meta"]

SEEDING_SCHEME = "pairing-seat"
"""How agents are seeded: by tournament seed, pairing, side and seat (:func:`agent_seed`); the
game's stream key and the position fix every draw. (Databases of the earlier scheme,
"job-chunk", seeded by the chunk of match ids too.)"""


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
    isolated: tuple[str, ...] = ()  # labels of the agents played in processes of their own
    specs: tuple[str, ...] = ()  # the specs of pair[0] and pair[1] when not their labels
    deal_seed: int | None = None  # what the engine deals from; None: `seed` (public deals)
    bot_key: bytes | None = (
        None  # the key of what cmd: bots are told (fourhundred_tournament.deals)
    )
    apart: bool = False
    """A ``cmd:`` bot plays in it: its games are of one orientation, and it runs alone among
    the other jobs that are `apart` (:func:`fourhundred_tournament.tournament.play_pairings`),
    so that no two processes of such a bot that hold cards of one deal are alive at once."""

    @property
    def engine_seed(self) -> int:
        """The seed of the deals and of the games' stream keys."""
        return self.seed if self.deal_seed is None else self.deal_seed

    def spec(self, side: int) -> str:
        """The agent spec of `side` (its label, unless a ladder labels a version otherwise)."""
        return self.specs[side] if self.specs else self.pair[side]

    def agent_seed(self, side: int, seat: int) -> int:
        """Seed of the instance of `side` (0: pair[0]) at `seat`: fixed by the tournament seed,
        the pairing, the side and the seat, the same in every job of the pairing."""
        return agent_seed(self.seed, self.pair, side, seat)


def agent_seed(seed: int, pair: tuple[str, str], side: int, seat: int) -> int:
    """Seed of the agent instance of `side` at `seat` in the pairing `pair` of a tournament
    seeded `seed` (a non-negative integer)."""
    key = [seed, zlib.crc32(pair[0].encode()), zlib.crc32(pair[1].encode()), side, seat]
    return int(np.random.SeedSequence(key).generate_state(1, np.uint32)[0])


@dataclass(frozen=True)
class Pairing:
    """One pairing to play: its labels (sorted; the game keys' ``pair_a``, ``pair_b``), the
    duplicate matches it gets (match ids 0 to ``matches - 1``) and, when a label is not the
    agent's spec (a ladder's second version of a checkpoint), the specs of both."""

    pair: tuple[str, str]
    matches: int
    specs: tuple[str, ...] = ()


def plan_jobs(
    cfg: TournamentConfig,
    done: set[tuple[str, str, int, int]] = frozenset(),
    pairings: tuple[Pairing, ...] | None = None,
    secret: DealSecret | None = None,
    pair_secrets: Mapping[tuple[str, str], DealSecret] | None = None,
) -> list[Job]:
    """The jobs still to play: chunks of match ids per pairing, without the finished games.

    `pairings`: what to play (a ladder's missing pairings, each with its own number of
    matches); default every pairing of `cfg` with `cfg.matches`. Jobs are ordered chunk by
    chunk across pairings, so early results cover every pairing; a pairing with a ``cmd:`` bot
    has a job for each orientation of a chunk (`Job.apart`). `secret`: the database's
    deal secret (:mod:`fourhundred_tournament.deals`; None: dealt from the seed);
    `pair_secrets`: a ladder's pairings whose event drew a secret of its own, with it.
    """
    pair_secrets = pair_secrets or {}
    if pairings is None:
        pairings = tuple(Pairing(p, cfg.matches) for p in cfg.pairings())
    rules = cfg.effective_rules.to_dict()
    # A person plays one game at a time (in this process: see `run_tournament`).
    table_batch = 1 if cfg.interactive else cfg.table_batch
    jobs: list[Job] = []
    most = max((p.matches for p in pairings), default=0)
    for chunk in range(math.ceil(most / cfg.chunk_matches)):
        first = chunk * cfg.chunk_matches
        for p in pairings:
            pair = p.pair
            ids = range(first, min(p.matches, first + cfg.chunk_matches))
            specs = p.specs or pair
            apart = any(starts_processes(s) for s in specs)
            for orients in ((0,), (1,)) if apart else ((0, 1),):
                games = tuple(
                    (m, o) for m in ids for o in orients if (pair[0], pair[1], m, o) not in done
                )
                if not games:
                    continue
                deals = pair_secrets.get(pair, secret)
                deal_seed = None if deals is None else deals.deal_seed
                bot_key = None if deals is None else deals.bot_key
                isolated = cfg.isolated_agents(tuple(specs))
                jobs.append(
                    Job(len(jobs), pair, chunk, games, rules, cfg.seed, cfg.max_hands,
                        table_batch, cfg.agent_modules, cfg.flush_seconds,
                        tuple(a for a, s in zip(pair, specs, strict=True) if s in isolated),
                        tuple(p.specs), deal_seed, bot_key, apart)
                )  # fmt: skip
    return jobs


def seeding_meta(cfg: TournamentConfig) -> dict[str, Any]:
    """What the results database records of how the agents were seeded, so that a game can
    be played again (:mod:`fourhundred_tournament.replay`): the scheme and the modules that register
    agents (the job split is kept for information: seeds no longer depend on it)."""
    return {
        "scheme": SEEDING_SCHEME,
        "chunk_matches": cfg.chunk_matches,
        "agent_modules": list(cfg.agent_modules),
    }
