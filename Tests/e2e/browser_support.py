"""Headless Chromium with the official Socket.IO JavaScript client on a page of its own origin,
for the tests that drive Herald from a browser (test_browser, test_cluster_balancer).

The client file comes from the PyPI wheel `nicegui==3.18.0` (scripts/test fetches it into the
ignored .cache/browser and exports HERALD_TEST_SOCKETIO_JS); Chromium and its driver from Debian.
"""

import functools
import http.server
import os
import shutil
import threading

import pytest

from conftest import WAIT

TIMEOUT = max(WAIT, 60.0)  # Chromium on a loaded machine is slow; waits end as soon as their condition holds
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Herald from another origin</title>
<script src="socket.io.min.js"></script></head><body><p id="status">loaded</p></body></html>
"""


@pytest.fixture(scope="module")
def page_url(tmp_path_factory):
    """A static page on its own loopback port: another origin than Herald's."""
    script = os.environ.get("HERALD_TEST_SOCKETIO_JS")
    assert script and os.path.isfile(script), "HERALD_TEST_SOCKETIO_JS must name socket.io.min.js (scripts/test fetches it)"
    root = tmp_path_factory.mktemp("page")
    shutil.copy(script, root / "socket.io.min.js")
    (root / "index.html").write_text(PAGE)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_script_timeout(TIMEOUT)
    yield driver
    driver.quit()


def run_async(browser, script: str, *args):
    """Runs `script` in the page; it ends by calling `done(value)`."""
    return browser.execute_async_script("const done = arguments[arguments.length - 1];\n" + script, *args)


def page_state(browser, expression: str):
    return browser.execute_script(f"return {expression};")
