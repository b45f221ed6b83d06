"""SFT export from real episode traces (scripted policy over a real index)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.harness.actions import Proposal, answer, call
from thresher.harness.replies import parse_final
from thresher.harness.trace import write_jsonl
from thresher.tasks.task import Task
from thresher.train.sft import SftConfig, export_sft, keep_probability, malformed_reason

QUESTION = "Where was the inventor of patent QX-1891-004 born?"
DOCS = [
    Document("patent", "QX-1891-004", "Patent QX-1891-004 was granted to Orvel Kestrin.", "t"),
    Document("kestrin", "Orvel Kestrin", "Orvel Kestrin was born in the town of Marrowick.", "t"),
    Document("caddow", "Caddow Ferry", "Caddow Ferry is a market town with a rope trade.", "t"),
    Document("pella", "Pella Dunmore", "Pella Dunmore was born in the town of Caddow Ferry.", "t"),
]
TASK = Task("t1", QUESTION, "Marrowick", [], ["patent", "kestrin"], [["patent"], ["kestrin"]])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    from thresher.index.backends import ingest
    from thresher.index.embedded.store import EmbeddedStore

    path = tmp_path_factory.mktemp("sft-index")
    ingest(DOCS, path, Config(), progress=False)
    s = EmbeddedStore(path, Config())
    yield s
    s.close()


def run(store, actions: list[Proposal], path: Path, question: str = QUESTION) -> Path:
    from thresher.harness.episode import run_episode
    from thresher.policies.scripted import ScriptedPolicy

    result = run_episode(question, store, ScriptedPolicy(actions))
    return write_jsonl(result.trace, path)


def good_actions() -> list[Proposal]:
    return [
        Proposal(tool_calls=(call("search_corpus", query="patent QX-1891-004"),)),
        Proposal(tool_calls=(call("grep_corpus", pattern="Orvel Kestrin was born"),)),
        Proposal(tool_calls=(call("prune_chunks", chunk_ids=["caddow#0"]),)),
        answer(("patent", "Names the inventor."), ("kestrin", "Gives the birthplace.")),
    ]


def test_turn_records_are_faithful_chat_transcripts(store, tmp_path: Path) -> None:
    trace = run(store, good_actions(), tmp_path / "good.jsonl")
    out = tmp_path / "sft.jsonl"
    report = export_sft([trace], [TASK], out)
    assert (report.episodes, report.kept_whole, report.kept_sampled) == (1, 1, 0)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == report.records == 4  # one per turn
    names = [t["function"]["name"] for t in records[0]["tools"]]
    assert names == [
        "search_corpus",
        "grep_corpus",
        "read_document",
        "prune_chunks",
        "recall_chunks",
    ]
    for n, record in enumerate(records):
        messages = record["messages"]
        assert messages[0]["role"] == "system" and messages[0]["content"]
        assert messages[1] == {"role": "user", "content": QUESTION}
        assistants = [m for m in messages if m["role"] == "assistant"]
        assert len(assistants) == n + 1
        assert [m["weight"] for m in assistants] == [0] * n + [1]
        # every tool call is answered by a tool message with its id, in order
        calls = [c["id"] for m in assistants[:-1] for c in m.get("tool_calls", [])]
        answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert calls == answered
    last = records[-1]["messages"][-1]
    final = parse_final(last["content"])
    assert final is not None and [d.doc_id for d in final.documents] == ["patent", "kestrin"]
    first_call = records[0]["messages"][-1]["tool_calls"][0]
    assert first_call["function"]["name"] == "search_corpus"
    assert json.loads(first_call["function"]["arguments"]) == {"query": "patent QX-1891-004"}


def test_episode_layout_is_one_record(store, tmp_path: Path) -> None:
    trace = run(store, good_actions(), tmp_path / "good.jsonl")
    out = tmp_path / "sft.jsonl"
    report = export_sft([trace], [TASK], out, SftConfig(layout="episode", with_metadata=True))
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert report.records == 1
    assert record["metadata"]["trajectory_recall"] == 1.0
    roles = [m["role"] for m in record["messages"]]
    assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
    assert roles.count("assistant") == 4
    assert "weight" not in record["messages"][-1]


def test_filter_drops_malformed_and_samples_low_recall(store, tmp_path: Path) -> None:
    good = run(store, good_actions(), tmp_path / "good.jsonl")
    # low recall: only the distractor is found and returned
    low = run(
        store,
        [Proposal(tool_calls=(call("grep_corpus", pattern="rope trade"),)), answer("caddow")],
        tmp_path / "low.jsonl",
    )
    # the script runs out: exit policy_error
    broken = run(
        store, [Proposal(tool_calls=(call("search_corpus", query="x"),))], tmp_path / "b.jsonl"
    )
    stranger = run(store, good_actions(), tmp_path / "s.jsonl", question="Another question?")
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text("".join(good.read_text().splitlines(keepends=True)[:-1]))
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n")
    both = tmp_path / "both.jsonl"
    both.write_text(good.read_text() + good.read_text())
    report = export_sft(
        [good, low, broken, stranger, truncated, garbage, both], [TASK], tmp_path / "o.jsonl"
    )
    assert report.episodes == 8
    assert report.kept_whole == 3 and report.kept_sampled == 0 and report.skipped_low == 1
    assert report.dropped == {
        "exit_policy_error": 1,
        "no_episode_end": 1,
        "no_matching_task": 1,
        "unreadable": 1,
    }


def test_keep_probability_by_hand() -> None:
    cfg = SftConfig()
    assert keep_probability(0.6, 0.5, cfg) == 1.0
    assert keep_probability(0.5, 0.5, cfg) == pytest.approx(0.5)  # at the threshold: not above
    # q = (0.25 / 0.5) * (0.2 / 0.4) = 0.25, p = 0.5 * 0.25 ** 2
    assert keep_probability(0.25, 0.2, cfg) == pytest.approx(0.03125)
    assert keep_probability(0.0, 1.0, cfg) == 0.0


def test_malformed_reason_of_an_empty_episode() -> None:
    assert malformed_reason([]) == "no_episode_start"


def test_a_cancelled_episode_is_no_training_example() -> None:
    from thresher.harness.trace import EpisodeEnd, EpisodeStart

    events = [EpisodeStart(question="q"), EpisodeEnd(turn=1, exit_reason="cancelled")]
    assert malformed_reason(events) == "exit_cancelled"
