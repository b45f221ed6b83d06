"""Tool calls written as text, and thinking, read apart from the reply (pure)."""

from __future__ import annotations

import json

from thresher.policies.llm.textcalls import split_thinking, text_tool_calls


def _calls(text: str) -> list[tuple[str, dict]]:
    found = text_tool_calls(text)
    assert found is not None
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in found.calls]


def test_hermes_tags_even_unclosed():
    text = 'ok\n<tool_call>\n{"name": "grep_corpus", "arguments": {"pattern": "Velm"}}'
    assert _calls(text) == [("grep_corpus", {"pattern": "Velm"})]
    assert text_tool_calls(text).form == "hermes"


def test_function_wrapper_and_parameters_key_and_string_arguments():
    text = (
        '{"type": "function", "function": {"name": "read_document", "parameters": {"doc_id": "a"}}}\n'
        '{"name": "search_corpus", "arguments": "{\\"query\\": \\"b\\"}"}'
    )
    assert _calls(text) == [("read_document", {"doc_id": "a"}), ("search_corpus", {"query": "b"})]


def test_a_call_naming_no_tool_is_still_a_call():
    # the shape of a call is read as one; its unknown name is the parser's to refuse
    assert _calls('{"name": "Quosan", "arguments": {"content": "Galkin"}}') == [
        ("Quosan", {"content": "Galkin"})
    ]


def test_prose_and_garbage_are_no_calls():
    assert text_tool_calls('{"name": "Ada Quosan", "born": 1901}') is None  # no arguments
    assert text_tool_calls("I will use search_corpus next.") is None
    assert text_tool_calls("search_corpus " + "[" * 5000) is None
    assert text_tool_calls('{"name": "search_corpus"}') is None  # no arguments


def test_the_rest_of_the_text_is_kept():
    text = 'Looking.\n```json\n{"name": "search_corpus", "arguments": {"query": "x"}}\n```\nDone.'
    found = text_tool_calls(text)
    assert found is not None and found.form == "fenced" and found.rest == "Looking.\n\nDone."


def test_thinking_is_split_off():
    assert split_thinking("<think>a</think>b") == ("b", "a")
    assert split_thinking("<think>never closed") == ("", "never closed")
    assert split_thinking("plain") == ("plain", "")


def test_mistral_tool_calls_marker_is_read():
    text = '[TOOL_CALLS][{"name": "search_corpus", "arguments": {"query": "Halvard"}}]'
    found = text_tool_calls(text)
    assert found is not None and found.rest == ""
    assert [c["function"]["name"] for c in found.calls] == ["search_corpus"]
    assert json.loads(found.calls[0]["function"]["arguments"]) == {"query": "Halvard"}
