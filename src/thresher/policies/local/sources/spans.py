"""Span sources: the phrases of a sentence that may name the next document (pure).

:class:`CapitalSpans` is the policy's original source (capitalized entity spans
and quoted names: :func:`~thresher.policies.local.entities.entity_spans`). It
finds nothing in lowercase text, and in technical writing the names that lead
on are often lowercase: a file (``/etc/shells``, ``login.defs``), a module or a
function (``pam_deny``, ``os.path.join``), a program's page
(``deluser.conf(5)``). :class:`IdentifierSpans` finds those by their *shape*,
whatever their case: a token whose letters and digits are joined by ``_``,
``.`` or ``/`` (a path, a dotted or snake_case name), not a number, a version,
an abbreviation ("e.g.") or an address (an e-mail, a URL), nor a web page's build
file (``404.html``, ``extra.css``, ``logo.png``). A call's or
reference's parentheses are cut off (``deluser.conf(5)`` is ``deluser.conf``).
:class:`NamedSpans` finds the names of known documents (:mod:`.names`), in any
case. :class:`SpanUnion` reads several sources in turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from thresher.policies.local.entities import entity_spans
from thresher.policies.local.sources.base import SpanSource
from thresher.policies.local.text import contains_phrase

__all__ = ["CapitalSpans", "IdentifierSpans", "NamedSpans", "SpanUnion", "identifier_spans"]

#: letters and digits joined by ``_ . / -``, optionally opening with ``/`` or ``~/``
_SHAPE = re.compile(r"(?:~?/)?[^\W_]+(?:[-_./][^\W_]+)*/?")
#: the joints that make a token an identifier (a hyphen alone joins ordinary words)
_JOINT = re.compile(r"[_./]")
#: punctuation around a token in prose
_EDGES = "\"'`“”‘’()[]{}<>,;:!?*"
#: an address, not a name of something in the corpus
_ADDRESS = ("@", "://")
#: a part of a name: a run of letters
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
