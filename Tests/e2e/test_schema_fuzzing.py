"""Schema fuzzing: schemathesis generates requests for every operation in Herald's own
OpenAPI document (`/api/v1/openapi.json`) and checks each answer against it.

One server with the sample GTFS feed loaded (so transit routes answer rather than 503)
and rate limits off (a fuzzer is one very busy caller); one run per role — customer,
driver, operator, service — each with `HERALD_FUZZ_EXAMPLES` (15) generated cases per
operation besides schemathesis's coverage cases, with the checks:

* `not_a_server_error` — no 5xx, whatever was sent;
* `status_code_conformance` — every status is documented for its operation;
* `content_type_conformance` — the media type is the documented one;
* `response_schema_conformance` — the body matches the documented schema;
* `response_headers_conformance` — documented headers are present and well formed.

Not yet on: `positive_data_acceptance` (schemathesis reports that about twenty operations
refuse most of the data their schema allows: the document still promises less than the
validators check — issue 19, defect 7) and `negative_data_rejection`, which needs that
document exact first. RELIABILITY.md records the counts of a run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import issue_token, run_herald

SAMPLE = Path(__file__).resolve().parents[2] / "Tests" / "Fixtures" / "gtfs" / "sample-feed-1"
# Test cases per operation and role (coverage cases come on top); raise it for a longer run.
EXAMPLES = int(os.environ.get("HERALD_FUZZ_EXAMPLES", "15"))
CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "content_type_conformance",
    "response_schema_conformance", "response_headers_conformance",
])


@pytest.fixture(scope="module")
def fuzz_target(module_herald, tmp_path_factory):
    directory = tmp_path_factory.mktemp("fuzz")
    data = module_herald.new_data_dir()
    imported = run_herald("transit", "import", str(SAMPLE), "--data-dir", str(data))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    config = directory / "fuzz.json"
    config.write_text(json.dumps({"rate_limits": {"enabled": False}}), encoding="utf-8")
    server = module_herald.start("--config", str(config), data_dir=data)
    return server, data


@pytest.mark.parametrize("role", ["customer", "driver", "operator", "service"])
def test_every_documented_operation_answers_as_documented(fuzz_target, role, tmp_path):
    server, data = fuzz_target
    token = issue_token(data, user=f"fuzz-{role}", role=role)
    st = Path(sys.executable).parent / "st"
    report = tmp_path / "report"
    result = subprocess.run(
        [str(st), "run", f"{server.url}/api/v1/openapi.json", "--url", server.url,
         "-H", f"Authorization: Bearer {token}", "--max-examples", str(EXAMPLES),
         "--checks", CHECKS, "--phases", "examples,coverage,fuzzing", "--workers", "2",
         "--generation-database", "none", "--no-color", "--report", "junit", "--report-dir", str(report)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    generated = re.search(r"(\d+) generated", output)
    seed = re.search(r"Seed: (\d+)", output)
    print(f"\n[{role}] {generated.group(0) if generated else 'no count'}, seed {seed.group(1) if seed else '?'}: "
          f"exit {result.returncode}")
    failures = re.findall(r"❌ (ST\d+[^:\n]*): (\d+)", output)
    assert not failures, f"schemathesis found problems as {role}: {failures}\n{output[-20000:]}"
    # schemathesis's own errors: only CPython 3.11's race in `ast.parse` under worker threads
    # (hypothesis describing a lambda) is known and tolerated; anything else fails the test.
    tool_errors = sum(int(count) for _, count in re.findall(r"🚫 ([^:\n]+): (\d+)", output))
    known = output.count("AST constructor recursion depth mismatch")
    assert tool_errors <= known, f"schemathesis stopped with errors as {role}:\n{output[-20000:]}"
    assert result.returncode == 0 or tool_errors > 0, f"schemathesis exit {result.returncode} as {role}:\n{output[-20000:]}"
    assert server.running, "the server died under fuzzing"
    assert generated and int(generated.group(1)) >= 200, f"too few requests generated:\n{output[-3000:]}"
