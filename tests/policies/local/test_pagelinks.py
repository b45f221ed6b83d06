"""Following links to other pages: which links a hop reads, and an episode over a real
Markdown index reading the page a guide links to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.doclinks import DocPaths
from thresher.corpus.document import Document
from thresher.policies.local.pagelinks import link_leads
from thresher.policies.local.references import RefAnchor
from thresher.policies.local.text import content_words

GUIDE = (
    "Visitors stay signed in across visits through the Keeper middleware. How long they stay signed in is set on "
    "[the settings page](../reference/settings.md#remember-age), as the "
    "[legacy notes](legacy.md) once said.\n\n"
    "Unrelated: the [changelog](../changes.md) lists releases."
)
IDS = ["docs/guide/sessions.md", "docs/reference/settings.md", "docs/changes.md"]


def _q(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


Q = "How long do visitors stay signed in by default?"


def test_links_of_sentences_holding_question_words_are_followed_and_missing_ones_ignored() -> None:
    anchor = RefAnchor("docs/guide/sessions.md#0", GUIDE, 0.8)
    leads = link_leads(_q(Q), [anchor], DocPaths(IDS), limit=5)
    # legacy.md is in no index, the changelog's sentence holds no question word
    assert [(lead.doc_id, lead.target) for lead in leads] == [
        ("docs/reference/settings.md", "../reference/settings.md#remember-age")
    ]
    assert leads[0].source == "docs/guide/sessions.md#0" and leads[0].score > 0.8
    assert link_leads(_q(Q), [anchor], DocPaths(IDS), limit=0) == []


def test_a_link_followed_or_to_a_document_in_view_is_not_followed_again() -> None:
    anchor = RefAnchor("docs/guide/sessions.md#0", GUIDE, 0.8)
    paths = DocPaths(IDS)
    settings = "docs/reference/settings.md"
    assert link_leads(_q(Q), [anchor], paths, followed={settings}, limit=2) == []
    assert link_leads(_q(Q), [anchor], paths, held_docs={settings}, limit=2) == []


def test_prose_without_links_gives_no_lead() -> None:
    text = "Marrowick lies in the province of Tessaly. Its salt market is the oldest."
    anchor = RefAnchor("m#0", text, 1.0)
    assert (
        link_leads(_q("Where is Marrowick?"), [anchor], DocPaths(["m", "Tessaly"]), limit=3) == []
    )


def _docs() -> list[Document]:
    options = [
        f"## OPTION_{i:02d}\n\nValue ``{i}``: reserved for compilers of the bytecode "
        "cache; ignored on platforms without one."
        for i in range(30)
    ]
    options.insert(
        17,
        "## REMEMBER_AGE\n\nValue ``1209600`` (two weeks): seconds a remember-me cookie lives.",
    )
    filler = [
        Document(
            f"docs/topics/page{i}.md",
            f"Topic {i}",
            f"# Topic {i}\n\nVisitors see topic {i}; each of their visits is counted on "
            f"page {i} of the framework.",
            "test",
        )
        for i in range(40)
    ]
    return [
        Document("docs/guide/sessions.md", "Sessions", "# Sessions\n\n" + GUIDE, "test"),
        Document(
            "docs/reference/settings.md",
            "Settings",
            "# Settings\n\n" + "\n\n".join(options),
            "test",
        ),
        Document("docs/changes.md", "Changes", "# Changes\n\nRelease 1.0: first.", "test"),
        Document(
            "docs/guide/keeper.md",
            "Keeper middleware",
            "# Keeper middleware\n\nThe Keeper middleware reads the remember-me cookie on "
            "each request.",
            "test",
        ),
        *filler,
    ]


CONFIG = {"chunking.max_tokens": 64}


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from thresher.index.backends import ingest

    path = tmp_path_factory.mktemp("links-index")
    ingest(_docs(), path, Config().override(CONFIG), progress=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("links", [0, 2])
def test_an_episode_reads_the_page_its_anchor_links_to(
    docs_index: Path, links: int, tmp_path: Path
) -> None:
    import thresher

    trace = tmp_path / "trace.jsonl"
    thresher.search(
        "Visitors stay signed in across visits: how long?",
        index=str(docs_index),
        policy="local",
        config=Config().override(CONFIG),
        k=5,
        # the question's search shows its two best (the guide and what it names), so the
        # settings page is first seen through the link
        policy_options={"links_per_hop": links, "stop_at": 1.0, "first_k": 2},
        trace=str(trace),
    )
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    reads = [
        e for e in events if e.get("type") == "tool_result" and e.get("tool") == "read_document"
    ]
    if links == 0:
        assert reads == []
        return
    # the linked page read, the missing one never asked for
    assert [e["arguments"]["doc_id"] for e in reads] == ["docs/reference/settings.md"]
    (read,) = reads
    shown = read.get("lineage", [])
    # a long page: only its few chunks nearest the question are shown
    assert len(shown) == 3 and read["header"].startswith(
        "read_document docs/reference/settings.md: "
    )
    assert all(rec["parents"] == ["docs/guide/sessions.md#0"] for rec in shown)
    assert not any(e.get("error_code") for e in reads)


def test_an_index_document_paths_are_built_once_per_generation_and_reach_the_session(
    store,
) -> None:
    from thresher.index.doc_paths import document_paths, kept_paths
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import LocalPolicy

    paths = document_paths(store)
    assert paths is not None and len(paths) == len(store.doc_ids())
    assert document_paths(store) is paths is kept_paths(store.reader_memo())
    assert document_paths(object()) is None  # type: ignore[arg-type]  # keeps no memo
    policy = LocalPolicy()
    bound = policy.for_store(store)
    assert bound is not policy and bound.paths is paths and policy.paths is None
    assert bound.start("q").planner.paths is paths
    off = LocalPolicy(LocalOptions(links_per_hop=0))
    assert off.for_store(store) is off and off.start("q").planner.paths is None
