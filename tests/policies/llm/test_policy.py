"""LLMPolicy through the real harness, over real HTTP, against the replay server.

Every test runs a whole episode (``run_episode``) on the harness tests' real
index, with the policy talking to a replay server process that plays back a
scripted list of replies and records what it was sent. The malformed-reply
matrix checks, for each kind, what the trace recorded (refusal code, counts,
exit reason) and that the corrective message went out on the next request.
"""

from __future__ import annotations

import json
import re
import socket
from dataclasses import dataclass, field
from typing import Any

import pytest

from thresher.config import Config
from thresher.harness.episode import MAX_REFUSED_PROPOSALS, run_episode
from thresher.harness.policy import Policy
from thresher.harness.render import render_messages
from thresher.harness.result import ExitReason, Result
from thresher.harness.trace import ProposalEvent, Refusal, ToolResult, UsageReport
from thresher.policies import get_policy
from thresher.policies.llm import LLMPolicy
from thresher.policies.llm.messages import chat_messages, short_call_id
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.policies.llm.refused import detach
from thresher.testing.replay_server import (
    ReplayServer,
    cut_off,
    delayed,
    dropped,
    garbage,
    http_error,
    reply,
    tool_call,
)

QUESTION = "In which province is the town where the Halvard Glassworks was founded?"
SEARCH = reply(tool_call("search_corpus", {"query": "Halvard Glassworks founded"}))
FINAL_TEXT = (
    '<Document id="glassworks"><Justification>Says the works were founded in '
    "Marrowick.</Justification></Document>"
)

pytestmark = pytest.mark.server  # the LLM replay server, a process on loopback
FINAL = reply(content=FINAL_TEXT)


@dataclass
class Run:
    result: Result
    requests: list[dict[str, Any]]
    headers: list[dict[str, str]]
    sleeps: list[float]
    policy: LLMPolicy
    sent: list[list[dict[str, Any]]] = field(default_factory=list)

    def events(self, kind: type) -> list:
        return [e for e in self.result.trace if isinstance(e, kind)]

    def refusals(self) -> list[Refusal]:
        """Refusals of whole replies (not of single calls or final-answer ids)."""
        return [e for e in self.events(Refusal) if e.call_id is None]

    def last_user(self, i: int) -> str:
        """The text request ``i`` ends with: the harness's notices ride on the last user
        message or tool result (see ``chat_messages``)."""
        ends = [m for m in self.requests[i]["messages"] if m["role"] in ("user", "tool")]
        return ends[-1]["content"]

    def tool_messages(self, i: int) -> list[dict[str, Any]]:
        return [m for m in self.requests[i]["messages"] if m["role"] == "tool"]


def episode(
    tmp_path,
    store,
    config: Config,
    script: list[dict[str, Any]],
    *,
    env: dict[str, str] | None = None,
    models_reply: dict[str, Any] | None = None,
    **llm: Any,
) -> Run:
    """Run one episode with LLMPolicy against a replay server playing ``script``."""
    sleeps: list[float] = []
    sent: list[list[dict[str, Any]]] = []
    with ReplayServer(script, tmp_path / "replay", models_reply=models_reply) as server:
        options = {"base_url": server.base_url, "backoff_s": 0.01, "timeout_s": 5.0, **llm}
        policy = LLMPolicy(config, env=env or {}, sleep=sleeps.append, **options)
        result = run_episode(
            QUESTION, store, policy, config, on_turn=lambda s: sent.append(render_messages(s))
        )
        chats = [
            r
            for r in server.requests()
            if r["method"] == "POST" and r["path"].endswith("/completions")
        ]
    return Run(
        result, [r["body"] for r in chats], [r["headers"] for r in chats], sleeps, policy, sent
    )


# -- the registry and the happy path -----------------------------------------------------
def test_registered_by_name_and_a_policy(monkeypatch):
    monkeypatch.delenv("THRESHER_LLM_MODEL", raising=False)
    endpoint = Config().override({"llm.base_url": "http://127.0.0.1:9/v1"})
    policy = get_policy("llm", endpoint.override({"llm.model": "m"}))
    assert isinstance(policy, LLMPolicy) and isinstance(policy, Policy)
    assert policy.settings.model == "m" and policy.system_prompt == SYSTEM_PROMPT
    ctx = get_policy("context-1", endpoint, system_prompt="Search.")
    assert ctx.settings.model == "chromadb/context-1" and ctx.system_prompt == "Search."


def test_sends_exactly_the_rendered_transcript_and_reconciles_usage(tmp_path, store, config):
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}
    script = [
        reply(
            tool_call("search_corpus", {"query": "Halvard Glassworks founded"}),
            tool_call("grep_corpus", {"pattern": "Marrowick"}),
            content="Two leads at once.",
            usage=usage,
        ),
        reply(content=FINAL_TEXT, usage={**usage, "prompt_tokens": 2000}),
    ]
    key = "sk-replay-secret-123"
    run = episode(tmp_path, store, config, script, env={"THRESHER_LLM_API_KEY": key})
    r = run.result
    assert r.exit_reason is ExitReason.ANSWERED and r.doc_ids[0] == "glassworks"
    assert r.tool_calls == {"search_corpus": 1, "grep_corpus": 1}
    # what was sent is what the harness rendered and counted, turn by turn, in the
    # role structure every chat template accepts
    assert len(run.requests) == len(run.sent) == 2
    for body, rendered in zip(run.requests, run.sent, strict=True):
        assert body["messages"] == json.loads(json.dumps(chat_messages(rendered)))
    first = run.requests[0]
    assert first["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [t["function"]["name"] for t in first["tools"]] == [
        "search_corpus",
        "grep_corpus",
        "read_document",
        "prune_chunks",
        "recall_chunks",
    ]
    assert first["model"] == "replay" and first["parallel_tool_calls"] is True
    assert first["max_tokens"] == config.llm.max_tokens
    # nothing shown yet: the reply's schema admits only a tool call (so tool_choice need
    # not require one); once chunks are shown, the model chooses
    assert [r["tool_choice"] for r in run.requests] == ["auto", "auto"]
    assert [r.get("response_format", {}).get("type") for r in run.requests] == [
        "json_schema",
        None,
    ]
    assert "reasoning_effort" not in first
    # both calls of turn 0 answered in turn 1's transcript, linked by the model's call ids
    assert [m["tool_call_id"] for m in run.tool_messages(1)] == [
        short_call_id("call_0"),
        short_call_id("call_1"),
    ]
    # endpoint usage reconciled; the key was sent, and never written to the trace
    reports = run.events(UsageReport)
    assert [u.prompt_tokens for u in reports] == [900, 2000]
    assert r.usage.prompt_tokens == 2900 and r.usage.completion_tokens == 80
    assert all(h["authorization"] == f"Bearer {key}" for h in run.headers)
    trace_text = "".join(json.dumps(e.to_dict()) for e in r.trace)
    assert key not in trace_text and run.refusals() == []
    assert run.policy.stats() == {"requests": 2, "retries": 0}


def test_reasoning_effort_and_model_are_sent_when_configured(tmp_path, store, config):
    run = episode(
        tmp_path, store, config, [SEARCH, FINAL], model="gpt-oss-20b", reasoning_effort="low"
    )
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert all(b["model"] == "gpt-oss-20b" and b["reasoning_effort"] == "low" for b in run.requests)


# -- the malformed-reply matrix ---------------------------------------------------------
OVER_LONG_TEXT = "The glassworks made lighthouse lenses and much else besides. " * 12

#: kind -> (expected refusal code, good replies before the bad one, the bad reply, llm options)
REFUSED: dict[str, tuple[str, list, dict, dict]] = {
    "invalid JSON arguments": (
        "invalid_json_arguments",
        [],
        reply(tool_call("search_corpus", '{"query": "Halvard')),
        {},
    ),
    "arguments not an object": (
        "arguments_not_object",
        [],
        reply(tool_call("search_corpus", '"Halvard Glassworks"')),
        {},
    ),
    "missing required argument": (
        "missing_argument",
        [],
        reply(tool_call("grep_corpus", {"regex": "Halvard"})),
        {},
    ),
    "wrong argument type": (
        "wrong_argument_type",
        [],
        reply(tool_call("read_document", {"doc_id": 7})),
        {},
    ),
    "unknown tool name": ("unknown_tool", [], reply(tool_call("web_search", {"q": "x"})), {}),
    "empty reply": ("empty_reply", [], reply(content=None), {}),
    "text that is no action": ("no_action", [], reply(content="Let me think it over."), {}),
    "both answer and tool calls": (
        "answer_and_tool_calls",
        [SEARCH],
        reply(tool_call("grep_corpus", {"pattern": "Tessaly"}), content=FINAL_TEXT),
        {},
    ),
    "final answer with no documents": (
        "empty_final_answer",
        [SEARCH],
        reply(content='{"documents": []}'),
        {},
    ),
    "final answer citing unknown ids": (
        "no_known_documents",
        [SEARCH],
        reply(content='<Document id="atlantis"><Justification>x</Justification></Document>'),
        {},
    ),
    "cut off: finish_reason length": (
        "over_long",
        [],
        reply(content="The answer is", finish_reason="length"),
        {},
    ),
    "over-long content": ("over_long", [], reply(content=OVER_LONG_TEXT), {"max_tokens": 64}),
    "repeated identical search": ("repeated_search", [SEARCH], SEARCH, {}),
}


@pytest.mark.parametrize("kind", list(REFUSED))
def test_malformed_reply_is_refused_corrected_and_counted(kind, tmp_path, store, config):
    code, before, bad, llm = REFUSED[kind]
    script = [*before, bad, *([] if before else [SEARCH]), FINAL]
    run = episode(tmp_path, store, config, script, **llm)
    r = run.result
    turn = len(before)
    # the episode went on past the refusal and ended answered
    assert r.exit_reason is ExitReason.ANSWERED and list(r.doc_ids) == ["glassworks"]
    # recorded: one refusal with the code, at that turn; the reply kept as raw, not applied
    (refusal,) = run.refusals()
    assert (refusal.code, refusal.turn) == (code, turn)
    (rejected,) = [p for p in run.events(ProposalEvent) if not p.valid]
    assert rejected.turn == turn
    assert (rejected.proposal is None) is (code != "no_known_documents")
    # the corrective message went out with the very next request: a reply the policy
    # refused is sent back as the assistant's turn, answered "Refused: why" (each call by a
    # tool result for its id); a final answer the harness refused is a notice
    assistants = [m for m in run.requests[turn + 1]["messages"] if m["role"] == "assistant"]
    if code == "no_known_documents":
        assert f"Your previous reply was not accepted: {refusal.message}" in run.last_user(turn + 1)
        assert len(assistants) == turn
    else:
        reason, sent = detach(refusal.message)
        assert sent is not None and f"Refused: {reason}" in run.last_user(turn + 1)
        assert len(assistants) == turn + 1
        calls = assistants[-1].get("tool_calls") or []
        answered = [m["tool_call_id"] for m in run.tool_messages(turn + 1)][-len(calls) :]
        assert [c["id"] for c in calls] == (answered if calls else [])
    assert len(run.requests) == len(script)
    if code != "no_known_documents":  # the harness's own check, not a parse failure
        assert run.policy.stats()[f"malformed:{code}"] == 1
        assert "message" in json.loads(rejected.raw)  # the reply as received, not a repr


# -- ids the model invents, and the per-turn cap: refused per call by the harness -------
def test_invented_chunk_ids_in_prune_and_recall_are_reported(tmp_path, store, config):
    bad = reply(
        tool_call("prune_chunks", {"chunk_ids": ["chunk-invented-1"]}),
        tool_call("recall_chunks", {"chunk_ids": ["chunk-invented-2"]}),
    )
    run = episode(tmp_path, store, config, [SEARCH, bad, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    prune, recall = [e for e in run.events(ToolResult) if e.turn == 1]
    assert (prune.tool, prune.status, prune.code) == ("prune_chunks", "error", "unknown_id")
    assert [x["id"] for x in prune.rejected] == ["chunk-invented-1"]
    assert [x["code"] for x in recall.rejected] == ["unknown_id"]
    sent = {m["tool_call_id"]: m["content"] for m in run.tool_messages(2)}
    first, second = short_call_id("call_0"), short_call_id("call_1")
    assert "chunk-invented-1" in sent[first] and "unknown id" in sent[first]
    assert "chunk-invented-2" in sent[second]


def test_invented_doc_id_in_read_document_is_reported(tmp_path, store, config):
    bad = reply(tool_call("read_document", {"doc_id": "doc-invented"}))
    run = episode(tmp_path, store, config, [bad, SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    (read,) = [e for e in run.events(ToolResult) if e.tool == "read_document"]
    assert (read.status, read.code) == ("error", "unknown_id")
    (message,) = run.tool_messages(1)
    assert message["content"].startswith("Error:") and "doc-invented" in message["content"]


def test_tool_calls_beyond_the_per_turn_cap_are_refused(tmp_path, store, config):
    capped = config.override({"episode.max_calls_per_turn": 2})
    greps = reply(
        tool_call("grep_corpus", {"pattern": "Halvard"}),
        tool_call("grep_corpus", {"pattern": "Marrowick"}),
        tool_call("grep_corpus", {"pattern": "Tessaly"}),
    )
    run = episode(tmp_path, store, capped, [greps, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    results = run.events(ToolResult)
    assert [(e.status, e.code) for e in results][2] == ("refused", "max_calls_per_turn")
    assert run.result.tool_calls == {"grep_corpus": 2}
    assert "at most 2 calls per turn" in run.tool_messages(1)[2]["content"]


# -- the transport: retried, counted, traced -------------------------------------------
TRANSIENT = {
    "HTTP 429 with Retry-After": http_error(429, retry_after="2"),
    "HTTP 500": http_error(500),
    "timeout": delayed(SEARCH, 10.0),
    "dropped connection": dropped(),
    "connection dropped mid-response": cut_off(SEARCH),
}


@pytest.mark.parametrize("kind", list(TRANSIENT))
def test_transient_failure_is_retried_then_succeeds(kind, tmp_path, store, config):
    # a timeout far below the delayed reply and far above any other reply, under load too
    timeout_s = 3.0 if kind == "timeout" else 30.0
    run = episode(tmp_path, store, config, [TRANSIENT[kind], SEARCH, FINAL], timeout_s=timeout_s)
    r = run.result
    assert r.exit_reason is ExitReason.ANSWERED and run.refusals() == []
    # the same request went out twice; the retry is counted in the proposal's usage (traced)
    assert len(run.requests) == 3 and run.requests[0] == run.requests[1]
    first = [p for p in run.events(ProposalEvent) if p.turn == 0][0]
    assert first.valid and first.proposal["usage"] == {
        "retries": 1,
        "response_format_json_schema": 1,
    }
    assert run.policy.stats() == {"requests": 3, "retries": 1}
    assert len(run.sleeps) == 1
    if "Retry-After" in kind:
        assert run.sleeps[0] >= 2.0


def test_no_server_is_a_typed_exit_at_once(tmp_path, store, config):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    sleeps: list[float] = []
    policy = LLMPolicy(
        config.override({"llm.max_retries": 4, "llm.backoff_s": 0.01}),
        env={},
        sleep=sleeps.append,
        base_url=url,
        model="m",
    )
    r = run_episode(QUESTION, store, policy, config)
    assert r.exit_reason is ExitReason.ENDPOINT_UNAVAILABLE and r.partial
    assert r.message.startswith(
        f"no server at {url}: start the model server (see docs/serving.md) "
        "or set llm.base_url / THRESHER_LLM_BASE_URL"
    )
    (refusal,) = [e for e in r.trace if isinstance(e, Refusal)]
    assert refusal.code == "endpoint_unavailable" and sleeps == []  # no retry
    assert policy.stats() == {}  # no request was answered


NOT_A_COMPLETION = {
    "HTML page": (
        garbage("<!DOCTYPE html><html><title>Open WebUI</title></html>", content_type="text/html"),
        "content-type text/html",
    ),
    "JSON without choices": (
        garbage('{"object": "list", "data": []}', content_type="application/json"),
        "no choices",
    ),
    "garbage": (garbage(), "not JSON"),
}


@pytest.mark.parametrize("kind", list(NOT_A_COMPLETION))
def test_a_body_that_is_not_a_completion_ends_the_episode_at_once(kind, tmp_path, store, config):
    entry, fragment = NOT_A_COMPLETION[kind]
    run = episode(tmp_path, store, config, [SEARCH, entry, FINAL], max_retries=4)
    r = run.result
    assert r.exit_reason is ExitReason.ENDPOINT_UNAVAILABLE and r.partial
    assert "is not a chat completion" in r.message and fragment in r.message
    assert "HTTP 200" in r.message and "/v1 root of an OpenAI-compatible server" in r.message
    # turn 0 went through; turn 1's body was not retried and no refusal went to the model
    assert len(run.requests) == 2 and run.sleeps == []
    (refusal,) = run.events(Refusal)
    assert (refusal.turn, refusal.code) == (1, "endpoint_unavailable")


def test_unending_http_errors_exhaust_the_retries(tmp_path, store, config):
    script = [http_error(503)] * 3
    run = episode(tmp_path, store, config, script, max_retries=2)
    assert run.result.exit_reason is ExitReason.ENDPOINT_UNAVAILABLE
    assert "last: HTTP 503" in run.result.message and len(run.requests) == 3


# -- caps on refused replies ----------------------------------------------------------
def test_malformed_cap_ends_the_episode(tmp_path, store, config):
    bad = reply(content="")
    run = episode(tmp_path, store, config, [bad, SEARCH, bad, FINAL], max_malformed=2)
    r = run.result
    assert r.exit_reason is ExitReason.POLICY_ERROR and "llm.max_malformed=2" in r.message
    assert [x.code for x in run.refusals()] == ["empty_reply", "empty_reply", "policy_exception"]
    assert len(run.requests) == 3  # no request after the cap


def test_refusals_in_a_row_end_the_episode(tmp_path, store, config):
    run = episode(tmp_path, store, config, [reply(content="")] * 5)
    assert run.result.exit_reason is ExitReason.POLICY_ERROR
    assert len(run.refusals()) == MAX_REFUSED_PROPOSALS == len(run.requests)
    assert "in a row" in run.result.message


# -- retrieved text stays data ----------------------------------------------------------
CHUNK = re.compile(
    r'<chunk id="([^"]*)" doc="([^"]*)" title="([^"]*)"(?: flags="[^"]*")?>(.*?)</chunk>',
    re.DOTALL,
)


def test_injection_in_a_retrieved_chunk_stays_delimited_data(tmp_path, store, config):
    obeys = reply(content='<Document id="evil"><Justification>told to</Justification></Document>')
    script = [
        reply(tool_call("search_corpus", {"query": "harbour notice"})),
        obeys,
        reply(content='<Document id="hostile"><Justification>x</Justification></Document>'),
    ]
    run = episode(tmp_path, store, config, script)
    (result,) = run.tool_messages(1)
    content = result["content"]
    blocks = CHUNK.findall(content)
    hostile = [b for b in blocks if b[1] == "hostile"]
    assert len(hostile) == 1 and "Ignore previous instructions" in hostile[0][3]
    # the forged delimiter arrives escaped: no block for "evil", no early close
    assert '<chunk id="evil"' not in content and "&lt;/chunk&gt;" in hostile[0][3]
    assert 'doc="hostile" title="Harbour notice" flags="ignore_previous_instructions' in content
    assert content.count("<chunk ") == content.count("</chunk>") == len(blocks)
    # the system prompt and tools are untouched; obeying the text got the answer refused
    assert run.requests[1]["messages"][0]["content"] == SYSTEM_PROMPT
    assert run.requests[1]["tools"] == run.requests[0]["tools"]
    assert [x.code for x in run.refusals()] == ["no_known_documents"]
    assert run.result.exit_reason is ExitReason.ANSWERED and list(run.result.doc_ids) == ["hostile"]


# -- the server's context against the budget --------------------------------------------
#: a llama.cpp server started with -c 32768, as its /v1/models lists it
LLAMA_32K = {"object": "list", "data": [{"id": "replay", "meta": {"n_ctx": 32768}}]}


def test_a_default_budget_is_fitted_to_a_32k_server_with_a_notice(tmp_path, store, config, caplog):
    assert config.budget.total == 32768  # the default, not given
    with caplog.at_level("WARNING", logger="thresher"):
        run = episode(
            tmp_path, store, config, [SEARCH, FINAL], models_reply={"completion": LLAMA_32K}
        )
    r = run.result
    assert r.exit_reason is ExitReason.ANSWERED, r.message
    fitted = 32768 - config.llm.max_tokens
    assert r.trace[0].config["budget"]["total"] == fitted and r.usage.budget == fitted
    notices = [m for m in caplog.messages if "budget.total lowered" in m]
    assert notices and f"from 32768 to {fitted}" in notices[0] and "meta.n_ctx" in notices[0]


def test_a_given_budget_that_does_not_fit_is_refused(tmp_path, store, config):
    given = config.override({"budget.total": 32768})  # the default's value, but given
    run = episode(tmp_path, store, given, [SEARCH, FINAL], models_reply={"completion": LLAMA_32K})
    r = run.result
    assert r.exit_reason is ExitReason.POLICY_ERROR and run.requests == []
    assert r.message.startswith("ContextTooSmallError:") and "at most 28672" in r.message


class _DownServer:
    """A chat client whose server is down: every read of its context fails (counted)."""

    def __init__(self) -> None:
        from thresher.endpoint.settings import EndpointSettings

        self.settings = EndpointSettings.resolve(Config().llm, {})
        self.reads = 0

    def context_size(self):
        from thresher.endpoint.client import EndpointUnavailableError

        self.reads += 1
        raise EndpointUnavailableError("no server at http://127.0.0.1:9/v1")


def test_a_down_server_is_asked_for_its_context_once_per_episode(store, config):
    client = _DownServer()
    policy = LLMPolicy(config, client=client)  # type: ignore[arg-type]
    r = run_episode(QUESTION, store, policy, config)
    assert r.exit_reason is ExitReason.ENDPOINT_UNAVAILABLE and "no server" in r.message
    assert client.reads == 1  # the budget's fit asked; the first turn did not ask again
    run_episode(QUESTION, store, policy, config)
    assert client.reads == 2  # the next episode asks anew
