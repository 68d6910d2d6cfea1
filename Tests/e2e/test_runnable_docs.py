"""The documentation a newcomer follows, run as they would: every shell block of the README
and docs/getting-started.md marked `<!-- runnable -->` runs, in order, in one bash session
against a freshly started server, so a command or a field the docs name cannot drift from
what Herald does.

What the test changes in the text, and nothing else: `swift run herald` becomes the binary
under test (the server is started here, not by a block), `localhost:8080` the server's
address, and the blocks run in a folder where `./herald-data` is the server's data directory
(the default of `swift run herald serve` from the repository root).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from urllib.parse import urlparse

from conftest import herald_bin

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- runnable -->"
PAGES = ["README.md", "docs/getting-started.md"]


def runnable_blocks(path: Path) -> list[tuple[int, str]]:
    """(line of the block's first command, its text) for each marked block, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() == MARK:
            fence = lines[index + 1] if index + 1 < len(lines) else ""
            assert fence.startswith(("```sh", "```bash")), f"{path}:{index + 2}: {MARK} must be followed by a ```sh block"
            body: list[str] = []
            end = index + 2
            while end < len(lines) and not lines[end].startswith("```"):
                body.append(lines[end])
                end += 1
            assert end < len(lines), f"{path}:{index + 2}: the block is not closed"
            blocks.append((index + 3, "\n".join(body)))
            index = end
        index += 1
    return blocks


def test_the_marker_finds_blocks_and_refuses_a_bad_one(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"intro\n{MARK}\n```sh\necho one\necho two\n```\n\n```sh\necho not marked\n```\n", encoding="utf-8")
    assert runnable_blocks(page) == [(4, "echo one\necho two")]
    page.write_text(f"{MARK}\n```python\nprint(1)\n```\n", encoding="utf-8")
    try:
        runnable_blocks(page)
    except AssertionError as error:
        assert "must be followed by a ```sh block" in str(error)
    else:
        raise AssertionError("a marker before a non-shell block was accepted")


def test_getting_started_runs_as_written(herald, tmp_path):
    blocks = [(page, line, text) for page in PAGES for line, text in runnable_blocks(ROOT / page)]
    assert sum(1 for page, _, _ in blocks if page == "docs/getting-started.md") >= 3, "docs/getting-started.md lost its runnable blocks"
    data = herald.new_data_dir()
    server = herald.start(data_dir=data)
    address = urlparse(server.url).netloc
    work = tmp_path / "newcomer"
    work.mkdir()
    (work / "herald-data").symlink_to(data)
    # One bash session per page, as a reader keeps one terminal: a variable a block sets
    # (a token) is there for the next. Each block announces itself, so a failure names it.
    for page in PAGES:
        parts = [(line, text) for name, line, text in blocks if name == page]
        if not parts:
            continue
        script = "set -euo pipefail\n" + "\n".join(
            f"echo '::block {page}:{line}' >&2\n" + text.replace("swift run herald", shlex.quote(herald_bin())).replace("localhost:8080", address)
            for line, text in parts)
        result = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"})
        started = [line for line in result.stderr.splitlines() if line.startswith("::block ")]
        assert result.returncode == 0, (
            f"{started[-1][8:] if started else page}: the block failed (exit {result.returncode})\n--- stdout\n{result.stdout[-4000:]}"
            f"\n--- stderr\n{result.stderr[-4000:]}")
        assert len(started) == len(parts), started
