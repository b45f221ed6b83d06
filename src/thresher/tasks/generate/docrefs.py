"""Documentation references as task synthesis phrases them (pure).

The reference syntax itself (roles, literals, links, definitions) is
:mod:`thresher.corpus.docrefs`; this module reads it as a writer of questions does:

- :func:`unwrap` joins the wrapped lines of a paragraph of a page written in
  reST or Markdown (:func:`has_markup`), so a sentence is not cut at a line end.
- :func:`reader_text` is a sentence as a reader sees it: roles, literals and
  links replaced by their visible text.
- :func:`noun_for` and :func:`role_of` say what a reader would call a bridge;
  :func:`mask_ref` hides it in a sentence; :func:`tidy` reads the masked
  phrase as English.
"""

from __future__ import annotations

import re

from thresher.corpus.docrefs import LINK_ROLES, LITERAL, MD_LINK, ROLE, role_target, role_text

__all__ = [
    "reader_text",
    "noun_for",
    "role_of",
    "mask_ref",
    "has_markup",
    "unwrap",
    "tidy",
]


def reader_text(sentence: str) -> str:
    """``sentence`` as a reader sees it: roles and literals by their text, links by their text."""

    text = ROLE.sub(lambda m: role_text(m.group(2)), sentence)
    text = MD_LINK.sub(lambda m: m.group(1), text)
    text = LITERAL.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = re.sub(r"(?<=\w)_(?=[\s.,;:)]|$)", "", text)  # RST `Title`_ references
    return re.sub(r"\s+", " ", text).strip()


def noun_for(name: str, kind: str, role: str = "") -> str:
    """What a reader would call a bridge: ``page`` for links, else from its role or shape."""
    if kind in ("doc", "ref") or role in LINK_ROLES:
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
    for m in ROLE.finditer(sentence):
        if role_target(m.group(2))[0] == name:
            return m.group(1)
    if any(m.group(2) == name for m in MD_LINK.finditer(sentence)):
        return "doc"
    return ""


def mask_ref(sentence: str, name: str, placeholder: str) -> str:
    """``sentence`` with every role, literal or link whose target is ``name`` replaced,
    whole, by ``placeholder`` (bare occurrences are left to the caller)."""
    text = ROLE.sub(
        lambda m: placeholder if role_target(m.group(2))[0] == name else m.group(0), sentence
    )
    text = MD_LINK.sub(lambda m: placeholder if m.group(2) == name else m.group(0), text)
    return LITERAL.sub(
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
