"""Explore: read an indexed corpus once, find seed chunks and bridges between chunks.

:class:`CorpusView` holds every chunk of a store (read through the ``Store``
protocol with one unbounded ``grep``), split into sentences with their
candidate entities (:mod:`thresher.tasks.generate.text`), plus a memoized
"which chunks contain this phrase" lookup (a grep over the chunk texts held in
memory) and document frequencies.

A *bridge* links a chunk A to a chunk B of another document through an entity
X: a sentence of A names X, and B states a fact about X, either in a sentence
that names X too (as a whole entity, not inside a longer name), or because
B's document is titled with X (:func:`title_keys`). X is *rare*: it
occurs in 2..``max_df`` documents (or, when B is titled with it, in at most
``max_title_df``), so that it identifies B. :func:`first_hops` proposes the
first hop of a chain from a seed chunk; :func:`next_hops` proposes the hops that
may follow (used for the second hop, and by :mod:`thresher.tasks.generate.extend`
for the third and fourth).
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from thresher.corpus.docrefs import code_mentions, definitions, link_mentions, resolve_doc
from thresher.corpus.document import Chunk
from thresher.errors import PatternRejectedError
from thresher.index.store import Store
from thresher.tasks.generate.docrefs import has_markup, reader_text, unwrap
from thresher.tasks.generate.text import (
    STOP,
    Mention,
    contains,
    entities,
    normalize,
    normalize_short,
    sentences,
)

__all__ = [
    "ExploreConfig",
    "Sentence",
    "is_fact",
    "title_keys",
    "Hop",
    "CorpusView",
    "read_corpus",
    "first_hops",
    "next_hops",
    "answer_candidates",
    "is_ambiguous",
]

#: matches any chunk (``grep`` pattern used to read the whole corpus)
ALL_CHUNKS = r"[\s\S]"


@dataclass(frozen=True, slots=True)
class ExploreConfig:
    """Knobs of exploration.

    Attributes:
        min_df, max_df: a bridge occurs in this many documents (inclusive).
        max_title_df: the most documents a bridge may occur in when the next
            hop's document is titled with it.
        max_anchor_df: the most documents the question's anchor may occur in.
        max_answer_df_share: the most documents (share of the corpus, at least
            20 documents) an answer may occur in.
        branch: candidates tried per step of the chain search.
        numbers_as_answers: allow years and numbers as answers.
    """

    min_df: int = 2
    max_df: int = 5
    max_title_df: int = 25
    max_anchor_df: int = 8
    max_answer_df_share: float = 0.05
    branch: int = 6
    numbers_as_answers: bool = True


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a chunk, with its candidate entities."""

    chunk_id: str
    index: int
    text: str
    norm: str
    mentions: tuple[Mention, ...]
    fact: bool = True
    keys: frozenset[str] = frozenset()


#: a fact sentence has MIN_WORDS..MAX_WORDS words, at least MIN_LOWER of them lowercase
#: words (a statement, not a header or a list of names), and names at most MAX_NAMES entities
MIN_WORDS, MAX_WORDS, MIN_LOWER, MAX_NAMES = 4, 60, 3, 4
_FIELD_LABEL = re.compile(r"^[A-Z][\w ]{0,24}:\s")


def is_fact(text: str, mentions: Sequence[Mention]) -> bool:
    """Whether a sentence reads as a statement (not a header, address list or table row)."""
    words = text.split()
    lower = sum(1 for w in words if w[:1].islower() and w.strip(".,;:!?").isalpha())
    names = sum(1 for m in mentions if not m.is_number)
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and lower >= MIN_LOWER
        and names <= MAX_NAMES
        and not any(ch in text for ch in "@<>|{};")
        and _FIELD_LABEL.match(text) is None
    )


@dataclass(frozen=True, slots=True)
class Hop:
    """One evidence hop of a chain under construction.

    ``link`` is the entity that led here from the previous hop ('' on the
    first hop); ``out`` the entity this hop's sentence passes on (the next
    bridge, or the answer on the last hop).
    """

    chunk_id: str
    doc_id: str
    sentence: str
    link: str
    out: str
    out_kind: str
    titled: bool = False


@dataclass
class CorpusView:
    """Every chunk of a corpus in memory, with sentences, entities and lookups."""

    chunks: dict[str, Chunk]
    sentences: dict[str, list[Sentence]]
    norm_text: dict[str, str]
    doc_chunks: dict[str, list[str]]
    title_norm: dict[str, str]
    mention_df: dict[str, int]
    titled_docs: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: (linking document, normalized link target) -> the document it resolves to
    links: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    #: names and labels the documents define (directives, labels): > 0 on documentation
    definitions: int = 0
    postings: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _containing: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _df: dict[str, int] = field(default_factory=dict, repr=False)
    #: candidate hops the chain search refused, by reason (``ambiguous_hop``)
    refused: Counter[str] = field(default_factory=Counter, repr=False)

    @classmethod
    def build(cls, chunks: Iterable[Chunk]) -> CorpusView:
        """Split and index ``chunks`` (pure)."""
        by_id: dict[str, Chunk] = {}
        sents: dict[str, list[Sentence]] = {}
        norm_text: dict[str, str] = {}
        doc_chunks: dict[str, list[str]] = defaultdict(list)
        titles: dict[str, str] = {}
        docs_of: dict[str, set[str]] = defaultdict(set)
        postings: dict[str, list[str]] = defaultdict(list)
        titled_docs: dict[str, list[str]] = defaultdict(list)
        link_refs: list[tuple[str, Mention]] = []
        n_defined = 0
        for chunk in chunks:
            by_id[chunk.chunk_id] = chunk
            doc_chunks[chunk.doc_id].append(chunk.chunk_id)
            if chunk.doc_id not in titles:
                titles[chunk.doc_id] = normalize(chunk.title)
                for key in title_keys(chunk.title):
                    titled_docs[key].append(chunk.doc_id)
            norm_text[chunk.chunk_id] = normalize(chunk.text)
            for token in set(norm_text[chunk.chunk_id].split()):
                postings[token].append(chunk.chunk_id)
            names, labels = definitions(chunk.text)
            n_defined += len(names) + len(labels)
            for key in {normalize_short(x) for x in (*names, *labels)} - {""}:
                if chunk.doc_id not in titled_docs[key]:
                    titled_docs[key].append(chunk.doc_id)
            rows = []
            notes = is_release_notes(chunk.doc_id)
            marked = has_markup(chunk.text)
            body = unwrap(chunk.text) if marked else chunk.text
            for i, text in enumerate(sentences(body)):
                named = entities(text)
                refs = doc_mentions(text, named)
                mentions = tuple(sorted((*named, *refs), key=lambda m: m.start))
                for m in refs:
                    if m.kind in ("doc", "ref"):
                        link_refs.append((chunk.doc_id, m))
                fact = (
                    not notes
                    and is_fact(reader_text(text), named)
                    and (not marked or is_prose(text))
                )
                keys = frozenset(normalize_short(m.text) for m in mentions)
                rows.append(
                    Sentence(chunk.chunk_id, i, text, normalize(text), mentions, fact, keys)
                )
                for m in mentions:
                    docs_of[normalize_short(m.text)].add(chunk.doc_id)
            sents[chunk.chunk_id] = rows
        links = _resolve_links(link_refs, titled_docs, doc_chunks)
        return cls(
            links=links,
            definitions=n_defined,
            chunks=by_id,
            sentences=sents,
            norm_text=norm_text,
            doc_chunks=dict(doc_chunks),
            title_norm=titles,
            mention_df={k: len(v) for k, v in docs_of.items()},
            titled_docs={k: tuple(v) for k, v in titled_docs.items()},
            postings={k: tuple(v) for k, v in postings.items()},
        )

    @property
    def is_documentation(self) -> bool:
        """Whether the corpus reads as documentation: it defines names or links its pages."""
        return self.definitions > 0 or bool(self.links)

    @property
    def n_docs(self) -> int:
        return len(self.doc_chunks)

    def sentence_counts(self) -> dict[str, int]:
        """Sentences read, and how many are facts (usable as hops)."""
        rows = [s for chunk in self.sentences.values() for s in chunk]
        return {"sentences": len(rows), "fact_sentences": sum(1 for s in rows if s.fact)}

    def containing(self, phrase: str) -> tuple[str, ...]:
        """Chunk ids whose normalized text contains ``phrase`` on word bounds (memoized)."""
        key = normalize_short(phrase)
        hit = self._containing.get(key)
        if hit is None:
            tokens = key.split()
            if not tokens:
                hit = ()
            else:
                rarest = min(tokens, key=lambda t: len(self.postings.get(t, ())))
                padded = f" {key} "
                hit = tuple(
                    c for c in self.postings.get(rarest, ()) if padded in f" {self.norm_text[c]} "
                )
            self._containing[key] = hit
        return hit

    def doc_freq(self, phrase: str) -> int:
        """Documents whose text contains ``phrase`` (exact, on word bounds; memoized)."""
        n = self._df.get(phrase)
        if n is None:
            n = self._df[phrase] = len({self.chunks[c].doc_id for c in self.containing(phrase)})
        return n

    def link_target(self, doc_id: str, target: str) -> str | None:
        """The document a link ``target`` written in ``doc_id`` resolves to (None: unresolved)."""
        return self.links.get((doc_id, normalize_short(target)))

    def titled(self, doc_id: str, phrase: str) -> bool:
        """Whether ``doc_id`` is titled with ``phrase`` (see :func:`title_keys`)."""
        return doc_id in self.titled_docs.get(normalize_short(phrase), ())


_RELEASE_NOTES = re.compile(
    r"(?:^|/)(?:changes|changelog|history|news|release[-_ ]?notes?|whatsnew|whats[-_]new)"
    r"(?:[-_.][^/]*)?(?:/|$)",
    re.IGNORECASE,
)


def is_release_notes(doc_id: str) -> bool:
    """Whether a document is release notes (a changelog, history or news file or folder):
    its lines record changes, not how things are, so none of them is a fact."""
    return _RELEASE_NOTES.search(doc_id) is not None


_PROSE = re.compile(r"^(?:[A-Z]|:[a-z:]+:`|``?\w|\[)[^\n]*[.!?]$")


def is_prose(sentence: str) -> bool:
    """Whether a sentence of a page written in markup reads as a whole sentence: it opens
    with a capital (or a role, literal or link) and closes with ``.``, ``!`` or ``?``
    (not a wrapped fragment, a code line or a list of names)."""
    return _PROSE.match(sentence.strip()) is not None


#: mention kinds that link to a document rather than name an entity
LINK_KINDS = frozenset({"doc", "ref"})


def doc_mentions(text: str, named: Sequence[Mention]) -> list[Mention]:
    """The documentation names and links of a sentence (:mod:`~thresher.corpus.docrefs`)
    as mentions (kinds ``ident``, ``doc``, ``ref``), minus names ``named`` already gives."""
    have = {normalize_short(m.text) for m in named}
    out: list[Mention] = []
    for d in (*code_mentions(text), *link_mentions(text)):
        key = normalize_short(d.text)
        if key and key not in have and key not in STOP:
            have.add(key)
            out.append(Mention(d.text, d.kind, d.start))
    return out


def _resolve_links(
    refs: Sequence[tuple[str, Mention]],
    titled_docs: dict[str, list[str]],
    doc_chunks: dict[str, list[str]],
) -> dict[tuple[str, str], str]:
    """Where each link resolves: a ``ref`` to the one document carrying its label, a ``doc``
    link by path (:func:`~thresher.corpus.docrefs.resolve_doc`)."""
    stems: dict[str, list[str]] = defaultdict(list)
    for doc in doc_chunks:
        stems[re.sub(r"\.(rst|md|txt|markdown)$", "", doc, flags=re.IGNORECASE)].append(doc)
    out: dict[tuple[str, str], str] = {}
    for doc, m in refs:
        key = normalize_short(m.text)
        if m.kind == "ref":
            targets = titled_docs.get(key, [])
            target = targets[0] if len(targets) == 1 and targets[0] != doc else None
        else:
            target = resolve_doc(m.text, doc, stems)
        if target is not None:
            out[(doc, key)] = target
    return out


_TITLE_SEPARATORS = re.compile(r"\s+[-|–—:]\s+")


def title_keys(title: str) -> set[str]:
    """What a document is titled with (normalized): the whole title, its part
    before a `` - `` / `` | `` / `` : `` separator, and the entities in it."""
    keys = {normalize_short(title), normalize_short(_TITLE_SEPARATORS.split(title)[0])}
    keys.update(normalize_short(m.text) for m in entities(title) if not m.is_number)
    keys.discard("")
    return keys


def read_corpus(store: Store, max_chunks: int = 200_000) -> CorpusView:
    """Read up to ``max_chunks`` chunks of ``store`` (corpus order) into a :class:`CorpusView`.

    Uses only the ``Store`` protocol: one ``grep`` that matches every chunk.

    Raises:
        PatternRejectedError: the store's grep timed out; the message says to
            open the store with a larger ``grep.timeout_s``.
    """
    try:
        hits = store.grep(ALL_CHUNKS, limit=max_chunks).hits
    except PatternRejectedError as exc:
        raise PatternRejectedError(
            f"reading the corpus (one grep over every chunk) failed: {exc}; open the store "
            "with a larger grep timeout, e.g. Config().override({'grep.timeout_s': 300})"
        ) from exc
    return CorpusView.build(h.chunk for h in hits)


# -- chain steps ---------------------------------------------------------------------------


def _open_pattern(sentence: str, open_: str) -> re.Pattern[str] | None:
    """``sentence`` as a regex with ``open_`` (its first occurrence) left open."""
    i = sentence.lower().find(open_.lower())
    if i < 0:
        return None
    head, tail = sentence[:i], sentence[i + len(open_) :]
    return re.compile(re.escape(head) + r"(.+?)" + re.escape(tail) + r"\Z", re.IGNORECASE)


def is_ambiguous(view: CorpusView, incoming: str, hop: Hop) -> bool:
    """Whether ``hop``'s fact, its outgoing entity left open, fits another sentence
    of a chunk naming ``incoming`` with another outcome (a river through several
    towns, an inventor of several patents): then the hop does not single out
    ``hop.out``."""
    pattern = _open_pattern(hop.sentence, hop.out)
    if pattern is None or not incoming:
        return False
    own = normalize_short(hop.out)
    for cid in view.containing(incoming):
        for sent in view.sentences.get(cid, ()):
            if cid == hop.chunk_id and sent.text == hop.sentence:
                continue
            m = pattern.match(sent.text)
            if m is not None and normalize_short(m.group(1)) != own:
                return True
    return False


def _usable_bridge(view: CorpusView, m: Mention, cfg: ExploreConfig, doc_id: str = "") -> bool:
    if m.kind in LINK_KINDS:
        return view.link_target(doc_id, m.text) is not None
    if m.is_number or m.text.lower() in STOP:
        return False
    if view.mention_df.get(normalize_short(m.text), 0) > cfg.max_title_df:
        return False
    df = view.doc_freq(m.text)
    return cfg.min_df <= df <= cfg.max_title_df


def _rare(view: CorpusView, phrase: str, cfg: ExploreConfig) -> bool:
    return cfg.min_df <= view.doc_freq(phrase) <= cfg.max_df


def first_hops(
    view: CorpusView, chunk_id: str, cfg: ExploreConfig, rng: random.Random
) -> list[tuple[str, Hop]]:
    """Candidate first hops from a seed chunk: ``(anchor, hop)`` pairs, shuffled.

    The hop's sentence names the anchor (an entity found in at most
    ``max_anchor_df`` documents, which the question will name) and a bridge
    ``out`` (:func:`_usable_bridge`) other than the anchor.
    """
    chunk = view.chunks[chunk_id]
    found: list[tuple[str, Hop]] = []
    for sent in view.sentences.get(chunk_id, ()):
        if not sent.fact:
            continue
        names = [m for m in sent.mentions if not m.is_number]
        if len(names) < 2:
            continue
        for anchor in names:
            if view.doc_freq(anchor.text) > cfg.max_anchor_df:
                continue
            a_norm = normalize_short(anchor.text)
            for bridge in names:
                b_norm = normalize_short(bridge.text)
                if b_norm == a_norm or b_norm in a_norm or a_norm in b_norm:
                    continue
                if not _usable_bridge(view, bridge, cfg, chunk.doc_id):
                    continue
                hop = Hop(chunk_id, chunk.doc_id, sent.text, "", bridge.text, bridge.kind)
                if is_ambiguous(view, anchor.text, hop):
                    view.refused["ambiguous_hop"] += 1
                else:
                    found.append((anchor.text, hop))
    rng.shuffle(found)
    return found


def answer_candidates(
    view: CorpusView, sent: Sentence, exclude: Sequence[str], cfg: ExploreConfig
) -> list[Mention]:
    """Mentions of ``sent`` that may be an answer: not overlapping ``exclude``, not too common."""
    cap = max(20, int(cfg.max_answer_df_share * view.n_docs))
    out = []
    excluded = [normalize(e) for e in exclude if e]
    for m in sent.mentions:
        if m.is_number and not cfg.numbers_as_answers or m.kind in LINK_KINDS:
            continue
        key = normalize_short(m.text)
        if not key or any(key in e or e in key for e in excluded):
            continue
        if m.text.lower() in STOP or view.mention_df.get(key, 0) > cap:
            continue
        out.append(m)
    return out


def next_hops(
    view: CorpusView,
    chain: Sequence[Hop],
    anchor: str,
    *,
    final: bool,
    cfg: ExploreConfig,
    rng: random.Random,
) -> list[Hop]:
    """Hops that may follow ``chain`` through its last hop's ``out`` entity, best first.

    A candidate chunk is in a document not used yet, contains neither the
    anchor nor an earlier bridge, and has a sentence that names the link (or
    its document is titled with the link) and another entity ``out``: the
    answer when ``final`` (:func:`answer_candidates`, absent from every
    earlier chunk), else a rare bridge that itself occurs in an unused document.
    Chunks of documents titled with the link come first; ties are shuffled.
    """
    link = chain[-1].out
    used_docs = {h.doc_id for h in chain}
    earlier = [anchor, *(h.link for h in chain if h.link)]
    earlier_chunks = [h.chunk_id for h in chain]
    titled_ok = view.doc_freq(link) <= cfg.max_title_df
    rare_ok = _rare(view, link, cfg)
    candidates: list[tuple[int, float, Hop]] = []
    for cid in view.containing(link) if rare_ok else ():
        _collect(
            view, cid, link, False, used_docs, earlier, earlier_chunks, final, cfg, candidates, rng
        )
    linked = view.link_target(chain[-1].doc_id, link)
    titled_docs = view.titled_docs.get(normalize_short(link), ()) if titled_ok else ()
    if linked is not None:
        titled_docs = (linked,)
    if titled_docs:
        for doc in titled_docs:
            if doc in used_docs:
                continue
            for cid in view.doc_chunks[doc]:
                _collect(
                    view, cid, link, True, used_docs, earlier, earlier_chunks, final, cfg,
                    candidates, rng,
                )  # fmt: skip
    candidates.sort(key=lambda c: (c[0], c[1]))
    seen: set[tuple[str, str]] = set()
    out = []
    for _, _, hop in candidates:
        key = (hop.chunk_id, hop.out)
        if key not in seen:
            seen.add(key)
            out.append(hop)
    return out


def _collect(
    view: CorpusView,
    cid: str,
    link: str,
    titled: bool,
    used_docs: set[str],
    earlier: list[str],
    earlier_chunks: list[str],
    final: bool,
    cfg: ExploreConfig,
    into: list[tuple[int, float, Hop]],
    rng: random.Random,
) -> None:
    chunk = view.chunks[cid]
    if chunk.doc_id in used_docs:
        return
    text = view.norm_text[cid]
    if any(e and contains(text, e) for e in earlier):
        return
    for sent in view.sentences.get(cid, ()):
        if not sent.fact:
            continue
        names_link = normalize_short(link) in sent.keys
        if not names_link and not titled:
            continue
        exclude = [link, *earlier]
        if final:
            options = [
                m
                for m in answer_candidates(view, sent, exclude, cfg)
                if not any(contains(view.norm_text[c], m.text) for c in earlier_chunks)
            ]
        else:
            options = [
                m
                for m in sent.mentions
                if m.kind in LINK_KINDS
                and view.link_target(chunk.doc_id, m.text) not in {None, *used_docs, chunk.doc_id}
                or not m.is_number
                and m.kind not in LINK_KINDS
                and _rare(view, m.text, cfg)
                and not any(
                    normalize_short(m.text) in normalize(e) or normalize_short(e) in normalize_short(m.text)
                    for e in exclude
                    if e
                )
                and not any(contains(view.norm_text[c], m.text) for c in earlier_chunks)
                and any(view.chunks[c].doc_id not in used_docs | {chunk.doc_id}
                        for c in view.containing(m.text))
            ]  # fmt: skip
        for m in options:
            rank = (0 if titled else 1) + (0 if names_link else 2) + (1 if m.is_number else 0)
            hop = Hop(cid, chunk.doc_id, sent.text, link, m.text, m.kind, titled)
            if is_ambiguous(view, link, hop):
                view.refused["ambiguous_hop"] += 1
            else:
                into.append((rank, rng.random(), hop))
