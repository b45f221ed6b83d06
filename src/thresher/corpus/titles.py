"""The title of a text file (``.txt``, ``.md``): one rule set, so both read alike.

Titles matter beyond display: they are indexed with every chunk, and the local
policy follows titles named in retained text as bridges, so a good title is the
name other documents call this one by. A file's stem (``thread-00017``) is a poor
title when the text names its subject, so the title is taken from the text, in
this order:

1. the file's stem, when it is an identifier the first block states itself: a
   stem with a digit found verbatim there (``CH-2018-843081.txt`` starting
   ``Patent number: CH-2018-843081``): other documents cite it by that name;
2. a ``Title:`` or ``Subject:`` field in the first block (the lines before the
   first blank line; a YAML front matter opened by ``---`` counts as the first
   block), as in e-mails, registry records and Markdown front matter;
3. Markdown only: the first ATX (``# Title``) or setext (``Title`` over ``===``)
   heading outside code fences;
4. the first line with a letter or digit (outside code fences), when more text
   follows it; an ATX heading marker is dropped (``# Notes`` in a ``.txt`` gives
   ``Notes``);
5. none: the caller uses the file stem (an empty file, or one line or paragraph
   without a line break after it).

Whitespace is collapsed and a title longer than :data:`MAX_TITLE_CHARS` is cut
at a word boundary and ends with ``…``.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TITLE_CHARS", "markdown_title", "shorten_title", "text_title"]

#: the longest title kept whole; longer ones are cut at a word boundary
MAX_TITLE_CHARS = 120
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}=+[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")
_FIELD = re.compile(r"^\s*(?:title|subject)\s*:\s*(\S.*?)\s*$", re.IGNORECASE)
_WORDY = re.compile(r"\w")
_HEADER_LINES = 40  # a first block longer than this is prose, not a header


def markdown_title(text: str) -> str | None:
    """The first ATX (``# Title``) or setext (``Title`` over ``===``) heading, outside code fences."""
    in_fence = False
    previous = ""
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _ATX.match(line)
            if m:
                return m.group(1).strip()
            if previous.strip() and _SETEXT.match(line):
                return previous.strip()
        previous = "" if in_fence else line
    return None


def _first_block(lines: list[str]) -> tuple[list[str], list[str]]:
    """The first block's lines (at most ``_HEADER_LINES``) and the lines of the body.

    The first block is a YAML front matter (``---`` to ``---``), which the body
    then excludes, or else the lines up to the first blank line (the body is
    every line).
    """
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and lines[start].strip() == "---":
        for end in range(start + 1, len(lines)):
            if lines[end].strip() == "---":
                return lines[start + 1 : end][:_HEADER_LINES], lines[end + 1 :]
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    return lines[start:end][:_HEADER_LINES], lines


def _names_itself(block: list[str], stem: str) -> bool:
    """Whether ``stem`` is an identifier (it has a digit) that ``block`` states verbatim."""
    if not any(ch.isdigit() for ch in stem):
        return False
    pattern = re.compile(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", re.IGNORECASE)
    return any(pattern.search(line) for line in block)


def _field_title(block: list[str]) -> str | None:
    """A ``Title:``/``Subject:`` value in the first block."""
    for line in block:
        m = _FIELD.match(line)
        if m:
            return m.group(1).strip().strip("\"'").strip() or None
    return None


def _first_line_title(lines: list[str]) -> str | None:
    """The first line with a letter or digit outside code fences, if non-blank text follows it."""
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and _WORDY.search(line):
            if not any(rest.strip() for rest in lines[i + 1 :]):
                return None
            m = _ATX.match(line)
            return (m.group(1) if m else line).strip()
    return None


def shorten_title(title: str, limit: int = MAX_TITLE_CHARS) -> str:
    """``title`` with whitespace collapsed, cut at a word boundary to ``limit`` characters."""
    title = " ".join(title.split())
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:-") + "…"


def text_title(text: str, *, markdown: bool = False, stem: str = "") -> str | None:
    """The title of a text file's (sanitized) text, by the rules of the module docstring.

    Args:
        text: the file's text.
        markdown: whether it is Markdown (headings anywhere count).
        stem: the file's stem (rule 1); empty to skip that rule.

    Returns:
        The title (at most :data:`MAX_TITLE_CHARS` characters), or None when the
        text has none and the caller should use the file stem.
    """
    lines = text.split("\n")
    block, body = _first_block(lines)
    if stem and _names_itself(block, stem):
        return shorten_title(stem)
    title = _field_title(block)
    if title is None and markdown:
        title = markdown_title("\n".join(body))
    if title is None:
        title = _first_line_title(body)
    return shorten_title(title) if title else None
