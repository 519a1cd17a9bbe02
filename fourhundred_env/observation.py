"""The observation encoder: what one seat may know, as one float32 vector (numpy only).

:func:`encode_observation` turns a batched :class:`~fourhundred_env.view.SeatView` (K tables)
into a (K, OBS_SIZE) float32 array, with no Python loop over the tables. Every environment,
agent and trainer uses this one encoder; checkpoints store :data:`OBS_VERSION` and
:func:`require_obs_version` refuses a checkpoint made for another layout.

Seats are relative to the viewer (``rel_seat`` 0 self, 1 right, 2 partner, 3 left: the
viewer's seat plus ``rel_seat``, mod 4, is the absolute seat). Card ``c`` is ``13*suit + rank``
(suits clubs, diamonds, spades, hearts; rank 0 is the 2, rank 12 the ace). All entries are 0
or 1 except the scaled numbers marked "scalar". Version 1, 588 entries:

==============  =========  ===========================================================
name            range      meaning
==============  =========  ===========================================================
hand            0-51       viewer's cards still held: 1 at index ``c``
played          52-259     cards played this hand (current trick included) by each seat:
                           ``52 + 52*rel_seat + c``
trick           260-467    card each seat put in the current trick: ``260 + 52*rel_seat + c``
trick_leader    468-471    seat that led (or is to lead) the current trick, during play
led_suit        472-475    suit led to the current trick (empty trick: all 0)
bids            476-531    bid of each seat, one-hot ``476 + 14*rel_seat + bid``; bid 0 means
                           not bid yet (or asked for a redeal)
tricks_won      532-535    scalar: tricks won this hand by each seat / 13
tricks_needed   536-539    scalar: max(bid - tricks won, 0) / 13 by seat
scores          540-543    scalar in [-1, 1]: running score before this hand by seat,
                           clipped to [-100, 100], / 100
at_target       544-547    seat's score before this hand >= the target in force
positive        548-551    seat's score before this hand > 0
min_bid         552-555    scalar: minimum bid of each seat this hand / 13
required_total  556        scalar: required total of the four bids, clipped to 52, / 52
bid_total       557        scalar: sum of the bids made so far / 52
target          558        scalar: target in force (41, raised after simultaneous finishes),
                           clipped to 100, / 100
dealer          559-562    seat of the dealer (between hands: of the next hand)
to_play         563-566    seat whose decision is pending (between hands: all 0)
num_tricks      567        scalar: completed tricks this hand / 13
shown_void      568-583    seat has shown void in a suit: ``568 + 4*rel_seat + suit``
phase           584-587    bid, play, hand_over, match_over
==============  =========  ===========================================================

Only the viewer's own hand enters: a SeatView holds no other hidden cards, so observations
of two deals that differ only in other seats' unplayed cards are identical.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS, NUM_CARDS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.view import SeatView

OBS_VERSION = 1
"""Layout version of the observation vector; bump it whenever the index table changes."""


class ObsField(NamedTuple):
    """One named slice of the observation: entries ``start`` to ``start + size - 1``."""

    name: str
    start: int
    size: int
    scalar: bool  # True: scaled numbers; False: 0/1 entries

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)


def _layout(spec: list[tuple[str, int, bool]]) -> dict[str, ObsField]:
    fields_: dict[str, ObsField] = {}
    start = 0
    for name, size, scalar in spec:
        fields_[name] = ObsField(name, start, size, scalar)
        start += size
    return fields_


OBS_FIELDS: dict[str, ObsField] = _layout(
    [
        ("hand", NUM_CARDS, False),
        ("played", 4 * NUM_CARDS, False),
        ("trick", 4 * NUM_CARDS, False),
        ("trick_leader", 4, False),
        ("led_suit", 4, False),
        ("bids", 4 * 14, False),
        ("tricks_won", 4, True),
        ("tricks_needed", 4, True),
        ("scores", 4, True),
        ("at_target", 4, False),
        ("positive", 4, False),
        ("min_bid", 4, True),
        ("required_total", 1, True),
        ("bid_total", 1, True),
        ("target", 1, True),
        ("dealer", 4, False),
        ("to_play", 4, False),
        ("num_tricks", 1, True),
        ("shown_void", 16, False),
        ("phase", 4, False),
    ]
)
"""The index table, by name, in order."""

OBS_SIZE = sum(f.size for f in OBS_FIELDS.values())
"""Length of one observation vector (588 in version 1)."""

OBS_LOW = np.zeros(OBS_SIZE, np.float32)
OBS_LOW[OBS_FIELDS["scores"].slice] = -1.0
OBS_HIGH = np.ones(OBS_SIZE, np.float32)
"""Bounds of every entry, (OBS_SIZE,) float32, for a Gymnasium Box."""

SCORE_SCALE = 100
NUMBER_SCALE = 13  # tricks and bids
TOTAL_SCALE = 52
TARGET_SCALE = 100

_F = OBS_FIELDS
_SETS = 5  # hand, then played by rel_seat 0..3: the first five 52-card blocks, from bitmasks
_TRICK = _F["trick"].start
_TAIL = _F["trick"].start  # from here on every entry is written on a zeroed row
_ROTATE = (np.arange(4)[:, None] + np.arange(4)[None, :]) % 4  # [viewer, rel_seat] -> seat
_REL = (np.arange(4)[None, :] - np.arange(4)[:, None]) % 4  # [viewer, seat] -> rel_seat
_BID_COLS = _F["bids"].start + 14 * np.arange(4)
_TRICK_COLS = _TRICK + NUM_CARDS * np.arange(4)
_ROWS: dict[int, np.ndarray] = {}


def _rows(k: int) -> np.ndarray:
    rows = _ROWS.get(k)
    if rows is None:
        rows = _ROWS[k] = np.arange(k)
        rows.flags.writeable = False
    return rows


def encode_observation(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """Encode K seat views: returns (K, OBS_SIZE) float32 (written into `out` if given).

    Batched with numpy; no loop over the K tables. Every view needs a viewer (seat 0-3).
    """
    k = view.size
    viewer = view.seat.astype(np.intp)
    if k and (viewer.min() < 0 or viewer.max() > 3):
        raise FourHundredError(
            f"encode_observation: viewer seats {np.unique(viewer).tolist()}: expected seats 0 to 3"
        )
    if out is None:
        out = np.empty((k, OBS_SIZE), np.float32)
    elif out.shape != (k, OBS_SIZE) or out.dtype != np.float32:
        raise FourHundredError(
            f"encode_observation: out has shape {out.shape} and dtype {out.dtype}: "
            f"expected ({k}, {OBS_SIZE}) float32"
        )
    if k == 0:
        return out
    rows = _rows(k)
    rot = _ROTATE[viewer]  # (K, 4): absolute seat of each rel_seat
    rot_flat = rot + 4 * rows[:, None]  # index into a flattened (K, 4) per-seat array
    rel = _REL[viewer]  # (K, 4): rel_seat of each absolute seat

    def by_rel(per_seat: np.ndarray) -> np.ndarray:  # (K, 4) by seat -> (K, 4) by rel_seat
        return per_seat.reshape(-1)[rot_flat]

    # -- hand and played cards: five bitmasks unpacked at once; every entry written ----------
    sets = np.empty((k, _SETS), np.uint64)
    sets[:, 0] = view.hand_set
    sets[:, 1:] = by_rel(view.played_set)
    bits = np.unpackbits(sets.view(np.uint8).reshape(-1), bitorder="little")
    blocks = out[:, : _SETS * NUM_CARDS].reshape(k, _SETS, NUM_CARDS)
    blocks[...] = bits.reshape(k, _SETS, 64)[:, :, :NUM_CARDS]

    # -- everything after: zero, then the one-hot entries, all in one flat write --------------
    out[:, _TAIL:] = 0.0
    base = rows * OBS_SIZE  # flat index of each row's entry 0
    trick = by_rel(view.trick_cards).astype(np.intp)  # (K, 4), -1 none
    in_trick = trick >= 0
    phase = view.phase.astype(np.intp)
    bids = by_rel(view.bids).astype(np.intp)  # (K, 4)
    hot = [
        (base[:, None] + _TRICK_COLS + trick)[in_trick],
        base + (_F["phase"].start + phase),
        base + (_F["dealer"].start + rel[rows, view.dealer]),
        (base[:, None] + _BID_COLS + bids).reshape(-1),
    ]
    playing = np.flatnonzero(phase == 1)
    if playing.size:
        leader = rel[playing, view.trick_leader[playing]]
        hot.append(base[playing] + (_F["trick_leader"].start + leader))
    pending = np.flatnonzero(phase <= 1)
    if pending.size:
        to_play = rel[pending, view.to_play[pending]]
        hot.append(base[pending] + (_F["to_play"].start + to_play))
    led = np.flatnonzero(view.trick_size > 0)
    if led.size:
        hot.append(base[led] + (_F["led_suit"].start + view.led_suit[led].astype(np.intp)))
    out.reshape(-1)[np.concatenate(hot)] = 1.0

    # -- scaled numbers and flags by seat ---------------------------------------------------
    won = by_rel(view.tricks_won).astype(np.float32)
    out[:, _F["tricks_won"].slice] = won * np.float32(1 / NUMBER_SCALE)
    need = np.maximum(bids - won, np.float32(0))
    out[:, _F["tricks_needed"].slice] = need * np.float32(1 / NUMBER_SCALE)
    scores = by_rel(view.scores_before)
    clipped = np.clip(scores, -SCORE_SCALE, SCORE_SCALE).astype(np.float32)
    out[:, _F["scores"].slice] = clipped * np.float32(1 / SCORE_SCALE)
    out[:, _F["at_target"].slice] = scores >= view.target[:, None]
    out[:, _F["positive"].slice] = scores > 0
    min_bid = by_rel(view.min_bid).astype(np.float32)
    out[:, _F["min_bid"].slice] = min_bid * np.float32(1 / NUMBER_SCALE)
    total = np.minimum(view.required_total, TOTAL_SCALE).astype(np.float32)
    out[:, _F["required_total"].start] = total * np.float32(1 / TOTAL_SCALE)
    bid_total = bids[:, 0] + bids[:, 1] + bids[:, 2] + bids[:, 3]
    out[:, _F["bid_total"].start] = bid_total * np.float32(1 / TOTAL_SCALE)
    target = np.clip(view.target, 0, TARGET_SCALE).astype(np.float32)
    out[:, _F["target"].start] = target * np.float32(1 / TARGET_SCALE)
    out[:, _F["num_tricks"].start] = view.num_tricks * np.float32(1 / NUMBER_SCALE)
    voids = by_rel(view.shown_void)  # (K, 4) uint8: bit s = suit s
    void_start = _F["shown_void"].start
    for suit in range(4):  # entry 4*rel_seat + suit
        out[:, void_start + suit : void_start + 16 : 4] = (voids >> suit) & 1
    return out


def action_masks(view: SeatView) -> np.ndarray:
    """The views' legal-action masks as a new (K, 66) int8 array (``Discrete.sample`` wants int8)."""
    return view.legal_mask.astype(np.int8)


def _rel_one_hot(values: np.ndarray) -> int | None:
    hot = np.flatnonzero(values > 0.5)
    return int(hot[0]) if hot.size else None


def decode_observation(obs: np.ndarray) -> dict[str, Any]:
    """The facts in one observation (OBS_SIZE,), by name, seats relative to the viewer.

    For tests, debugging and people; the inverse of :func:`encode_observation` up to what it
    leaves out. Cards are ids; seats are rel_seats; None where a one-hot is empty.
    """
    obs = np.asarray(obs, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise FourHundredError(
            f"decode_observation: observation has shape {obs.shape}: expected ({OBS_SIZE},)"
        )

    def part(name: str) -> np.ndarray:
        return obs[OBS_FIELDS[name].slice]

    def cards(block: np.ndarray) -> list[int]:
        return [int(c) for c in np.flatnonzero(block > 0.5)]

    def count(values: np.ndarray, scale: int) -> list[int]:
        return [round(float(v) * scale) for v in values]

    played = part("played").reshape(4, NUM_CARDS)
    trick = part("trick").reshape(4, NUM_CARDS)
    trick_cards = [cards(row) for row in trick]
    bids = part("bids").reshape(4, 14)
    voids = part("shown_void").reshape(4, 4)
    phase = _rel_one_hot(part("phase"))
    return {
        "hand": cards(part("hand")),
        "played": [cards(row) for row in played],
        "trick": [c[0] if c else None for c in trick_cards],
        "trick_leader": _rel_one_hot(part("trick_leader")),
        "led_suit": _rel_one_hot(part("led_suit")),
        "bids": [int(np.argmax(row)) for row in bids],
        "tricks_won": count(part("tricks_won"), NUMBER_SCALE),
        "tricks_needed": count(part("tricks_needed"), NUMBER_SCALE),
        "scores": count(part("scores"), SCORE_SCALE),
        "at_target": [bool(v > 0.5) for v in part("at_target")],
        "positive": [bool(v > 0.5) for v in part("positive")],
        "min_bid": count(part("min_bid"), NUMBER_SCALE),
        "required_total": count(part("required_total"), TOTAL_SCALE)[0],
        "bid_total": count(part("bid_total"), TOTAL_SCALE)[0],
        "target": count(part("target"), TARGET_SCALE)[0],
        "dealer": _rel_one_hot(part("dealer")),
        "to_play": _rel_one_hot(part("to_play")),
        "num_tricks": count(part("num_tricks"), NUMBER_SCALE)[0],
        "shown_void": [[int(s) for s in np.flatnonzero(row > 0.5)] for row in voids],
        "phase": phase,
    }


def require_obs_version(version: int, where: str = "checkpoint") -> None:
    """Raise FourHundredError unless `version` is this encoder's :data:`OBS_VERSION`."""
    if version != OBS_VERSION:
        raise FourHundredError(
            f"{where} was made for observation layout version {version!r}: this code encodes "
            f"version {OBS_VERSION} ({OBS_SIZE} entries); retrain, or use the fourhundred "
            "release that matches the checkpoint"
        )


assert OBS_SIZE == 588 and NUM_ACTIONS == 66
