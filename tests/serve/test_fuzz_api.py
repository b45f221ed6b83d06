"""Property-based fuzzing of the HTTP API from its own OpenAPI schema (Schemathesis).

A real ``thresher serve`` process (trace folder, API key off, local policy) is
fed requests that Schemathesis generates from ``/openapi.json``: every
operation, with bodies and parameters that fit the schema and ones that do not.
The budget is fixed and small (derandomized, no example database); each request
has a 60 s cap, so a hang fails as a timeout. No answer may be a 5xx, and once
the run is over no episode may still hold a slot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.helpers import running_server, wait_idle

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

#: examples per API operation (a fixed budget: the run is derandomized)
EXAMPLES = 40


@pytest.fixture(scope="module")
def fuzzed_server(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("fuzz")
    extra = ["--trace-dir", str(workdir / "traces"), "--max-queued", "64"]
    with running_server(serve_index, workdir, extra) as server:
        yield server


def test_the_api_never_answers_5xx_or_hangs(fuzzed_server):
    """Every operation of the schema, :data:`EXAMPLES` generated requests each.

    Schemathesis's pytest loader does not run under this pytest (9.x), so its
    Hypothesis strategies are driven directly, one ``@given`` per operation.
    """
    from hypothesis import given

    schema = schemathesis.openapi.from_url(fuzzed_server.url + "/openapi.json")
    seen: dict[str, int] = {}
    for found in schema.get_all_operations():
        operation = found.ok()

        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def one(case) -> None:
            response = case.call(timeout=60)
            label = f"{case.method} {case.path} {response.status_code}"
            seen[label] = seen.get(label, 0) + 1
            assert response.status_code < 500, (case.as_curl_command(), response.text[:500])

        one()
    print("fuzzed:", ", ".join(f"{k}: {v}" for k, v in sorted(seen.items())))
    assert sum(seen.values()) >= EXAMPLES and any(" 200" in k for k in seen)


def test_after_fuzzing_no_episode_holds_a_slot(fuzzed_server):
    with fuzzed_server.client() as client:
        health = wait_idle(client)
    assert health["running"] == 0 and health["waiting"] == 0
