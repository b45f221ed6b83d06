"""Every text about a tool comes from its spec: the prompts' tool list and guides, the MCP
server's raw-tool descriptions, the README's tool table (tested in test_toolspecs.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from thresher.harness.tools import TOOLS, tool_spec
from thresher.harness.toolspec import tool_list


def test_the_default_prompt_lists_the_tools_as_the_specs_name_them() -> None:
    from thresher.policies.base import DEFAULT_SYSTEM_PROMPT

    assert tool_list(TOOLS) == (
        "search_corpus(query), grep_corpus(pattern), read_document(doc_id), "
        "prune_chunks(chunk_ids), recall_chunks(chunk_ids)"
    )  # an argument a model is not offered (prune's keep) is not named
    assert f" Tools: {tool_list(TOOLS)}. " in DEFAULT_SYSTEM_PROMPT


def test_the_llm_prompt_says_each_guide_after_its_tool_name() -> None:
    from thresher.policies.llm.prompt import SYSTEM_PROMPT

    guided = [spec for spec in TOOLS if spec.guide]
    assert {spec.name for spec in guided} == {"grep_corpus", "read_document"}
    for spec in guided:
        assert f"{spec.name} {spec.guide}" in SYSTEM_PROMPT


def test_the_mcp_raw_tools_are_described_by_their_specs(tmp_path) -> None:
    pytest.importorskip("mcp")
    from thresher.serve.mcp_server import MAX_K, build_mcp_server
    from thresher.serve.settings import ServeSettings

    settings = ServeSettings({"idx": str(tmp_path)})

    class Service:
        def __init__(self) -> None:
            self.settings = settings

    server = build_mcp_server(Service())

    async def described() -> dict[str, Any]:
        return {t.name: t.description for t in await server.list_tools()}

    found = anyio.run(described)
    config = settings.config
    raw = [s for s in TOOLS if s.direct is not None]
    assert [s.name for s in raw] == ["search_corpus", "grep_corpus", "read_document"]
    for spec in raw:
        assert spec.direct is not None
        expected = spec.direct(config)
        if spec.name == "search_corpus":
            expected += f" k: at most {MAX_K}."
        assert found[spec.name] == expected
    assert tool_spec("prune_chunks").direct is None and "prune_chunks" not in found
