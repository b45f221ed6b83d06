"""Offline templates, and LLM phrasing/checking over a real HTTP replay server."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from _corpus import chunks

from thresher.config import LLMConfig
from thresher.endpoint.client import EndpointRequestError
from thresher.endpoint.settings import EndpointSettings
from thresher.llm.client import ChatClient
from thresher.tasks.generate.explore import CorpusView, ExploreConfig
from thresher.tasks.generate.extend import Chain, build_chain
from thresher.tasks.generate.phrase import (
    LLMPhraser,
    PhraseError,
    clues,
    parse_json_reply,
    phrase_offline,
    phrase_salient,
    salient_words,
)
from thresher.tasks.generate.pipeline import DEFAULT_HOP_WEIGHTS, candidate_chains, synthesize_tasks
from thresher.tasks.generate.verify import text_checks
from thresher.testing.replay_server import ReplayServer, reply


def chain3() -> Chain:
    v = CorpusView.build(chunks())
    for seed in range(50):
        chain = build_chain(v, "patents/QX-1891-004.txt#0", 3, ExploreConfig(), random.Random(seed))
        if chain is not None and chain.answer == "Tessaly Province":
            return chain
    raise AssertionError("the hand-made chain was not found")


def phraser(url: str) -> LLMPhraser:
    settings = EndpointSettings.resolve(LLMConfig(base_url=url, max_retries=0), {})
    return LLMPhraser(ChatClient(settings, sleep=lambda _s: None))


def test_clues_mask_bridges_and_answer() -> None:
    assert clues(chain3()) == [
        "Patent QX-1891-004 was granted to [A] after a long dispute.",
        "[A] was born in the river town of [B] in 1850.",
        "[B] is a small market town that lies in [?].",
    ]


def test_offline_question_is_seeded_and_passes_the_text_checks() -> None:
    chain = chain3()
    a, b = phrase_offline(chain, random.Random(3)), phrase_offline(chain, random.Random(3))
    assert a == b and a.mode == "offline"
    assert "QX-1891-004" in a.question and "[?]" in a.question
    assert a.quotes == tuple(h.sentence for h in chain.hops)
    texts = {c.chunk_id: c.text for c in chunks()}
    assert text_checks(chain, a, texts) == (None, 1.0)


def test_parse_json_reply_forms() -> None:
    assert parse_json_reply('{"a": 1}') == {"a": 1}
    assert parse_json_reply('Sure!\n```json\n{"a": 2}\n```') == {"a": 2}
    assert parse_json_reply('prefix {"a": 3} suffix') == {"a": 3}
    assert parse_json_reply("no json here") is None
    assert parse_json_reply("[1, 2]") is None


@pytest.mark.server
def test_llm_phrase_and_answer_over_http(tmp_path: Path) -> None:
    chain = chain3()
    question = "Where lies the birthplace of the man granted patent QX-1891-004?"
    script = [
        reply(content=json.dumps({"question": question, "quotes": [h.sentence for h in chain.hops], "answer": chain.answer})),
        reply(content='```json\n{"answer": "Tessaly Province"}\n```'),
        reply(content="I cannot help with that."),
    ]  # fmt: skip
    with ReplayServer(script, tmp_path) as server:
        p = phraser(server.base_url)
        phrasing = p.phrase(chain)
        assert phrasing.question == question and phrasing.mode == "llm"
        assert p.answer(question, ["passage"]) == "Tessaly Province"
        with pytest.raises(PhraseError) as info:
            p.phrase(chain)
        assert info.value.reason == "llm_unparsable"
        sent = server.chat_requests()
        payload = json.loads(sent[0]["messages"][1]["content"])
        assert payload["anchor"] == "QX-1891-004" and payload["answer"] == "Tessaly Province"
        assert [f["bridge"] for f in payload["facts"]] == ["Orvel Kestrin", "Marrowick", None]
        assert "tools" not in sent[0]


def chains(view, n: int) -> list[Chain]:
    """The first ``n`` chains the pipeline will phrase (2 hops, seed 0)."""
    found = []
    for _cid, _rng, chain in candidate_chains(view, 0, {2: 1.0}, ExploreConfig()):
        if chain is not None:
            found.append(chain)
            if len(found) == n:
                return found
    raise AssertionError("too few chains in the world")


def good(chain: Chain) -> dict:
    return {
        "question": f"Starting from {chain.anchor}, which entity do the linked records lead to?",
        "quotes": [h.sentence for h in chain.hops],
        "answer": chain.answer,
    }


def run_llm(store, view, script: list[dict], workdir: Path):
    with ReplayServer(script, workdir) as server:
        report = synthesize_tasks(
            store, 1, 0, "llm", hop_weights={2: 1.0}, phraser=phraser(server.base_url), view=view
        )
        return report, server.chat_requests()


@pytest.mark.server
def test_llm_mode_pipeline_keeps_a_verified_task(world_store, world_view, tmp_path: Path) -> None:
    (chain,) = chains(world_view, 1)
    script = [
        reply(content=json.dumps(good(chain))),
        reply(content=json.dumps({"answer": chain.answer})),
    ]
    report, requests = run_llm(world_store, world_view, script, tmp_path)
    assert report.kept == 1 and len(requests) == 2
    task = report.tasks[0]
    assert task.question == good(chain)["question"] and task.mode == "llm"
    assert task.answer == chain.answer and task.evidence_chunk_ids == chain.chunk_ids
    assert report.passed["llm_answer_mismatch"] == 1
    # the check request carries the evidence passages
    passages = json.loads(requests[1]["messages"][1]["content"])["passages"]
    assert len(passages) == 2 and chain.hops[0].sentence in passages[0]


@pytest.mark.server
def test_llm_mode_rejections_are_counted(world_store, world_view, tmp_path: Path) -> None:
    first, _second, third = chains(world_view, 3)
    wrong = {**good(first), "quotes": ["words found nowhere", "nor these", first.hops[0].sentence]}
    script = [
        reply(content=json.dumps(wrong)),  # 1 of 3 quotes match: quote_mismatch
        reply(content="not json at all"),  # llm_unparsable
        reply(content=json.dumps(good(third))),
        reply(content=json.dumps({"answer": "UNANSWERABLE"})),  # llm_answer_mismatch
    ]
    with pytest.raises(EndpointRequestError, match="exhausted"):
        run_llm(world_store, world_view, script, tmp_path)
    # the same replies, then a good one for the fourth chain: the counts are reported
    fourth = chains(world_view, 4)[3]
    script += [
        reply(content=json.dumps(good(fourth))),
        reply(content=json.dumps({"answer": fourth.answer})),
    ]
    report, _ = run_llm(world_store, world_view, script, tmp_path / "again")
    assert report.kept == 1 and report.tasks[0].answer == fourth.answer
    assert report.rejected["quote_mismatch"] == 1
    assert report.rejected["llm_unparsable"] == 1
    assert report.rejected["llm_answer_mismatch"] == 1


def test_default_weights_cover_two_to_four_hops() -> None:
    assert sorted(DEFAULT_HOP_WEIGHTS) == [2, 3, 4]


def test_salient_words_are_the_rarest_content_words_in_sentence_order() -> None:
    df = {"granted": 2, "long": 40, "dispute": 1, "patent": 9, "after": 50}.get
    words = salient_words(
        "Patent QX-1891-004 was granted to `Ada Vell` after a long dispute.",
        lambda t: df(t, 0),
        avoid=["Ada Vell", "QX-1891-004"],
        k=2,
    )
    # the rarest two (dispute, granted), as the sentence has them; 'a', 'to', 'was' are
    # stop words, the avoided names' tokens never count, unknown words (df 0) neither
    assert words == ["granted", "dispute"]


def test_salient_question_names_each_hop_by_a_few_words_never_a_bridge() -> None:
    chain = chain3()
    view = CorpusView.build(chunks())

    def df(token: str) -> int:
        return len(view.postings.get(token, ()))

    a, b = phrase_salient(chain, random.Random(3), df), phrase_salient(chain, random.Random(3), df)
    assert a == b and a.mode == "offline" and a.answer == chain.answer
    assert a.quotes == tuple(h.sentence for h in chain.hops)
    # no hop is quoted: the question is far shorter than the sentences it names
    assert not any(h.sentence.rstrip(".") in a.question for h in chain.hops)
    assert len(a.question.split()) < sum(len(h.sentence.split()) for h in chain.hops) + 20
    for hop in chain.hops:
        picked = salient_words(hop.sentence, df, [chain.anchor, chain.answer, *chain.bridges])
        assert picked and ", ".join(picked) in a.question
    assert a.question.count("that ") == len(chain.hops) - 1  # the chain's structure stays
    texts = {c.chunk_id: c.text for c in chunks()}
    assert text_checks(chain, a, texts) == (None, 1.0)  # anchor named, no bridge, no answer
