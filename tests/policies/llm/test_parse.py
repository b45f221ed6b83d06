"""parse_completion: every reply kind to a Proposal or a MalformedReply with its code (pure)."""

from __future__ import annotations

import json

import pytest

from thresher.harness.actions import MalformedReply, Proposal
from thresher.policies.llm.parse import (
    completion_usage,
    message_text,
    normalize_query,
    parse_completion,
    refused_replies,
    searched_queries,
)
from thresher.testing.replay_server import reply, tool_call


def body(entry: dict, usage: dict | None = None) -> dict:
    """A completion body around a scripted entry (as the replay server serves it)."""
    out = {"choices": [{"message": entry["message"], "finish_reason": entry["finish_reason"]}]}
    if usage is not None:
        out["usage"] = usage
    return out


def parse(entry: dict, **kw) -> Proposal | MalformedReply:
    return parse_completion(body(entry), **kw)


SEARCH = tool_call("search_corpus", {"query": "Halvard Glassworks founder"})


def test_tool_calls_become_a_proposal_with_ids_and_prose():
    p = parse(
        reply(SEARCH, tool_call("grep_corpus", {"pattern": "Marrowick"}), content="Two leads.")
    )
    assert isinstance(p, Proposal) and p.final is None and p.text == "Two leads."
    assert [(c.name, c.call_id) for c in p.tool_calls] == [
        ("search_corpus", "call_0"),
        ("grep_corpus", "call_1"),
    ]
    assert p.tool_calls[0].arguments == {"query": "Halvard Glassworks founder"}


def test_final_answer_text_becomes_a_final_proposal():
    text = 'Done.\n<Document id="glassworks"><Justification>Names the founder.</Justification></Document>'
    p = parse(reply(content=text))
    assert isinstance(p, Proposal) and not p.tool_calls
    assert p.final is not None and p.final.documents[0].doc_id == "glassworks"
    assert p.final.documents[0].justification == "Names the founder."


def test_usage_is_carried_on_both_outcomes():
    usage = {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}
    ok = parse_completion(body(reply(SEARCH), usage))
    bad = parse_completion(body(reply(content=""), usage))
    assert ok.usage == usage and bad.usage == usage
    assert completion_usage({"usage": {"prompt_tokens": 3, "x": "no", "flag": True}}) == {
        "prompt_tokens": 3
    }


@pytest.mark.parametrize(
    ("entry", "code", "fragment"),
    [
        (reply(tool_call("search_corpus", '{"query": "x"')), "invalid_json_arguments", "not valid JSON"),
        (reply(tool_call("search_corpus", '["x"]')), "arguments_not_object", "JSON object"),
        (reply(tool_call("search_corpus", {"q": "x"})), "missing_argument", "'query'"),
        (reply(tool_call("search_corpus", {"query": 42})), "wrong_argument_type", "string"),
        (reply(tool_call("prune_chunks", {"chunk_ids": [1, 2]})), "wrong_argument_type", "list"),
        (reply(tool_call("read_document", {"doc_id": "  "})), "empty_argument", "empty"),
        (reply(tool_call("final_answer", {"docs": []})), "unknown_tool", "no tool 'final_answer'"),
        (reply(tool_call("lookup", '{"q": ')), "unknown_tool", "no tool 'lookup'"),
        (reply({"type": "function", "function": {"arguments": "{}"}}), "malformed_tool_call", "no function name"),
        (reply(content=""), "empty_reply", "empty"),
        (reply(content="Let me think about where to look next."), "no_action", "neither"),
        (reply(content='{"documents": []}'), "empty_final_answer", "names no document"),
        (reply(content="x", finish_reason="length"), "over_long", "cut off"),
        (
            reply(SEARCH, content='<Document id="glassworks"><Justification>j</Justification></Document>'),
            "answer_and_tool_calls",
            "together",
        ),
        (reply(SEARCH, tool_call("search_corpus", {"query": "halvard  GLASSWORKS founder"})), "repeated_search", "already searched"),
    ],
)  # fmt: skip
def test_malformed_kinds(entry, code, fragment):
    r = parse(entry)
    assert isinstance(r, MalformedReply), r
    assert r.code == code and fragment in r.message
    assert json.loads(r.raw)["message"] == entry["message"]


def test_over_long_content_by_token_count():
    r = parse(
        reply(content="word " * 50), max_content_tokens=10, count_tokens=lambda t: len(t.split())
    )
    assert isinstance(r, MalformedReply) and r.code == "over_long" and "50 tokens" in r.message
    ok = parse(reply(SEARCH, content="short"), max_content_tokens=10, count_tokens=len)
    assert isinstance(ok, Proposal)


def test_repeat_of_an_earlier_search_is_refused():
    r = parse(reply(SEARCH), searched={normalize_query("Halvard glassworks   founder")})
    assert isinstance(r, MalformedReply) and r.code == "repeated_search"


def test_several_problems_are_listed_first_code_wins():
    r = parse(
        reply(
            tool_call("search_corpus", "{bad"),
            tool_call("nope", {}),
            tool_call("grep_corpus", {}),
            tool_call("read_document", {}),
        )
    )
    assert isinstance(r, MalformedReply) and r.code == "invalid_json_arguments"
    assert "no tool 'nope'" in r.message and "(and 1 more)" in r.message


def test_lenient_forms_are_accepted():
    # a single id string for chunk_ids, arguments as an object, extra keys dropped
    p = parse(
        reply(
            tool_call("prune_chunks", {"chunk_ids": "c1"}),
            {"id": "k", "type": "function", "function": {"name": "grep_corpus", "arguments": {"pattern": "x", "extra": 1}}},
        )
    )  # fmt: skip
    assert isinstance(p, Proposal)
    assert [c.arguments for c in p.tool_calls] == [{"chunk_ids": ["c1"]}, {"pattern": "x"}]
    parts = {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"text": "b"}]}
    assert message_text(parts["content"]) == "ab"


def test_garbled_body_shapes_do_not_raise():
    for weird in ({}, {"choices": []}, {"choices": ["x"]}, {"choices": [{"message": None}]}):
        r = parse_completion(weird)
        assert isinstance(r, MalformedReply) and r.code == "empty_reply"


def test_transcript_readers():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "[Token usage: 10/100]\n[Refused: bad]"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "search_corpus", "arguments": '{"query": "A  b"}'}},
                {"id": "b", "type": "function", "function": {"name": "grep_corpus", "arguments": '{"pattern": "z"}'}},
                {"id": "c", "type": "function", "function": {"name": "search_corpus", "arguments": "{oops"}},
            ],
        },
        {"role": "tool", "content": "[Refused: not counted, a tool message]"},
        {"role": "user", "content": "[Refused: again]"},
    ]  # fmt: skip
    assert searched_queries(messages) == ["a b"]
    assert refused_replies(messages) == 2
