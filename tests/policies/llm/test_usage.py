"""How users point thresher at an endpoint: ``thresher search --policy llm --set llm.*``,
the environment, and ``thresher.search(..., policy="llm")``, each against the replay server."""

from __future__ import annotations

import json

import pytest

import thresher
from harness.small_corpus import corpus
from thresher.cli.main import main
from thresher.config import Config
from thresher.harness.result import ExitReason
from thresher.index.backends import ingest
from thresher.testing.replay_server import ReplayServer, reply, tool_call

pytestmark = pytest.mark.server  # the LLM replay server, a process on loopback

QUESTION = "Who founded the Halvard Glassworks?"
SCRIPT = [
    reply(tool_call("search_corpus", {"query": "Halvard Glassworks founder"})),
    reply(content='<Document id="glassworks"><Justification>Names Orvel Kestrin.</Justification></Document>'),
]  # fmt: skip


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("llm-usage-index")
    ingest(corpus(), path, Config(), progress=False)
    return path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("THRESHER_LLM_BASE_URL", "THRESHER_LLM_MODEL", "THRESHER_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_cli_with_set_overrides(index_dir, tmp_path, capsys):
    with ReplayServer(SCRIPT, tmp_path / "replay", model="served-name") as server:
        trace = tmp_path / "trace.jsonl"
        code = main(
            [
                "search", QUESTION, "--index", str(index_dir), "--policy", "llm", "--quiet",
                "--set", f"llm.base_url={server.base_url}", "--set", "llm.model=gpt-oss-20b",
                "--set", "llm.reasoning_effort=low", "--trace", str(trace), "--json",
            ]
        )  # fmt: skip
        bodies = server.chat_requests()
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exit_reason"] == "answered" and out["documents"][0]["doc_id"] == "glassworks"
    assert [b["model"] for b in bodies] == ["gpt-oss-20b"] * 2
    assert bodies[0]["reasoning_effort"] == "low"
    start = json.loads(trace.read_text().splitlines()[0])
    assert start["policy"] == "llm" and start["config"]["llm"]["model"] == "gpt-oss-20b"


def test_environment_only_and_model_discovery(index_dir, tmp_path, monkeypatch):
    with ReplayServer(SCRIPT, tmp_path / "replay", model="chromadb/context-1") as server:
        monkeypatch.setenv("THRESHER_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("THRESHER_LLM_API_KEY", "sk-env-key")
        result = thresher.search(QUESTION, index=index_dir, policy="llm")
        requests = server.requests()
    assert result.exit_reason is ExitReason.ANSWERED
    assert requests[0]["path"] == "/v1/models"  # no model configured: asked the server
    chats = [r for r in requests if r["method"] == "POST"]
    assert all(r["body"]["model"] == "chromadb/context-1" for r in chats)
    assert all(r["headers"]["authorization"] == "Bearer sk-env-key" for r in chats)


def test_cli_exit_code_when_the_endpoint_is_down(index_dir, tmp_path, capsys):
    with ReplayServer([], tmp_path / "replay") as server:
        url = server.base_url
    code = main(
        [
            "search", QUESTION, "--index", str(index_dir), "--policy", "context-1", "--quiet",
            "--set", f"llm.base_url={url}", "--set", "llm.max_retries=0",
        ]
    )  # fmt: skip
    assert code == 1
    assert "endpoint_unavailable" in capsys.readouterr().out
