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

The same encoder also writes int8 (``dtype=np.int8``): the same entries unscaled (scores
-100..100, counts 0..13 or 0..52, target 0..100), a quarter of the bytes; ``OBS_SCALE``
turns it into the float32 encoding exactly.

Only the viewer's own hand enters: a SeatView holds no other hidden cards, so observations
of two deals that differ only in other seats' unplayed cards are identical.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

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
OBS_LOW.flags.writeable = OBS_HIGH.flags.writeable = False
"""Bounds of every entry, (OBS_SIZE,) float32 (read-only), for a Gymnasium Box."""

SCORE_SCALE = 100
NUMBER_SCALE = 13  # tricks and bids
TOTAL_SCALE = 52
TARGET_SCALE = 100
_SCALES = {
    "tricks_won": NUMBER_SCALE,
    "tricks_needed": NUMBER_SCALE,
    "scores": SCORE_SCALE,
    "min_bid": NUMBER_SCALE,
    "required_total": TOTAL_SCALE,
    "bid_total": TOTAL_SCALE,
    "target": TARGET_SCALE,
    "num_tricks": NUMBER_SCALE,
}
assert set(_SCALES) == {name for name, f in OBS_FIELDS.items() if f.scalar}
OBS_DTYPES = (np.dtype(np.float32), np.dtype(np.int8))
"""The two encodings: float32 (scaled, the default) and int8 (raw integers)."""

OBS_SCALE = np.ones(OBS_SIZE, np.float32)
for _name, _scale in _SCALES.items():
    OBS_SCALE[OBS_FIELDS[_name].slice] = np.float32(1 / _scale)
OBS_LOW_INT8 = np.round(OBS_LOW / OBS_SCALE).astype(np.int8)
OBS_HIGH_INT8 = np.round(OBS_HIGH / OBS_SCALE).astype(np.int8)
for _array in (OBS_SCALE, OBS_LOW_INT8, OBS_HIGH_INT8):
    _array.flags.writeable = False
"""OBS_SCALE (OBS_SIZE,) float32: ``float32 obs == int8 obs * OBS_SCALE``; OBS_LOW_INT8 and
OBS_HIGH_INT8: the bounds of the int8 encoding (read-only)."""

_F = OBS_FIELDS
_SETS = 9  # hand, played by rel_seat 0..3, trick by rel_seat 0..3: 52-card blocks from 0
_TAIL = _SETS * NUM_CARDS  # entries from here on are built in a small buffer
_TAIL_SIZE = OBS_SIZE - _TAIL
_T = {name: f.start - _TAIL for name, f in _F.items() if f.start >= _TAIL}  # tail offsets
_S = {name: slice(f.start - _TAIL, f.stop - _TAIL) for name, f in _F.items() if f.start >= _TAIL}
_ROTATE = (np.arange(4)[:, None] + np.arange(4)[None, :]) % 4  # [viewer, rel_seat] -> seat
_REL = (np.arange(4)[None, :] - np.arange(4)[:, None]) % 4  # [viewer, seat] -> rel_seat
_BID_COLS = _T["bids"] + 14 * np.arange(4)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_LOW6 = np.uint64(63)


def encode_observation(
    view: SeatView, out: np.ndarray | None = None, dtype: DTypeLike = np.float32
) -> np.ndarray:
    """Encode K seat views: returns (K, OBS_SIZE) `dtype` (written into `out` if given).

    dtype float32 (default): the documented scaled entries. int8: the same facts unscaled
    (raw counts and scores), 4x smaller. The int8 encoding is built first and the float32 one
    is ``int8 * OBS_SCALE``, exactly. Batched with numpy; no loop over the K tables. Every
    view needs a viewer (seat 0-3).
    """
    k = view.size
    viewer = view.seat.astype(np.intp)
    if k and (viewer.min() < 0 or viewer.max() > 3):
        raise FourHundredError(
            f"encode_observation: viewer seats {np.unique(viewer).tolist()}: expected seats 0 to 3"
        )
    dtype = np.dtype(out.dtype if out is not None else dtype)
    if dtype not in OBS_DTYPES:
        raise FourHundredError(f"encode_observation: dtype {dtype}: expected float32 or int8")
    if out is not None and out.shape != (k, OBS_SIZE):
        raise FourHundredError(
            f"encode_observation: out has shape {out.shape}: expected ({k}, {OBS_SIZE})"
        )
    scaled = dtype == np.float32
    raw = out if out is not None and not scaled else np.empty((k, OBS_SIZE), np.int8)
    if k:
        _encode_int8(view, viewer, raw)
    if not scaled:
        return raw
    if out is None:
        out = np.empty((k, OBS_SIZE), np.float32)
    return np.multiply(raw, OBS_SCALE, out=out)


def _encode_int8(view: SeatView, viewer: np.ndarray, out: np.ndarray) -> None:
    """Write the int8 encoding of K >= 1 views into `out` (K, OBS_SIZE) int8."""
    k = view.size
    rows = np.arange(k)
    rot = _ROTATE[viewer]  # (K, 4): absolute seat of each rel_seat
    rot_flat = rot + 4 * rows[:, None]  # index into a flattened (K, 4) per-seat array
    rel = _REL[viewer]  # (K, 4): rel_seat of each absolute seat

    def by_rel(per_seat: np.ndarray) -> np.ndarray:  # (K, 4) by seat -> (K, 4) by rel_seat
        return per_seat.reshape(-1)[rot_flat]

    # -- the nine card blocks (hand, played x4, trick x4): bitmasks unpacked, all entries ----
    sets = np.empty((k, _SETS), np.uint64)
    sets[:, 0] = view.hand_set
    sets[:, 1:5] = by_rel(view.played_set)
    trick = by_rel(view.trick_cards)  # (K, 4) int8, -1 none
    card_bit = np.left_shift(_ONE, trick.astype(np.uint64) & _LOW6)  # garbage where -1
    sets[:, 5:] = np.where(trick >= 0, card_bit, _ZERO)
    bits = np.unpackbits(sets.view(np.uint8).reshape(-1), bitorder="little")
    blocks = out[:, :_TAIL].reshape(k, _SETS, NUM_CARDS)
    blocks[...] = bits.reshape(k, _SETS, 64)[:, :, :NUM_CARDS]

    # -- the rest, built in a small zeroed buffer (cache-friendly), then copied once ---------
    tail = np.zeros((k, _TAIL_SIZE), np.int8)
    flat = tail.reshape(-1)
    base = rows * _TAIL_SIZE  # flat index of each row's first tail entry
    phase = view.phase.astype(np.intp)
    bids = by_rel(view.bids).astype(np.intp)  # (K, 4)
    hot = [
        base + (_T["phase"] + phase),
        base + (_T["dealer"] + rel[rows, view.dealer]),
        (base[:, None] + (_BID_COLS + bids)).reshape(-1),
    ]
    playing = np.flatnonzero(phase == 1)
    if playing.size:
        hot.append(base[playing] + (_T["trick_leader"] + rel[playing, view.trick_leader[playing]]))
    pending = np.flatnonzero(phase <= 1)
    if pending.size:
        hot.append(base[pending] + (_T["to_play"] + rel[pending, view.to_play[pending]]))
    led = np.flatnonzero(view.trick_size > 0)
    if led.size:
        hot.append(base[led] + (_T["led_suit"] + view.led_suit[led].astype(np.intp)))
    flat[np.concatenate(hot)] = 1

    def put(name: str, values: np.ndarray) -> None:  # small integers, unscaled
        tail[:, _S[name]] = values.reshape(k, -1)

    won = by_rel(view.tricks_won)
    put("tricks_won", won)
    put("tricks_needed", np.maximum(bids - won, 0))
    scores = by_rel(view.scores_before)
    put("scores", np.clip(scores, -SCORE_SCALE, SCORE_SCALE))
    tail[:, _S["at_target"]] = scores >= view.target[:, None]
    tail[:, _S["positive"]] = scores > 0
    put("min_bid", by_rel(view.min_bid))
    put("required_total", np.minimum(view.required_total, TOTAL_SCALE))
    put("bid_total", bids[:, 0] + bids[:, 1] + bids[:, 2] + bids[:, 3])
    put("target", np.clip(view.target, 0, TARGET_SCALE))
    put("num_tricks", view.num_tricks)
    voids = by_rel(view.shown_void)  # (K, 4) uint8: bit s = suit s
    void_start = _T["shown_void"]
    for suit in range(4):  # entry 4*rel_seat + suit
        tail[:, void_start + suit : void_start + 16 : 4] = (voids >> suit) & 1
    out[:, _TAIL:] = tail


def _rel_one_hot(values: np.ndarray) -> int | None:
    hot = np.flatnonzero(values > 0.5)
    return int(hot[0]) if hot.size else None


def decode_observation(obs: np.ndarray) -> dict[str, Any]:
    """The facts in one observation (OBS_SIZE,) float32 or int8, by name, seats relative to
    the viewer.

    For tests, debugging and people; the inverse of :func:`encode_observation` up to what it
    leaves out. Cards are ids; seats are rel_seats; None where a one-hot is empty.
    """
    obs = np.asarray(obs)
    if obs.dtype == np.int8:
        obs = obs * OBS_SCALE
    obs = obs.astype(np.float32)
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
