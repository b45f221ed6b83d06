"""The planner of follow-ups: the first turn's calls, then each hop's bridge queries.

The first turn searches the question (and, for a question stated as linked
clues, its first clue alone) and greps its quoted names and codes. Each hop
reads bridges (:mod:`.bridges`) first from the chain's edges, then from the best
retained chunks:

- the leading edge (:func:`frontier`): per follow-up of the last hop, the
  likeliest chunk it found that holds its bridge, which continues the followed
  chain (:class:`~thresher.policies.local.chain.Chain`);
- for a question stated as linked clues, the clue edge (:func:`clue_edge`): the
  chunk stating the furthest clue the clue chain has reached (:mod:`.clues`),
  with that clue's index and the names the chain came through to it.

Each edge is an :data:`Edge`: (its chunk, the clue it answers, the names passed).
The stop model may end the search before a hop.
"""

from __future__ import annotations

import re

from thresher.corpus.doclinks import DocPaths
from thresher.harness.actions import Proposal, ToolCall
from thresher.harness.observation import Observation
from thresher.policies.local.answer import AnswerRanker
from thresher.policies.local.bridges import Anchor, Bridge, bridge_queries
from thresher.policies.local.candidate import AnchorView
from thresher.policies.local.clues import clue_docs, how_stated, link_words, links
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.entities import question_patterns
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.pagelinks import LinkLead, link_leads, may_link
from thresher.policies.local.prose import anchor_prose, is_release_notes
from thresher.policies.local.references import RefAnchor, RefLead, reference_leads
from thresher.policies.local.scoring import Ranked
from thresher.policies.local.sources import (
    CapitalSpans,
    DocumentNames,
    IdentifierSpans,
    NamedSpans,
    NameSource,
    SpanSource,
    SpanUnion,
    identifier_spans,
)
from thresher.policies.local.stop import StopModel

__all__ = ["Planner", "Edge", "clue_edge", "frontier"]

#: where bridge phrases are found by default: capitalized names and identifiers
DEFAULT_SPANS = SpanUnion((CapitalSpans(), IdentifierSpans()))

#: a chain edge bridges are read from: (its chunk, the clue it answers, the names passed)
Edge = tuple[Ranked, int | None, frozenset[str]]


class Planner:
    """Plans each turn's searches.

    Args:
        max_hops: the most follow-up turns after the question's search.
        first_k: chunks shown from the question's search.
        hop_k: chunks shown from each follow-up search.
        bridges_per_hop: follow-up queries per hop.
        grep: also grep the question's quoted names and codes.
        first_clue: for a clue chain, also search its first clue's words alone first.
        frontier_k: chunks of the chain's leading edge read first for bridges.
        answer: the answer ranker (a clue chain's progress is read from its order).
        stop: the stop model.
        refs_per_hop: cross-references followed per hop (greps of where each is
            defined; 0: none).
        links_per_hop: links to other pages followed per hop (reads of each page;
            0: none).
        paths: the index's document ids by path (what a link resolves to; None: links
            are not followed).
        constants: the policy's constants (anchors per hop, bridges per chain edge,
            and those of :func:`~.bridges.bridge_queries` and :func:`~.clues.clue_docs`).
        spans: where a sentence's candidate bridge phrases come from (:mod:`.sources`).
        names: what the documents seen are called (their titles, file names): a text
            naming one links to it.
    """

    def __init__(
        self,
        *,
        max_hops: int,
        first_k: int,
        hop_k: int,
        bridges_per_hop: int,
        grep: bool,
        first_clue: bool,
        frontier_k: int,
        answer: AnswerRanker,
        stop: StopModel,
        refs_per_hop: int = 0,
        links_per_hop: int = 0,
        paths: DocPaths | None = None,
        constants: Constants = DEFAULT_CONSTANTS,
        spans: SpanSource = DEFAULT_SPANS,
        names: NameSource | None = None,
    ) -> None:
        self.constants = constants
        self.spans = spans
        self.names = names if names is not None else DocumentNames(constants.name_common_share)
        self.max_hops = max_hops
        self.first_k = first_k
        self.hop_k = hop_k
        self.bridges_per_hop = bridges_per_hop
        self.grep = grep
        self.first_clue = first_clue
        self.frontier_k = frontier_k
        self.refs_per_hop = refs_per_hop
        self.links_per_hop = links_per_hop
        self.paths = paths
        self.answer = answer
        self.stop = stop

    def first_turn(self, memory: EpisodeMemory) -> Proposal:
        """Search the question (and a clue chain's first clue); grep its names and codes."""
        q = memory.question.question
        memory.show[q.strip()] = self.first_k
        memory.asked.add(q.strip().lower())
        calls = [ToolCall("search_corpus", {"query": q}, "q0")]
        clues = links(q)
        if self.first_clue and len(clues) > 1:
            # a clue chain starts at its first clue: searched alone, its few words
            # ("born 1984 town Stosstead") are not drowned by the other clues'
            first = " ".join(link_words(clues[0]))
            if first.lower() not in memory.asked:
                memory.show[first] = self.hop_k
                memory.asked.add(first.lower())
                calls.append(ToolCall("search_corpus", {"query": first}, "c0"))
        if self.grep:
            c = self.constants
            patterns = question_patterns(q, c.grep_patterns, c.grep_min_chars)
            # a path or a dotted or snake_case name the question states, whatever its
            # case, is as rare a token as a code ("/etc/pam.d/other")
            for name in identifier_spans(q):
                pattern = re.escape(name)
                if len(patterns) >= c.grep_patterns:
                    break
                if len(name) >= c.grep_min_chars and pattern not in patterns:
                    patterns.append(pattern)
            for i, pattern in enumerate(patterns):
                calls.append(ToolCall("grep_corpus", {"pattern": pattern}, f"g{i}"))
        return Proposal(tool_calls=tuple(calls), hop=0)

    def next_hop(
        self, memory: EpisodeMemory, obs: Observation, ranked: list[Ranked]
    ) -> Proposal | None:
        """The next hop's follow-up searches, or None when the search is over."""
        if memory.hop >= self.max_hops or obs.usage.soft:
            return None
        active = {a.chunk_id for a in obs.active}
        top = [r for r in ranked if r.chunk_id in active][: self.constants.hop_anchors]
        known = self.names.names(memory.titles, lambda: self.seen_words(memory))
        leading = frontier(
            memory, ranked, active, {r.cand.chunk.doc_id for r in top}, self.frontier_k
        )
        edges: list[Edge] = [(r, None, frozenset()) for r in leading]
        clue_at = clue_edge(memory, ranked, active, self.answer, self.constants)
        if clue_at is not None:
            edges.insert(0, clue_at)
        bridges: list[Bridge] = []  # the best of each chain edge first, whatever its weight
        for edge, clue, passed in edges:
            per_edge = self.constants.edge_bridges
            for b in self.bridges(memory, ranked, [edge], known, per_edge, clue, passed):
                if all(b.phrase.lower() != x.phrase.lower() for x in bridges):
                    bridges.append(b)
                    break
        taken = {b.phrase.lower() for b in bridges}
        for b in self.bridges(memory, ranked, top, known, self.bridges_per_hop):
            if len(bridges) >= self.bridges_per_hop:
                break
            if b.phrase.lower() not in taken:
                bridges.append(b)
                taken.add(b.phrase.lower())
        if not bridges:
            return None
        if self.stop.active:
            feats = self.stop.state(memory, ranked, len(bridges))
            # a clue chain whose edge still has a clue to ask is visibly unfinished:
            # the learned signal decides only when the question's form says nothing
            if clue_at is None and self.stop.sufficient(feats):
                return None
        # the cross-references of the same anchors ride along (never a hop of their own)
        anchors = [e[0] for e in edges] + top
        leads = self.references(memory, obs, anchors)
        reads = self.page_links(memory, obs, anchors)
        memory.hop += 1
        memory.anchors = [AnchorView.of(r.cand, r.prob) for r in top]
        calls = []
        for i, b in enumerate(bridges):
            memory.show[b.query.strip()] = self.hop_k
            memory.via[b.query.strip()] = b
            memory.asked.add(b.query.strip().lower())
            memory.asked.add(b.phrase.lower())
            calls.append(ToolCall("search_corpus", {"query": b.query}, f"h{memory.hop}b{i}"))
        sources = [b.source for b in bridges]
        for i, lead in enumerate(leads):
            memory.refs[lead.pattern] = lead
            calls.append(ToolCall("grep_corpus", {"pattern": lead.pattern}, f"h{memory.hop}r{i}"))
            sources.append(lead.source)
        for i, link in enumerate(reads):
            memory.links[link.doc_id] = link
            calls.append(ToolCall("read_document", {"doc_id": link.doc_id}, f"h{memory.hop}l{i}"))
            sources.append(link.source)
        return Proposal(
            tool_calls=tuple(calls),
            hop=memory.hop,
            parents=tuple(dict.fromkeys(sources)),
            call_parents={c.call_id: (s,) for c, s in zip(calls, sources, strict=True)},
        )

    def references(
        self, memory: EpisodeMemory, obs: Observation, chunks: list[Ranked]
    ) -> list[RefLead]:
        """The cross-references of ``chunks`` (the hop's anchors) to follow this hop
        (:func:`~.references.reference_leads`; none when ``refs_per_hop`` is 0)."""
        if self.refs_per_hop <= 0:
            return []
        seen: set[str] = set()
        anchors = []
        for r in chunks:
            if r.chunk_id not in seen:
                seen.add(r.chunk_id)
                anchors.append(RefAnchor(r.chunk_id, r.cand.chunk.text, r.prob))
        return reference_leads(
            memory.question.words,
            anchors,
            (chunk.text for chunk in obs.cache.values()),
            followed=memory.refs.keys(),
            limit=self.refs_per_hop,
            constants=self.constants,
            memo=memory.text,
        )

    def page_links(
        self, memory: EpisodeMemory, obs: Observation, chunks: list[Ranked]
    ) -> list[LinkLead]:
        """The links to other pages of ``chunks`` (the hop's anchors) to follow this hop
        (:func:`~.pagelinks.link_leads`; none when ``links_per_hop`` is 0 or the index's
        paths are unknown)."""
        if self.links_per_hop <= 0 or self.paths is None:
            return []
        seen: set[str] = set()
        anchors = []
        for r in chunks:
            if r.chunk_id not in seen and may_link(r.cand.chunk.text):
                seen.add(r.chunk_id)
                anchors.append(RefAnchor(r.chunk_id, r.cand.chunk.text, r.prob))
        if not anchors:
            return []  # no anchor holds a link (prose, a dataset's paragraph)
        return link_leads(
            memory.question.words,
            anchors,
            self.paths,
            held_docs={chunk.doc_id for chunk in obs.cache.values()},
            followed=memory.links.keys(),
            limit=self.links_per_hop,
            constants=self.constants,
            memo=memory.text,
        )

    def bridges(
        self,
        memory: EpisodeMemory,
        ranked: list[Ranked],
        chunks: list[Ranked],
        known: dict[str, str],
        limit: int,
        clue: int | None = None,
        passed: frozenset[str] = frozenset(),
    ) -> list[Bridge]:
        """Follow-up queries read from ``chunks`` (anchors), best first; ``clue``: the clue
        of a clue chain their documents answer, when known, and ``passed``: the names
        the chain came through to it (see :class:`~.bridges.Anchor`)."""
        chain = memory.chain()
        question = memory.question.question.lower()
        release_notes = self.constants.changelog_weight
        anchors = [
            Anchor(
                r.chunk_id,
                r.cand.chunk.doc_id,
                r.cand.chunk.title,
                # names are read in prose: not in code or markup (:mod:`.prose`)
                anchor_prose(r.cand.chunk, question),
                r.prob
                * (
                    release_notes
                    if is_release_notes(r.cand.chunk.doc_id, r.cand.chunk.title)
                    else 1.0
                ),
                chain.path(r.cand.subquery),
                via.phrase if (via := chain.bridge_of(r.cand)) else "",
                clue,
                passed,
            )
            for r in chunks
        ]
        done = {r.cand.chunk.doc_id for r in ranked}
        # the names other than titles (file names) of documents not yet in view that
        # these anchors state are candidate phrases too, so a relation word beside one
        # counts ("administrators should usually use deluser(8) instead"); one pass
        # over the anchors' text first
        named = NamedSpans(())
        if known.keys() - memory.titles.keys():  # names other than titles (most have none)
            held = " ".join(a.text for a in anchors).lower()
            named = NamedSpans(
                tuple(
                    n
                    for n, d in known.items()
                    if d not in done and n not in memory.titles and n.lower() in held
                )
            )
        return bridge_queries(
            memory.question.question,
            anchors,
            known,
            exclude_docs=done,
            asked=memory.asked,
            limit=limit,
            constants=self.constants,
            spans=self.spans,
            named=named,
            memo=memory.text,
        )

    @staticmethod
    def seen_words(memory: EpisodeMemory) -> dict[str, set[str]]:
        """The content words of every document seen (its chunks' candidates' words)."""
        out: dict[str, set[str]] = {}
        for pool in memory.pools.values():
            for cand in pool.values():
                out.setdefault(cand.chunk.doc_id, set()).update(cand.words)
        return out


def clue_edge(
    memory: EpisodeMemory,
    ranked: list[Ranked],
    active: set[str],
    answer: AnswerRanker,
    constants: Constants = DEFAULT_CONSTANTS,
) -> Edge | None:
    """For a clue chain: the chunk stating its clue of the document answering the
    furthest clue the chain has reached (each pick continuing the previous one),
    that clue's index, and the names the chain came through to it, unless it is
    the last clue.

    The chain goes on from there whichever hop found that document (the question's
    own search often finds a later clue's document): the next follow-up asks the
    clue after it, from the name that document states. The chain's progress is
    read from ``answer``'s order (:func:`~.clues.clue_docs`, with ``constants``).
    """
    clues = links(memory.question.question)
    if len(clues) < 2 or not answer.chain_order:
        return None
    order, best, chunks = answer.order(memory, ranked, active, clue_first=False)
    links_of = answer.links_of(memory, ranked)
    words, parents, sents, titles = answer.clue_inputs(memory, order, best, chunks, links_of)
    picked = clue_docs(clues, order, words, parents, answer.keep_docs, sents, titles, constants)
    # the chain reaches as far as its picks continue one another: a later clue's
    # words alone ("launch") do not say its document is the one the chain leads to
    reach = next((i for i, p in enumerate(picked) if not p.linked), len(picked))
    if reach == 0 or picked[reach - 1].clue >= len(clues) - 1:
        return None
    last = picked[reach - 1]
    # of that document's chunks in view, the one stating the clue: its next link
    # is named there ("Patent X cites the earlier patent Y" sits in the record
    # notes of chunk 0, while chunk 1 may rank better)
    by_id = {r.chunk_id: r for r in ranked}

    def stating(cid: str) -> tuple[int, int]:
        text = by_id[cid].cand.chunk.text
        sents, _ = memory.text.sentence_words(text)
        names = memory.text.sentence_names(text)
        facts = [(x, w, n) for x, (w, n) in zip(sents, names, strict=True)]
        return how_stated(clues[last.clue], last.passed, facts)

    return by_id[max(chunks[last.doc], key=stating)], last.clue, last.passed


def frontier(
    memory: EpisodeMemory, ranked: list[Ranked], active: set[str], skip_docs: set[str], limit: int
) -> list[Ranked]:
    """The chain's leading edge: per follow-up of the last hop, the likeliest chunk it
    found that holds its bridge (at most ``limit``; none of ``skip_docs``' documents).

    A chunk that holds the phrase of the follow-up that found it continues the
    chain; the next hop reads it first (and the words its chain resolved leave
    the next query) rather than reading the same top chunks again.
    """
    chain = memory.chain()
    out: list[Ranked] = []
    followed: set[str] = set()  # one edge per bridge: each followed link goes on
    for r in sorted(ranked, key=lambda r: -r.prob):
        if r.chunk_id not in active or r.cand.hop != memory.hop or memory.hop == 0:
            continue
        if r.cand.chunk.doc_id in skip_docs or not chain.continues(r.cand):
            continue
        bridge = r.cand.subquery.strip()
        if bridge in followed:
            continue
        followed.add(bridge)
        out.append(r)
        skip_docs = skip_docs | {r.cand.chunk.doc_id}
        if len(out) >= limit:
            break
    return out
