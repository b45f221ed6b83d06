"""Markdown and reStructuredText as a reader sees them, and where their code is (pure).

Documentation sources carry markup a reader of the rendered page never sees:
MkDocs ``attr_list`` attributes (``{ #anchor }``, ``{: .class }``,
``{ .annotate }``), Material and pymdown-extensions syntax (``--8<--`` snippet
lines, ``///`` block fences, ``!!! note "Title"`` admonition markers, ``===
"Tab"`` content tabs, ``> [!note]`` callouts, ``:material-icon:`` shortcodes), raw HTML tags with their
classes and styles, link targets and reference definitions, and Sphinx roles
and directives (``:ref:`text <target>```, ``:func:`~pkg.name```, hyperlinks
```text <https://...>`_``, ``.. note::``,
``:maxdepth: 2`` options, ``.. _label:`` targets). Indexed as they are, their
tokens crowd the words a question is phrased in, and the local policy reads
follow-up names in them ("termy", "D3D7CF", "md-button").

:func:`reader_text` removes that markup and keeps what the rendered page shows:
an admonition's, a block's or a tab's title, a role's text (``:ref:`the guide
<guide>``` is ``the guide``; ``:func:`~pkg.mod.name``` is ``name``), a field's
name and words (``:param timeout: Seconds.`` is ``timeout: Seconds.``), a link's
text. Code is left exactly as written, fences included (users grep code):
fenced blocks, indented blocks, reStructuredText literal blocks (after ``::``)
and code directives (``.. code-block::``, ``.. literalinclude::`` options aside).
:func:`code_ranges` finds those blocks in a text, so chunking can mark each
chunk's code (``metadata["code"]``) for readers that must tell code from prose.

:func:`markup_kind` tells a ``.txt`` file written in reStructuredText (read as
one); :func:`prose` is a text with its code and leftover markup masked, what
names are read in; :func:`is_changelog` recognizes a release-notes document by
its path or title.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["reader_text", "code_ranges", "prose", "is_changelog", "markup_kind", "MARKUP_KINDS"]

#: the file kinds (:mod:`.filetypes`) whose markup :func:`reader_text` removes
MARKUP_KINDS = frozenset({"markdown", "rst"})

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})")
# attr_list: {: #id .class key="value" } (a colon optional), at least one such token
_ATTR_TOKEN = r"(?:[#.][^\s{}=\"']+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}\"']+))"
_ATTR_LIST = re.compile(rf"[ \t]*\{{:?[ \t]*{_ATTR_TOKEN}(?:[ \t,]+{_ATTR_TOKEN})*[ \t]*\}}")
_SNIPPET = re.compile(r"^\s*(?:;?-{1,3}8<-{1,3})")
# pymdown blocks: "/// type | title" and "///" closers (nested: "////")
_BLOCK = re.compile(r"^[ \t]*/{3,}[ \t]*(?:([\w-]+)[ \t]*)?(?:\|[ \t]*(.*?))?[ \t]*$")
# admonitions and collapsible details: !!! note "Title", ???+ warning, !!! tip ""
_ADMONITION = re.compile(r"^([ \t]*)(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+[\w-]+)*[ \t]*(.*)$")
# content tabs: === "Tab title", ===! "Tab", ===+ "Tab"
_TAB = re.compile(r"^([ \t]*)===[!+]?[ \t]+(.*)$")
_QUOTED_TITLE = re.compile(r"^[\"'](.*)[\"']$")
_ICON = re.compile(r":(?:[a-z0-9]+-)+[a-z0-9]+:")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_DROPPED_ELEMENT = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s+[^<>]*?)?\s*/?>")
_LINK = re.compile(r"(!?)\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]+\S+.*$")
# GitHub and Obsidian callouts: "> [!note] Title"
_CALLOUT = re.compile(r"^([ \t]*(?:>[ \t]*)+)\[![\w-]+\][+-]?[ \t]*")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]")
# MyST (Markdown for Sphinx): {role}`text` and ```{directive} fences with :option: lines
_MYST_ROLE = re.compile(r"\{[\w:-]+\}`([^`\n]*)`")
_MYST_DIRECTIVE = re.compile(r"[ \t]*\{([\w:-]+)\}")
_MYST_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?$")

# reStructuredText
_ROLE = re.compile(r"(?<![\w`]):(?:[\w-]+:)*[\w-]+:`([^`\n]*)`")
_ROLE_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$")
# hyperlinks: `text <https://...>`_, `text`_, `text`__ (anonymous)
_RST_LINK = re.compile(r"(?<![\w`:])`([^`<\n]+?)\s*(?:<[^<>`\n]*>)?`__?(?![\w`])")
_LABEL = re.compile(r"^[ \t]*\.\.[ \t]+(?:_[^:\n]*:|\|[^|\n]+\|[ \t]+\w+::).*$")
_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+([\w:-]+)::[ \t]*(.*)$")
_RST_COMMENT = re.compile(r"^[ \t]*\.\.(?:[ \t]+.*)?$")
_OPTION = re.compile(r"^[ \t]+:[\w -]+:(?:[ \t].*)?$")
_FIELD = re.compile(r"^([ \t]*):([\w-]+)(?:[ \t]+([^:\n]+?))?:(?:[ \t]+(.*))?$")
#: directives whose body is code
_CODE_DIRECTIVES = frozenset(
    {"code", "code-block", "sourcecode", "literalinclude", "highlight", "doctest", "testcode",
     "testoutput", "ipython", "prompt", "parsed-literal", "productionlist"}
)  # fmt: skip
#: directives whose argument and body a reader never sees as text
_HIDDEN_DIRECTIVES = frozenset(
    {"image", "figure", "include", "toctree", "raw", "only", "highlight", "currentmodule",
     "module", "automodule", "meta", "contents", "sectnum", "tabularcolumns", "index"}
)  # fmt: skip
#: fields whose argument names a thing and whose text describes it
_NAMED_FIELDS = frozenset(
    {"param", "parameter", "arg", "argument", "key", "keyword", "kwarg", "type", "var",
     "ivar", "cvar", "vartype", "raises", "raise", "except", "exception"}
)  # fmt: skip

#: names (path components, extension dropped) and titles of release-notes documents
_CHANGELOG_NAMES = frozenset(
    {"changelog", "changelogs", "changelog.d", "changes", "history", "news", "releases",
     "release-notes", "release_notes", "releasenotes", "whatsnew", "whats-new", "whats_new"}
)  # fmt: skip
_CHANGELOG_TITLE = re.compile(
    r"^(?:change[ -]?log|changes|release[ -]?notes|releases|release history|history"
    r"|news|what'?s new)(?:\s*[:-]?\s*(?:v?\d[\w.]*|(?:for|in|since)\b.*))?$",
    re.IGNORECASE,
)


_RST_MARK = re.compile(r"^[ \t]*\.\.[ \t]+(?:[\w:-]+::|_[^:\n]+:)", re.MULTILINE)
_RST_ROLE = re.compile(r"(?<![\w`]):[\w-]+:`")
#: how much of a plain text file is looked at to tell its markup
_SNIFF = 65536


def markup_kind(text: str, kind: str) -> str:
    """The kind whose markup ``text`` is read with: ``kind`` itself, or ``rst`` for a
    ``text`` file written in reStructuredText (Django's and Python's documentation
    sources are ``.txt``): two directives or targets, or five roles, in its first
    64 KiB."""
    if kind != "text":
        return kind
    head = text[:_SNIFF]
    if ".. " not in head and ":`" not in head:
        return kind
    if len(_RST_MARK.findall(head)) >= 2 or len(_RST_ROLE.findall(head)) >= 5:
        return "rst"
    return kind


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _blank(line: str) -> bool:
    return not line.strip()


def _lines(text: str) -> list[str]:
    return text.split("\n")


# -- code blocks -------------------------------------------------------------------------


def _markdown_blocks(lines: list[str]) -> tuple[list[tuple[int, int]], set[int]]:
    """Line ranges ``[first, last)`` of fenced and indented code blocks, and the lines
    that only open or close a MyST directive (```` ```{note} ````, its ``:option:``
    lines, its closing fence): the directive's body is prose, not code."""
    code: list[tuple[int, int]] = []
    dropped: set[int] = set()
    i, n = 0, len(lines)
    prose_before = False  # the last non-blank line was a paragraph at the left margin
    while i < n:
        line = lines[i]
        if i in dropped:
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            mark, start = fence.group(2), i
            directive = _MYST_DIRECTIVE.match(line[fence.end() :])
            i += 1
            while i < n:
                close = _FENCE.match(lines[i])
                if (
                    close
                    and close.group(2)[0] == mark[0]
                    and len(close.group(2)) >= len(mark)
                    and not lines[i][close.end() :].strip()
                ):
                    i += 1
                    break
                i += 1
            if directive and directive.group(1).lower() not in _CODE_DIRECTIVES:
                dropped.update((start, i - 1))
                j = start + 1
                while j < i - 1 and _MYST_OPTION.match(lines[j]):
                    dropped.add(j)
                    j += 1
                i = start + 1  # the body is read as prose
            else:
                code.append((start, i))
            prose_before = False
            continue
        if prose_before and _blank(lines[i - 1]) and _indent(line) >= 4 and not _blank(line):
            start = i
            while i < n and (_blank(lines[i]) or _indent(lines[i]) >= 4):
                i += 1
            while i > start and _blank(lines[i - 1]):
                i -= 1
            code.append((start, i))
            prose_before = False
            continue
        if not _blank(line):
            prose_before = (
                _indent(line) == 0
                and not _LIST_ITEM.match(line)
                and not _ADMONITION.match(line)
                and not _TAB.match(line)
                and not _BLOCK.match(line)
            )
        i += 1
    return code, dropped


def _rst_code(lines: list[str]) -> Iterator[tuple[int, int]]:
    """Line ranges ``[first, last)`` of literal blocks and code directives (the
    directive line and its options included)."""
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        literal = line.rstrip().endswith("::") and not directive
        if (directive and directive.group(2).lower() in _CODE_DIRECTIVES) or literal:
            start, base = (i if directive else i + 1), _indent(line)
            i += 1
            while not directive and start < n and _blank(lines[start]):
                start += 1
            while i < n and (_blank(lines[i]) or _indent(lines[i]) > base):
                i += 1
            end = i
            while end > start and _blank(lines[end - 1]):
                end -= 1
            if end > start:
                yield start, end
            continue
        i += 1


def _code_lines(lines: list[str], kind: str) -> list[tuple[int, int]]:
    if kind == "markdown":
        return _markdown_blocks(lines)[0]
    if kind == "rst":
        return list(_rst_code(lines))
    return []


def code_ranges(text: str, kind: str) -> list[tuple[int, int]]:
    """Character ranges ``(start, end)`` of ``text``'s code blocks, in order.

    Markdown: fenced blocks (the fences included) and indented blocks (four spaces,
    after a blank line that follows a paragraph at the left margin: not a list
    item's or an admonition's indented content). reStructuredText: the indented
    block after a paragraph ending ``::`` and code directives with their body.
    Other kinds have none.
    """
    lines = _lines(text)
    ranges = _code_lines(lines, kind)
    if not ranges:
        return []
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    return [(offsets[a], offsets[b] - 1) for a, b in ranges]


# -- reader text -------------------------------------------------------------------------


def _title(rest: str) -> str:
    """An admonition's or a tab's title: its quoted text (else nothing)."""
    quoted = _QUOTED_TITLE.match(rest.strip())
    return quoted.group(1).strip() if quoted else ""


def _inline(line: str) -> str:
    """One prose line of Markdown without inline markup."""
    if "}`" in line:  # a MyST role's target looks like a tag: read it first
        line = _MYST_ROLE.sub(lambda m: _role_text(m.group(1)), line)
    if "{" in line:
        line = _ATTR_LIST.sub("", line)
    if ":" in line:
        line = _ICON.sub("", line)
    if "<" in line:
        line = _TAG.sub("", line)
    if "[" in line:
        line = _LINK.sub(lambda m: m.group(2), line)
    return line


def _markdown_line(line: str) -> str | None:
    """A prose line as a reader sees it (None: nothing of it is shown)."""
    if _SNIPPET.match(line) or _LINK_DEFINITION.match(line):
        return None
    block = _BLOCK.match(line)
    if block:
        if (block.group(1) or "").lower() == "html":
            return None  # "/// html | div.result": a wrapper, its title a selector
        return block.group(2) or None
    admonition = _ADMONITION.match(line)
    if admonition:
        return admonition.group(1) + _title(admonition.group(2)) if admonition.group(2) else None
    tab = _TAB.match(line)
    if tab:
        return tab.group(1) + _title(tab.group(2))
    if "[!" in line:
        line = _CALLOUT.sub(r"\1", line)
    return _inline(line)


def _rst_role(match: re.Match[str]) -> str:
    return _role_text(match.group(1))


def _role_text(body: str) -> str:
    """What a role shows: its text before a ``<target>``, else its name (``~a.b.c``: ``c``)."""
    target = _ROLE_TARGET.match(body)
    if target and target.group(1):
        return target.group(1)
    body = body.lstrip("!")
    if body.startswith("~"):
        return body[1:].rsplit(".", 1)[-1]
    return body


def _rst_lines(lines: list[str], code: set[int]) -> Iterator[str]:
    """reStructuredText lines as a reader sees them (code lines untouched)."""
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if i in code:
            yield line
            i += 1
            continue
        directive = _DIRECTIVE.match(line)
        if directive:
            name, argument = directive.group(2).lower(), directive.group(3)
            base = _indent(line)
            i += 1
            while i < n and i not in code and _OPTION.match(lines[i]) and _indent(lines[i]) > base:
                i += 1  # the directive's options (":maxdepth: 2", ":caption: ...")
            if name in _HIDDEN_DIRECTIVES:
                while i < n and (_blank(lines[i]) or _indent(lines[i]) > base):
                    i += 1
            elif argument.strip():
                yield directive.group(1) + _ROLE.sub(_rst_role, argument)
            continue
        if _LABEL.match(line):
            i += 1
            continue
        if _RST_COMMENT.match(line):
            base = _indent(line)
            i += 1
            while i < n and i not in code and not _blank(lines[i]) and _indent(lines[i]) > base:
                i += 1
            continue
        field = _FIELD.match(line)
        if field and field.group(2).lower() in _NAMED_FIELDS | {"returns", "return", "rtype"}:
            words = [w for w in (field.group(3), field.group(4)) if w]
            line = field.group(1) + ": ".join(words)
        if "`" in line:
            line = _RST_LINK.sub(lambda m: m.group(1), _ROLE.sub(_rst_role, line))
        if "<" in line:
            line = _TAG.sub("", line)
        yield line
        i += 1


def reader_text(text: str, kind: str) -> str:
    """``text`` of a ``markdown`` or ``rst`` file without the markup its rendered page
    hides (see the module docstring); other kinds come back unchanged.

    Code blocks (:func:`code_ranges`) are kept byte for byte; a line whose markup
    was all it held is dropped, so no blank runs appear where none were.
    """
    if kind not in MARKUP_KINDS:
        return text
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    if "<s" in text or "<S" in text:
        text = _DROPPED_ELEMENT.sub("", text)
    lines = _lines(text)
    if kind == "rst":
        code = {i for a, b in _rst_code(lines) for i in range(a, b)}
        return "\n".join(_rst_lines(lines, code))
    blocks, dropped = _markdown_blocks(lines)
    code = {i for a, b in blocks for i in range(a, b)}
    out: list[str] = []
    bodies: list[int] = []  # the indents of the open admonitions' and tabs' bodies
    for i, line in enumerate(lines):
        if i in dropped:
            continue
        if not _blank(line):
            while bodies and _indent(line) < bodies[-1]:
                bodies.pop()
            if bodies:  # a container's body is shown as the page's own paragraphs
                line = line[min(bodies[-1], _indent(line)) :]
        if i in code:
            out.append(line)
            continue
        if _ADMONITION.match(line) or _TAB.match(line):
            bodies.append((bodies[-1] if bodies else 0) + _indent(line) + 4)
        shown = _markdown_line(line)
        if shown is not None:
            out.append(shown.rstrip() if shown is not line else line)
    return "\n".join(out)


def is_changelog(doc_id: str, title: str = "") -> bool:
    """Whether a file document is release notes: a component of its path (``doc_id``,
    extensions dropped) is a changelog's name (``CHANGELOG.md``, ``changelog.d/``,
    ``releases/9.0.md``, ``release-notes.md``, ``NEWS``, ``HISTORY.rst``), or its
    ``title`` reads like one ("Changelog", "Release Notes", "What's new in 2.0").
    A document without a path (a record, a dataset passage: no ``/`` and no ``.``
    in its id) is never one, whatever its title ("Changes" is also a song)."""
    if "/" not in doc_id and "." not in doc_id:
        return False
    for part in doc_id.lower().split("/"):
        if part in _CHANGELOG_NAMES or part.split(".", 1)[0] in _CHANGELOG_NAMES:
            return True
    return bool(title) and _CHANGELOG_TITLE.match(title.strip()) is not None


# -- prose -------------------------------------------------------------------------------

#: a CSS hex colour (``#D3D7CF``, ``#fff``; three or four digits only with a letter,
#: so "#100" stays a number)
_HEX_COLOUR = re.compile(
    r"(?<![\w#&])#(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{6}|(?=[0-9]*[A-Fa-f])[0-9A-Fa-f]{3,4})(?![\w-])"
)
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_BREAK = "\n"
_GAP = " ; "


def _masked(text: str, ranges: list[tuple[int, int]], by: str) -> str:
    parts, pos = [], 0
    for a, b in ranges:
        if a >= pos:
            parts += [text[pos:a], by]
            pos = b
    return "".join([*parts, text[pos:]])


def _fenced(text: str) -> list[tuple[int, int]]:
    """Fenced blocks found in ``text`` alone (a chunk read without ``metadata["code"]``):
    from each fence to the next of its character, or to the end."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    mark = ""
    pos = 0
    for line in text.split("\n"):
        fence = _FENCE.match(line)
        if fence:
            if start is None:
                start, mark = pos, fence.group(2)
            elif fence.group(2)[0] == mark[0] and not line[fence.end() :].strip():
                out.append((start, pos + len(line)))
                start = None
        pos += len(line) + 1
    if start is not None:
        out.append((start, len(text)))
    return out


@lru_cache(maxsize=4096)
def prose(
    text: str,
    code: tuple[tuple[int, int], ...] = (),
    *,
    markup: bool = False,
    named: str = "",
) -> str:
    """``text`` with only what a reader reads as prose: what to read names and words in.

    Replaced by a line break: the ``code`` ranges (a chunk's ``metadata["code"]``).
    Replaced by `` ; `` (a break no name spans): CSS hex colours. When ``markup``
    (the text is a Markdown or reStructuredText file's): also fenced blocks found in
    the text itself, inline code (`` `name` ``, unless ``named``, the question
    lowercased, holds its content: a name the question states is read wherever it
    is), raw HTML tags, ``attr_list`` attributes and icon shortcodes left in an index
    built before :func:`reader_text`. Results are cached (a policy reads the same
    chunks on every hop).
    """
    if code:
        text = _masked(text, sorted(code), _BREAK)
    if markup:
        if "```" in text or "~~~" in text:
            text = _masked(text, _fenced(text), _BREAK)
        if "`" in text:
            text = _INLINE_CODE.sub(
                lambda m: m.group(0) if named and m.group(2).strip().lower() in named else _GAP,
                text,
            )
        if "<" in text:
            text = _TAG.sub(_GAP, text)
        if "{" in text:
            text = _ATTR_LIST.sub(_GAP, text)
        if ":" in text:
            text = _ICON.sub(_GAP, text)
    if "#" in text:
        text = _HEX_COLOUR.sub(_GAP, text)
    return text
