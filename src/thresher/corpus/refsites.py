"""Where a documentation cross-reference is defined: a grep pattern of its definition site (pure).

A cross-reference (:func:`thresher.corpus.docrefs.cross_references`) names a
definition elsewhere in the documentation, and the markup says how that
definition is written, whatever the project:

- a label (``:ref:`loop-controls```) is defined by a reStructuredText target
  ``.. _loop-controls:`` or a MyST one ``(loop-controls)=``, on a line of its own;
  labels are matched ignoring case, as Sphinx does;
- an object's name (``:func:`pkg.load```, ``:exc:`~pkg.errors.BadRequest```,
  ``:setting:`CSRF_FAILURE_VIEW```) is defined by a directive naming it,
  ``.. [domain:][auto]kind:: [qualified.]Name``, or the same directive in MyST's
  fenced form (````` ```{kind} Name `````). Any directive kind is accepted: a role
  and the directive defining its targets need not share a name (``:func:`` may
  point to a ``.. decorator::``, a project's ``:setting:`` role to its own
  ``.. setting::`` directive). The name is matched as its last dotted part,
  bare or under a qualifier ending as the reference's own does
  (``.. autoexception:: BadRequest`` under ``.. module:: pkg.errors``, or
  ``.. class:: pkg.errors.BadRequest``; not ``.. class:: other.BadRequest``),
  followed by the end of the name (a space, a signature's ``(``, the line's end).
  A name shorter than :data:`MIN_NAME_CHARS` is not followed.

:func:`definition_pattern` writes that as one regular expression of the syntax
both engines of ``grep_corpus`` read alike (no lookaround, escapes of
punctuation only), at most :data:`MAX_PATTERN_CHARS` long; :func:`site_name` is
the part of the reference its definition site states (what a chunk found there
holds).
"""

from __future__ import annotations

import re

from thresher.corpus.docrefs import DocMention

__all__ = ["MAX_PATTERN_CHARS", "MIN_NAME_CHARS", "definition_pattern", "site_name"]

#: the longest pattern written (``grep_corpus`` refuses longer ones: 256 by default)
MAX_PATTERN_CHARS = 200

#: the shortest object name followed: a shorter one (``get``, ``url``) is defined in many
#: places and its trigram alone narrows a grep to many chunks
MIN_NAME_CHARS = 4

#: the start of a reStructuredText directive line, and of MyST's fenced directive
_DIRECTIVE = r"^[ \t]*(?:\.\.[ \t]+[\w:-]+::|(?:`{3,}|:{3,})\{[\w:-]+\})[ \t]+"
#: the end of a defined name: a space, a signature, the line's end
_NAME_END = r"(?:[ \t(]|$)"


def _escape(text: str) -> str:
    """``text`` as a literal of the pattern: :func:`re.escape` escapes only punctuation
    and spaces, never a letter or ``<``/``>`` (escapes ``grep_corpus`` refuses)."""
    return re.escape(text)


def site_name(ref: DocMention) -> str:
    """What the definition site of ``ref`` states: a label as written, an object's last
    dotted part (``pkg.errors.BadRequest`` -> ``BadRequest``)."""
    if ref.kind == "ref":
        return ref.text.strip()
    return ref.text.removesuffix("()").rsplit(".", 1)[-1]


def definition_pattern(ref: DocMention) -> str | None:
    """A regular expression matching the line that defines ``ref`` (see the module
    docstring), or None when it cannot be written within :data:`MAX_PATTERN_CHARS`,
    an object's name is shorter than :data:`MIN_NAME_CHARS`, or the reference is not
    a cross-reference (kind ``ref`` or ``ident``)."""
    name = site_name(ref)
    if not name or "\n" in name:
        return None
    if ref.kind == "ref":
        label = _escape(name)
        # the label once, outside the alternation: grep finds its chunks by its trigrams
        pattern = rf"(?im)^[ \t]*(?:\.\.[ \t]+_|\(){label}(?::|\)=)[ \t]*$"
    elif ref.kind == "ident":
        if len(name) < MIN_NAME_CHARS:
            return None
        # a qualifier the directive states ends as the reference's own does (``.. method::
        # Flask.route`` or ``.. automethod:: route`` for ``Flask.route``, not ``App.route``)
        parts = ref.text.removesuffix("()").split(".")[:-1]
        qualifier = rf"(?:[\w.:-]+\.)?{_escape(parts[-1])}\." if parts else r"[\w.:-]+\."
        pattern = rf"(?m){_DIRECTIVE}(?:{qualifier})?{_escape(name)}{_NAME_END}"
    else:
        return None
    return pattern if len(pattern) <= MAX_PATTERN_CHARS else None
