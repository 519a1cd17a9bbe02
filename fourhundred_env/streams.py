"""Every salt of the project's random streams, in one place.

Each stream is a SplitMix64 hash (:func:`fourhundred_env.deals.mix64`, and
``fourhundred_env.kernels.mix64`` inside kernels) of a key and one of these salts, so two
streams draw independent numbers only if their salts differ: tests/test_streams.py checks
that no two are equal. A salt names what it draws; changing one changes every game that
draws from it.
"""

from __future__ import annotations

import numpy as np

U64 = np.uint64

# the deal (fourhundred_env.kernels): a match's first dealer, and each hand's cards (the salt
# multiplied by the hand's index); the search's worlds of a view are dealt with it too
DEALER_SALT = U64(0xD1B54A32D192ED03)
HAND_SALT = U64(0x8CB92BA72F3D8DD7)

# the environments (fourhundred_env.envs.driver): per table, the starting scores, the zero
# scores, the illegal-action penalty's draws, the opponents' seeds, each seat's stream, and
# the game stream key of an episode
TABLE_SALT = U64(0x6A09E667F3BCC908)
SCORE_SALT = U64(0xBB67AE8584CAA73B)
ZERO_SALT = U64(0x3C6EF372FE94F82B)
ILLEGAL_SALT = U64(0xA54FF53A5F1D36F1)
ENV_AGENT_SALT = U64(0x510E527FADE682D1)
SEAT_SALTS = np.array(
    [0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179, 0xCBBB9D5DC1059ED8], np.uint64
)
ENV_STREAM_SALTS = np.array([0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5, 0x94D049BB133111EB], np.uint64)

# the tournament (fourhundred_tournament.runner): the game stream key of a game
GAME_STREAM_SALTS = np.array(
    [0x6C62272E07BB0142, 0x62B821756295C58D, 0x9E3779B97F4A7C15], np.uint64
)

# the agents (fourhundred_agents.draws and the bots): an agent's key from its seed, a random bot's pick,
# a heuristic's explore flip and its pick, a neural policy's sample, the search's worlds of a
# position, its resampling, pimc's retries of a deal, and an OpenSpiel bot's decision (its
# world, its search's numbers)
AGENT_SALT = U64(0x2545F4914F6CDD1D)
RANDOM_SALT = U64(0x9FB21C651E98DF25)
EXPLORE_SALT = U64(0xD6E8FEB86659FD93)
PICK_SALT = U64(0xC2B2AE3D27D4EB4F)
SAMPLE_SALT = U64(0x5851F42D4C957F2D)
WORLD_SALT = U64(0x7A3C5F1E2B4D6981)
RESAMPLE_SALT = U64(0x51ED2701A3C4B5D9)
DEAL_TRY_SALT = U64(0xA0761D6478BD642F)
OPENSPIEL_SALT = U64(0xE7037ED1A0B428DB)


def all_salts() -> dict[str, int]:
    """Every salt of this module by name (an array's entries as NAME[i])."""
    out: dict[str, int] = {}
    for name, value in globals().items():
        if name.endswith(("_SALT", "_SALTS")):
            for i, v in enumerate(np.atleast_1d(value)):
                out[name if np.ndim(value) == 0 else f"{name}[{i}]"] = int(v)
    return out
