"""One ToolSpec per tool, and everything else derived from it.

The harness's allow-list and checks, the schemas an LLM policy sends, the prompt's
tool names and the README's tool table are built from the specs; each test here
compares a consumer with what the specs say, so a tool defined twice (or described
with a hard-coded number) fails.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.config import Config, RetrievalMode
from thresher.harness.actions import Proposal, call
from thresher.harness.budget import UsageState
from thresher.harness.episode import run_episode
from thresher.harness.tools import (
    RETRIEVAL_TOOLS,
    SEARCHES,
    TOOL_NAMES,
    TOOLS,
    check_arguments,
    fetch,
    plan_calls,
    tool_schemas,
)
from thresher.harness.toolspec import tool_table
from thresher.harness.trace import ToolResult
from thresher.policies.llm.parse import parse_completion
from thresher.policies.llm.policy import LLMPolicy
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.policies.llm.schemas import check_tool_arguments, tool_names
from thresher.policies.scripted import ScriptedPolicy

README = Path(__file__).resolve().parents[2] / "README.md"
CONFIGS = [
    Config(),
    Config().override({"grep.limit": 3, "retrieval.mode": "bm25"}),
    Config().override({"grep.limit": 12, "retrieval.mode": "dense", "budget.total": 8192}),
]


def _llm_policy(config: Config) -> LLMPolicy:
    return LLMPolicy(config, base_url="http://127.0.0.1:9/v1", model="m", env={})


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "bm25-grep3", "dense-grep12"])
def test_the_llm_policy_sends_the_specs_schemas(config: Config) -> None:
    sent = _llm_policy(config).tool_schemas()
    assert sent == [spec.schema(config) for spec in TOOLS] == tool_schemas(config)
    assert tuple(s["function"]["name"] for s in sent) == TOOL_NAMES == tool_names()
    grep = next(s for s in sent if s["function"]["name"] == "grep_corpus")
    assert f"at most {config.grep.limit}," in grep["function"]["description"]
    numbers = re.findall(r"at most (\d+)", " ".join(s["function"]["description"] for s in sent))
    assert numbers == [str(config.grep.limit)]  # no number of its own in any description


def test_every_schema_offers_exactly_the_offered_arguments() -> None:
    for spec in TOOLS:
        params = spec.schema(Config())["function"]["parameters"]
        offered = [a.name for a in spec.arguments if a.offered]
        assert list(params["properties"]) == offered == params["required"]
        assert params["additionalProperties"] is False


def test_the_retrieval_tools_are_the_specs_with_an_executor() -> None:
    assert {s.name for s in TOOLS if s.execute is not None} == RETRIEVAL_TOOLS
    assert set(TOOL_NAMES) == {s.name for s in TOOLS} and len(TOOL_NAMES) == len(TOOLS)
    assert set(SEARCHES) == set(typing.get_args(RetrievalMode))  # every mode has its search
    assert all(s.view is not None for s in TOOLS if s.retrieval)
    assert [s.name for s in TOOLS if s.view and s.view.sets_query] == ["search_corpus"]


def test_the_harness_refuses_what_the_specs_do_not_name() -> None:
    calls = (call("shell", "a", cmd="ls"), *(call(n, f"c{i}") for i, n in enumerate(TOOL_NAMES)))
    usage = UsageState(30000, 30000, 0, 32768, True, True)  # past the hard limit
    plan, _ = plan_calls(calls, 0, Config().episode, usage)
    codes = {p.call.name: p.code for p in plan}
    assert codes.pop("shell") == "unknown_tool"
    hard = {n for n, c in codes.items() if c == "hard_cutoff"}
    assert hard == RETRIEVAL_TOOLS


def test_the_prompt_names_only_tools_and_lists_what_the_hard_limit_keeps() -> None:
    named = set(re.findall(r"\b[a-z]+_(?:corpus|document|chunks)\b", SYSTEM_PROMPT))
    assert named and named <= set(TOOL_NAMES)
    kept = [s.name for s in TOOLS if not s.retrieval]
    assert f"past the hard limit only {', '.join(kept)} and the final answer" in " ".join(
        SYSTEM_PROMPT.split()
    )


def test_an_unknown_tool_reply_lists_every_tool() -> None:
    body = {"choices": [{"message": {"tool_calls": [_tc("shell", "{}")]}}]}
    reply = parse_completion(body)
    assert reply.code == "unknown_tool"  # type: ignore[union-attr]
    assert all(name in reply.message for name in TOOL_NAMES)  # type: ignore[union-attr]


def _tc(name: str, arguments: str) -> dict[str, object]:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_the_readme_tool_table_is_the_specs() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- tools:start", 1)[1].split("-->", 1)[1].split("<!-- tools:end -->")[0]
    assert block.strip() == tool_table(TOOLS, Config())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
offered_keys = st.sampled_from(["query", "pattern", "doc_id", "chunk_ids", "other"])


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(TOOL_NAMES),
    arguments=st.dictionaries(offered_keys, json_values, max_size=3) | json_values,
)
def test_the_harness_and_a_model_agree_on_every_offered_argument(name, arguments) -> None:
    ours, problem = check_tool_arguments(name, arguments)
    theirs, why = check_arguments(name, arguments)
    assert ours == theirs and (problem is None) == (not why)
    if problem is not None:
        assert why == problem.message


def test_keep_is_taken_from_a_policy_in_process_but_not_offered_to_or_accepted_from_models(
    store, config
) -> None:
    prune = next(s for s in TOOLS if s.name == "prune_chunks")
    assert "keep" not in prune.schema(config)["function"]["parameters"]["properties"]
    assert check_arguments("prune_chunks", {"keep": []}) == ({"keep": []}, "")
    normalized, problem = check_tool_arguments("prune_chunks", {"keep": ["a#0"]})
    assert normalized == {} and problem is not None and problem.code == "missing_argument"
    both = {"chunk_ids": ["a#0"], "keep": ["b#0"]}
    assert check_tool_arguments("prune_chunks", both) == ({"chunk_ids": ["a#0"]}, None)
    assert "not both" in check_arguments("prune_chunks", both)[1]
    # an LLM reply with keep only is refused before the harness sees it
    body = {"choices": [{"message": {"tool_calls": [_tc("prune_chunks", '{"keep": []}')]}}]}
    assert parse_completion(body).code == "missing_argument"  # type: ignore[union-attr]


@pytest.mark.parametrize("limit", [1, 7])
def test_grep_returns_as_many_chunks_as_its_description_says(store, config, limit) -> None:
    cfg = config.override({"grep.limit": limit})
    got = fetch("grep_corpus", {"pattern": "glass"}, store, cfg, seen=(), in_context=(),
                current_query="")  # fmt: skip
    assert not got.error_code and len(got.hits) == limit < got.total
    policy = ScriptedPolicy([Proposal(tool_calls=(call("grep_corpus", pattern="glass"),))])
    result = run_episode("q", store, policy, cfg)
    (grep,) = (e for e in result.trace if isinstance(e, ToolResult))
    assert len(grep.shown) == limit
    assert f"at most {limit}," in tool_schemas(cfg)[1]["function"]["description"]
