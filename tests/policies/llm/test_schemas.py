"""Tool schemas: the five tools, OpenAI shape, and the argument checker that mirrors them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from thresher.harness.tools import TOOL_NAMES, check_arguments
from thresher.policies.llm.schemas import check_tool_arguments, tool_names, tool_schemas


def test_five_tools_in_the_harness_allow_list():
    assert tool_names() == TOOL_NAMES
    for schema in tool_schemas():
        fn = schema["function"]
        params = fn["parameters"]
        assert schema["type"] == "function" and fn["description"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) == set(params["properties"])
    json.dumps(tool_schemas())  # JSON-safe


def test_copies_are_independent():
    a = tool_schemas()
    a[0]["function"]["name"] = "changed"
    assert tool_schemas()[0]["function"]["name"] == "search_corpus"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search_corpus", {"query": "  a b "}),
        ("grep_corpus", {"pattern": "x+"}),
        ("read_document", {"doc_id": "d1"}),
        ("prune_chunks", {"chunk_ids": ["c1", " c2 "]}),
        ("recall_chunks", {"chunk_ids": "c1"}),
    ],
)
def test_accepted_arguments_agree_with_the_harness(name, arguments):
    ours, problem = check_tool_arguments(name, arguments)
    theirs, why = check_arguments(name, arguments)
    assert problem is None and not why and ours == theirs


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("search_corpus", "q", "arguments_not_object"),
        ("search_corpus", None, "arguments_not_object"),
        ("grep_corpus", {}, "missing_argument"),
        ("read_document", {"doc_id": ["d"]}, "wrong_argument_type"),
        ("prune_chunks", {"chunk_ids": {"a": 1}}, "wrong_argument_type"),
        ("recall_chunks", {"chunk_ids": [" "]}, "empty_argument"),
        ("search_corpus", {"query": ""}, "empty_argument"),
    ],
)
def test_rejected_arguments(name, arguments, code):
    normalized, problem = check_tool_arguments(name, arguments)
    assert normalized == {} and problem is not None and problem.code == code
    assert name in problem.message


def test_the_schemas_have_one_owner():
    # the tool schemas are built from the harness's tool specs only
    import thresher
    import thresher.harness

    src = Path(thresher.__file__).parent
    owners = [
        path.relative_to(src).as_posix()
        for path in src.rglob("*.py")
        if re.search(r"^(TOOL_SCHEMAS\b|TOOLS\b|_tool\()", path.read_text(), re.MULTILINE)
    ]
    assert owners == ["harness/tools.py"]
    for name in thresher.harness.__all__:  # every lazy export still resolves
        getattr(thresher.harness, name)
