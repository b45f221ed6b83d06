"""Documentation references: the names and links a documentation page uses, and what it defines.

Pure functions over raw page text (reStructuredText or Markdown as written), so
that task synthesis can bridge two pages the way a reader of documentation
does:

- :func:`code_mentions` finds the *names* a sentence uses: an inline literal
  (````name````, ```name```), a Sphinx role's target (``:func:`pkg.load```,
  ``:confval:`html_theme```), or a bare identifier shaped like code
  (``snake_case``, ``dotted.name``, ``--long-option``, ``call()``).
- :func:`link_mentions` finds the *links* of a sentence: ``:doc:`path```,
  ``:ref:`label``` (with or without an explicit title) and Markdown
  ``[text](path.md)``; each gives its target as written.
- :func:`definitions` finds what a page defines: the target of a
  ``.. function:: name`` style directive (any domain), a Markdown heading that
  is one identifier, and the labels (``.. _label:``) it carries.
- :func:`resolve_doc` maps a ``:doc:`` or Markdown link target, read from one
  document, to another document id of the corpus (relative to the linking
  document's folder, or from the corpus root when the target starts with ``/``).
- :func:`unwrap` joins the wrapped lines of a paragraph of a page written in
  reST or Markdown (:func:`has_markup`), so a sentence is not cut at a line end.
- :func:`reader_text` is a sentence as a reader sees it: roles, literals and
  links replaced by their visible text.

Nothing here is fitted to one corpus: the rules are the markup's own syntax.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "DocMention",
    "code_mentions",
    "link_mentions",
    "definitions",
    "resolve_doc",
    "reader_text",
    "noun_for",
    "role_of",
    "mask_ref",
    "has_markup",
    "unwrap",
    "tidy",
]

#: a Sphinx role with its content: ``:py:func:`~a.b` ``
_ROLE = re.compile(r":(?:[a-z]+:)?([a-z][a-z-]*):`([^`\n]+)`")
_LITERAL = re.compile(r"``([^`\n]+)``|(?<![`\w])`([^`\n]+)`(?![`_\w])")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
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
_LINK_ROLES = frozenset({"doc", "ref"})
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


def _target(content: str) -> tuple[str, int]:
    """A role's target and its offset in ``content`` (``Title <target>`` or ``~a.b``)."""
    m = _EXPLICIT.match(content)
    if m:
        return m.group(2), m.start(2)
    skip = len(content) - len(content.lstrip("~!"))
    return content[skip:], skip


def _usable_name(name: str) -> bool:
    core = name.strip("-").removesuffix("()")
    return len(core) >= 3 and _NAME.match(name) is not None and any(c.isalpha() for c in core)


def code_mentions(sentence: str) -> list[DocMention]:
    """The names a sentence uses as code (roles other than links, literals, code-shaped words)."""
    found: list[DocMention] = []
    taken: list[tuple[int, int]] = []
    for m in _ROLE.finditer(sentence):
        taken.append(m.span())
        role = m.group(1)
        if role in _LINK_ROLES:
            continue
        target, offset = _target(m.group(2))
        if _usable_name(target):
            found.append(DocMention(target, "ident", m.start(2) + offset, role))
    for m in _LITERAL.finditer(sentence):
        if any(a <= m.start() < b for a, b in taken):
            continue
        taken.append(m.span())
        group = 1 if m.group(1) is not None else 2
        name = m.group(group).strip()
        if _usable_name(name) and name == m.group(group):
            found.append(DocMention(name, "ident", m.start(group)))
    for m in _MD_LINK.finditer(sentence):
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
    for m in _ROLE.finditer(sentence):
        if m.group(1) not in _LINK_ROLES:
            continue
        target, offset = _target(m.group(2))
        if len(target.strip()) >= 3:
            found.append(DocMention(target, m.group(1), m.start(2) + offset, m.group(1)))
    for m in _MD_LINK.finditer(sentence):
        target = m.group(2)
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        path = target.split("#", 1)[0]
        page = path.lower().endswith(_DOC_SUFFIXES) or "." not in posixpath.basename(path)
        if page and len(path) >= 3:
            found.append(DocMention(target, "doc", m.start(2)))
    found.sort(key=lambda d: d.start)
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


def _stem(path: str) -> str:
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
    path = _stem(target.split("#", 1)[0].strip())
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


def reader_text(sentence: str) -> str:
    """``sentence`` as a reader sees it: roles and literals by their text, links by their text."""

    def role(m: re.Match[str]) -> str:
        content = m.group(2)
        explicit = _EXPLICIT.match(content)
        if explicit and explicit.group(1):
            return explicit.group(1)
        return content.lstrip("~!")

    text = _ROLE.sub(role, sentence)
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _LITERAL.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = re.sub(r"(?<=\w)_(?=[\s.,;:)]|$)", "", text)  # RST `Title`_ references
    return re.sub(r"\s+", " ", text).strip()


def noun_for(name: str, kind: str, role: str = "") -> str:
    """What a reader would call a bridge: ``page`` for links, else from its role or shape."""
    if kind in ("doc", "ref") or role in _LINK_ROLES:
        return "page"
    by_role = {
        "func": "function", "meth": "method", "class": "class", "attr": "attribute",
        "confval": "setting", "option": "option", "envvar": "environment variable",
        "mod": "module", "exc": "exception", "fixture": "fixture", "data": "name",
    }  # fmt: skip
    if role in by_role:
        return by_role[role]
    if name.startswith("-"):
        return "option"
    if name.endswith("()"):
        return "function"
    return "name"


def role_of(sentence: str, name: str) -> str:
    """The role wrapping ``name`` in ``sentence`` (``doc`` for a Markdown link, '' when bare)."""
    for m in _ROLE.finditer(sentence):
        if _target(m.group(2))[0] == name:
            return m.group(1)
    if any(m.group(2) == name for m in _MD_LINK.finditer(sentence)):
        return "doc"
    return ""


def mask_ref(sentence: str, name: str, placeholder: str) -> str:
    """``sentence`` with every role, literal or link whose target is ``name`` replaced,
    whole, by ``placeholder`` (bare occurrences are left to the caller)."""
    text = _ROLE.sub(
        lambda m: placeholder if _target(m.group(2))[0] == name else m.group(0), sentence
    )
    text = _MD_LINK.sub(lambda m: placeholder if m.group(2) == name else m.group(0), text)
    return _LITERAL.sub(
        lambda m: placeholder if (m.group(1) or m.group(2) or "").strip() == name else m.group(0),
        text,
    )


_MARKUP = re.compile(r"``[^`\n]+``|:[a-z]+:`[^`\n]+`|^\s*\.\.\s+\S|\]\([^)\s]+\)", re.MULTILINE)
_BLOCK = re.compile(
    r"^\s*(?:[-*+•|>#=~^\"']|```|:[\w -]+:(?:\s|$)|\d+[.)]\s|\.\.\s|[A-Za-z][\w ]{0,24}:\s*$)"
)
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_])\1{2,}\s*$")


def has_markup(text: str) -> bool:
    """Whether ``text`` is written in reST or Markdown markup (roles, literals, directives, links)."""
    return _MARKUP.search(text) is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def unwrap(text: str) -> str:
    """``text`` with the wrapped lines of each paragraph joined by a space.

    A line joins the one before when both are prose at the same indentation: not
    blank, not a list item, heading, heading underline, table row, directive or
    field, and the line after is not an underline (the line would be a heading).
    """
    lines = text.split("\n")
    out: list[str] = []
    joinable = False
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        prose = (
            bool(line.strip())
            and _BLOCK.match(line) is None
            and _UNDERLINE.match(line) is None
            and _UNDERLINE.match(nxt) is None
        )
        if prose and joinable and out and _indent(out[-1]) == _indent(line):
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
        joinable = prose
    return "\n".join(out)


_ARTICLE = re.compile(
    r"\b(the|a|an|this|that|your|its|their)\s+(?:an?|that)\s+(\w+)", re.IGNORECASE
)


def tidy(text: str) -> str:
    """Placeholder phrases read as English: ``the a setting`` -> ``the setting``, a noun
    not doubled (``a function function`` -> ``a function``)."""
    text = _ARTICLE.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    return re.sub(r"\b(\w+) \1\b", r"\1", text)
