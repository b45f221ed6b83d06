"""Documentation references: the names and links a documentation page uses, and what it defines.

Pure functions over raw page text (reStructuredText or Markdown as written), the
markup's own syntax and nothing fitted to one corpus. Task synthesis bridges two
pages with them the way a reader of documentation does, and the local policy
follows a page's cross-references to where they are defined
(:mod:`thresher.corpus.refsites`):

- :func:`code_mentions` finds the *names* a sentence uses: an inline literal
  (````name````, ```name```), a Sphinx role's target (``:func:`pkg.load```,
  ``:confval:`html_theme```), or a bare identifier shaped like code
  (``snake_case``, ``dotted.name``, ``--long-option``, ``call()``).
- :func:`link_mentions` finds the *links* of a sentence: ``:doc:`path```,
  ``:ref:`label``` (with or without an explicit title) and Markdown
  ``[text](path.md)``; each gives its target as written.
- :func:`cross_references` finds the *cross-references* of a text: the roles
  whose target is defined somewhere in the documentation, an object's name
  (``:setting:`CSRF_FAILURE_VIEW```, ``:exc:`~pkg.errors.BadRequest```) or a
  label (``:ref:`loop-controls```); neither formatting roles (``:file:``,
  ``:kbd:``, ...) nor links to a page by its path (``:doc:``).
- :func:`definitions` finds what a page defines: the target of a
  ``.. function:: name`` style directive (any domain), a Markdown heading that
  is one identifier, and the labels (``.. _label:``) it carries.
- :func:`resolve_doc` maps a ``:doc:`` or Markdown link target, read from one
  document, to another document id of the corpus (relative to the linking
  document's folder, or from the corpus root when the target starts with ``/``).

:data:`ROLE`, :data:`LITERAL` and :data:`MD_LINK` are the patterns of a role, an
inline literal and a Markdown link, :func:`role_target` a role's target as
written (``Title <target>``, ``~a.b``) and :func:`role_text` what a reader sees of
it: what readers of the same markup share.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "DocMention",
    "ROLE",
    "LITERAL",
    "MD_LINK",
    "LINK_ROLES",
    "role_target",
    "role_text",
    "code_mentions",
    "link_mentions",
    "cross_references",
    "definitions",
    "doc_stem",
    "resolve_doc",
]

#: a Sphinx role with its content: ``:py:func:`~a.b` `` (group 1: the role, 2: its content)
ROLE = re.compile(r":(?:[a-z]+:)?([a-z][a-z-]*):`([^`\n]+)`")
#: an inline literal: ````name```` (group 1) or ```name``` (group 2)
LITERAL = re.compile(r"``([^`\n]+)``|(?<![`\w])`([^`\n]+)`(?![`_\w])")
#: a Markdown link (not an image): group 1 its text, group 2 its target
MD_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$")
#: an identifier as code: dotted or snake_case names, --options, calls
_IDENT = re.compile(
    r"(?<![\w.-])(?:--?[a-z][\w-]+|[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?"
    r"|[a-z][a-z0-9]*_[\w]+(?:\(\))?|[A-Za-z_]\w*\(\))(?![\w-])"
)
_NAME = re.compile(r"^(?:--?)?[A-Za-z_][\w.:-]*(?:\(\))?$")
_DIRECTIVE = re.compile(
    r"^\s*\.\.\s+(?:[a-z]+:)?(?:auto)?([a-z]+)::\s+([A-Za-z_-][\w.:-]*)", re.MULTILINE
)
#: directive names that define something a page is about
_DEFINING = frozenset(
    [
        "function",
        "method",
        "class",
        "attribute",
        "data",
        "module",
        "exception",
        "decorator",
        "decoratormethod",
        "confval",
        "option",
        "envvar",
        "setting",
        "fixture",
        "property",
        "classmethod",
        "staticmethod",
        "describe",
        "object",
        "program",
        "cmdoption",
        "directive",
        "role",
        "event",
    ]
)
_LABEL = re.compile(r"^\s*\.\.\s+_([^:\n`]+):\s*$", re.MULTILINE)
_MD_HEADING = re.compile(r"^#{1,6}\s+`?([^`\n]+?)`?\s*$", re.MULTILINE)
#: the roles linking to a page (by path) or a label, not naming an object
LINK_ROLES = frozenset({"doc", "ref"})
#: roles that link to a label, as ``:ref:`` does
_LABEL_ROLES = frozenset({"ref", "numref"})
#: roles that format their text rather than refer to a definition (Sphinx's standard
#: inline markup, docutils' own, and the glossary's ``term``, defined by a list)
_FORMATTING = frozenset(
    [
        "abbr", "code", "command", "dfn", "download", "emphasis", "file", "guilabel",
        "kbd", "literal", "mailheader", "makevar", "manpage", "math", "menuselection",
        "mimetype", "newsgroup", "pep", "program", "regexp", "rfc", "samp", "strong",
        "sub", "sup", "subscript", "superscript", "term", "title-reference", "t", "title",
        "keyword", "token", "eq", "any",
    ]
)  # fmt: skip
_DOC_SUFFIXES = (".rst", ".md", ".txt", ".markdown")


@dataclass(frozen=True, slots=True)
class DocMention:
    """A name or link in a sentence.

    Attributes:
        text: verbatim in the sentence (a role's or link's target, or the name).
        kind: ``ident`` (a name used as code), ``doc`` (a link to a page by
            path), ``ref`` (a link to a label).
        start: character offset in the sentence.
        role: the Sphinx role that wrapped it ('' when none).
    """

    text: str
    kind: str
    start: int
    role: str = ""


def role_target(content: str) -> tuple[str, int]:
    """A role's target and its offset in ``content`` (``Title <target>`` or ``~a.b``)."""
    m = _EXPLICIT.match(content)
    if m:
        return m.group(2), m.start(2)
    skip = len(content) - len(content.lstrip("~!"))
    return content[skip:], skip


def role_text(content: str) -> str:
    """The text a role's ``content`` stands for: its explicit title (``Title <target>``),
    else its whole target less a leading ``~``/``!`` (``~a.b.c``: ``a.b.c``, where Sphinx
    shows ``c``: synthesized questions keep the full dotted name, which a search finds;
    :mod:`thresher.corpus.markup` renders the short form a reader sees)."""
    m = _EXPLICIT.match(content)
    if m and m.group(1):
        return m.group(1)
    return content.lstrip("~!")


def _usable_name(name: str) -> bool:
    core = name.strip("-").removesuffix("()")
    return len(core) >= 3 and _NAME.match(name) is not None and any(c.isalpha() for c in core)


def code_mentions(sentence: str) -> list[DocMention]:
    """The names a sentence uses as code (roles other than links, literals, code-shaped words)."""
    found: list[DocMention] = []
    taken: list[tuple[int, int]] = []
    for m in ROLE.finditer(sentence):
        taken.append(m.span())
        role = m.group(1)
        if role in LINK_ROLES:
            continue
        target, offset = role_target(m.group(2))
        if _usable_name(target):
            found.append(DocMention(target, "ident", m.start(2) + offset, role))
    for m in LITERAL.finditer(sentence):
        if any(a <= m.start() < b for a, b in taken):
            continue
        taken.append(m.span())
        group = 1 if m.group(1) is not None else 2
        name = m.group(group).strip()
        if _usable_name(name) and name == m.group(group):
            found.append(DocMention(name, "ident", m.start(group)))
    for m in MD_LINK.finditer(sentence):
        taken.append(m.span(2))
    for m in _IDENT.finditer(sentence):
        if any(a <= m.start() < b for a, b in taken) or "://" in sentence[m.start() : m.end() + 3]:
            continue
        if _usable_name(m.group(0)):
            found.append(DocMention(m.group(0), "ident", m.start()))
    found.sort(key=lambda d: d.start)
    return found


def link_mentions(sentence: str) -> list[DocMention]:
    """The links of a sentence: ``:doc:``/``:ref:`` roles and Markdown links to local pages."""
    found: list[DocMention] = []
    for m in ROLE.finditer(sentence):
        if m.group(1) not in LINK_ROLES:
            continue
        target, offset = role_target(m.group(2))
        if len(target.strip()) >= 3:
            found.append(DocMention(target, m.group(1), m.start(2) + offset, m.group(1)))
    for m in MD_LINK.finditer(sentence):
        target = m.group(2)
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        path = target.split("#", 1)[0]
        page = path.lower().endswith(_DOC_SUFFIXES) or "." not in posixpath.basename(path)
        if page and len(path) >= 3:
            found.append(DocMention(target, "doc", m.start(2)))
    found.sort(key=lambda d: d.start)
    return found


def cross_references(text: str) -> list[DocMention]:
    """The cross-references of ``text``, in text order: each role whose target is
    defined elsewhere in the documentation.

    A label role (``:ref:``, ``:numref:``) gives the label (kind ``ref``); any other
    role but a formatting one and ``:doc:`` gives the object's name as written, less
    a leading ``~``/``!`` and a trailing ``()`` (kind ``ident``, ``role`` the role:
    ``setting``, ``exc``, a project's own crossref type).
    """
    found: list[DocMention] = []
    for m in ROLE.finditer(text):
        role = m.group(1)
        if role == "doc" or role in _FORMATTING:
            continue
        target, offset = role_target(m.group(2))
        target = target.strip()
        if role in _LABEL_ROLES:
            if len(target) >= 3 and "\n" not in target:
                found.append(DocMention(target, "ref", m.start(2) + offset, role))
            continue
        name = target.removesuffix("()")
        if _usable_name(name):
            found.append(DocMention(name, "ident", m.start(2) + offset, role))
    return found


def definitions(text: str) -> tuple[list[str], list[str]]:
    """``(names, labels)`` a page defines: directive targets and one-identifier Markdown
    headings, and its ``.. _label:`` labels."""
    names = [m.group(2) for m in _DIRECTIVE.finditer(text) if m.group(1) in _DEFINING]
    names += [
        m.group(1) for m in _MD_HEADING.finditer(text) if _IDENT.fullmatch(m.group(1).strip())
    ]
    labels = [m.group(1).strip() for m in _LABEL.finditer(text)]
    return [n for n in names if _usable_name(n)], [lb for lb in labels if len(lb) >= 3]


def doc_stem(path: str) -> str:
    """``path`` without its documentation suffix (``.rst``, ``.md``, ``.txt``, ``.markdown``)."""
    for suffix in _DOC_SUFFIXES:
        if path.lower().endswith(suffix):
            return path[: -len(suffix)]
    return path


def resolve_doc(target: str, from_doc: str, stems: Mapping[str, Iterable[str]]) -> str | None:
    """The document a ``:doc:`` / Markdown link ``target`` in ``from_doc`` points to, or None.

    Args:
        target: the link target as written (an ``#anchor`` is dropped).
        from_doc: the linking document's id (a POSIX path).
        stems: document path without suffix -> document ids (as built by the caller).

    A relative target is joined to ``from_doc``'s folder; one starting with
    ``/`` is matched as a path suffix (the corpus root may sit under a label).
    None unless exactly one document matches.
    """
    path = doc_stem(target.split("#", 1)[0].strip())
    if not path:
        return None
    if path.startswith("/"):
        suffix = "/" + path.lstrip("/")
        hits = {d for stem, docs in stems.items() if ("/" + stem).endswith(suffix) for d in docs}
    else:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(from_doc), path))
        hits = set(stems.get(joined, ()))
    if len(hits) != 1:
        return None
    hit = next(iter(hits))
    return None if hit == from_doc else hit
