"""Hooks for the schema-fuzzing run (`SCHEMATHESIS_HOOKS=schemathesis_hooks`).

A client sends a new `Idempotency-Key` with each new request and the same one only when it
retries that request. Schemathesis draws header values like any other data, so two
different bodies can come with one key, which Herald rightly answers 422
`IDEMPOTENCY_KEY_REUSED`; `positive_data_acceptance` would count that against the document.
Each generated request gets a fresh key instead (the replay itself is tested elsewhere).
"""

import uuid

import schemathesis


@schemathesis.hook
def before_call(ctx, case, kwargs):
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = f"fuzz-{uuid.uuid4().hex}"
