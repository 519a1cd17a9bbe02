"""The manual: the rules page covers every flag, no page names a file outside the repository,
the generated tables and BENCHMARKS.md's head are current, the model cards match their files,
and the site builds with --strict and is looked at in headless Chromium, opened from disk as a
reader who opens site/index.html does (links go to pages, the search answers).

The build needs the ``docs`` extra; without it that test is skipped, unless
FOURHUNDRED_REQUIRE_DOCS=1 (`.ci/run`), which turns the skip into a failure. The screenshots
(runs/screenshots/docs-home.png, docs-reference.png, docs-rules.png, docs-search.png) need Chromium
as the browser tests do.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from fourhundred_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import gen_pages  # noqa: E402  (docs/gen_pages.py, the build's hook)

from tests.requires import missing, require  # noqa: E402

PAGES = [
    ROOT / "README.md",
    ROOT / "BENCHMARKS.md",
    ROOT / "CHANGELOG.md",
    ROOT / "agents" / "pretrained" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
CHROMIUM = os.environ.get("FOURHUNDRED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(os.environ.get("FOURHUNDRED_SCREENSHOTS", ROOT / "runs" / "screenshots"))


def test_the_rules_page_names_every_flag_of_rules() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    missing = [f.name for f in dataclasses.fields(Rules) if f"`{f.name}`" not in text]
    assert not missing, f"docs/rules.md does not name these Rules flags: {missing}"
    for preset in ("wiki", "pagat"):
        assert f"**`{preset}`**" in text


def test_no_page_names_a_file_outside_the_repository() -> None:
    for page in PAGES:
        text = page.read_text()
        for bad in ("shared/", "RULES.md", "STYLE.md", "/work/"):
            assert bad not in text, f"{page.relative_to(ROOT)} names {bad!r}"


def test_every_generated_table_of_every_page_is_made() -> None:
    asked = 0
    for page in PAGES:
        text = page.read_text()
        expanded = gen_pages.expand(text, str(page))
        asked += len(gen_pages._MARK.findall(text))
        assert "<!-- gen:" not in expanded
    assert asked >= 15


def test_an_unknown_generated_table_is_an_error() -> None:
    with pytest.raises(gen_pages.GenError, match="unknown generated table 'nope'"):
        gen_pages.expand("<!-- gen: nope -->", "page.md")


def test_the_observation_table_agrees_with_obs_fields() -> None:
    from fourhundred_env.observation import OBS_FIELDS, OBS_SIZE

    text = gen_pages.gen_observation()
    for f in OBS_FIELDS.values():
        span = f"{f.start}" if f.size == 1 else f"{f.start}-{f.stop - 1}"
        assert f"| {span} | <code>{f.name}</code> | {f.size} |" in text
    assert f"{OBS_SIZE} entries" in text


def test_generated_examples_follow_the_rules_functions() -> None:
    # the worked examples of the rules spec, as the generated tables show them
    scoring = gen_pages.gen_scoring_examples()
    for row in ("| 28 | 5 | 5 | made, below 30: table value | +10 | 38 |",
                "| 32 | 5 | 6 | made, thirty rule | +5 | 37 |",
                "| 20 | 7 | 6 | missed | -14 | 6 |",
                "| 5 | 10 | 10 | made | +40 | 45 |",
                "| 29 | 6 | 8 | made, below 30: table value | +12 | 41 |"):  # fmt: skip
        assert row in scoring
    ends = gen_pages.gen_end_examples()
    assert "| 42, -5 / 17, 12 | 41 | play on | 41 |" in ends
    assert "| 41, 3 / 45, 1 | 41 | play on | 51 |" in ends
    assert "| 38, 3 / 30, 1 | 51 | play on | 41 |" in ends


def test_benchmarks_md_opens_with_the_current_figures() -> None:
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert gen_pages.write_benchmarks(text) == text, (
        "BENCHMARKS.md's head table is not benchmarks/results.yaml's: run "
        ".venv/bin/python docs/gen_pages.py --benchmarks"
    )
    head = text[: text.index(gen_pages.BENCH_END)]
    assert head.count("\n") < 40  # one screen
    sections = set(re.findall(r"^## (.+)$", text, re.M))
    for row in gen_pages.load_results():
        assert row["section"] in sections, f"{row['what']!r}: no section {row['section']!r}"


def test_every_script_of_benchmarks_makes_a_figure_of_the_results() -> None:
    named = {row["script"] for row in gen_pages.load_results()}
    scripts = {
        f"benchmarks/{p.name}"
        for p in (ROOT / "benchmarks").glob("*.py")
        if 'if __name__ == "__main__":' in p.read_text()
    }
    assert scripts, "no scripts found in benchmarks/"
    assert not scripts - named, f"scripts no row of results.yaml names: {scripts - named}"
    assert {s for s in named if s.startswith("benchmarks/")} <= scripts


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ("benchmarks/gone.py", "names the script benchmarks/gone.py, which is not there"),
        ("fourhundred nope", "not a subcommand"),
        ("make bench", "a benchmarks/NAME.py or a `fourhundred SUBCOMMAND`"),
        ("benchmarks/search_timing.py", "its command does not run its script"),
        (None, "lacks \\['script'\\]"),
    ],
)
def test_a_figure_without_its_script_is_an_error(
    tmp_path: Path, script: str | None, error: str
) -> None:
    row = {"what": "x", "figure": "1", "anchor": "a", "date": "2026-12-07", "load": "1",
           "command": ".venv/bin/python benchmarks/core_targets.py", "section": "s"}  # fmt: skip
    if script is not None:
        row["script"] = script
    path = tmp_path / "results.yaml"
    path.write_text(yaml.safe_dump({"figures": [row]}))
    with pytest.raises(gen_pages.GenError, match=error):
        gen_pages.load_results(path)
    row["script"] = "benchmarks/core_targets.py"
    path.write_text(yaml.safe_dump({"figures": [row]}))
    assert gen_pages.load_results(path) == [row]


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert 100 <= lines < 160, lines


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def test_every_bundled_file_has_a_model_card_with_its_hashes() -> None:
    cards = (ROOT / "agents" / "pretrained" / "README.md").read_text()
    for path in sorted((ROOT / "agents" / "pretrained").iterdir()):
        if path.suffix not in (".pt", ".npz"):
            continue
        m = re.search(rf"^## `{re.escape(path.name)}`.*?(?=^## |\Z)", cards, re.M | re.S)
        assert m, f"no card for {path.name}"
        card = m.group(0)
        assert f"sha256 `{_sha(path)}`" in card, f"{path.name} changed: update its card"
        for config, digest in re.findall(r"config sha256 \(`([^`]+)`\)\s+`(\w+)`", card):
            assert _sha(ROOT / config) == digest, f"{config} changed: check {path.name}'s card"
        for part in ("**Make it**", "**Date**"):
            assert part in card, f"{path.name}'s card has no {part}"


# -- the build and the screenshots -----------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    why = missing(("mkdocs", "material", "mkdocstrings_handlers.python"), "docs")
    require(why, "FOURHUNDRED_REQUIRE_DOCS", "the docs build")
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert not warnings, warnings
    return out


def test_the_site_builds_strict_with_every_page(site: Path) -> None:
    for page in ("index", "quickstart", "rules", "environments", "agents", "api/core",
                 "changelog", "models", "results", "cli"):  # fmt: skip
        assert (site / f"{page}.html").is_file(), page
    rules = (site / "rules.html").read_text()
    assert "<!-- gen:" not in rules and "five_six_face_value_from" in rules
    api = (site / "api" / "core.html").read_text()
    assert "game_differences" in api and "legal_mask" in api  # docstrings were read
    for html in site.rglob("*.html"):
        text = html.read_text()
        assert "shared/" not in text and "/work/" not in text, html


def test_the_manual_read_from_disk_links_and_searches(site: Path) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    if not Path(CHROMIUM).is_file():
        if os.environ.get("FOURHUNDRED_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no Chromium at {CHROMIUM}", pytrace=False)
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    SHOTS.mkdir(parents=True, exist_ok=True)
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
    errors: list[str] = []
    # opened from disk, as the README says: file URLs, no server
    base = site.resolve().as_uri()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        for name, path, needle in (
            ("docs-home", "index.html", "fourhundred"),
            ("docs-reference", "api/core.html", "game_differences"),
            ("docs-rules", "rules.html", "Rules flags"),
        ):
            page.goto(f"{base}/{path}")
            assert needle in page.content()
            page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
        # a link of the navigation opens the page, not a directory listing
        page.goto(f"{base}/index.html")
        page.locator("nav.md-nav--primary a.md-nav__link", has_text="Tournaments").first.click()
        page.wait_for_load_state()
        assert page.url.endswith("/tournaments.html"), page.url
        assert "Index of" not in page.content() and "duplicate" in page.content()
        # the search answers from the inlined index
        page.goto(f"{base}/index.html")
        page.locator("label.md-search__icon, .md-search__input").first.click()
        page.locator("input.md-search__input").press_sequentially("heuristic", delay=20)
        results = page.locator("li.md-search-result__item")
        results.first.wait_for(timeout=30_000)
        assert results.count() > 0
        page.screenshot(path=str(SHOTS / "docs-search.png"), full_page=False)
        # every result carries the term to highlight (Material leaves a page whose sections hold
        # the term with an empty ?h=: docs/assets/javascripts/search-highlight.js fills it)
        hrefs = [a.get_attribute("href") or "" for a in results.locator("a").all()]
        queries = [parse_qs(urlsplit(href).query, keep_blank_values=True) for href in hrefs]
        assert hrefs and all(q.get("h") and all(q["h"]) for q in queries), hrefs
        assert all("heuristic" in q["h"][0] for q in queries), hrefs
        # and the page a result opens is highlighted
        results.locator("a").first.click()
        page.wait_for_load_state()
        assert "?h=heuristic" in page.url, page.url
        assert page.locator("mark[data-md-highlight]").count() > 0
        browser.close()
    assert not errors, errors
    for name in ("docs-home", "docs-reference", "docs-rules", "docs-search"):
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
