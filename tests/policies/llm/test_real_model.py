"""The LLM path against what a real small model wrote (issue 26).

Replies are taken from the recorded wire file of Qwen2.5-Coder-0.5B-Instruct
served by llama.cpp (``wire.py``; skipped when the file is absent) and played
back through the replay server, so each test runs a whole episode over HTTP.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from policies.llm.test_policy import FINAL, SEARCH, episode
from policies.llm.wire import completion, content, exchanges, served
from thresher.harness.result import ExitReason
from thresher.harness.trace import ProposalEvent, ToolResult, UsageReport
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.testing.replay_server import reply, tool_call

pytestmark = pytest.mark.server  # the LLM replay server, a process on loopback


def _from_text(run) -> list[int]:
    return [
        (p.proposal.get("usage") or {}).get("tool_calls_parsed_from_text", 0)
        for p in run.events(ProposalEvent)
        if p.valid and p.proposal
    ]


# -- 1. tool calls written as text --------------------------------------------------------
def test_fenced_and_bare_json_calls_of_the_model_are_run(tmp_path, store, config):
    # 0: a ```json fenced grep_corpus call; 7: a bare one with a stray "required" key
    run = episode(tmp_path, store, config, [served(0), served(7), SEARCH, FINAL])
    r = run.result
    assert r.exit_reason is ExitReason.ANSWERED and run.refusals() == []
    assert r.tool_calls == {"grep_corpus": 2, "search_corpus": 1}
    ids = [e.call_id for e in run.events(ToolResult)]
    assert len(set(ids)) == len(ids)  # calls read from text get ids unique in the episode
    assert _from_text(run)[:2] == [1, 1]  # recorded as parsed from text
    results = [e for e in run.events(ToolResult) if e.turn in (0, 1)]
    assert [e.arguments for e in results] == [
        {"pattern": "company (lead inventor) of patent TO-2015-748801 headquartered"},
        {"pattern": "lead inventor patent TO-2013-931502"},
    ]


def test_several_bare_calls_in_one_reply_and_a_json_list(tmp_path, store, config):
    # 38: three calls one per line; 79: a JSON list of calls
    run = episode(tmp_path, store, config, [served(38), served(79), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert _from_text(run)[0] >= 2 and _from_text(run)[1] >= 2


def test_hermes_tool_call_tags_are_read(tmp_path, store, config):
    text = '<tool_call>\n{"name": "search_corpus", "arguments": {"query": "Halvard"}}\n</tool_call>'
    run = episode(tmp_path, store, config, [reply(content=text), SEARCH, FINAL])
    assert run.result.tool_calls == {"search_corpus": 2} and _from_text(run)[0] == 1


def test_text_that_is_no_call_names_the_forms_tried_and_the_server_flags(tmp_path, store, config):
    assert content(9) == "<tool result>Search Corpus</tool>"
    run = episode(tmp_path, store, config, [served(9), SEARCH, FINAL])
    (refusal,) = run.refusals()
    assert refusal.code == "no_action"
    for part in ("<tool_call>", "```json", "--jinja", "--tool-call-parser"):
        assert part in refusal.message


# -- 2. a role structure every template accepts -------------------------------------------
def _mistral_accepts(messages: list[dict[str, Any]]) -> bool:
    """The checks of Mistral-Nemo's chat template: user and plain assistant messages
    alternate after the optional system message; tool call ids are 9 characters."""
    loop = messages[1:] if messages[0]["role"] == "system" else messages
    index = 0
    for m in loop:
        for c in m.get("tool_calls") or ():
            if len(c["id"]) != 9:
                return False
        if m["role"] == "tool":
            if len(m["tool_call_id"]) != 9:
                return False
            continue
        if m.get("tool_calls"):
            continue
        if (m["role"] == "user") != (index % 2 == 0):
            return False
        index += 1
    return True


def test_every_request_passes_the_alternation_checks(tmp_path, store, config):
    # a refused reply (9), a text call (0), a native call, then the answer
    script = [served(9), served(0), SEARCH, FINAL]
    run = episode(tmp_path, store, config, script)
    assert run.result.exit_reason is ExitReason.ANSWERED
    for body in run.requests:
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b or a == "tool" for a, b in zip(roles, roles[1:], strict=False))
        assert _mistral_accepts(body["messages"]), roles
    # nothing was lost: the usage line rides on the question, later ones on tool results
    first = run.requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[1]["content"].endswith("]") and "[Token usage:" in first[1]["content"]


# -- 3. usage reconciled on every reply -----------------------------------------------------
def test_usage_of_a_refused_parsed_reply_is_reconciled(tmp_path, store, config):
    # the model's own invented id (exchange 80 names 'A26338'), with that exchange's usage
    usage = completion(80)["usage"]
    bad = reply(
        content='<Document id="A26338"><Justification>x</Justification></Document>',
        usage={k: v for k, v in usage.items() if isinstance(v, int)},
    )
    run = episode(tmp_path, store, config, [SEARCH, bad, FINAL])
    (refusal,) = run.refusals()
    assert refusal.code == "no_known_documents" and refusal.turn == 1
    assert [u.turn for u in run.events(UsageReport)] == [1]
    assert run.result.usage.prompt_tokens == usage["prompt_tokens"]


# -- 6. placeholders ------------------------------------------------------------------------
def test_no_copyable_placeholder_in_the_prompt():
    for placeholder in ('id="..."', '"doc id"', 'doc="..."', '<Document id="...">'):
        assert placeholder not in SYSTEM_PROMPT


def test_an_echoed_refusal_or_copied_example_is_refused_as_a_placeholder(tmp_path, store, config):
    # 4: the model echoed a refusal that showed <Document id="...">; 64: it copied
    # the prompt's <document id="doc id"> example
    run = episode(tmp_path, store, config, [served(4), served(64), SEARCH, FINAL])
    assert [x.code for x in run.refusals()] == ["placeholder_id", "placeholder_id"]
    assert run.result.exit_reason is ExitReason.ANSWERED


# -- 8. thinking ----------------------------------------------------------------------------
def test_thinking_is_neither_parsed_nor_counted_toward_the_length_cap(tmp_path, store, config):
    thought = "<think>" + 'Maybe <Document id="glassworks"> is it. ' * 40 + "</think>"
    call = '{"name": "search_corpus", "arguments": {"query": "Halvard Glassworks"}}'
    script = [
        reply(content=thought + "\n" + call),
        {
            "message": {
                "role": "assistant",
                "content": FINAL["message"]["content"],
                "reasoning_content": "long reasoning " * 100,
            },
            "finish_reason": "stop",
        },
    ]
    run = episode(tmp_path, store, config, script, max_tokens=64)
    r = run.result
    assert r.exit_reason is ExitReason.ANSWERED and run.refusals() == []
    assert r.tool_calls == {"search_corpus": 1}
    usages = [p.proposal["usage"] for p in run.events(ProposalEvent) if p.valid]
    assert usages[0]["thinking_chars"] > 0 and usages[1]["thinking_chars"] == 1500
    sent = json.dumps(run.requests[1]["messages"])
    assert "<think>" not in sent


# -- issue 23: deep nesting ----------------------------------------------------------------
def test_deeply_nested_text_or_arguments_are_refused_and_retried(tmp_path, store, config):
    script = [
        reply(content="[" * 5000),
        reply(tool_call("search_corpus", "[" * 5000)),
        SEARCH,
        FINAL,
    ]
    run = episode(tmp_path, store, config, script)
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert [x.code for x in run.refusals()] == ["no_action", "invalid_json_arguments"]


# -- 9. the server's context against the budget ----------------------------------------------
def test_a_context_smaller_than_the_budget_is_a_typed_error_at_start(tmp_path, store, config):
    # llama.cpp's own /v1/models listing, as recorded: meta.n_ctx 32768
    listing = exchanges()[102]["response"]
    assert listing["data"][0]["meta"]["n_ctx"] == 32768
    big = config.override({"budget.total": 32768})
    run = episode(tmp_path, store, big, [SEARCH, FINAL], models_reply={"completion": listing})
    r = run.result
    assert r.exit_reason is ExitReason.POLICY_ERROR and run.requests == []
    assert r.message.startswith("ContextTooSmallError:")
    assert "32768 tokens (/v1/models meta.n_ctx)" in r.message and "budget.total" in r.message


def test_a_context_that_holds_the_budget_runs(tmp_path, store, config):
    listing = {"object": "list", "data": [{"id": "replay", "max_model_len": 131072}]}
    run = episode(tmp_path, store, config, [SEARCH, FINAL], models_reply={"completion": listing})
    assert run.result.exit_reason is ExitReason.ANSWERED


# -- 11. what the model wrote, not Python reprs ----------------------------------------------
def test_trace_show_and_live_view_print_what_the_model_wrote(tmp_path, store, config):
    from thresher.cli.trace_cmd import format_event

    unknown = reply(content='<Document id="A26338"><Justification>x</Justification></Document>')
    run = episode(tmp_path, store, config, [served(9), SEARCH, unknown, FINAL])
    lines = [line for e in run.result.trace for line in format_event(e)]
    refused = [line for line in lines if "proposal refused" in line]
    assert len(refused) == 2
    assert "<tool result>Search Corpus</tool>" in refused[0]  # exchange 9's own words
    assert "final answer: A26338" in refused[1]
    text = "\n".join(lines)
    assert "Proposal(" not in text and "MalformedReply(" not in text


# -- 4. the model call ends with the episode -------------------------------------------------
def test_wall_time_caps_the_timeout_and_cancels_the_model_call(tmp_path, store, config):
    import threading

    from thresher.endpoint.client import EndpointCancelledError
    from thresher.harness.episode import run_episode
    from thresher.policies.llm import LLMPolicy
    from thresher.testing.replay_server import ReplayServer, delayed

    short = config.override({"episode.wall_time_s": 1.0})
    calls: list[Any] = []
    timeouts: list[float | None] = []
    outcome: list[BaseException | None] = []
    done = threading.Event()
    with ReplayServer([delayed(FINAL, 8.0)], tmp_path / "replay") as server:
        policy = LLMPolicy(short, env={}, base_url=server.base_url, timeout_s=30.0)
        fork = policy.client.fork

        def recording_fork():
            client = fork()
            complete = client.complete

            def watched(*args, **kwargs):
                timeouts.append(kwargs.get("timeout_s"))
                try:
                    result = complete(*args, **kwargs)
                    outcome.append(None)
                    return result
                except BaseException as exc:
                    outcome.append(exc)
                    raise
                finally:
                    done.set()

            client.complete = watched
            calls.append(client)
            return client

        policy.client.fork = recording_fork
        result = run_episode("q?", store, policy, short)
        assert result.exit_reason is ExitReason.TIMEOUT
        assert done.wait(20)  # the abandoned call ends (it does not run to its 8 s reply)
    assert timeouts[0] is not None and timeouts[0] <= 1.0  # capped by the wall time left
    assert isinstance(outcome[0], EndpointCancelledError) and calls[0]._closed
    assert policy._inflight == {}


# -- a reply cut off while repeating its call ------------------------------------------------
def test_complete_calls_before_a_cut_off_are_run_once(tmp_path, store, config):
    # 47: the same grep_corpus call again and again until the token limit
    assert completion(47)["choices"][0]["finish_reason"] == "length"
    run = episode(tmp_path, store, config, [served(47), SEARCH, FINAL])
    r = run.result
    assert r.exit_reason is ExitReason.ANSWERED and run.refusals() == []
    assert r.tool_calls == {"grep_corpus": 1, "search_corpus": 1}
    first = next(p for p in run.events(ProposalEvent) if p.valid)
    assert first.proposal["usage"]["reply_cut_off"] == 1 and first.proposal["text"] == ""


def test_every_recorded_transcript_passes_the_alternation_checks_once_rewritten():
    from thresher.policies.llm.messages import chat_messages

    sent = [e["request"]["messages"] for e in exchanges() if e["method"] == "POST"]
    assert len(sent) == 114
    assert not any(_mistral_accepts(m) for m in sent)  # as recorded: all refused
    assert all(_mistral_accepts(chat_messages(m)) for m in sent)


def test_the_same_text_call_at_two_turns_gets_two_ids(tmp_path, store, config):
    run = episode(tmp_path, store, config, [served(0), served(0), SEARCH, FINAL])
    greps = [e.call_id for e in run.events(ToolResult) if e.tool == "grep_corpus"]
    assert len(greps) == 2 and greps[0] != greps[1]


# -- a JSON call naming no tool, and the turns where the model must call one ----------------
def test_a_call_naming_no_tool_is_refused_as_unknown_tool(tmp_path, store, config):
    # 75: '{"name": "Quosan", "arguments": {...}}'; 84: the same shape in a ```json fence
    assert content(75).startswith('{\n"name": "Quosan"')
    run = episode(tmp_path, store, config, [served(75), served(84), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    first, second = run.refusals()
    assert first.code == second.code == "unknown_tool"
    assert "'Quosan'" in first.message and "search_corpus" in first.message
    # nothing shown yet: the advice is to search, not to finish
    assert "call search_corpus first" in first.message and "to finish" not in first.message
    assert "'Boutrou'" in second.message
    # the model is shown its call under the name it wrote, answered by the refusal
    assistant = [m for m in run.requests[1]["messages"] if m["role"] == "assistant"]
    assert assistant[-1]["tool_calls"][0]["function"]["name"] == "Quosan"
    assert run.tool_messages(1)[-1]["content"].startswith("Refused: there is no tool 'Quosan'")
    assert all(_mistral_accepts(body["messages"]) for body in run.requests)


def test_a_tool_call_is_required_until_a_chunk_has_been_shown(tmp_path, store, config):
    # 84 (a call naming no tool) is refused, so nothing has been shown at the second
    # request either; once the search has shown chunks the model may answer
    config = config.override({"llm.first_response_format": "none"})
    run = episode(tmp_path, store, config, [served(84), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert [r["tool_choice"] for r in run.requests] == ["required", "required", "auto"]
    # recorded in the trace: on the proposal that was asked for with "required"
    valid = [p.proposal for p in run.events(ProposalEvent) if p.valid]
    assert valid[0]["usage"]["tool_choice_required"] == 1
    assert "tool_choice_required" not in (valid[1].get("usage") or {})
    refused = next(p for p in run.events(ProposalEvent) if not p.valid)
    assert json.loads(refused.raw)["tool_choice"] == "required"


def test_the_first_tool_choice_can_be_auto(tmp_path, store, config):
    auto = config.override({"llm.first_tool_choice": "auto", "llm.first_response_format": "none"})
    run = episode(tmp_path, store, auto, [served(0), SEARCH, FINAL])
    assert [r["tool_choice"] for r in run.requests] == ["auto", "auto", "auto"]
    assert not any("response_format" in r for r in run.requests)


#: what Qwen2.5-Coder-0.5B wrote on llama.cpp (--jinja) for this file's question, asked
#: with the schema of call_response_format (the same model wrote prose, or call-shaped
#: JSON naming no tool, with tool_choice "required" alone: exchanges 75 and 84)
CONSTRAINED = (
    '{\n  "name": "search_corpus",\n  "arguments": {\n    "query": "Halvard Glassworks"\n  }\n}'
)


def test_until_a_chunk_is_shown_the_reply_is_constrained_to_one_tool_call(tmp_path, store, config):
    jsonschema = pytest.importorskip("jsonschema")
    # 84 (JSON naming no tool) is refused: nothing is shown at the second request either
    run = episode(tmp_path, store, config, [served(84), reply(content=CONSTRAINED), FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert run.result.tool_calls == {"search_corpus": 1}
    first, second, third = run.requests
    assert first["response_format"] == second["response_format"]
    assert "response_format" not in third  # a chunk was shown: the model may answer
    # the schema leaves only calls, so tool_choice need not ask for one
    assert [r["tool_choice"] for r in run.requests] == ["auto", "auto", "auto"]
    schema = first["response_format"]["json_schema"]["schema"]
    jsonschema.validate(json.loads(CONSTRAINED), schema)  # what the model wrote fits
    with pytest.raises(jsonschema.ValidationError):  # what it wrote unconstrained did not
        jsonschema.validate(json.loads(content(84).strip().strip("`").removeprefix("json")), schema)
    names = [c["properties"]["name"]["const"] for c in schema["oneOf"]]
    assert names == ["search_corpus", "grep_corpus"]  # read_document needs a shown id
    # every string is bounded, so a grammar closes it: under the schema alone the model
    # wrote read_document with a doc_id of digits to the token limit, three turns running
    looping = {"name": "search_corpus", "arguments": {"query": "1234567890" * 30}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(looping, schema)
    # recorded in the trace: on the proposal asked for with the schema, and on the refused reply
    valid = [p.proposal for p in run.events(ProposalEvent) if p.valid]
    assert valid[0]["usage"]["response_format_json_schema"] == 1
    assert valid[0]["usage"]["tool_calls_parsed_from_text"] == 1
    assert "response_format_json_schema" not in (valid[1].get("usage") or {})
    refused = next(p for p in run.events(ProposalEvent) if not p.valid)
    assert json.loads(refused.raw)["response_format"] == "json_schema"


# -- a repeated search: the refusal says what to do instead --------------------------------
def test_a_repeated_search_is_answered_with_what_to_do_instead(tmp_path, store, config):
    # 42 searches 'lead inventor Boutrou RD-400 study'; 43 and 44 send it again (the model
    # repeated it three times in a row, refused each time)
    query = "lead inventor Boutrou RD-400 study"
    assert all(query in content(i) for i in (42, 43, 44))
    run = episode(tmp_path, store, config, [served(42), served(43), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    (refusal,) = run.refusals()
    assert refusal.code == "repeated_search"
    shown = sorted({e["doc_id"] for r in run.events(ToolResult) for e in r.new_chunks})
    answer = run.tool_messages(2)[-1]["content"]  # the refused call, answered
    assert answer.startswith(f"Refused: you already searched for '{query}'")
    # concrete next steps: the documents in view to read, the searches made so far
    assert "read_document" in answer and any(f'"doc_id": "{d}"' in answer for d in shown)
    assert f"your searches so far: '{query.casefold()}'" in answer
    assert "grep_corpus" in answer


# -- an unknown tool: the call form, and an identical refused reply shown once --------------
def test_an_unknown_tool_refusal_writes_the_call_the_arguments_fit(tmp_path, store, config):
    # 106 names 'Quisroun Reli' with search_corpus's argument; 84 names 'Boutrou' with
    # arguments of no tool
    assert '"Quisroun Reli"' in content(106)
    run = episode(tmp_path, store, config, [served(106), served(84), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    fits, other = run.refusals()
    assert fits.code == other.code == "unknown_tool"
    assert (
        'Your arguments are those of search_corpus: send {"name": "search_corpus", '
        '"arguments": {"query": "[A] was founded in 1965 by [?]"}}'
    ) in fits.message
    assert '{"name": "search_corpus", "arguments": {"query": "<the words to search for>"}}' in (
        other.message
    )


def test_an_identical_refused_reply_is_sent_back_once(tmp_path, store, config):
    run = episode(tmp_path, store, config, [served(84), served(84), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert [r.code for r in run.refusals()] == ["unknown_tool"] * 2
    third = run.requests[2]["messages"]
    named = [
        c["function"]["name"]
        for m in third
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    ]
    assert named == ["Boutrou"]  # the reply is shown once, not at every turn it was sent
    last = third[-1]
    assert last["role"] == "tool" and last["content"].count("Refused") == 1
    assert last["content"].count("Your previous reply repeated one already refused: ") == 1
    assert _mistral_accepts(third)
