"""Documentation bridges: names used as code, defined names, links resolved to pages,
and questions phrased from the pages' own sentences (a hand-made reST corpus, no index)."""

from __future__ import annotations

import random

from thresher.corpus.docrefs import code_mentions, definitions, link_mentions, resolve_doc
from thresher.corpus.document import Chunk
from thresher.corpus.ids import content_hash
from thresher.tasks.generate.docrefs import mask_ref, reader_text, tidy, unwrap
from thresher.tasks.generate.explore import CorpusView, ExploreConfig, is_release_notes
from thresher.tasks.generate.extend import build_chain
from thresher.tasks.generate.phrase import _one_article, phrase_sentences

SENT = (
    "Set :confval:`mock_imports` to mock modules, see :doc:`usage/setup` and "
    ":ref:`The guide <guide-label>`, or pass ``--strict-mode`` to runner.start() "
    "and read [the notes](../notes.md#top)."
)


def test_names_used_as_code_come_from_roles_literals_and_code_shaped_words() -> None:
    found = {(d.text, d.role) for d in code_mentions(SENT)}
    assert found == {("mock_imports", "confval"), ("--strict-mode", ""), ("runner.start()", "")}
    for d in code_mentions(SENT):
        assert SENT[d.start : d.start + len(d.text)] == d.text


def test_links_are_doc_and_ref_roles_and_local_markdown_links() -> None:
    found = [(d.text, d.kind) for d in link_mentions(SENT)]
    assert found == [("usage/setup", "doc"), ("guide-label", "ref"), ("../notes.md#top", "doc")]
    assert link_mentions("See [site](https://example.org/a.md) and [img](pic.png).") == []


def test_definitions_are_directive_targets_headings_and_labels() -> None:
    text = ".. confval:: mock_imports\n\n.. _guide-label:\n\n.. py:function:: pkg.load(x)\n"
    text += ".. autoclass:: pkg.Session\n\n# `make_app`\n\n.. note:: not a name\n"
    assert definitions(text) == (
        ["mock_imports", "pkg.load", "pkg.Session", "make_app"],
        ["guide-label"],
    )


def test_doc_links_resolve_relative_to_the_page_or_from_the_root() -> None:
    stems = {"docs/usage/setup": ["docs/usage/setup.rst"], "docs/notes": ["docs/notes.md"]}
    assert resolve_doc("usage/setup", "docs/index.rst", stems) == "docs/usage/setup.rst"
    assert resolve_doc("../notes.md#top", "docs/usage/setup.rst", stems) == "docs/notes.md"
    assert resolve_doc("/usage/setup", "docs/a/b.rst", stems) == "docs/usage/setup.rst"
    assert resolve_doc("missing", "docs/index.rst", stems) is None


def test_reader_text_masking_and_tidy() -> None:
    assert reader_text(SENT).startswith(
        "Set mock_imports to mock modules, see usage/setup and The guide"
    )
    masked = mask_ref(SENT, "mock_imports", "a setting")
    assert masked.startswith("Set a setting to mock") and "mock_imports" not in masked
    assert tidy("set the a setting; that that setting; a function function") == (
        "set the setting; that setting; a function"
    )


def test_a_masked_bridge_inside_a_noun_phrase_keeps_the_phrases_own_article() -> None:
    # the bridge sat after a determiner and at most one modifier: no second article
    assert _one_article("use a 64-bit a name type; an explicit a name URL", "name") == (
        "use a 64-bit name type; an explicit name URL"
    )
    # elsewhere the placeholder keeps its article, and other words are never touched
    assert _one_article("the server uses a name; a setting", "name") == (
        "the server uses a name; a setting"
    )


def test_unwrap_joins_wrapped_prose_only() -> None:
    text = (
        "Title\n=====\n\nA long\nwrapped line.\n\n* one\n* two\n\n.. note::\n\n   body\n   more\n"
    )
    assert unwrap(text) == (
        "Title\n=====\n\nA long wrapped line.\n\n* one\n* two\n\n.. note::\n\n   body more\n"
    )


def test_release_notes_are_told_by_path() -> None:
    assert is_release_notes("docs/changelog.rst") and is_release_notes("doc/changes/1.2.rst")
    assert not is_release_notes("docs/usage/setup.rst")


# a corpus whose only bridges are documentation ones: a setting defined on one page and
# used on another, and a :doc: link to a page
PAGES = {
    "docs/intro.rst": (
        "Intro",
        "Introduction\n============\n\nBefore it builds anything, the Vellum tool reads\n"
        ":confval:`mock_imports`, so modules that fail to import are replaced.\n",
    ),
    "docs/config.rst": (
        "Configuration",
        "Configuration\n=============\n\n.. confval:: mock_imports\n\n"
        "   The list of modules to mock. Its default value is the Placeholder\n"
        "   list shipped with the builder.\n",
    ),
    "docs/tour.rst": (
        "Tour",
        "Tour\n====\n\nYou can read about the Quillon builder in :doc:`usage/builders` in\n"
        "more detail than here.\n",
    ),
    "docs/usage/builders.rst": (
        "Builders",
        "Builders\n========\n\nEach builder writes its output to the Kestrel folder\n"
        "unless a target is given.\n",
    ),
    "docs/other.rst": (
        "Other",
        "Other\n=====\n\nThe mock_imports list is read once per run by the Vellum tool.\n",
    ),
}


def doc_view() -> CorpusView:
    chunks = [
        Chunk(f"{d}#0", d, 0, title, text, 0, len(text), content_hash(text), d)
        for d, (title, text) in PAGES.items()
    ]
    return CorpusView.build(chunks)


def test_view_registers_definitions_and_resolved_links() -> None:
    v = doc_view()
    assert v.is_documentation
    assert "docs/config.rst" in v.titled_docs["mock_imports"]
    assert v.link_target("docs/tour.rst", "usage/builders") == "docs/usage/builders.rst"
    # wrapped lines are one sentence
    assert any(
        s.text.startswith("Before it builds anything") and s.text.endswith("are replaced.")
        for s in v.sentences["docs/intro.rst#0"]
    )


def chain_from(v: CorpusView, seed_chunk: str):  # type: ignore[no-untyped-def]
    for seed in range(20):
        chain = build_chain(v, seed_chunk, 2, ExploreConfig(), random.Random(seed))
        if chain is not None:
            return chain
    raise AssertionError(f"no chain from {seed_chunk}")


def test_a_defined_name_bridges_to_its_defining_page() -> None:
    v = doc_view()
    chain = chain_from(v, "docs/intro.rst#0")
    assert chain.bridges == ["mock_imports"]
    assert [h.doc_id for h in chain.hops] == ["docs/intro.rst", "docs/config.rst"]
    assert chain.answer == "Placeholder"
    q = phrase_sentences(chain, random.Random(0))
    assert "mock_imports" not in q.question and "Placeholder" not in q.question
    assert "Vellum" in q.question and "setting" in q.question and "___" in q.question
    assert "[A]" not in q.question and ":confval:" not in q.question


def test_a_doc_link_bridges_to_the_linked_page() -> None:
    v = doc_view()
    chain = chain_from(v, "docs/tour.rst#0")
    assert [h.doc_id for h in chain.hops] == ["docs/tour.rst", "docs/usage/builders.rst"]
    assert chain.answer == "Kestrel"
    q = phrase_sentences(chain, random.Random(1)).question
    assert "usage/builders" not in q and "Quillon" in q and "page" in q
