"""What the web tests share: the one-line check of an API error, the app served by uvicorn in
a thread, and headless Chromium (Debian's package) driven by Playwright.

A browser test module calls :func:`require_browser` at its top: the module is skipped, with
the reason, where Chromium or Playwright is missing, and fails instead when
FOURHUNDRED_REQUIRE_BROWSER=1 (as `.ci/run` sets it, after installing Chromium). Playwright's
own browser download is never used: it launches /usr/bin/chromium (or $FOURHUNDRED_CHROMIUM).
Screenshots go to runs/screenshots/ (or $FOURHUNDRED_SCREENSHOTS) for a person to look at.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("FOURHUNDRED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(os.environ.get("FOURHUNDRED_SCREENSHOTS", ROOT / "runs" / "screenshots"))
# flags for a closed network and a root user (see the README)
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def one_line(r: Any, status: int, match: str = "") -> str:
    """The error of API answer `r`, checked: status `status`, one short line (no traceback)
    that matches the regular expression `match`."""
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert isinstance(error, str) and "\n" not in error and 0 < len(error) < 400, error
    assert "Traceback" not in error and re.search(match, error), error
    return error


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -e '.[web,dev]')"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, as .ci/run does)"
    return None


def require_browser() -> None:
    """Skip the calling test module where no browser can run (fail if one is required)."""
    why = missing()
    if why is None:
        return
    if os.environ.get("FOURHUNDRED_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required but cannot run: {why}", pytrace=False)
    pytest.skip(f"browser tests skipped: {why}", allow_module_level=True)


@contextmanager
def served(app: Any) -> Iterator[int]:
    """`app` served by uvicorn on a free port of 127.0.0.1, in a thread: the port."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    started = threading.Event()
    while thread.is_alive() and not server.started:  # a wait, not a timing assertion
        started.wait(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join()


def serve(app: Any) -> Iterator[str]:
    """`app` served as :func:`served` does, for a fixture: its base URL."""
    with served(app) as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def chromium() -> Iterator[Any]:
    """One headless Chromium (Playwright's sync API runs one instance per thread)."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(
    where: Any, errors: list[str], width: int = 1280, timeout: float = 30_000, **options: Any
) -> Any:
    """A page of `where` (a browser, or a context: another person's browser) `width` px wide
    whose JavaScript errors are appended to `errors`; `options` go to ``new_page``."""
    pg = where.new_page(**options)
    pg.set_viewport_size({"width": width, "height": 900})
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(timeout)
    return pg


def page_fixture(scope: str = "function", **options: Any) -> Callable[..., Iterator[Any]]:
    """A `page` fixture on the module's `browser` fixture (`options` as :func:`open_page`):
    the test fails if the page raised a JavaScript error."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def page(browser: Any) -> Iterator[Any]:
        errors: list[str] = []
        pg = open_page(browser, errors, **options)
        yield pg
        pg.close()
        assert not errors, errors

    return page


def serve_command(argv: list[str], cwd: Path, paths: list[str]) -> dict[str, bytes]:
    """Start `argv` (a ``fourhundred serve`` command line, without ``--port``) in `cwd` on a
    free port, GET each of `paths` once it answers, and stop it: {path: body}."""
    import socket
    import subprocess
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([*argv, "--port", str(port)], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    bodies: dict[str, bytes] = {}
    try:
        deadline = time.monotonic() + 120
        for path in paths:
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                        bodies[path] = r.read()
                    break
                except OSError:
                    assert server.poll() is None, server.communicate()[1][-3000:]
                    assert time.monotonic() < deadline, f"{argv[0]} serve did not answer"
                    time.sleep(0.5)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    assert "Traceback" not in err, err[-3000:]
    return bodies
