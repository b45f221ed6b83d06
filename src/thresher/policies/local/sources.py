"""Where bridge candidates come from: sources behind two declared protocols (pure).

A bridge is a phrase a retained chunk states that leads to the next document.
The planner asks two kinds of source for candidates:

- a :class:`SpanSource` finds candidate phrases in one sentence.
  :class:`CapitalSpans` is the policy's original source (capitalized entity spans
  and quoted names: :func:`~thresher.policies.local.entities.entity_spans`). It
  finds nothing in lowercase text, and in technical writing the names that lead
  on are often lowercase: a file (``/etc/shells``, ``login.defs``), a module or a
  function (``pam_deny``, ``os.path.join``), a program's page
  (``deluser.conf(5)``). :class:`IdentifierSpans` finds those by their *shape*,
  whatever their case: a token whose letters and digits are joined by ``_``,
  ``.`` or ``/`` (a path, a dotted or snake_case name), not a number, a version,
  an abbreviation ("e.g.") or an address (an e-mail, a URL), nor a web page's
  build file (``404.html``, ``extra.css``, ``logo.png``). A call's or reference's
  parentheses are cut off (``deluser.conf(5)`` is ``deluser.conf``).
  :class:`NamedSpans` finds the names of known documents, in any case.
  :class:`SpanUnion` reads several sources in turn.
- a :class:`NameSource` names the documents the episode has seen by what other
  documents call them. A document's title is one name for it (a text stating
  another document's title links to it), but a file's title is often not what
  other files call it: a manual page titled ``DELUSER.CONF(5) File Formats
  Manual DELUSER.CONF(5)`` is cited as ``deluser.conf(5)``, a README titled
  "Hello!" by its package's name. Files are named after their subject, so a
  document read from a file is also known by its file name
  (:func:`document_names`): the name without its extension and without trailing
  number parts (a manual section or a version: ``deluser.conf.5.txt`` is
  ``deluser.conf``), or, for a file called as every package's files are
  (``README``, ``copyright``, ``NEWS``, ...:
  :data:`thresher.corpus.filetypes.DOC_NAMES`), its folder's name
  (``doc/passwd/copyright`` is ``passwd``). :class:`DocumentNames` gives both.
  Names are matched in any case, on word boundaries
  (:func:`~thresher.policies.local.bridges.linked_titles`).

Both are scored by :func:`~thresher.policies.local.bridges.bridge_queries` as
every candidate is (the sentence's question words, relation cues, ...).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from thresher.corpus.filetypes import DOC_NAMES
from thresher.policies.local.constants import DEFAULT_CONSTANTS
from thresher.policies.local.entities import entity_spans
from thresher.policies.local.text import contains_phrase

__all__ = [
    "SpanSource",
    "NameSource",
    "CapitalSpans",
    "IdentifierSpans",
    "NamedSpans",
    "SpanUnion",
    "identifier_spans",
    "DocumentNames",
    "document_names",
]


@runtime_checkable
class SpanSource(Protocol):
    """Finds the phrases of one sentence that may name the next document."""

    def spans(self, sentence: str, *, cased: bool | None = None) -> list[str]:
        """Candidate phrases of ``sentence``, in text order, without repeats.

        ``cased``: whether the document the sentence comes from has capitals (a
        sentence alone cannot tell); ``None`` reads the sentence itself.
        """
        ...


@runtime_checkable
class NameSource(Protocol):
    """Names the documents an episode has seen by what other texts call them."""

    def names(
        self, titles: Mapping[str, str], words: Callable[[], Mapping[str, Set[str]]] | None = None
    ) -> dict[str, str]:
        """``name -> doc id`` for the documents of ``titles`` (``title -> doc id``, every
        document seen so far): their titles and any other name they go by. ``words``:
        gives the content words of each document seen (doc id -> words), the sample a
        source may measure how common a word is in (called only when needed)."""
        ...


#: letters and digits joined by ``_ . / -``, optionally opening with ``/`` or ``~/``
_SHAPE = re.compile(r"(?:~?/)?[^\W_]+(?:[-_./][^\W_]+)*/?")
#: the joints that make a token an identifier (a hyphen alone joins ordinary words)
_JOINT = re.compile(r"[_./]")
#: punctuation around a token in prose
_EDGES = "\"'`“”‘’()[]{}<>,;:!?*"
#: an address, not a name of something in the corpus
_ADDRESS = ("@", "://")
#: a part of a name: a run of letters (a name needs one)
_LETTERS = re.compile(r"[^\W\d_]{2,}")
#: the files of a web page's build (templates, styles, scripts, images, fonts): a name
#: read in a page's source, not a document's (one the corpus holds is a known name:
#: :class:`NamedSpans`)
_ASSETS = (
    ".html", ".htm", ".css", ".scss", ".sass", ".less", ".js", ".mjs", ".map", ".png",
    ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".woff", ".woff2", ".ttf", ".eot",
)  # fmt: skip


def identifier_spans(sentence: str) -> list[str]:
    """The identifier-shaped tokens of ``sentence`` (see the module docstring), in order."""
    out: list[str] = []
    for raw in sentence.split():
        if any(a in raw for a in _ADDRESS):
            continue
        token = raw.split("(", 1)[0].strip(_EDGES).rstrip(".")
        if not _SHAPE.fullmatch(token) or not _JOINT.search(token.strip("/")):
            continue
        if not _LETTERS.search(token):
            continue  # a number, a version ("3.2.1", "v1.2") or an abbreviation ("e.g")
        if token.lower().endswith(_ASSETS):
            continue  # "404.html", "extra.css", "logo.png"
        if token not in out:
            out.append(token)
    return out


@dataclass(frozen=True, slots=True)
class CapitalSpans:
    """Capitalized entity spans and quoted names (the policy's original source)."""

    def spans(self, sentence: str, *, cased: bool | None = None) -> list[str]:
        return entity_spans(sentence, cased=cased)


@dataclass(frozen=True, slots=True)
class IdentifierSpans:
    """Identifier-shaped tokens, whatever their case (:func:`identifier_spans`)."""

    def spans(self, sentence: str, *, cased: bool | None = None) -> list[str]:
        return identifier_spans(sentence)


@dataclass(frozen=True, slots=True)
class NamedSpans:
    """The given ``names`` (of known documents) a sentence holds, in any case, on word
    boundaries; each as given."""

    names: tuple[str, ...]

    def spans(self, sentence: str, *, cased: bool | None = None) -> list[str]:
        lower = sentence.lower()
        return [n for n in self.names if n.lower() in lower and contains_phrase(lower, n)]


@dataclass(frozen=True, slots=True)
class SpanUnion:
    """The spans of several sources, in source order, each phrase once (any case)."""

    sources: Sequence[SpanSource]

    def spans(self, sentence: str, *, cased: bool | None = None) -> list[str]:
        out: dict[str, str] = {}
        for source in self.sources:
            for span in source.spans(sentence, cased=cased):
                out.setdefault(span.lower(), span)
        return list(out.values())


#: a part of a file name that is a number: a manual section, a version
_NUMBER = re.compile(r"\d+[a-z]?")


def document_names(doc_id: str) -> list[str]:
    """The names a document read from a file goes by besides its title (see the module
    docstring); none for an id that is not a file path (a dataset paragraph's hash)."""
    if "." not in doc_id and "/" not in doc_id and "\\" not in doc_id:
        return []  # a bare id, read first: most ids of a dataset are (every hop reads all)
    parts = doc_id.replace("\\", "/").split("/")
    base = parts[-1]
    pieces = base.split(".")
    if len(pieces) > 1:
        pieces = pieces[:-1]  # the extension
    while len(pieces) > 1 and _NUMBER.fullmatch(pieces[-1]):
        pieces = pieces[:-1]
    name = ".".join(pieces)
    if name.split(".", 1)[0].lower() in DOC_NAMES:
        # every package has one: the folder names what it is about
        folders = parts[:-1]
        name = folders[-1] if folders else ""
    if not name or not _LETTERS.search(name) or (len(parts) == 1 and "." not in base):
        return []  # a bare id without a path or an extension is no file name
    return [name]


@dataclass(frozen=True, slots=True)
class DocumentNames:
    """Titles and file names of the documents seen (a :class:`NameSource`).

    A file named by one plain word may be named after a common word (``group``,
    ``issue``, ``login``): matched in any case, such a word would link every text
    that uses it. So a one-word file name is kept only when at most
    ``common_share`` of the documents seen hold it (their ``words``: an estimate
    of its document frequency in the corpus from the episode's sample; the
    constant ``name_common_share``); a name with a joint (``deluser.conf``,
    ``base-passwd``) or several words is kept.
    """

    common_share: float = DEFAULT_CONSTANTS.name_common_share

    def names(
        self, titles: Mapping[str, str], words: Callable[[], Mapping[str, Set[str]]] | None = None
    ) -> dict[str, str]:
        out = dict(titles)
        found = [
            (name, doc) for doc in dict.fromkeys(titles.values()) for name in document_names(doc)
        ]
        plain = {name.lower() for name, _ in found if name.isalnum()}
        seen = words() if words is not None and plain else {}
        held: Counter[str] = Counter()
        if seen:
            for w in seen.values():  # one set intersection per document seen
                held.update(plain & w)
        for name, doc in found:
            if held[name.lower()] > self.common_share * len(seen):
                continue  # a common word, not a name
            out.setdefault(name, doc)
        return out
