"""The MCP server driven by the ``mcp`` SDK's own client over stdio, as Claude Desktop runs it.

The client starts ``thresher mcp --index DIR`` as a subprocess, lists the
tools, calls ``search`` and gets ranked documents with justifications and a
trace id, and calls the raw retrieval tools.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

import thresher
from serve.helpers import QUESTION

pytest.importorskip("mcp")


async def _session_run(index: Path, trace_dir: Path, work):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "thresher.cli.main",
            "mcp",
            "--index",
            str(index),
            "--trace-dir",
            str(trace_dir),
        ],
        env=dict(os.environ),  # the code under test, also when PYTHONPATH names it
    )
    with (trace_dir.parent / "mcp-stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)


def _payload(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def test_mcp_stdio_lists_tools_and_search_returns_ranked_documents(serve_index, tmp_path):
    async def work(session):
        tools = await session.list_tools()
        found = await session.call_tool("search", {"question": QUESTION})
        hits = await session.call_tool("search_corpus", {"query": "Halvard Glassworks", "k": 3})
        grep = await session.call_tool("grep_corpus", {"pattern": "Marrow[a-z]+"})
        doc = await session.call_tool("read_document", {"doc_id": "tessaly-history"})
        missing = await session.call_tool("read_document", {"doc_id": "no-such-doc"})
        one = await session.call_tool("search", {"question": QUESTION, "k": 1})
        assert len(_payload(one)["documents"]) == 1
        inside = await session.call_tool("search", {"question": QUESTION, "path": "glassworks"})
        assert [d["doc_id"] for d in _payload(inside)["documents"]] == ["glassworks"]
        only_t = await session.call_tool("search_corpus", {"query": "Halvard", "path": "t*"})
        assert {h["doc_id"][0] for h in _payload(only_t)["hits"]} == {"t"}
        outside = await session.call_tool("read_document", {"doc_id": "glassworks", "path": "t*"})
        assert outside.is_error and "outside the filter" in outside.content[0].text
        bad = await session.call_tool("grep_corpus", {"pattern": "a", "where": {"x": {"$y": 1}}})
        assert bad.is_error and "one operator" in bad.content[0].text
        empty = await session.call_tool("search", {"question": "  "})
        said = empty.content[0].text
        assert empty.is_error and "'question'" in said and "'query'" not in said
        nothing = await session.call_tool("search", {"question": "?"})
        assert nothing.is_error and "no searchable words" in nothing.content[0].text
        return tools, found, hits, grep, doc, missing

    traces = tmp_path / "traces"
    tools, found, hits, grep, doc, missing = anyio.run(_session_run, serve_index, traces, work)
    names = {t.name for t in tools.tools}
    assert names == {"search", "search_corpus", "grep_corpus", "read_document"}
    search_tool = next(t for t in tools.tools if t.name == "search")
    assert "question" in search_tool.input_schema["properties"]

    result = _payload(found)
    local = thresher.search(QUESTION, index=serve_index)
    assert result["exit_reason"] == "answered"
    assert [d["doc_id"] for d in result["documents"]] == local.doc_ids
    assert [d["rank"] for d in result["documents"]] == list(range(1, len(local.doc_ids) + 1))
    assert all(d["justification"] for d in result["documents"])
    assert result["answer"].startswith("<Document id=")
    trace = traces / f"{result['trace_id']}.jsonl"
    assert json.loads(trace.read_text().splitlines()[-1])["exit_reason"] == "answered"

    ranked = _payload(hits)["hits"]
    assert len(ranked) == 3 and ranked[0]["doc_id"] == "glassworks" and ranked[0]["text"]
    assert {h["doc_id"] for h in _payload(grep)["hits"]} >= {"marrowick"}
    assert len(_payload(doc)["chunks"]) > 1
    assert missing.is_error and "no-such-doc" in missing.content[0].text


def test_mcp_over_streamable_http_on_loopback(serve_index, tmp_path):
    import socket
    import subprocess
    import time

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from index.chroma_server import free_port

    port = free_port()
    log = (tmp_path / "mcp-http.log").open("wb")
    args = ["mcp", "--index", str(serve_index), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "thresher.cli.main", *args], stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "mcp http did not start"
            time.sleep(0.2)

        async def run():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await session.call_tool("search", {"question": QUESTION})

        result = _payload(anyio.run(run))
        assert result["exit_reason"] == "answered" and result["documents"]
    finally:
        proc.terminate()
        proc.wait(15)
        log.close()
