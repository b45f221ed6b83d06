"""What the harness does not take on trust: an endpoint's usage, an index's files,
a client's JSON-RPC, a request's filter, a configured URL (issue 38, items 3-5).

Each case is an attack of the third outside trial, kept as a regression.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.conftest import corpus
from harness.conftest import test_config as small_config
from thresher.config import Config
from thresher.harness.trace import QueryState, UsageReport
from thresher.testing.replay_server import ReplayServer, reply, tool_call

QUESTION = "Who founded the Halvard Glassworks?"
BUDGET = 3000


@pytest.fixture(scope="module")
def config() -> Config:
    return small_config()


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from thresher.index.backends import ingest

    path = tmp_path_factory.mktemp("trust-index")
    ingest(corpus(), path, small_config(), progress=False)
    return path


@pytest.fixture(scope="module")
def store(index_dir: Path):
    from thresher.index.embedded.store import EmbeddedStore

    s = EmbeddedStore(index_dir, small_config())
    yield s
    s.close()


# -- item 3: an endpoint that under-reports its usage -----------------------------------
def _lying_episode(tmp_path: Path, store, config, prompt_tokens: int | None):
    from thresher.harness.episode import run_episode
    from thresher.policies.llm.policy import LLMPolicy

    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 5} if prompt_tokens else None
    docs = ["glassworks", "marrowick", "kestrin", "tessaly-history"]
    docs += [f"town-{i:02d}" for i in range(20)]
    script = [reply(tool_call("read_document", {"doc_id": doc}), usage=usage) for doc in docs]
    budget = config.override({"budget.total": BUDGET, "budget.reply_reserve": 256})
    with ReplayServer(script, tmp_path / "replay") as server:
        policy = LLMPolicy(budget, env={}, base_url=server.base_url, backoff_s=0.01, timeout_s=5.0)
        result = run_episode(QUESTION, store, policy, budget)
        sent = [len(str(r["body"]["messages"])) for r in server.requests() if r["method"] == "POST"]
    return result, sent


@pytest.mark.server
def test_an_endpoint_reporting_one_prompt_token_does_not_lift_the_budget(
    tmp_path, store, config
) -> None:
    honest, honest_sent = _lying_episode(tmp_path / "honest", store, config, None)
    lying, lying_sent = _lying_episode(tmp_path / "lying", store, config, 1)
    queries = [e for e in lying.trace if isinstance(e, QueryState)]
    reports = [e for e in lying.trace if isinstance(e, UsageReport)]
    # the own count is kept: a prompt never counts far below what the harness counted
    assert reports and all(r.discrepancy for r in reports)
    assert all(q.used >= q.counted for q in queries)
    assert max(q.used for q in queries) <= BUDGET
    # and what was sent grew no further than without any reported usage
    assert max(lying_sent) <= max(honest_sent) * 1.1
    assert lying.exit_reason == honest.exit_reason
