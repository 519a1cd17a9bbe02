"""The game's symmetry: the three plain suits are equal (numpy only).

Hearts are always trump and no suit is ever named, so clubs, diamonds and spades play alike:
renaming them (one of the 3! = 6 :data:`SUIT_PERMUTATIONS`) turns a legal game into a legal
game with the same scores, and what a seat sees into what it would see in the renamed game.
A policy that plays well should therefore act alike in both; a trained network does not quite
(it is fitted to the suits it saw), and averaging it over the six renamings, or fitting it to
all six, takes that noise out.

:func:`permutation_maps` gives, for one renaming, the index maps of the observation vector
(:mod:`fourhundred_env.observation`) and of the action ids, as gathers:
``obs[:, obs_src]`` is the observation of the renamed game and ``x[:, action_src]`` the
per-action array (legal mask, logits, values) of the renamed game. The inverse renaming
undoes both (:func:`inverse`).
"""

from __future__ import annotations

import itertools

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS, NUM_CARDS, TRUMP
from fourhundred_env.observation import OBS_FIELDS, OBS_SIZE

PLAIN_SUITS = tuple(s for s in range(4) if s != TRUMP)
"""The suits that may be renamed among themselves (all but hearts)."""

SUIT_PERMUTATIONS: tuple[tuple[int, int, int, int], ...] = tuple(
    tuple(dict(zip(PLAIN_SUITS, p, strict=True)).get(s, s) for s in range(4))
    for p in itertools.permutations(PLAIN_SUITS)
)
"""The six renamings of the plain suits, each as ``perm[old suit] = new suit`` (hearts to
hearts); the first is the identity."""

_CARD_BLOCKS = ("hand", "played", "trick")  # fields made of 52-entry card blocks
_SUIT_BLOCKS = ("led_suit", "shown_void")  # fields made of 4-entry suit blocks


def card_permutation(perm: tuple[int, ...]) -> np.ndarray:
    """(52,) int64: the new id of each card under the renaming ``perm[old suit] = new suit``."""
    cards = np.arange(NUM_CARDS)
    return 13 * np.asarray(perm, np.int64)[cards // 13] + cards % 13


def permutation_maps(perm: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The gathers of one renaming: (obs_src (OBS_SIZE,), action_src (NUM_ACTIONS,)), int64,
    such that ``obs[..., obs_src]`` and ``per_action[..., action_src]`` are the observation
    and a per-action array of the renamed game (the new entry i reads the old entry src[i])."""
    new_card = card_permutation(perm)
    obs_src = np.arange(OBS_SIZE, dtype=np.int64)
    for name in _CARD_BLOCKS:
        field = OBS_FIELDS[name]
        for start in range(field.start, field.stop, NUM_CARDS):
            obs_src[start + new_card] = start + np.arange(NUM_CARDS)
    suits = np.asarray(perm, np.int64)
    for name in _SUIT_BLOCKS:
        field = OBS_FIELDS[name]
        for start in range(field.start, field.stop, 4):
            obs_src[start + suits] = start + np.arange(4)
    action_src = np.arange(NUM_ACTIONS, dtype=np.int64)
    action_src[new_card] = np.arange(NUM_CARDS)
    return obs_src, action_src


def inverse(src: np.ndarray) -> np.ndarray:
    """The gather that undoes the gather `src` (its inverse permutation)."""
    out = np.empty_like(src)
    out[src] = np.arange(src.size, dtype=src.dtype)
    return out


SUIT_MAPS: tuple[tuple[np.ndarray, np.ndarray], ...] = tuple(
    permutation_maps(p) for p in SUIT_PERMUTATIONS
)
""":func:`permutation_maps` of each of :data:`SUIT_PERMUTATIONS`, in the same order."""
OBS_GATHERS: tuple[np.ndarray, ...] = tuple(o for o, _ in SUIT_MAPS)
"""Each renaming's observation gather (the first of :data:`SUIT_MAPS`' pairs)."""
ACTION_GATHERS: tuple[np.ndarray, ...] = tuple(a for _, a in SUIT_MAPS)
"""Each renaming's action gather (the second of :data:`SUIT_MAPS`' pairs)."""
ACTION_INVERSES: tuple[np.ndarray, ...] = tuple(inverse(a) for a in ACTION_GATHERS)
"""Each renaming's gather from the renamed game's actions back to the real ones."""


NUM_RENAMINGS = len(SUIT_PERMUTATIONS)
_ACTIONS_BACK = np.concatenate([i * NUM_ACTIONS + b for i, b in enumerate(ACTION_INVERSES)])
"""One gather of a table's six renamings' per-action rows, side by side, back to the real
actions (what :func:`mean_over_renamings` reads)."""


def stack_renamed(x: np.ndarray, gathers: tuple[np.ndarray, ...] = OBS_GATHERS) -> np.ndarray:
    """(6K, D): each of the K rows of `x` (K, D) in the six renamings, table by table (row
    6k + i is ``x[k, gathers[i]]``; the observation's gathers unless given), so that one
    network call reads all six. One gather, no copy besides."""
    return x[:, np.concatenate(gathers)].reshape(len(x) * len(gathers), x.shape[1])


def repeat_for_renamings(x: np.ndarray) -> np.ndarray:
    """(6K, ...): each of the K rows of `x` six times, in :func:`stack_renamed`'s order (for
    inputs that are the same in every renaming)."""
    return np.repeat(x, NUM_RENAMINGS, axis=0)


def mean_over_renamings(per_action):
    """(K, 66): the mean over each table's six renamings of (6K, 66) per-action rows (numpy or
    torch) computed on :func:`stack_renamed`'s rows, each gathered back to the real actions;
    (6K,) per-position values (no action axis) are averaged as they are."""
    k = len(per_action) // NUM_RENAMINGS
    if per_action.ndim == 1:
        return per_action.reshape(k, NUM_RENAMINGS).mean(1)
    side_by_side = per_action.reshape(k, NUM_RENAMINGS * NUM_ACTIONS)[:, _ACTIONS_BACK]
    return side_by_side.reshape(k, NUM_RENAMINGS, NUM_ACTIONS).mean(1)
