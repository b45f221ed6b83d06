"""`thresher search` and `thresher trace show|replay` over a real index."""

from __future__ import annotations

import json

from thresher.cli.main import main

Q = "Who founded the Halvard Glassworks?"


def test_search_prints_ranked_documents_and_a_live_view(index_dir, tmp_path, capsys):
    trace = tmp_path / "trace.jsonl"
    code = main(["search", Q, "--index", str(index_dir), "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.startswith("1. glassworks  Halvard Glassworks")
    assert "── turn 0 ── [Token usage:" in err and "→ search_corpus(query=" in err
    assert "── end: answered" in err and trace.exists()


def test_search_json_and_budget_flag(index_dir, capsys):
    code = main(["search", Q, "--index", str(index_dir), "--json", "--quiet", "--budget", "9000"])
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 0 and err == ""
    assert data["exit_reason"] == "answered" and data["usage"]["budget"] == 9000
    assert data["documents"][0]["doc_id"] == "glassworks"


def test_trace_show_and_replay(index_dir, tmp_path, capsys):
    trace = tmp_path / "trace.jsonl"
    main(["search", Q, "--index", str(index_dir), "--trace", str(trace), "--quiet"])
    capsys.readouterr()
    assert main(["trace", "show", str(trace), "--turn", "0"]) == 0
    out = capsys.readouterr().out
    assert "── turn 0 ──" in out and "── turn 1 ──" not in out
    assert main(["trace", "replay", str(trace), "--turn", "1", "--json", "--messages"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["turn"] == 1 and state["active"][0]["chunk_id"] == "glassworks#0"
    assert state["active"][0]["lineage"]["tool"] == "search_corpus"
    assert [m["role"] for m in state["messages"]][:3] == ["system", "user", "user"]
    assert main(["trace", "replay", str(trace), "--turn", "7"]) == 2
    assert "turn 7 is not in the trace" in capsys.readouterr().err


def test_bad_input_gives_typed_exit_codes(index_dir, tmp_path, capsys):
    assert main(["search", "  ", "--index", str(index_dir), "--quiet"]) == 2
    assert "question is empty" in capsys.readouterr().err
    assert main(["search", Q, "--index", str(tmp_path / "nothing")]) == 3
    assert main(["search", Q, "--index", str(index_dir), "--policy", "nope"]) == 2
    assert "unknown policy" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    assert main(["trace", "show", str(bad)]) == 2


def test_trace_show_gives_a_sample_event_one_line():
    from thresher.cli.trace_cmd import format_event
    from thresher.harness.trace import SampleEvent

    event = SampleEvent(turn=2, prompt_ids=[1, 2, 3], completion_ids=[4, 5], logprobs=[-1.0, 0.0])
    assert format_event(event) == ["   sample: 3 prompt + 2 completion token ids, with log-probs"]
    assert "without log-probs" in format_event(SampleEvent(completion_ids=[1]))[0]
