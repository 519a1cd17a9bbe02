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

from fourhundred_env._jit import ONE, ZERO, helper, kernel, lowest_bit
from fourhundred_env.cards import NUM_ACTIONS, NUM_CARDS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.view import NO_MASK, SeatView, check_cut, cut_view, valid_view

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
        """Index one past the field's last entry, ``start + size``."""
        return self.start + self.size

    @property
    def slice(self) -> slice:
        """``slice(start, stop)``: the field's entries of an observation vector."""
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
_ONES_INT8 = np.ones(OBS_SIZE, np.int8)
_HAND, _PLAYED, _TRICK = _F["hand"].start, _F["played"].start, _F["trick"].start
_LEADER, _LED, _BIDS = _F["trick_leader"].start, _F["led_suit"].start, _F["bids"].start
_WON, _NEEDED, _SCORES = _F["tricks_won"].start, _F["tricks_needed"].start, _F["scores"].start
_AT_TARGET, _POSITIVE, _MIN_BID = _F["at_target"].start, _F["positive"].start, _F["min_bid"].start
_REQUIRED, _BID_TOTAL, _TARGET = (_F[n].start for n in ("required_total", "bid_total", "target"))
_DEALER, _TO_PLAY, _NUM_TRICKS = _F["dealer"].start, _F["to_play"].start, _F["num_tricks"].start
_VOID, _PHASE = _F["shown_void"].start, _F["phase"].start


@helper
def encode_one(v: np.ndarray, scale: np.ndarray, row: np.ndarray) -> None:
    """Write the observation of the view record `v` into row (OBS_SIZE,): entry j gets its
    raw value times scale[j] (OBS_SCALE for float32, ones for int8)."""
    row[:] = 0
    me = np.int64(v["seat"])
    cards = v["hand_set"]
    while cards != ZERO:
        c = lowest_bit(cards)
        row[_HAND + c] = scale[_HAND + c]
        cards &= cards - ONE
    bid_total = 0
    for rel in range(4):
        seat = (me + rel) & 3
        cards = v["played_set"][seat]
        while cards != ZERO:
            j = _PLAYED + 52 * rel + lowest_bit(cards)
            row[j] = scale[j]
            cards &= cards - ONE
        card = np.int64(v["trick_cards"][seat])
        if card >= 0:
            row[_TRICK + 52 * rel + card] = scale[_TRICK + 52 * rel + card]
        bid = np.int64(v["bids"][seat])
        row[_BIDS + 14 * rel + bid] = scale[_BIDS + 14 * rel + bid]
        bid_total += bid
        won = np.int64(v["tricks_won"][seat])
        row[_WON + rel] = won * scale[_WON + rel]
        row[_NEEDED + rel] = max(bid - won, 0) * scale[_NEEDED + rel]
        score = np.int64(v["scores_before"][seat])
        row[_SCORES + rel] = min(max(score, -SCORE_SCALE), SCORE_SCALE) * scale[_SCORES + rel]
        if score >= v["target"]:
            row[_AT_TARGET + rel] = scale[_AT_TARGET + rel]
        if score > 0:
            row[_POSITIVE + rel] = scale[_POSITIVE + rel]
        row[_MIN_BID + rel] = np.int64(v["min_bid"][seat]) * scale[_MIN_BID + rel]
        voids = np.int64(v["shown_void"][seat])
        for suit in range(4):
            if (voids >> suit) & 1:
                row[_VOID + 4 * rel + suit] = scale[_VOID + 4 * rel + suit]
    phase = np.int64(v["phase"])
    if phase == 1:
        rel = (np.int64(v["trick_leader"]) - me) & 3
        row[_LEADER + rel] = scale[_LEADER + rel]
    if phase <= 1:
        rel = (np.int64(v["to_play"]) - me) & 3
        row[_TO_PLAY + rel] = scale[_TO_PLAY + rel]
    if v["trick_size"] > 0:
        led = np.int64(v["led_suit"])
        row[_LED + led] = scale[_LED + led]
    rel = (np.int64(v["dealer"]) - me) & 3
    row[_DEALER + rel] = scale[_DEALER + rel]
    row[_PHASE + phase] = scale[_PHASE + phase]
    required = min(np.int64(v["required_total"]), TOTAL_SCALE)
    row[_REQUIRED] = required * scale[_REQUIRED]
    row[_BID_TOTAL] = bid_total * scale[_BID_TOTAL]
    target = min(max(np.int64(v["target"]), 0), TARGET_SCALE)
    row[_TARGET] = target * scale[_TARGET]
    row[_NUM_TRICKS] = np.int64(v["num_tricks"]) * scale[_NUM_TRICKS]


@kernel
def encode_views(views: np.ndarray, scale: np.ndarray, out: np.ndarray) -> int:
    """out[k] = the observation of view k (see `encode_one`). Returns the first row that is
    not a valid view (a viewer outside 0-3, a bid outside 0-13...: nothing written), or -1."""
    for k in range(views.shape[0]):
        if not valid_view(views[k]):
            return k
    for k in range(views.shape[0]):
        encode_one(views[k], scale, out[k])
    return -1


@kernel
def observe_tables(s: np.ndarray, index: np.ndarray, seats: np.ndarray, rules: np.ndarray,
                   scale: np.ndarray, scratch: np.ndarray, obs: np.ndarray,
                   masks: np.ndarray) -> int:  # fmt: skip
    """For each j: the observation of seats[j] at table index[j] into obs[j] and its legal
    mask into masks[j], through a seat view cut into `scratch` (1,) (so the encoder sees only
    what the seat may know). Returns the first bad j (table or seat out of range, or a table
    holding values no game reaches: nothing written from it on), or -1."""
    r = rules[0]
    bad = check_cut(s, index, seats)
    if bad >= 0:
        return bad
    for j in range(index.shape[0]):
        if seats[j] < 0:
            return j
    v = scratch[0]
    for j in range(index.shape[0]):
        cut_view(s[index[j]], index[j], seats[j], r, NO_MASK, v)
        if not valid_view(v):  # a state changed from outside: the encoder indexes with it
            return j
        encode_one(v, scale, obs[j])
        src = v["legal_mask"]
        dst = masks[j]
        for a in range(dst.shape[0]):
            dst[a] = src[a]
    return -1


def encode_observation(
    view: SeatView, out: np.ndarray | None = None, dtype: DTypeLike = np.float32
) -> np.ndarray:
    """Encode K seat views: returns (K, OBS_SIZE) `dtype` (written into `out` if given).

    dtype float32 (default): the documented scaled entries. int8: the same facts unscaled
    (raw counts and scores), 4x smaller; ``int8 * OBS_SCALE`` is the float32 encoding
    exactly. One compiled kernel writes each row once, straight into `out`. Every view
    needs a viewer (seat 0-3).
    """
    k = view.size
    dtype = np.dtype(out.dtype if out is not None else dtype)
    if dtype not in OBS_DTYPES:
        raise FourHundredError(f"encode_observation: dtype {dtype}: expected float32 or int8")
    if out is None:
        out = np.empty((k, OBS_SIZE), dtype)
    elif out.shape != (k, OBS_SIZE) or not out.flags.c_contiguous:
        raise FourHundredError(
            f"encode_observation: out has shape {out.shape}: expected ({k}, {OBS_SIZE}), "
            "C-contiguous"
        )
    bad = encode_views(view.records, OBS_SCALE if dtype == np.float32 else _ONES_INT8, out)
    if bad >= 0:
        raise FourHundredError(
            f"encode_observation: view {bad} is not a seat's view (viewer seats "
            f"{np.unique(view.seat).tolist()}, phase {int(view.phase[bad])}, bids "
            f"{view.bids[bad].tolist()}): expected a viewer 0 to 3, a phase 0 to 3, bids 0 to 13 "
            "and the other fields as seat_view cuts them"
        )
    return out


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
