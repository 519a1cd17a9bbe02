"""The web table in a real browser: headless Chromium (Debian's package) driven by Playwright
(tests/browser.py: skipped where none can run, a failure where one is required). Screenshots
of the play and replay views go to runs/screenshots/ for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web import SHOTS, open_page, page_fixture, require_browser, serve

require_browser()

REDEAL_SEED = 22  # seat 0's first hand of seed 22 holds no A, K, Q or J
PLAYED_SEED = 11  # with three heuristics and the minimum bid, hand 1 of seed 11 is played


@pytest.fixture(scope="module")
def base_url(results_db: Path) -> Iterator[str]:
    """The app on the tournament database of the session, served by uvicorn in a thread."""
    from fourhundred_web.app import create_app

    yield from serve(create_app(db=results_db))


page = page_fixture(scope="module")


def _idle(page: Any) -> None:
    """Wait until the page has shown every move the server sent."""
    page.wait_for_selector('#play[data-busy="0"]')


def _start(page: Any, base_url: str, seed: int) -> None:
    page.goto("about:blank")  # a fresh page: the same address with a #hash would not reload
    page.goto(f"{base_url}/#play")
    page.select_option("#speed", "0")
    for seat in ("partner", "right", "left"):
        page.select_option(f"#bot-{seat}", "heuristic")
    page.fill("#seed", str(seed))
    page.click("#start")
    _idle(page)
    assert page.get_attribute("#play", "data-phase") in ("bid", "play", "hand_over")


def test_a_whole_hand_played_by_clicking(page: Any, base_url: str) -> None:
    _start(page, base_url, PLAYED_SEED)
    clicks = 0
    shot = False
    while page.get_attribute("#play", "data-phase") in ("bid", "play"):
        if page.is_visible("#bidpicker"):
            facts = page.inner_text("#bidpicker .facts")
            assert "Your minimum bid is 2" in facts and "at least 11" in facts
            page.locator("#bidpicker button").first.click()  # the minimum bid
        else:
            cards = page.locator("#hand .card")
            legal = page.locator("#hand .card.legal")
            assert legal.count() >= 1
            assert cards.count() == legal.count() + page.locator("#hand .card.dim").count()
            if page.locator("#hand .card.dim").count():  # a dimmed card does nothing
                page.locator("#hand .card.dim").first.click()
                assert page.locator("#hand .card").count() == cards.count()
                if not shot:  # the play view, with legal cards and dimmed ones
                    page.screenshot(path=str(SHOTS / "play.png"))
                    shot = True
            legal.first.click()
        _idle(page)
        clicks += 1
    assert clicks == 14 and shot  # one bid and 13 cards, some of them not playable
    assert page.is_visible("#handover") and page.is_visible("#next-hand")
    assert page.locator("#sheet table.sheet tbody tr").count() == 1
    tricks = [int(t) for t in page.locator("#felt .seat .tricks").all_inner_texts()]
    assert sum(tricks) == 13
    page.screenshot(path=str(SHOTS / "play-hand-over.png"), full_page=True)
    page.click("#next-hand")
    _idle(page)
    assert page.inner_text("#info").startswith("Hand 2")


def test_the_redeal_offer_is_a_button(page: Any, base_url: str) -> None:
    _start(page, base_url, REDEAL_SEED)
    button = page.locator('#bidpicker button[data-bid="redeal"]')
    assert button.is_visible()
    button.click()
    _idle(page)
    assert "S0 asked for a redeal" in page.inner_text("#handover")


def test_a_recorded_match_replayed_card_by_card(page: Any) -> None:
    page.click("#tab-watch")
    page.wait_for_selector("#w-matches tbody tr")
    assert "Every agent of this tournament can be replayed" in page.inner_text("#watch-summary")
    page.select_option("#w-sort", "surprise")
    page.wait_for_selector('#w-matches[data-sort="surprise"] tbody tr')
    page.locator("#w-matches tbody tr").first.click()
    page.wait_for_selector("#twins .twin .table")
    assert page.locator("#twins .status.ok").count() == 2
    for _ in range(4):  # the deal, then the four bids, one step at a time
        page.click("#r-next")
    assert page.get_attribute("#replay", "data-step") == "4"
    page.select_option("#speed", "0")
    page.click("#r-play")
    page.wait_for_function("Number(document.querySelector('#replay').dataset.step) >= 30")
    page.click("#r-play")  # pause
    step = page.get_attribute("#replay", "data-step")
    assert page.locator("#twins .twin .trick .card").count() >= 1
    assert page.get_attribute("#replay", "data-step") == step
    page.click("#r-prev")
    assert int(page.get_attribute("#replay", "data-step")) == int(step) - 1
    page.screenshot(path=str(SHOTS / "replay.png"), full_page=True)
    page.click("#r-next-hand")
    assert page.get_attribute("#replay", "data-hand") == "1"
    page.select_option("#r-layout", "sequence")
    assert page.locator("#twins.sequence .twin.active").count() == 1
    page.screenshot(path=str(SHOTS / "replay-sequence.png"), full_page=True)


def test_a_secret_table_answers_only_its_page_and_new_match_closes_it(
    page: Any, base_url: str
) -> None:
    page.goto("about:blank")
    page.goto(f"{base_url}/#play")
    assert page.get_attribute("#seed", "placeholder") == "secret"
    page.screenshot(path=str(SHOTS / "play-setup.png"))
    page.select_option("#speed", "0")
    for seat in ("partner", "right", "left"):
        page.select_option(f"#bot-{seat}", "heuristic")
    page.click("#start")  # no seed: the deal is the server's secret
    _idle(page)
    status = """async (token) => (await fetch(`/api/tables/${Play.tableId}`,
        {headers: token === null ? {} : {"X-Table-Token": token}})).status"""
    table, token = page.evaluate("[Play.tableId, Play.token]")
    assert table and token
    assert page.evaluate(status, token) == 200
    assert page.evaluate(status, None) == 401 and page.evaluate(status, "forged") == 403
    page.click("#new-game")  # the page closes the table it showed, then shows the setup
    page.wait_for_selector("#setup:not([hidden])")
    closed = page.evaluate(
        """async ([table, token]) => (await fetch(`/api/tables/${table}`,
        {headers: {"X-Table-Token": token}})).status""",
        [table, token],
    )
    assert closed == 404


# -- the layout at a phone's, a tablet's, a laptop's and a wide screen's width ---------------------
WIDTHS = (390, 768, 1280, 1920)
_OVERFLOW = """(selector) => [...document.querySelectorAll(selector)].filter((e) => e.offsetParent)
    .map((e) => { const r = e.getBoundingClientRect();
      return {right: r.right, left: r.left, width: document.documentElement.clientWidth}; })"""
_NAMES = """(selector) => [...document.querySelectorAll(selector)].filter((e) => e.offsetParent)
    .map((e) => ({text: e.textContent, height: e.getBoundingClientRect().height,
      line: parseFloat(getComputedStyle(e).lineHeight) || 1.25 * parseFloat(getComputedStyle(e).fontSize),
      cut: e.scrollWidth > e.clientWidth + 1}))"""


def _fits(page: Any, what: str) -> None:
    """The document does not scroll sideways; every box of `.panel`, the felt, the score
    sheet's box and the twins ends inside the window; every seat name is one line, uncut."""
    doc = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert doc[0] <= doc[1], f"{what}: the page is {doc[0]} px wide in a {doc[1]} px window"
    for box in page.evaluate(_OVERFLOW, ".panel, .table, #sheet, .twin, .twin .scroll, #hand"):
        assert box["left"] >= -1 and box["right"] <= box["width"] + 1, (what, box)
    names = page.evaluate(_NAMES, ".seat .name")
    assert names, what
    for name in names:  # one line: not wrapped letter by letter, nor word by word
        assert name["height"] < 1.5 * name["line"], (what, name)
        assert not name["cut"], (what, name)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_fits_the_screen(browser: Any, base_url: str, width: int) -> None:
    errors: list[str] = []
    pg = open_page(browser, errors, width)
    pg.goto(f"{base_url}/#play")
    pg.wait_for_selector("#bot-partner option", state="attached")
    pg.screenshot(path=str(SHOTS / f"layout-{width}-setup.png"), full_page=True)
    doc = pg.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert doc[0] <= doc[1], doc
    pg.select_option("#speed", "0")
    for seat, bot in (("partner", "neural:selfplay.pt"), ("right", "heuristic-v1"),
                      ("left", "heuristic")):  # fmt: skip
        pg.select_option(f"#bot-{seat}", bot)
    pg.fill("#seed", str(PLAYED_SEED))
    pg.click("#start")
    _idle(pg)
    shot = False
    while pg.get_attribute("#play", "data-phase") in ("bid", "play"):
        if pg.is_visible("#bidpicker"):
            pg.locator("#bidpicker button").first.click()
        else:
            if not shot and pg.locator("#trick .card").count() >= 2:
                _fits(pg, f"play at {width} px")
                pg.screenshot(path=str(SHOTS / f"layout-{width}-play.png"), full_page=True)
                shot = True
            pg.locator("#hand .card.legal").first.click()
        _idle(pg)
    assert shot
    assert pg.locator("#sheet table.sheet tbody tr").count() == 1
    _fits(pg, f"hand over at {width} px")
    pg.screenshot(path=str(SHOTS / f"layout-{width}-hand-over.png"), full_page=True)

    pg.click("#tab-watch")
    pg.wait_for_selector("#w-matches tbody tr")
    doc = pg.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert doc[0] <= doc[1], doc
    pg.locator("#w-matches tbody tr").first.click()
    pg.wait_for_selector("#twins .twin .table")
    for _ in range(12):  # the deal, the bids and a trick and a half
        pg.click("#r-next")
    pg.screenshot(path=str(SHOTS / f"layout-{width}-replay.png"), full_page=True)
    _fits(pg, f"replay at {width} px")
    # the note column of each twin's sheet is shown whole: it ends inside its scrolling box
    # (which scrolls only where the window is narrower than a sheet)
    for cut in pg.evaluate("""() => [...document.querySelectorAll('.twin .scroll')].map((box) => {
        const note = box.querySelector('tr:first-child th:last-child').getBoundingClientRect();
        return note.right - box.getBoundingClientRect().right; })"""):
        assert width < 768 or cut <= 1, (width, cut)
    pg.close()
    assert not errors, errors


@pytest.mark.parametrize("width", (390, 1440))
def test_a_whole_match_played_on_a_phone_and_a_wide_screen(
    browser: Any, base_url: str, width: int
) -> None:
    """A match to its end, every decision clicked, on a 390 px phone and a 1440 px screen:
    the page fits at the end, and the score sheet holds every hand of the match."""
    errors: list[str] = []
    pg = open_page(browser, errors, width)
    _start(pg, base_url, PLAYED_SEED)
    hands = 1
    while (phase := pg.get_attribute("#play", "data-phase")) != "match_over":
        assert hands <= 200, "the match did not end within 200 hands"
        if phase == "hand_over":
            _fits(pg, f"hand {hands} over at {width} px")
            pg.click("#next-hand")
            hands += 1
        elif pg.is_visible("#bidpicker"):
            pg.locator("#bidpicker button").last.click()  # the highest bid: a short match
        else:
            pg.locator("#hand .card.legal").first.click()
        _idle(pg)
    assert hands >= 2
    assert pg.locator("#sheet table.sheet tbody tr").count() == hands
    over = pg.inner_text("#handover")
    assert "the match is over" in over and "null" not in over and "undefined" not in over
    _fits(pg, f"match over at {width} px")
    pg.screenshot(path=str(SHOTS / f"match-over-{width}.png"), full_page=True)
    pg.close()
    assert not errors, errors
