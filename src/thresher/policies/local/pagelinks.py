"""Following a documentation page's links to other pages: reads of the documents they name (pure).

In documentation the page a later hop needs is often the one an earlier page
links to: "see :doc:`/ref/settings`", "[Configuration](config.md#secrets)",
``<a href="deploy.html">``. A link names a document by its path, which no search
or grep of text finds; :class:`~thresher.corpus.doclinks.DocPaths` resolves it
to the index's document id, and a ``read_document`` of that id shows the
chunks of the page nearest the question (the session's ``rank_read``).

:func:`link_leads` reads the same anchors and sentences as
:func:`~thresher.policies.local.references.reference_leads`: in each anchor's
raw text, sentence by sentence, each link
(:func:`~thresher.corpus.doclinks.document_links`, reference-style Markdown links
read through the anchor's own definitions) of a sentence holding a question word
scores its anchor's weight times one plus the question words its sentence holds
(``Constants.question_word_gain`` each), the best score per document kept. A link
is not followed when it names no document of the index or more than one, the
anchor's own, a document already in view, or one followed before. The planner
reads the best few (:class:`LinkLead`); what a read shows continues the chain
through the anchor (every chunk of the linked document does: the link names it).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from thresher.corpus.doclinks import DocPaths, document_links, link_definitions
from thresher.corpus.ids import doc_of
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.memo import TextMemo
from thresher.policies.local.references import RefAnchor, asking_sentences

__all__ = ["LinkLead", "link_leads", "may_link"]

#: what a text holding a link holds (a quick test before its sentences are read)
_MARKERS = ("](", ":doc:", "{doc}", "href", "]:", "][")


@dataclass(frozen=True, slots=True)
class LinkLead:
    """A link to follow: read ``doc_id``, which ``target`` (as written) names.

    source: the chunk id of the anchor that made the link. score: its priority.
    """

    doc_id: str
    target: str
    source: str
    score: float


def may_link(text: str) -> bool:
    """Whether ``text`` may hold a link to a page (prose without markup does not)."""
    return any(m in text for m in _MARKERS)


def link_leads(
    question_words: AbstractSet[str],
    anchors: Sequence[RefAnchor],
    paths: DocPaths,
    *,
    held_docs: AbstractSet[str] = frozenset(),
    followed: AbstractSet[str] = frozenset(),
    limit: int,
    constants: Constants = DEFAULT_CONSTANTS,
    memo: TextMemo | None = None,
) -> list[LinkLead]:
    """The ``limit`` best links of ``anchors`` to follow, best first.

    Args:
        question_words: the question's content words.
        anchors: the chunks read, most trusted first.
        paths: the index's document ids by path.
        held_docs: the documents with a chunk in the episode (not read again).
        followed: documents read before through a link.
        limit: the most leads returned (0: none, nothing read).
        constants: ``question_word_gain``: what each question word of a link's
            sentence adds to its score.
        memo: the session's memo (sentences of a chunk's text are read once).
    """
    if limit <= 0 or not anchors:
        return []
    best: dict[str, LinkLead] = {}
    # each anchor's reference-style definitions, read once
    defined: dict[str, dict[str, str] | None] = {}
    for anchor, sent, score in asking_sentences(question_words, anchors, may_link, constants, memo):
        if anchor.chunk_id not in defined:
            text = anchor.text
            defined[anchor.chunk_id] = link_definitions(text) if "]:" in text else None
        home = doc_of(anchor.chunk_id)
        for link in document_links(sent, defined[anchor.chunk_id]):
            docs = paths.resolve(link.text, home)
            if len(docs) != 1:
                continue  # none in the index, or no saying which
            doc = docs[0]
            if doc in held_docs or doc in followed or doc == home:
                continue
            held = best.get(doc)
            if held is None or held.score < score:
                best[doc] = LinkLead(doc, link.text, anchor.chunk_id, score)
    ranked = sorted(best.values(), key=lambda r: (-r.score, r.doc_id))
    return ranked[:limit]
