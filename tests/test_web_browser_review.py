"""Engine analysis in a real browser (headless Chromium, as tests/test_web_browser.py drives
it): hints at the person's turn on the Play page (a value by every legal bid and card, the
best marked), the Review of a hand just played in Watch's viewer (each decision's verdict,
the per-seat summary, the largest mistakes, the hand's moves), and a record opened in Watch
reviewed. Screenshots go to runs/screenshots/ (or $FOURHUNDRED_SCREENSHOTS)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.web import SHOTS, page_fixture, require_browser, serve

require_browser()

from tests.test_web_review import DEAL_A, HEAD, PLAYED  # noqa: E402

TINY = "search:worlds=2,candidates=8,bid_worlds=2"
"""The valuer of these tests: two worlds (what is tested is the page, not the values)."""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    from fourhundred_web.app import create_app

    app = create_app()
    app.state.server.reviews.agent = TINY
    app.state.server.hints.agent = TINY
    yield from serve(app)


page = page_fixture(timeout=120_000)


def _summary(page: Any) -> list[list[str]]:
    rows = page.locator("#review .review-summary tbody tr")
    return [rows.nth(k).locator("td").all_inner_texts() for k in range(rows.count())]


def test_hints_then_the_review_of_the_hand_played(page: Any, url: str) -> None:
    page.goto(f"{url}/#play")
    page.select_option("#speed", "0")
    for seat in ("partner", "right", "left"):
        page.select_option(f"#bot-{seat}", "heuristic")
    page.fill("#seed", "11")  # hand 1 of seed 11 is played out
    page.click("#start")
    page.wait_for_selector('#play[data-busy="0"]')
    assert not page.is_checked("#hints")  # off by default: no values asked for
    assert page.locator(".hint-value").count() == 0
    page.check("#hints")
    page.wait_for_selector("#bidpicker button.hint-best")
    buttons = page.locator("#bidpicker button")
    assert page.locator("#bidpicker .hint-value").count() == buttons.count() > 1
    assert page.locator("#bidpicker button.hint-best").count() == 1
    assert "is best" in page.inner_text("#hint-line")
    assert all(t.strip().endswith("%") for t in page.locator(".hint-value").all_inner_texts())
    page.screenshot(path=str(SHOTS / "hint-bid.png"), full_page=True)
    shot_card = False
    while page.get_attribute("#play", "data-phase") in ("bid", "play"):
        if page.is_visible("#bidpicker"):
            page.locator("#bidpicker button").first.click()
        else:
            legal = page.locator("#hand .card.legal")
            if not shot_card and legal.count() > 1:
                page.wait_for_selector("#hand .card.hint-best")
                assert page.locator("#hand .card.hinted").count() == legal.count()
                assert page.locator("#hand .card.hint-best.legal").count() == 1
                page.screenshot(path=str(SHOTS / "hint-card.png"), full_page=True)
                shot_card = True
            legal.first.click()
        page.wait_for_selector('#play[data-busy="0"]')
    assert shot_card

    # the hand is over: review it in Watch's viewer
    page.click("#review-last-hand")
    page.wait_for_selector('#review[data-status="done"]')
    assert page.is_visible("#replay") and page.get_attribute("#replay", "data-hand") == "0"
    status = page.inner_text("#review-status")
    assert status.startswith("Reviewed hand 1 by search:worlds=2") and "decisions" in status
    decisions = page.evaluate("Review.decisions")
    assert {d["seat"] for d in decisions} == {0, 1, 2, 3} and all(d["hand"] == 1 for d in decisions)
    rows = _summary(page)
    assert [r[0] for r in rows] == ["S0", "S1", "S2", "S3"]
    assert [r[1] for r in rows] == ["you", "heuristic", "heuristic", "heuristic"]
    for seat, row in enumerate(rows):  # what each seat lost, as the decisions add up
        mine = [d for d in decisions if d["seat"] == seat]
        assert int(row[3]) == len(mine)
        assert row[4] == f"{100 * sum(d['lost'] for d in mine):.2f}"
        assert int(row[6]) == sum(d["lost"] > 0 for d in mine)
    assert page.locator("#review .review-moves .move").count() == len(decisions)
    page.click("#r-next")  # the first bid: its verdict under the table
    step = page.locator("#twins .review-step")
    assert step.get_attribute("data-move") == "1"
    assert step.inner_text().startswith(f"Review: S1 bid {decisions[0]['taken']}")
    mistakes = page.locator("#review .review-mistakes tr.mistake")
    if mistakes.count():  # the largest mistake, shown where it was made
        worst = max(decisions, key=lambda d: d["lost"])
        mistakes.first.click()
        assert page.get_attribute("#replay", "data-step") == str(worst["move"])
        assert "mistake" in (page.get_attribute("#twins .review-step", "class") or "")
        assert "lost" in page.inner_text("#twins .review-step")
    else:
        for _ in range(8):
            page.click("#r-next")
    page.screenshot(path=str(SHOTS / "review-hand.png"), full_page=True)
    page.click("#review-back")
    page.wait_for_selector("#game:not([hidden])")
    assert page.get_attribute("#play", "data-phase") == "hand_over"  # the table as it was


def test_a_record_opened_in_watch_is_reviewed(page: Any, url: str) -> None:
    page.goto(f"{url}/#watch")
    page.wait_for_selector("#watch-none:not([hidden])")
    page.set_input_files("#record-file", files=[{
        "name": "two-tricks.400", "mimeType": "text/plain",
        "buffer": (HEAD + DEAL_A + PLAYED).encode(),
    }])  # fmt: skip
    page.wait_for_selector("#twins .twin .table")
    assert page.is_visible("#review-game") and page.is_visible("#review-hand")
    page.click("#review-game")
    page.wait_for_selector('#review[data-status="done"]')
    assert [r[1] for r in _summary(page)] == ["ann", "bob", "cy", "di"]
    assert [int(r[3]) for r in _summary(page)] == [3, 3, 3, 3]  # a bid and two cards each
    for _ in range(8):  # the deal, four bids, four cards: S3's 7S was its only spade
        page.click("#r-next")
    assert "S3 7S: forced" in page.inner_text("#twins .review-step")
    page.click("#r-next")
    assert page.inner_text("#twins .review-step").startswith("Review: S2 played QS")
    page.screenshot(path=str(SHOTS / "review-record.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 900})  # a phone: the page never scrolls
    doc = page.evaluate(  # sideways, the review's tables scroll inside their panel
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert doc[0] <= doc[1], doc
    page.screenshot(path=str(SHOTS / "review-record-390.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    # a review refused: one line, the viewer as it was
    page.evaluate("Review.source = { text: 'fourhundred-record 1\\nhand 2\\n' }")
    page.click("#review-game")
    page.wait_for_selector("#error:not([hidden])")
    assert "\n" not in page.inner_text("#error")
    assert page.get_attribute("#replay", "data-step") == "9"
    assert page.get_attribute("#review", "data-status") == "done"  # the review shown stays
