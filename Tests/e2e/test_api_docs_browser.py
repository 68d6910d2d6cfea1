"""`/api/v1/docs` in headless Chromium against the real binary: ReDoc, from the script the
binary ships (no network beyond the server), renders the OpenAPI document: its title, the
operations of each tag, a request body's fields. A screenshot goes to
.cache/test-artifacts/docs (git-ignored)."""

from __future__ import annotations

from pathlib import Path

from browser_support import TIMEOUT, browser  # noqa: F401 (fixture)
from conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".cache" / "test-artifacts" / "docs"


def test_redoc_renders_the_document_from_the_binarys_own_script(herald, browser):  # noqa: F811
    server = herald.start()
    browser.set_window_size(1400, 1300)
    browser.get(server.url + "/api/v1/docs")
    text = lambda: browser.execute_script("return document.body.innerText;")  # noqa: E731
    wait_until(lambda: "Herald API" in text() and "/api/v1/notifications" in text(), TIMEOUT, message="ReDoc rendering the document")
    body = text()
    for expected in ["transit", "notifications", "dispatch", "/api/v1/favorites", "/api/v1/gtfs/version"]:
        assert expected in body, expected
    # Every script the page ran came from the server itself.
    sources = browser.execute_script("return [...document.scripts].map((s) => s.src).filter(Boolean);")
    assert sources and all(source.startswith(server.url) for source in sources), sources
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "redoc.png"
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000, f"{path} looks empty"
