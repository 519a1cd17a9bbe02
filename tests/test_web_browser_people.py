"""Two people at one table in a real browser (headless Chromium, as tests/test_web_browser.py
drives it): the maker invites a partner by a link, the partner opens it in another browser
context (no shared storage: another person's browser), and each plays their own seat's bids
and cards until the hand is over, the bots playing the other two. Screenshots of both pages
go to runs/screenshots/ (or $FOURHUNDRED_SCREENSHOTS)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web import SHOTS, open_page, require_browser, serve

require_browser()

from tests.test_web_browser import PLAYED_SEED  # noqa: E402

# with the people bidding their minimum, the heuristics' hand 1 of PLAYED_SEED is played


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    from fourhundred_web.app import create_app

    yield from serve(create_app())


def _page(browser: Any, errors: list[str], width: int = 1280) -> tuple[Any, Any]:
    """A page in a browser context of its own (another person's browser)."""
    context = browser.new_context()
    page = open_page(context, errors, width)
    return context, page


def _held(page: Any) -> list[str]:
    return page.eval_on_selector_all("#hand .card", "(cs) => cs.map((c) => c.dataset.card)")


def _whose_turn(pages: list[Any], deadline: float) -> Any | None:
    """The page whose person is to act once it has shown every move, or None when the hand
    is over on both pages (each page learns of the other's moves by polling)."""
    while time.monotonic() < deadline:
        for page in pages:
            if page.get_attribute("#play", "data-busy") == "0" and (
                page.get_attribute("#play", "data-turn") == "1"
            ):
                return page
        phases = [p.get_attribute("#play", "data-phase") for p in pages]
        if all(ph in ("hand_over", "match_over") for ph in phases):
            return None
        pages[0].wait_for_timeout(100)
    raise AssertionError(f"nobody's turn on either page: {phases}")


def test_two_people_at_one_table_from_two_browsers(browser: Any, base_url: str) -> None:
    errors: list[str] = []
    ctx_a, ann = _page(browser, errors)
    ctx_b, bob = _page(browser, errors, width=390)  # Bob on a phone
    ann.goto(f"{base_url}/#play")
    ann.wait_for_selector("#bot-partner option", state="attached")
    ann.select_option("#speed", "0")
    ann.select_option("#bot-partner", "person")
    ann.select_option("#bot-right", "heuristic")
    ann.select_option("#bot-left", "heuristic")
    ann.fill("#person-name", "Ann")
    ann.fill("#seed", str(PLAYED_SEED))
    ann.click("#start")
    ann.wait_for_selector("#invites .invite input")
    link = ann.input_value("#invites .invite input")
    assert link.startswith(f"{base_url}/#join=")
    table, token = link.split("#join=")[1].split(".")
    assert table == ann.evaluate("Play.tableId") and token != ann.evaluate("Play.token")
    assert "not joined yet" in ann.inner_text("#invites")
    ann.screenshot(path=str(SHOTS / "people-invite.png"), full_page=True)

    bob.goto(link)
    bob.wait_for_selector("#join-panel:not([hidden])")
    assert bob.is_hidden("#setup") and bob.is_hidden("#game")
    bob.screenshot(path=str(SHOTS / "people-join.png"), full_page=True)
    bob.select_option("#speed", "0")
    bob.fill("#join-name", "Bob")
    bob.click("#join-take")
    bob.wait_for_selector("#game:not([hidden])")
    # Ann's page learns by polling that Bob took his seat, and his name
    ann.wait_for_selector("#invites .status.joined")
    assert "S2 Bob" in ann.inner_text('#felt .seat[data-pos="2"]')
    assert "S0 Ann" in bob.inner_text('#felt .seat[data-pos="2"]')
    assert "You" in bob.inner_text('#felt .seat[data-pos="0"]')
    # each page holds its own seat's cards, and no card of the other's
    hands = [_held(ann), _held(bob)]
    assert len(hands[0]) == len(hands[1]) == 13 and not set(hands[0]) & set(hands[1])

    deadline = time.monotonic() + 120
    turns = {"ann": 0, "bob": 0}
    shot = False
    while (page := _whose_turn([ann, bob], deadline)) is not None:
        other = bob if page is ann else ann
        turns["ann" if page is ann else "bob"] += 1
        # the other person's page waits for this one, and offers nothing to click
        assert other.get_attribute("#play", "data-turn") == "0"
        assert other.locator("#hand .card.legal").count() == 0 and other.is_hidden("#bidpicker")
        if page.is_visible("#bidpicker"):
            if page is bob:  # Ann's page says whom it waits for
                other.wait_for_selector("#prompt:has-text('Waiting for S2 Bob to bid')")
            page.locator("#bidpicker button").first.click()
        else:
            if not shot and page is bob and bob.locator("#trick .card").count() >= 2:
                ann.wait_for_selector("#prompt:has-text('Waiting for S2 Bob to play')")
                assert ann.inner_text("#invites h3") == "Your friends' links"
                assert "null" not in ann.inner_text("#invites")
                ann.screenshot(path=str(SHOTS / "people-ann-waits.png"), full_page=True)
                bob.screenshot(path=str(SHOTS / "people-bob-plays.png"), full_page=True)
                shot = True
            page.locator("#hand .card.legal").first.click()
        page.wait_for_selector('#play[data-busy="0"]')
    assert turns == {"ann": 14, "bob": 14} and shot  # a bid and 13 cards each
    for page in (ann, bob):
        page.wait_for_selector("#handover:not([hidden])")
        assert page.locator("#sheet table.sheet tbody tr").count() == 1
        assert sum(int(t) for t in page.locator("#felt .seat .tricks").all_inner_texts()) == 13
    ann.screenshot(path=str(SHOTS / "people-ann-hand-over.png"), full_page=True)
    bob.screenshot(path=str(SHOTS / "people-bob-hand-over.png"), full_page=True)
    # either person deals the next hand; the other's page follows
    bob.click("#next-hand")
    ann.wait_for_function("document.querySelector('#info').textContent.startsWith('Hand 2')")
    # Bob's New match leaves the table open; Ann's closes it, and Bob's page is told so
    bob.click("#new-game")
    bob.wait_for_selector("#setup:not([hidden])")
    assert ann.evaluate(
        "async () => (await fetch(`/api/tables/${Play.tableId}`, {headers: Play.headers()})).status"
    ) == 200  # fmt: skip
    ctx_a.close()
    ctx_b.close()
    assert not errors, errors
