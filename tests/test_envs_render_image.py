"""The rgb_array picture (fourhundred_env/envs/image.py) says who played each card of the trick:
a tag with the seat (``S3 led``, ``S0 you``) on the outer side of every trick card, and none
where no card was played. The picture is kept in runs/screenshots/ to look at."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL", reason="the picture needs Pillow (the plots extra)")

from fourhundred_env.envs.image import HEIGHT, WIDTH, table_image
from fourhundred_env.table import Table

SHOTS = Path(
    os.environ.get(
        "FOURHUNDRED_SCREENSHOTS", Path(__file__).resolve().parents[1] / "runs" / "screenshots"
    )
)
TAG = np.array([18, 50, 32], dtype=np.uint8)  # the tags' background
# where each relative seat's tag sits (rows, columns): outside its trick card, toward the seat
CX, CY = WIDTH // 2, HEIGHT // 2 + 6
REGIONS = {
    0: (slice(CY + 92, CY + 112), slice(CX - 20, CX + 20)),
    1: (slice(CY - 8, CY + 8), slice(CX + 115, CX + 135)),
    2: (slice(CY - 112, CY - 92), slice(CX - 20, CX + 20)),
    3: (slice(CY - 8, CY + 8), slice(CX - 135, CX - 115)),
}


def _three_cards_played() -> Table:
    table = Table(seed=4, name="picture")
    table.deal()
    while table.phase == "bid":  # everyone bids 3: 12, over the required 11
        table.act("3")
    assert table.phase == "play"
    for _ in range(3):
        table.act(table.legal_ids()[0])
    assert len(table.trick) == 3
    return table


@pytest.mark.parametrize("viewer", [None, 1])
def test_every_trick_card_is_tagged_with_the_seat_that_played_it(viewer: int | None) -> None:
    table = _three_cards_played()
    picture = table_image(table.engine, table.state, 0, viewer)
    bottom = 0 if viewer is None else viewer
    played = {(seat - bottom) % 4 for seat, _ in table.trick}
    for pos, (rows, cols) in REGIONS.items():
        tagged = np.all(picture[rows, cols] == TAG, axis=-1).mean() > 0.2
        assert tagged == (pos in played), (viewer, pos, played)
    SHOTS.mkdir(parents=True, exist_ok=True)
    from PIL import Image

    Image.fromarray(picture).save(SHOTS / f"rgb_array-trick-viewer-{viewer}.png")
