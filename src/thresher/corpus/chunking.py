"""Cut a document into chunks of at most ``max_tokens`` tokens.

The text is split at paragraph boundaries (blank lines) where possible; a
paragraph too long for one chunk is split into sentences, a sentence too long
into words, and only a single word longer than the limit is hard-cut. The
pieces are then packed greedily, in order, into chunks. Every chunk is a
stripped slice of the document text: ``doc.text[chunk.start:chunk.end] ==
chunk.text``, so chunks together cover every non-whitespace character of the
document exactly once, in order.

Markdown and reStructuredText documents (:func:`thresher.corpus.sections.markup_of`)
are cut along their sections instead: a section that fits is one chunk; a larger
one is cut into its own text (packed as above, but with a code block kept whole
unless it alone exceeds the limit) and its subsections, each handled the same
way; a section under a quarter of the limit then merges with a whole
neighbouring section under the same parent when the two fit together (a
section's tiny heading and lead also with the start of its first subsection).
Such a chunk carries its heading path (the titles from the top-level section
down to the deepest one that holds the whole chunk, the document's own title
left out) in ``metadata["heading_path"]``; its text stays a slice of the
document.
Other documents keep the paragraph packing alone.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from thresher.corpus.document import Chunk, Document
from thresher.corpus.ids import chunk_id, content_hash
from thresher.corpus.sections import Section, markup_of, parse_sections
from thresher.errors import ConfigError
from thresher.tokens import TokenCounter

__all__ = ["chunk_document", "HEADING_PATH", "MIN_MAX_TOKENS", "MAX_CHUNK_CHARS"]

#: metadata key of a Markdown/RST chunk's heading path ("Configuration > Builtin Values")
HEADING_PATH = "heading_path"
#: a section of fewer than ``max_tokens // TINY_SHARE`` tokens merges with a neighbour
TINY_SHARE = 4

# One code point is at most 4 UTF-8 bytes, so at most 4 tokens of a byte-level BPE.
MIN_MAX_TOKENS = 4
# No span longer than this is ever counted or emitted: the BPE library refuses
# inputs of 1M characters or 200k tokens, and no chunk needs to be this long.
MAX_CHUNK_CHARS = 40_000

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
# Whitespace after sentence-final punctuation (optionally one closing quote or bracket,
# which stays with its sentence), or a single newline.
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?。！？])|(?<=[.!?。！？][\"'”’)\]]))\s+|\n")
_WORD = re.compile(r"\S+")
_INLINE_MARKS = re.compile(r"[`*]+")
_NON_SPACE = re.compile(r"\S")

Span = tuple[int, int]


def _strip_span(text: str, start: int, end: int) -> Span | None:
    """``(start, end)`` narrowed to exclude leading/trailing whitespace; None if blank."""
    first = _NON_SPACE.search(text, start, end)
    if first is None:
        return None
    s = first.start()
    e = end
    while e > s and text[e - 1].isspace():
        e -= 1
    return (s, e)


def _split(text: str, start: int, end: int, sep: re.Pattern[str]) -> list[Span]:
    """Stripped, non-blank spans of ``text[start:end]`` between matches of ``sep``."""
    spans: list[Span] = []
    pos = start
    for m in sep.finditer(text, start, end):
        span = _strip_span(text, pos, m.start())
        if span is not None:
            spans.append(span)
        pos = m.end()
    span = _strip_span(text, pos, end)
    if span is not None:
        spans.append(span)
    return spans


def _hard_cut(
    text: str, start: int, end: int, max_tokens: int, counter: TokenCounter
) -> list[Span]:
    """Cut one word ``text[start:end]`` into consecutive spans of at most ``max_tokens``.

    Each cut is the longest prefix that fits, found by galloping then bisecting,
    so the cost stays proportional to the cut, not to the rest of the word.
    """
    spans: list[Span] = []
    pos = start
    while pos < end:
        lo = pos + 1  # one code point always fits (max_tokens >= MIN_MAX_TOKENS)
        width = min(4 * max_tokens, MAX_CHUNK_CHARS)
        hi = min(end, pos + width)
        while True:
            fits = counter.count(text[pos:hi]) <= max_tokens
            if not fits or hi == end or width >= MAX_CHUNK_CHARS:
                break
            lo, width = hi, min(width * 2, MAX_CHUNK_CHARS)
            hi = min(end, pos + width)
        if fits:
            lo = hi
        else:  # text[pos:lo] fits, text[pos:hi] does not
            hi -= 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if counter.count(text[pos:mid]) <= max_tokens:
                    lo = mid
                else:
                    hi = mid - 1
        spans.append((pos, lo))
        pos = lo
    return spans


def _pieces(
    text: str, max_tokens: int, counter: TokenCounter, blocks: list[Span] | None = None
) -> list[tuple[int, int, int]]:
    """Spans ``(start, end, tokens)`` each within ``max_tokens``, coarsest level first.

    ``blocks`` are the top-level spans to start from (default: the paragraphs).
    """
    out: list[tuple[int, int, int]] = []
    levels = (_SENTENCE_BREAK, _WORD)

    def visit(start: int, end: int, level: int) -> None:
        n = counter.count(text[start:end]) if end - start <= MAX_CHUNK_CHARS else max_tokens + 1
        if n <= max_tokens:
            out.append((start, end, n))
        elif level < len(levels):
            sep = levels[level]
            spans = (
                [(m.start(), m.end()) for m in sep.finditer(text, start, end)]
                if sep is _WORD
                else _split(text, start, end, sep)
            )
            for s, e in spans:
                visit(s, e, level + 1)
        else:
            for s, e in _hard_cut(text, start, end, max_tokens, counter):
                out.append((s, e, counter.count(text[s:e])))

    for s, e in _split(text, 0, len(text), _PARAGRAPH_BREAK) if blocks is None else blocks:
        visit(s, e, 0)
    return out


def _pack(
    text: str, pieces: list[tuple[int, int, int]], max_tokens: int, counter: TokenCounter
) -> list[Span]:
    """Greedily pack consecutive pieces into spans whose text has at most ``max_tokens``.

    Each piece is counted once; a group (never longer than ``MAX_CHUNK_CHARS``) is grown while the sum of piece counts plus
    one token per join stays within the limit, and the group's real count is then
    checked (dropping trailing pieces in the rare case BPE merges across a join).
    """
    spans: list[Span] = []
    i = 0
    while i < len(pieces):
        j = i + 1
        estimate = pieces[i][2]
        while (
            j < len(pieces)
            and estimate + 1 + pieces[j][2] <= max_tokens
            and pieces[j][1] - pieces[i][0] <= MAX_CHUNK_CHARS
        ):
            estimate += 1 + pieces[j][2]
            j += 1
        while j - i > 1 and counter.count(text[pieces[i][0] : pieces[j - 1][1]]) > max_tokens:
            j -= 1
        spans.append((pieces[i][0], pieces[j - 1][1]))
        i = j
    return spans


def chunk_document(doc: Document, max_tokens: int, counter: TokenCounter) -> list[Chunk]:
    """Cut ``doc`` into chunks of at most ``max_tokens`` tokens each.

    Args:
        doc: the (sanitized) document.
        max_tokens: the most tokens one chunk's text may have, counted by ``counter``.
        counter: the token counter (``thresher.tokens.get_counter()``).

    Returns:
        The chunks in document order (none for a blank document), each also at most
        ``MAX_CHUNK_CHARS`` characters long. Chunk ``i`` has id
        ``{doc_id}#{i}``, text ``doc.text[start:end]`` (stripped), its content hash,
        ``ingested_at=""`` and the document's title, source and metadata; a
        paged document's chunks (``doc.pages``) also carry ``page`` and
        ``page_end`` in their metadata: the 1-based first and last page their
        text spans (equal for a chunk within one page); a chunk holding part of a
        document's code blocks (``doc.code``) carries ``metadata["code"]``: a list of
        ``[start, end]`` offsets in its own text.

    Raises:
        ConfigError: ``max_tokens`` is below ``MIN_MAX_TOKENS`` (4), the least that
            always fits one character.
    """
    if max_tokens < MIN_MAX_TOKENS:
        raise ConfigError(
            f"chunking max_tokens is {max_tokens}; set it to at least {MIN_MAX_TOKENS}"
        )
    text = doc.text
    markup = markup_of(doc.source, text)
    if markup is None:
        spans = _pack(text, _pieces(text, max_tokens, counter), max_tokens, counter)
        paths: list[str] = [""] * len(spans)
    else:
        units = _SectionChunker(text, max_tokens, counter).visit(parse_sections(text, markup), ())
        spans = [(u.start, u.end) for u in units]
        paths = [_heading_path(u.path, doc.title) for u in units]
    return [
        Chunk(
            chunk_id=chunk_id(doc.doc_id, position),
            doc_id=doc.doc_id,
            position=position,
            title=doc.title,
            text=text[start:end],
            start=start,
            end=end,
            content_hash=content_hash(text[start:end]),
            source=doc.source,
            ingested_at="",
            metadata=_chunk_metadata(doc, start, end, path),
        )
        for position, ((start, end), path) in enumerate(zip(spans, paths, strict=True))
    ]


def _chunk_metadata(doc: Document, start: int, end: int, path: str) -> dict[str, Any]:
    """The document's metadata, with the pages ``text[start:end]`` spans when it has
    pages, the parts of its code blocks it holds (offsets in the chunk's text) and its
    heading path when it has one."""
    meta = dict(doc.metadata)
    code = [
        [max(a, start) - start, min(b, end) - start] for a, b in doc.code if a < end and b > start
    ]
    if code:
        meta["code"] = code
    if path:
        meta[HEADING_PATH] = path
    if doc.pages:
        meta["page"] = max(1, bisect_right(doc.pages, start))
        meta["page_end"] = max(meta["page"], bisect_right(doc.pages, end - 1))
    return meta


def _heading_path(path: tuple[str, ...], title: str) -> str:
    """``path`` joined with " > ", without inline-markup marks (backquotes,
    asterisks) and without a first title equal to the document's."""
    plain = [_INLINE_MARKS.sub("", t).strip() for t in path]
    if plain and plain[0].casefold() == _INLINE_MARKS.sub("", title).strip().casefold():
        plain = plain[1:]
    return " > ".join(t for t in plain if t)


@dataclass(frozen=True, slots=True)
class _Unit:
    """A chunk in the making: its span, token count and heading path.

    ``whole`` says it holds a whole section (or a section's whole own text) of
    the level being merged, not a fragment of a larger one; ``lead`` that it is
    a section's whole own text (its heading and what precedes its subsections).
    """

    start: int
    end: int
    tokens: int
    path: tuple[str, ...]
    whole: bool
    lead: bool = False


class _SectionChunker:
    """Cuts a section tree into units within ``max_tokens`` (see the module docs)."""

    def __init__(self, text: str, max_tokens: int, counter: TokenCounter) -> None:
        self.text = text
        self.max_tokens = max_tokens
        self.counter = counter
        self.tiny = max_tokens // TINY_SHARE

    def _fit(self, start: int, end: int) -> int | None:
        """The token count of ``text[start:end]`` when it fits in one chunk, else None."""
        if end - start > MAX_CHUNK_CHARS:
            return None
        n = self.counter.count(self.text[start:end])
        return n if n <= self.max_tokens else None

    def visit(self, section: Section, path: tuple[str, ...]) -> list[_Unit]:
        """The units of ``section`` (whose heading path is ``path``), in order."""
        span = section.span()
        if span is None:
            return []
        n = self._fit(*span)
        if n is not None:
            return [_Unit(span[0], span[1], n, path, True)]
        units: list[_Unit] = []
        if section.blocks:
            blocks = [(b.start, b.end) for b in section.blocks]
            packed = _pack(
                self.text, _pieces(self.text, self.max_tokens, self.counter, blocks),
                self.max_tokens, self.counter,
            )  # fmt: skip
            lead = len(packed) == 1
            for s, e in packed:
                units.append(_Unit(s, e, self.counter.count(self.text[s:e]), path, lead, lead))
        for child in section.children:
            child_path = (*path, child.title) if child.title else path
            units.extend(self.visit(child, child_path))
        merged = self._merge_tiny(units)
        # seen from the parent, the parts of a section cut up are fragments
        return [dataclasses.replace(u, whole=False, lead=False) for u in merged]

    def _merge_tiny(self, units: list[_Unit]) -> list[_Unit]:
        """Neighbours joined, left to right, where one is tiny and the two fit in one
        chunk: two whole sections, or a section's tiny lead with the first part of
        its first subsection. The joined unit's path is their common prefix."""
        out: list[_Unit] = []
        for unit in units:
            if out:
                prev = out[-1]
                tiny_prev = prev.whole and prev.tokens < self.tiny
                tiny = (tiny_prev or (unit.whole and unit.tokens < self.tiny)) and (
                    (prev.whole and unit.whole) or (prev.lead and tiny_prev)
                )
                n = self._fit(prev.start, unit.end) if tiny else None
                if n is not None:
                    out[-1] = _Unit(
                        prev.start, unit.end, n, _common_prefix(prev.path, unit.path),
                        prev.whole and unit.whole,
                    )  # fmt: skip
                    continue
            out.append(unit)
        return out


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
