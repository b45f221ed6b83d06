"""Where bridge candidates come from: sources behind declared protocols.

A bridge is a phrase a retained chunk states that leads to the next document.
The planner asks two kinds of source for candidates (:mod:`.base`):

- a :class:`~.base.SpanSource` finds candidate phrases in one sentence: the
  capitalized entity spans of :func:`~thresher.policies.local.entities.entity_spans`
  (:class:`~.spans.CapitalSpans`) and, whatever their case, tokens shaped like
  identifiers: paths, dotted file names, snake_case and code names
  (:class:`~.spans.IdentifierSpans`: ``/etc/shells``, ``pam_deny``,
  ``login.defs``);
- a :class:`~.base.NameSource` names the documents the episode has seen by what
  other documents call them: their titles, and the names their files carry
  (:class:`~.names.DocumentNames`: ``man/deluser.conf.5.txt`` is
  ``deluser.conf``; ``doc/passwd/copyright`` is ``passwd``'s copyright file).
  A text naming one of those, in any case, links to it.

Both are scored by :func:`~thresher.policies.local.bridges.bridge_queries` as
every candidate is (the sentence's question words, relation cues, ...).
"""

from thresher.policies.local.sources.base import NameSource, SpanSource
from thresher.policies.local.sources.names import DocumentNames, document_names
from thresher.policies.local.sources.spans import (
    CapitalSpans,
    IdentifierSpans,
    NamedSpans,
    SpanUnion,
    identifier_spans,
)

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
