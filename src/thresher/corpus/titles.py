"""The title of a text file (``.txt``, ``.md``, ``.rst``, a ``README``): one rule set.

Titles matter beyond display: they are indexed with every chunk, and the local
policy follows titles named in retained text as bridges, so a good title is the
name other documents call this one by. A file's stem (``thread-00017``) is a poor
title when the text names its subject, so the title is taken from the text, in
this order:

0. a Debian machine-readable copyright file (DEP-5: a first block with
   ``Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/``):
   its ``Upstream-Name`` value, else none (the caller uses the file's path:
   every package's file is called ``copyright``);
1. the file's stem, when it is an identifier the first block states itself: a
   stem with a digit found verbatim there (``CH-2018-843081.txt`` starting
   ``Patent number: CH-2018-843081``): other documents cite it by that name;
2. a ``Title:`` or ``Subject:`` field in the first block (the lines before the
   first blank line; a YAML front matter opened by ``---`` counts as the first
   block), as in e-mails, registry records and Markdown front matter;
3. reStructuredText only: the first section title (a line of text under, or
   between, a line of one repeated punctuation character: ``Title`` over
   ``=====``), after leading comments and directives (``.. ...``);
4. the first line with a letter or digit (outside code fences), when more text
   follows it, passing over boilerplate (:func:`is_boilerplate`: a line that is
   only a URL, a ``Format:`` header, a license banner such as a
   ``Copyright (C) 2020 ...`` or ``SPDX-License-Identifier:`` line, a ``#!``
   interpreter line or an editor mode line) and license notice paragraphs (from
   a line opening ``This file is part of``, ``This program is free software``,
   ``Licensed under`` or ``Permission is hereby granted`` to the next blank
   line); an ATX heading marker is dropped
   (``# Notes`` in a ``.txt`` gives ``Notes``);
5. none: the caller uses the file stem (an empty file, or one line or paragraph
   without a line break after it).

Markdown follows what a reader of the rendered site sees (MkDocs' own order:
front matter ``title``, then the page's first level-1 heading, then the file
name): a ``Title:`` field (rule 2) first, then the first level-1 heading outside
code fences (ATX ``# Title`` or setext ``Title`` over ``===``), then the stem
when the first block states it (rule 1). A page with headings but no level-1
one starts at a section (``## Install``): it is called by its file name,
humanized (``first-steps.md`` gives ``First steps``), unless that name says
nothing (``index``, ``README``), when its first heading is taken. A page with
no heading at all goes on to rule 4.

Headings lose a closing attribute list (``{ #anchor }``, ``{: .class }``,
``{#id key=value}``: Python-Markdown's ``attr_list`` and Pandoc's header
attributes), which the rendered page never shows. Whitespace is collapsed and a
title longer than :data:`MAX_TITLE_CHARS` is cut at a word boundary and ends
with ``…``.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_TITLE_CHARS",
    "is_boilerplate",
    "markdown_headings",
    "markdown_title",
    "humanize_stem",
    "rst_title",
    "strip_attributes",
    "shorten_title",
    "text_title",
]

#: the longest title kept whole; longer ones are cut at a word boundary
MAX_TITLE_CHARS = 120
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_ATX_LEVEL = re.compile(r"^ {0,3}(#{1,6})[ \t]")
_SETEXT = re.compile(r"^ {0,3}=+[ \t]*$")
#: an attribute list closing a heading: ``{ #id }``, ``{: .class }``, ``{#id key="v"}``
_ATTR_LIST = re.compile(
    r"""[ \t]*\{:?[ \t]*
        (?:(?:[#.][^\s{}=]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s{}"']+))[ \t]*)+
        \}[ \t]*$""",
    re.VERBOSE,
)
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")
#: file stems that name no page (a folder's index page): never a humanized title
_GENERIC_STEMS = frozenset({"index", "readme", "_index", "default", "home"})
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")
_FIELD = re.compile(r"^\s*(?:title|subject)\s*:\s*(\S.*?)\s*$", re.IGNORECASE)
_WORDY = re.compile(r"\w")
_HEADER_LINES = 40  # a first block longer than this is prose, not a header
#: one repeated punctuation character: a reStructuredText section adornment
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_DEP5_FORMAT = re.compile(r"^format\s*:.*copyright-format", re.IGNORECASE)
_UPSTREAM_NAME = re.compile(r"^upstream-name\s*:\s*(\S.*?)\s*$", re.IGNORECASE)
#: lines that open files everywhere and name nothing: never a title (see rule 4)
_BOILERPLATE = re.compile(
    r"""^\s*(?:[#/*;%!-]+\s*)?(?:
        <?(?:https?|ftp)://\S+?>?                       # a URL alone
      | www\.\S+                                      # a bare web address
      | format\s*:.*                                   # a Format: header (DEP-5, ...)
      | spdx-license-identifier\s*:.*                  # a license tag
      | (?:copyright|\(c\)|©)\s*(?:\(c\)|©)?\s*[\d(].*  # Copyright (C) 2020 ...
      | all\s+rights\s+reserved\.?
      | !.*                                              # #! interpreter line
      | .*-\*-.*-\*-.*                                   # -*- coding: utf-8 -*-
      | (?:vim?|ex)\s*:.*                               # vim: set ts=4:
    )\s*(?:\*/)?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)


def strip_attributes(heading: str) -> str:
    """``heading`` without a closing attribute list (``Install { #install }`` gives ``Install``),
    and without the closing ``#`` of an ATX heading it followed (``Install ## {: #i }``)."""
    bare = _ATTR_LIST.sub("", heading)
    if bare != heading:
        bare = _CLOSING_HASHES.sub("", bare)
    return bare.strip()


def markdown_headings(text: str) -> list[tuple[int, str]]:
    """Every ATX (``## Title``, level = the number of ``#``) and setext (``Title`` over
    ``===``, level 1) heading outside code fences, in order, attribute lists removed;
    headings left empty by that are passed over."""
    out: list[tuple[int, str]] = []
    in_fence = False
    previous = ""
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _ATX.match(line)
            found: tuple[int, str] | None = None
            if m:
                level = _ATX_LEVEL.match(line)
                found = (len(level.group(1)) if level else 1, m.group(1))
            elif previous.strip() and _SETEXT.match(line):
                found = (1, previous)
            if found is not None and (title := strip_attributes(found[1])):
                out.append((found[0], title))
        previous = "" if in_fence else line
    return out


def markdown_title(text: str) -> str | None:
    """The first level-1 heading (``# Title``, or ``Title`` over ``===``) outside code
    fences, attribute list removed; None when there is none."""
    return next((title for level, title in markdown_headings(text) if level == 1), None)


def humanize_stem(stem: str) -> str | None:
    """A file stem as a page name (``first-steps`` gives ``First steps``), as MkDocs names a
    page without a title; None for a stem that names no page (``index``, ``README``)."""
    words = " ".join(stem.replace("_", " ").replace("-", " ").split())
    if not words or stem.lower() in _GENERIC_STEMS or not _WORDY.search(words):
        return None
    return words[0].upper() + words[1:]


#: the first line of a license notice paragraph: the whole paragraph is passed over
_LICENSE_NOTICE = re.compile(
    r"^\s*(?:[#/*;%-]+\s*)?(?:this\s+(?:file|program|library|package|software)\s+is\s+"
    r"(?:part\s+of|free\s+software)|licensed\s+under\b|permission\s+is\s+hereby\s+granted)",
    re.IGNORECASE,
)


def is_boilerplate(line: str) -> bool:
    """Whether ``line`` is boilerplate no title is taken from: only a URL, a ``Format:``
    header, a ``Copyright (C) YEAR ...``, ``All rights reserved`` or
    ``SPDX-License-Identifier:`` line, a ``#!`` interpreter line or an editor mode
    line (``-*- coding: utf-8 -*-``, ``vim: ...``), also behind a comment marker."""
    return bool(_BOILERPLATE.match(line))


def rst_title(text: str) -> str | None:
    """The first reStructuredText section title: a line of text under a line of one
    repeated punctuation character (``Title`` over ``=====``), or between two equal
    such lines; comments and directives (``.. ...`` and their indented lines) before
    it are passed over. None when there is none."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        below = lines[i + 1]
        if not _WORDY.search(line) or line.lstrip().startswith(".."):
            continue
        if line[:1].isspace() and not (i > 0 and _RST_ADORNMENT.match(lines[i - 1])):
            continue  # indented text: a directive's body or a block quote
        m = _RST_ADORNMENT.match(below)
        if m and len(below.rstrip()) >= min(len(line.strip()), 3):
            return line.strip()
    return None


def _dep5_title(block: list[str]) -> str | None:
    """For a DEP-5 copyright file's header, its ``Upstream-Name`` value or ``""``;
    None for any other text."""
    if not any(_DEP5_FORMAT.match(line) for line in block):
        return None
    for line in block:
        m = _UPSTREAM_NAME.match(line)
        if m:
            return m.group(1)
    return ""


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
    in_notice = False
    for i, line in enumerate(lines):
        if in_notice or (not in_fence and _LICENSE_NOTICE.match(line)):
            in_notice = bool(line.strip())  # a license notice ends at a blank line
        elif _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and _WORDY.search(line) and not is_boilerplate(line):
            if not any(rest.strip() for rest in lines[i + 1 :]):
                return None
            m = _ATX.match(line)
            return strip_attributes(m.group(1)) if m else line.strip()
    return None


def shorten_title(title: str, limit: int = MAX_TITLE_CHARS) -> str:
    """``title`` with whitespace collapsed, cut at a word boundary to ``limit`` characters."""
    title = " ".join(title.split())
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:-") + "…"


def text_title(
    text: str, *, markdown: bool = False, rst: bool = False, stem: str = ""
) -> str | None:
    """The title of a text file's (sanitized) text, by the rules of the module docstring.

    Args:
        text: the file's text.
        markdown: whether it is Markdown (headings anywhere count).
        rst: whether it is reStructuredText (section titles anywhere count).
        stem: the file's stem (rule 1); empty to skip that rule.

    Returns:
        The title (at most :data:`MAX_TITLE_CHARS` characters), or None when the
        text has none and the caller should use the file stem.
    """
    lines = text.split("\n")
    block, body = _first_block(lines)
    dep5 = _dep5_title(block)
    if dep5 is not None:
        return shorten_title(dep5) if dep5 else None
    if markdown:
        title = _markdown_page_title(block, body, stem)
    else:
        title = stem if stem and _names_itself(block, stem) else None
        if title is None:
            title = _field_title(block)
        if title is None and rst:
            title = rst_title("\n".join(body))
    if title is None:
        title = _first_line_title(body)
    return shorten_title(title) if title else None


def _markdown_page_title(block: list[str], body: list[str], stem: str) -> str | None:
    """A Markdown page's title by the module docstring's order, or None (go on to rule 4)."""
    title = _field_title(block)
    if title is not None:
        return title
    headings = markdown_headings("\n".join(body))
    first = next((t for level, t in headings if level == 1), None)
    if first is not None:
        return first
    if stem and _names_itself(block, stem):
        return stem
    if headings:  # it starts at a section: the page's own name says more
        return (humanize_stem(stem) if stem else None) or headings[0][1]
    return None
