"""The section structure of a Markdown or reStructuredText document.

:func:`markup_of` says whether a document is Markdown, reStructuredText or
neither (from its file name; a ``.txt`` file is reStructuredText when it has
at least two RST section titles, as Sphinx sources do). :func:`parse_sections`
reads such a text into a tree of :class:`Section` whose leaves are *blocks*:
paragraphs, headings and code blocks, each a stripped span of the text.

A code block is one block, never two: a Markdown fence (```` ``` ```` or
``~~~``) up to its closing fence, a Markdown indented block (lines indented by
four or more after a blank line, blank lines inside included), and in RST the
paragraph that ends with ``::`` or opens a directive (``.. code-block::``,
``.. note::``) together with the indented body that follows it. The parser is
line-based and forgiving: any text gives a tree whose blocks cover every
non-whitespace character exactly once, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from thresher.corpus.filetypes import file_kind

__all__ = ["Block", "Section", "markup_of", "parse_sections"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"[ \t]+#+$")
_ATTRIBUTES = re.compile(r"\s*\{[^{}]*\}\s*$")  # MkDocs/MyST "{ #anchor }" after a heading
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# RST adornment: one punctuation character repeated (at least 3 times, so "--" or a
# lone "*" is not a title).
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_DIRECTIVE = re.compile(r"^\s*\.\. [\w:-]+::")
_RST_TITLE_TXT_MIN = 2


@dataclass(frozen=True, slots=True)
class Block:
    """A stripped span ``text[start:end]`` that is chunked whole when it fits."""

    start: int
    end: int
    code: bool = False


@dataclass(slots=True)
class Section:
    """A heading (none for the document's root) and what stands under it.

    ``blocks`` are the section's own blocks before its first subsection (its
    heading block first); ``children`` its subsections in order.
    """

    title: str
    level: int
    blocks: list[Block] = field(default_factory=list)
    children: list[Section] = field(default_factory=list)

    def span(self) -> tuple[int, int] | None:
        """``(start, end)`` of everything in the section; None when it holds nothing."""
        first = self.blocks[0] if self.blocks else None
        if first is None:
            spans = [s for s in (c.span() for c in self.children) if s is not None]
            if not spans:
                return None
            return (spans[0][0], self._last_end())
        return (first.start, self._last_end())

    def _last_end(self) -> int:
        for child in reversed(self.children):
            child_span = child.span()
            if child_span is not None:
                return child_span[1]
        return self.blocks[-1].end


def markup_of(name: str, text: str) -> str | None:
    """``"markdown"``, ``"rst"`` or None (chunk as plain text) for a document.

    Args:
        name: the document's source (its file name or path; records' sources such
            as ``pool.jsonl:3`` are of no kind).
        text: its text; only read for a ``.txt`` file.
    """
    kind = file_kind(name)
    if kind in ("markdown", "rst"):
        return kind
    if kind == "text" and _count_rst_titles(text, _RST_TITLE_TXT_MIN) >= _RST_TITLE_TXT_MIN:
        return "rst"
    return None


def _count_rst_titles(text: str, enough: int) -> int:
    """How many RST underlined titles ``text`` has (counting stops at ``enough``)."""
    lines = text.splitlines()
    found = 0
    for i in range(1, len(lines)):
        title = lines[i - 1].strip()
        if title and _is_underline(lines[i], title) and (i < 2 or not lines[i - 2].strip()
                                                          or _ADORNMENT.match(lines[i - 2])):  # fmt: skip
            found += 1
            if found >= enough:
                break
    return found


def _is_underline(line: str, title: str) -> bool:
    """Whether ``line`` is an RST adornment at least as long as ``title``."""
    return (
        bool(_ADORNMENT.match(line))
        and len(line.rstrip()) >= len(title)
        and not _ADORNMENT.match(title)
    )


def parse_sections(text: str, markup: str) -> Section:
    """The section tree of ``text`` read as ``markup`` (``"markdown"`` or ``"rst"``).

    Returns:
        The root section (title '', level 0): the blocks before the first heading,
        then the top-level sections. Every block is a stripped, non-blank span;
        blocks are in text order and do not overlap.
    """
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    parser = _Parser(text, lines, offsets, markup)
    return parser.tree()


class _Parser:
    """One pass over the lines: headings open sections, the rest become blocks."""

    def __init__(self, text: str, lines: list[str], offsets: list[int], markup: str) -> None:
        self.text = text
        self.lines = lines
        self.offsets = offsets
        self.markdown = markup == "markdown"
        self.rst_styles: list[tuple[str, bool]] = []  # RST title styles, outermost first

    def tree(self) -> Section:
        root = Section("", 0)
        stack = [root]
        i, n = 0, len(self.lines)
        while i < n:
            if not self.lines[i].strip():
                i += 1
                continue
            heading = self._heading(i)
            if heading is not None:
                title, level, after = heading
                while stack[-1].level >= level:
                    stack.pop()
                section = Section(title, level)
                stack[-1].children.append(section)
                stack.append(section)
                self._add(section, i, after, code=False)
                i = after
                continue
            after, code = self._block_end(i)
            self._add(stack[-1], i, after, code=code)
            i = after
        return root

    def _add(self, section: Section, first: int, after: int, *, code: bool) -> None:
        start, end = self.offsets[first], self.offsets[after]
        while start < end and self.text[start].isspace():
            start += 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        if start < end:
            section.blocks.append(Block(start, end, code))

    def _line(self, i: int) -> str:
        return self.lines[i].rstrip("\r\n")

    # -- headings ---------------------------------------------------------------

    def _heading(self, i: int) -> tuple[str, int, int] | None:
        """(title, level, next line) when a heading starts at line ``i``."""
        return self._md_heading(i) if self.markdown else self._rst_heading(i)

    def _md_heading(self, i: int) -> tuple[str, int, int] | None:
        line = self._line(i)
        m = _ATX.match(line)
        if m is not None:
            title = _ATX_CLOSE.sub("", m.group(2) or "")
            return (_ATTRIBUTES.sub("", title).strip(), len(m.group(1)), i + 1)
        if i + 1 < len(self.lines) and not line.startswith("    ") and not _FENCE.match(line):
            m = _SETEXT.match(self._line(i + 1))
            if m is not None and line.strip() and not _SETEXT.match(line):
                level = 1 if m.group(1)[0] == "=" else 2
                return (_ATTRIBUTES.sub("", line).strip(), level, i + 2)
        return None

    def _rst_heading(self, i: int) -> tuple[str, int, int] | None:
        line = self._line(i)
        n = len(self.lines)
        if _ADORNMENT.match(line) and i + 2 < n:
            title, under = self._line(i + 1), self._line(i + 2)
            if title.strip() and under.rstrip() == line.rstrip() and not _ADORNMENT.match(title):
                return (title.strip(), self._rst_level(line.strip()[0], True), i + 3)
        if (
            i + 1 < n
            and line.strip()
            and not line[0].isspace()
            and _is_underline(self._line(i + 1), line.strip())
        ):
            return (line.strip(), self._rst_level(self._line(i + 1)[0], False), i + 2)
        return None

    def _rst_level(self, char: str, overline: bool) -> int:
        """RST levels follow the order in which title styles first appear."""
        style = (char, overline)
        if style not in self.rst_styles:
            self.rst_styles.append(style)
        return self.rst_styles.index(style) + 1

    # -- blocks -----------------------------------------------------------------

    def _block_end(self, i: int) -> tuple[int, bool]:
        """(next line, is code) for the block that starts at the non-blank line ``i``."""
        n = len(self.lines)
        line = self._line(i)
        if self.markdown:
            fence = _FENCE.match(line)
            if fence is not None:
                mark = fence.group(1)
                j = i + 1
                while j < n:
                    close = _FENCE.match(self._line(j))
                    if (
                        close is not None
                        and close.group(1)[0] == mark[0]
                        and len(close.group(1)) >= len(mark)
                        and not self._line(j)[close.end() :].strip()
                    ):
                        return (j + 1, True)
                    j += 1
                return (n, True)
            if line.startswith("    ") or line.startswith("\t"):
                return (self._indented_end(i + 1, 4), True)
        j = i + 1
        while j < n and self.lines[j].strip():
            if self.markdown and (_FENCE.match(self._line(j)) or _ATX.match(self._line(j))):
                break
            if not self.markdown and self._rst_heading(j) is not None:
                break
            j += 1
        if not self.markdown:
            last = self._line(j - 1).rstrip()
            if last.endswith("::") or _DIRECTIVE.match(line):
                indent = len(line) - len(line.lstrip())
                end = self._indented_end(j, indent + 1)
                return (end, end > j)
        return (j, False)

    def _indented_end(self, j: int, indent: int) -> int:
        """The line after the indented body from line ``j``: blank lines and lines
        indented by at least ``indent`` columns (tabs count as 8), ending at the last
        indented one."""
        n = len(self.lines)
        last = j
        while j < n:
            line = self._line(j)
            if line.strip():
                expanded = line.expandtabs(8)
                if len(expanded) - len(expanded.lstrip()) < indent:
                    break
                last = j + 1
            j += 1
        return last
