"""The table as a picture: ``render_mode="rgb_array"`` of every environment.

:func:`table_image` draws one table of a batch (the four seats with their score, bid, tricks
and minimum bid, the seat to act outlined, the hands, the trick in the middle with each card
tagged by the seat that played it, the hand's dealer, target and required total) as an (H, W, 3) uint8 array. It needs Pillow (which the
``plots`` extra brings with matplotlib), imported on the first picture only, so an
environment made with ``render_mode="rgb_array"`` costs nothing until it draws. Cards are
drawn with DejaVu Sans (bundled with matplotlib, or the system's) so that the suit symbols
show; without it, Pillow's default font and suit letters.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.cards import SUIT_LETTERS, SUIT_SYMBOLS
from fourhundred_env.engine import Engine, State
from fourhundred_env.errors import FourHundredError
from fourhundred_env.table import Table

WIDTH, HEIGHT = 960, 640
"""Size of every picture, in pixels."""
_CARD = (46, 64)  # a card in a hand (w, h)
_TRICK_CARD = (58, 80)
_FELT = (32, 96, 60)
_INK = (20, 20, 20)
_RED = (200, 20, 30)
_PAPER = (250, 250, 246)
_BACK = (40, 70, 150)
_GOLD = (250, 210, 60)
_LIGHT = (235, 240, 235)


@functools.cache
def _pillow() -> tuple[Any, Any, Any]:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:  # pragma: no cover - depends on the installation
        raise FourHundredError(
            "render_mode='rgb_array' needs Pillow: pip install 'fourhundred[plots]' (or pillow)"
        ) from None
    return Image, ImageDraw, ImageFont


@functools.cache
def _font(size: int, bold: bool = False) -> tuple[Any, bool]:
    """(font, has the suit symbols) of `size` pixels."""
    _, _, image_font = _pillow()
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    candidates = [name]
    spec = importlib.util.find_spec("matplotlib")
    if spec is not None and spec.submodule_search_locations:
        mpl = Path(next(iter(spec.submodule_search_locations)))
        candidates.insert(0, str(mpl / "mpl-data" / "fonts" / "ttf" / name))
    for candidate in candidates:
        try:
            return image_font.truetype(candidate, size), True
        except OSError:
            continue
    return image_font.load_default(size), False


def _card_parts(text: str) -> tuple[str, str, tuple[int, int, int]]:
    """("10", "♥" or "H", colour) of a card written like "10H"."""
    rank, suit = text[:-1], SUIT_LETTERS.index(text[-1])
    _, symbols = _font(16)
    colour = _RED if suit in (1, 3) else _INK
    return rank, SUIT_SYMBOLS[suit] if symbols else SUIT_LETTERS[suit], colour


def _draw_card(draw: Any, x: int, y: int, text: str | None, size: tuple[int, int]) -> None:
    """A card face (`text` like "AH") or, for None, its back, with its top left at (x, y)."""
    w, h = size
    if text is None:
        draw.rounded_rectangle((x, y, x + w, y + h), 5, fill=_BACK, outline=_LIGHT, width=2)
        return
    draw.rounded_rectangle((x, y, x + w, y + h), 5, fill=_PAPER, outline=(90, 90, 90), width=1)
    rank, suit, colour = _card_parts(text)
    big = h >= _TRICK_CARD[1]
    rank_font, _ = _font(22 if big else 17, bold=True)
    suit_font, _ = _font(24 if big else 18)
    draw.text((x + 4, y + 2), rank, font=rank_font, fill=colour)
    draw.text((x + 4, y + (28 if big else 22)), suit, font=suit_font, fill=colour)


def _draw_hand(draw: Any, cards: list[str | None], x: int, y: int, per_row: int) -> None:
    """Cards in rows of `per_row`, overlapping so that each card's corner shows."""
    step = _CARD[0] - 12
    for k, card in enumerate(cards):
        row, col = divmod(k, per_row)
        _draw_card(draw, x + col * step, y + row * (_CARD[1] + 6), card, _CARD)


def table_image(engine: Engine, state: State, index: int, viewer: int | None = None) -> np.ndarray:
    """(HEIGHT, WIDTH, 3) uint8 picture of table `index` of `state`: every seat's score, bid,
    tricks and minimum bid, the trick (each card tagged with its seat: ``S3 led``, ``S0``), and
    `viewer`'s hand face up at the bottom with the
    other hands face down (all four face up if `viewer` is None, seat 0 at the bottom).
    Seats go counter-clockwise in play order: the next seat to play sits on the right."""
    image_mod, draw_mod, _ = _pillow()
    table = Table(rules=engine.rules, name=f"table {index}")
    table.state = state.select(index)
    bottom = 0 if viewer is None or viewer < 0 else int(viewer)
    image = image_mod.new("RGB", (WIDTH, HEIGHT), _FELT)
    draw = draw_mod.Draw(image)
    small, _ = _font(15)
    label_font, _ = _font(16, bold=True)
    # the header: the hand and what the bidding needs
    draw.rectangle((0, 0, WIDTH, 30), fill=(18, 50, 32))
    if table.phase == "match_over":
        status = f"match over: team {table.winner} wins"
    elif table.phase == "hand_over":
        status = "between hands"
    else:
        status = f"S{table.to_play} to {table.phase}"
    header = (
        f"{table.name} · hand {table.hand_number} · dealer S{table._hand_dealer()} · "
        f"target {table.target} · required total {table.required_total()} · {status}"
    )
    draw.text((12, 6), header, font=label_font, fill=_LIGHT)
    bids = table.bids
    # where each seat sits, relative to the viewer at the bottom: (label xy, hand xy, per row)
    hand_width = 12 * (_CARD[0] - 12) + _CARD[0]
    places = {
        0: ((WIDTH - hand_width) // 2, HEIGHT - 124, (WIDTH - hand_width) // 2, HEIGHT - 78, 13),
        1: (WIDTH - 262, 176, WIDTH - 262, 224, 7),
        2: ((WIDTH - hand_width) // 2, 38, (WIDTH - hand_width) // 2, 84, 13),
        3: (16, 176, 16, 224, 7),
    }
    for seat in range(4):
        lx, ly, hx, hy, per_row = places[(seat - bottom) % 4]
        bid = "-" if bids[seat] is None else str(bids[seat])
        you = " (you)" if viewer is not None and seat == viewer else ""
        label = (
            f"S{seat}{you} · team {seat % 2} · score {table.scores[seat]}\n"
            f"bid {bid} · tricks {table.tricks_won[seat]} · min bid {table.min_bid(seat)}"
        )
        if seat == table.to_play:
            box = draw.textbbox((lx, ly), label, font=small)
            draw.rectangle((box[0] - 4, box[1] - 3, box[2] + 4, box[3] + 3), fill=_GOLD)
            draw.text((lx, ly), label, font=small, fill=_INK)
        else:
            draw.text((lx, ly), label, font=small, fill=_LIGHT)
        shown = viewer is None or viewer < 0 or seat == viewer
        cards: list[str | None] = list(table.hand(seat))
        if not shown:
            cards = [None] * len(cards)
        _draw_hand(draw, cards, hx, hy, per_row)
    # the trick, each card pushed toward the seat that played it and tagged with that seat
    # (on the card's outer side; the first card's tag says it led)
    cx, cy = WIDTH // 2, HEIGHT // 2 + 6
    w, h = _TRICK_CARD
    offsets = {0: (0, 52), 1: (78, 0), 2: (0, -52), 3: (-78, 0)}
    for k, (seat, card) in enumerate(table.trick):
        pos = (seat - bottom) % 4
        dx, dy = offsets[pos]
        x, y = cx + dx - w // 2, cy + dy - h // 2
        _draw_card(draw, x, y, card, _TRICK_CARD)
        you = " you" if viewer is not None and seat == viewer else ""
        tag = f"S{seat}{you}" + (" led" if k == 0 else "")
        anchor, at = {
            0: ("mt", (x + w // 2, y + h + 5)),
            1: ("lm", (x + w + 8, y + h // 2)),
            2: ("mb", (x + w // 2, y - 5)),
            3: ("rm", (x - 8, y + h // 2)),
        }[pos]
        box = draw.textbbox(at, tag, font=small, anchor=anchor)
        draw.rounded_rectangle((box[0] - 4, box[1] - 3, box[2] + 4, box[3] + 3), 4,
                               fill=(18, 50, 32))  # fmt: skip
        draw.text(at, tag, font=small, fill=_LIGHT, anchor=anchor)
    if not table.trick:
        draw.text((cx, cy), "no trick on the table", font=small, fill=_LIGHT, anchor="mm")
    return np.asarray(image, dtype=np.uint8)
