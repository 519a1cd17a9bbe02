"""Watch in a real browser (headless Chromium, as tests/test_web_browser.py drives it): a
ladder's rating list, history chart and pairings, and a ``cmd:`` bot's game replayed card by
card from them. Screenshots go to runs/screenshots/ (or $FOURHUNDRED_SCREENSHOTS)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web import SHOTS, page_fixture, require_browser, serve

require_browser()

from fourhundred_tournament.ladder.play import add_bots  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BOT = f"cmd:{sys.executable} {ROOT / 'examples' / 'bots' / 'simple_bot.py'}"
PLAY = {"workers": 1, "progress": False, "chunk_matches": 4, "table_batch": 8, "deals": "public"}


@pytest.fixture(scope="module")
def ladder_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four events: random and heuristic, then minbid, heuristic-v1 and the simple cmd bot
    (games of at most 30 hands, so that most are won and the ratings spread)."""
    path = tmp_path_factory.mktemp("ladder") / "ladder.sqlite"
    add_bots(path, ["random", "heuristic"], 3, max_hands=30, play=PLAY)
    add_bots(path, ["minbid"], 3, play=PLAY)
    add_bots(path, ["heuristic-v1"], 3, play=PLAY)
    add_bots(path, [BOT], 1, play=PLAY)
    return path


@pytest.fixture(scope="module")
def ladder_url(ladder_db: Path) -> Iterator[str]:
    from fourhundred_web.app import create_app

    yield from serve(create_app(db=ladder_db))


page = page_fixture(accept_downloads=True)


def test_a_ladder_s_ratings_history_and_a_cmd_bot_s_replay(page: Any, ladder_url: str) -> None:
    page.goto(f"{ladder_url}/#watch")
    page.wait_for_selector("#l-ratings tbody tr")
    assert page.inner_text("#l-head h2") == "Ladder ladder.sqlite"
    rows = page.locator("#l-ratings tbody tr")
    assert rows.count() == 5
    names = [rows.nth(k).locator("td").nth(1).inner_text() for k in range(5)]
    assert sorted(names) == sorted(
        ["cmd:python simple_bot.py", "heuristic", "heuristic-v1", "minbid", "random"]
    )
    ranks = [int(rows.nth(k).locator("td").first.inner_text()) for k in range(5)]
    assert ranks == [1, 2, 3, 4, 5]
    # the chart: one line per bot, a point per event it was rated after
    chart = page.locator("#l-history svg.chart")
    assert chart.locator("g.bot").count() == 5
    points = [chart.locator(f'g.bot[data-bot="{k}"] circle').count() for k in range(5)]
    assert sorted(points) == [1, 2, 3, 4, 4]  # the cmd bot came last, random and heuristic first
    assert page.locator("#l-events tbody tr").count() == 4
    pairings = page.locator("#l-pairings tbody tr")
    assert pairings.count() == 10
    page.screenshot(path=str(SHOTS / "ladder.png"), full_page=True)

    # a pairing of the cmd bot: its matches, then one replayed card by card
    row = page.locator("#l-pairings tbody tr", has_text="simple_bot.py").first
    row.click()
    page.wait_for_function(
        "document.querySelectorAll('#w-matches tbody tr').length === 1"
        " && document.querySelector('#w-matches tbody tr').textContent.includes('simple_bot')"
    )
    page.locator("#w-matches tbody tr").first.click()
    page.wait_for_selector("#twins .twin .table")
    assert page.locator("#twins .status.ok").count() == 2
    assert page.is_hidden("#watch-ladder")
    for _ in range(9):  # the deal, four bids, four cards
        page.click("#r-next")
    assert page.locator("#twins .twin .trick .card").count() >= 2
    assert "simple_bot.py" in page.inner_text("#r-title")
    page.screenshot(path=str(SHOTS / "ladder-replay-cmd.png"), full_page=True)
    page.click("#r-back-list")
    assert page.is_visible("#watch-ladder") and page.is_visible("#watch-list")
    # on a phone's width the page never scrolls sideways: wide tables scroll in their boxes
    page.set_viewport_size({"width": 390, "height": 900})
    doc = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert doc[0] <= doc[1], doc
    page.screenshot(path=str(SHOTS / "ladder-390.png"))


# -- a record: downloaded from Play, opened in Watch -----------------------------------------------
@pytest.fixture(scope="module")
def plain_url() -> Iterator[str]:
    """A server with no database: Watch opens record files only."""
    from fourhundred_web.app import create_app

    yield from serve(create_app())


def test_a_played_hand_downloaded_and_replayed_in_watch(page: Any, plain_url: str) -> None:
    from fourhundred_env.game_records.files import parse_record

    page.goto(f"{plain_url}/#play")
    page.select_option("#speed", "0")
    for seat in ("partner", "right", "left"):
        page.select_option(f"#bot-{seat}", "heuristic")
    page.fill("#seed", "11")  # hand 1 of seed 11 is played out (tests/test_web_browser.py)
    page.click("#start")
    page.wait_for_selector('#play[data-busy="0"]')
    assert page.is_disabled("#download")  # no hand finished yet
    while page.get_attribute("#play", "data-phase") in ("bid", "play"):
        if page.is_visible("#bidpicker"):
            page.locator("#bidpicker button").first.click()
        else:
            page.locator("#hand .card.legal").first.click()
        page.wait_for_selector('#play[data-busy="0"]')
    assert page.is_enabled("#download")
    page.screenshot(path=str(SHOTS / "play-download.png"), full_page=True)
    with page.expect_download() as info:
        page.click("#download")
    download = info.value
    assert download.suggested_filename.startswith("400-match-")
    assert download.suggested_filename.endswith(".400")
    path = Path(download.path())
    text = path.read_text()
    record = parse_record(text)
    assert record.seats == ("you", "heuristic", "heuristic", "heuristic")
    assert len(record.hands) == 1 and len(record.hands[0].cards) == 52

    page.click("#tab-watch")
    page.wait_for_selector("#watch-none:not([hidden])")
    named = path.with_name(download.suggested_filename)  # the file as the browser saved it
    shutil.copy(path, named)
    page.set_input_files("#record-file", str(named))
    page.wait_for_selector("#twins .twin .table")
    assert page.inner_text("#r-title") == f"Record {download.suggested_filename}"
    assert page.get_attribute("#replay", "data-kind") == "record"
    assert page.locator("#twins .twin").count() == 1
    assert "checked by the engine" in page.inner_text("#twins .status.ok")
    for _ in range(4 + 6):  # the deal, the four bids, six cards
        page.click("#r-next")
    assert page.get_attribute("#replay", "data-step") == "10"
    trick = page.locator("#twins .twin .trick .card").all_inner_texts()
    assert len(trick) == 2  # the second trick's first two cards
    cards = list(record.hands[0].cards)
    shown = [c.replace("\n", "").replace("♣", "C").replace("♦", "D").replace("♠", "S")
             .replace("♥", "H") for c in trick]  # fmt: skip
    assert shown == cards[4:6]
    page.screenshot(path=str(SHOTS / "record-replay.png"), full_page=True)
    # the last step: the hand's result, as the Play page's score sheet had it
    page.click("#r-play")
    page.wait_for_function("document.querySelector('#r-play').textContent === 'Play'")
    assert "Hand over" in page.inner_text("#twins .twin .note")

    page.click("#r-back-list")
    assert page.is_visible("#watch-record")
    page.set_input_files("#record-file", files=[{
        "name": "broken.400", "mimeType": "text/plain", "buffer": b"fourhundred-record 1\nhand 2\n",
    }])  # fmt: skip
    page.wait_for_selector("#error:not([hidden])")
    assert page.inner_text("#error") == "broken.400: record line 2: hand '2': expected hand 1"
    assert page.is_hidden("#replay")
    page.screenshot(path=str(SHOTS / "record-refused.png"))
