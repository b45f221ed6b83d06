"""HTML to plain text with a real parser, dropping what a reader would not see.

Dropped with their whole content: ``script``, ``style``, ``noscript``,
``template``, ``head`` (its ``<title>`` is still read), ``iframe`` and ``object``
(a browser shows the framed page or the object, not the fallback markup inside
the element), and any element hidden
by the ``hidden`` attribute, ``aria-hidden="true"`` or an inline style with
``display:none``, ``visibility:hidden``, ``font-size:0``, ``opacity:0``, text
coloured like its own background (``color:#fff;background-color:#fff``), or
positioned off screen (``position:absolute|fixed`` with a left/top/right offset
of -1000px or more, or ``text-indent`` of -1000px or more).
Hidden elements are counted (``hidden_html``): hidden text is a classic
carrier of prompt injections. Site chrome is dropped too, as boilerplate
removers (Readability, trafilatura) do, but only where the page marks it
unambiguously: ``nav`` and ``footer`` elements, ``role="navigation"`` or
``"contentinfo"``, and a class or id that is exactly a navigation or footer name
(``nav``, ``navbar``, ``breadcrumbs``, ``footer``, ...). The same menu on every
page of a site is no evidence; in every chunk it costs tokens and lends every
page the same words ("Main page | Random article | Contents | Help").

Block elements become paragraph breaks, ``br`` a line break; other whitespace
is collapsed as a browser would (except in ``pre``).

Work is linear in the input: an end tag is matched against a count of the
open elements by name, so end tags that match nothing (``</span>`` after
50,000 ``<div>``) cost nothing each instead of a scan of the stack.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_to_text"]

_DROP = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "svg", "math", "iframe", "object"}
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr"}
)  # fmt: skip
_BLOCK = frozenset(
    {"address", "article", "aside", "blockquote", "body", "details", "dialog",
     "div", "dl", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
     "h4", "h5", "h6", "header", "hr", "html", "main", "nav", "ol", "p", "pre", "section",
     "summary", "table", "tbody", "tfoot", "thead", "ul"}
)  # fmt: skip
_LINE = frozenset({"li", "tr", "dt", "dd", "option", "caption"})
#: site chrome: elements, ARIA roles, and class or id tokens that name it exactly
_CHROME_TAGS = frozenset({"nav", "footer"})
_CHROME_ROLES = frozenset({"navigation", "contentinfo"})
_CHROME_NAMES = frozenset(
    {"nav", "navbar", "navigation", "site-nav", "sitenav", "breadcrumb", "breadcrumbs",
     "footer", "site-footer", "page-footer", "skip-link"}
)  # fmt: skip
# Start tags that implicitly close an open <p> (HTML "p end tag may be omitted").
_CLOSES_P = frozenset(
    {"address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figure",
     "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "nav", "ol",
     "p", "pre", "section", "table", "ul"}
)  # fmt: skip
_SELF_CLOSING = {"li": {"li"}, "dt": {"dt", "dd"}, "dd": {"dt", "dd"}, "tr": {"tr"},
                 "td": {"td", "th"}, "th": {"td", "th"}, "option": {"option"}}  # fmt: skip
_HIDDEN_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden|"
    r"font-size\s*:\s*0+(?:\.0*)?(?:[a-z%]+)?\s*(?:!important)?\s*(?:;|$)|"
    r"opacity\s*:\s*0+(?:\.0*)?\s*(?:!important)?\s*(?:;|$))",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")
_DECL = re.compile(r"\s*([a-z-]+)\s*:\s*([^;]+?)\s*(?:!important)?\s*(?:;|$)", re.IGNORECASE)
_FAR = re.compile(r"^-\s*\d{4,}(?:\.\d+)?(?:px|pt|em|rem)?$", re.IGNORECASE)
_NAMED = {"white": "#ffffff", "black": "#000000"}


def _colour(value: str) -> str:
    """A CSS colour in one comparable form (``#fff`` and ``white`` -> ``#ffffff``)."""
    v = value.strip().lower().replace(" ", "")
    v = _NAMED.get(v, v)
    if re.fullmatch(r"#[0-9a-f]{3}", v):
        v = "#" + "".join(ch * 2 for ch in v[1:])
    return v


def _styled_away(style: str) -> bool:
    """Text the style paints in its own background colour, or places far off screen."""
    decls = {m.group(1).lower(): m.group(2).strip() for m in _DECL.finditer(style)}
    colour, ground = decls.get("color"), decls.get("background-color") or decls.get("background")
    if colour and ground and _colour(colour) == _colour(ground):
        return True
    if decls.get("position", "").lower() in ("absolute", "fixed") and any(
        _FAR.match(decls.get(side, "")) for side in ("left", "top", "right")
    ):
        return True
    return bool(_FAR.match(decls.get("text-indent", "")))


def _is_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if name == "hidden":
            return True
        if name == "aria-hidden" and (value or "").strip().lower() == "true":
            return True
        if name == "style" and value and (_HIDDEN_STYLE.search(value) or _styled_away(value)):
            return True
    return False


def _is_chrome(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    """Navigation or a page footer, as the page itself marks it."""
    if tag in _CHROME_TAGS:
        return True
    for name, value in attrs:
        if not value:
            continue
        if name == "role" and value.strip().lower() in _CHROME_ROLES:
            return True
        if name in ("class", "id") and any(t in _CHROME_NAMES for t in value.lower().split()):
            return True
    return False


class _TextExtractor(HTMLParser):
    """Collects visible text; a stack of open elements tracks what is hidden."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, invisible, hidden-by-attribute)
        self.open_count: dict[str, int] = {}  # tag -> how many are on the stack
        self.pending_break = 0
        self.hidden = 0
        self.title_parts: list[str] = []
        self.h1_parts: list[str] | None = None
        self.h1_done = False
        self.pre_depth = 0

    # -- stack ---------------------------------------------------------------
    def _invisible(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def _push(self, entry: tuple[str, bool, bool]) -> None:
        self.stack.append(entry)
        self.open_count[entry[0]] = self.open_count.get(entry[0], 0) + 1

    def _pop_to(self, tag: str) -> None:
        """Close the innermost open ``tag`` and everything opened inside it.

        Callers check ``open_count`` first, so the scan only walks elements it
        then closes: each element is scanned and popped once (linear overall).
        """
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                for closed, _, _ in self.stack[i:]:
                    self._closed(closed)
                    self.open_count[closed] -= 1
                del self.stack[i:]
                return

    def _closed(self, tag: str) -> None:
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        if tag == "h1" and self.h1_parts is not None:
            self.h1_done = True
        if tag in _BLOCK:
            self._break(2)
        elif tag in _LINE:
            self._break(1)

    def _break(self, n: int, add: bool = False) -> None:
        """Ask for ``n`` newlines before the next text (``add``: on top of pending ones)."""
        if not self._invisible():
            wanted = self.pending_break + n if add else max(self.pending_break, n)
            self.pending_break = min(2, wanted)

    # -- parser callbacks ----------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.stack and self.stack[-1][0] == "p" and tag in _CLOSES_P:
            self._pop_to("p")
        if tag in _SELF_CLOSING and self.stack and self.stack[-1][0] in _SELF_CLOSING[tag]:
            self._pop_to(self.stack[-1][0])
        if tag == "br":
            self._break(1, add=True)
            return
        if tag in {"td", "th"}:
            self._space()
        if tag in _VOID:
            if tag in _BLOCK:
                self._break(2)
            return
        parent_invisible = self._invisible()
        by_attr = _is_hidden(attrs)
        if by_attr and not parent_invisible:
            self.hidden += 1
        invisible = parent_invisible or by_attr or tag in _DROP or _is_chrome(tag, attrs)
        if tag in _BLOCK:
            self._break(2)
        elif tag in _LINE:
            self._break(1)
        self._push((tag, invisible, by_attr))
        if tag == "pre":
            self.pre_depth += 1
        if tag == "h1" and not invisible and not self.h1_done and self.h1_parts is None:
            self.h1_parts = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "br":
            self._break(1, add=True)
        elif self.open_count.get(tag):  # an end tag matching no open element is ignored
            self._pop_to(tag)

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "title":
            self.title_parts.append(data)
            return
        if self._invisible():
            return
        if self.h1_parts is not None and not self.h1_done:
            self.h1_parts.append(data)
        if not self.pre_depth:
            data = _SPACES.sub(" ", data)
            if data.startswith(" ") and (not self.parts or self.parts[-1][-1:].isspace()):
                data = data[1:]
        if self.pending_break and not self.pre_depth:
            data = data.lstrip(" ")
        if not data:
            return
        if self.pending_break:
            if self.parts:
                self._rstrip_output()
                self.parts.append("\n" * self.pending_break)
            self.pending_break = 0
        self.parts.append(data)

    def _space(self) -> None:
        if not self._invisible() and self.parts and not self.parts[-1][-1:].isspace():
            self.parts.append(" ")

    def _rstrip_output(self) -> None:
        while self.parts:
            stripped = self.parts[-1].rstrip(" \t")
            if stripped:
                self.parts[-1] = stripped
                return
            self.parts.pop()


def html_to_text(html: str) -> tuple[str, str | None, dict[str, int]]:
    """The visible text of an HTML document, its title, and what was dropped.

    Args:
        html: the HTML source.

    Returns:
        ``(text, title, counts)``: ``text`` with paragraph breaks as blank lines;
        ``title`` from ``<title>``, else the first visible ``<h1>``, else None;
        ``counts`` is ``{"hidden_html": n}`` when ``n`` hidden elements were dropped
        (nested hidden elements count once), else empty.
    """
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts).strip()
    title = _SPACES.sub(" ", "".join(parser.title_parts)).strip()
    if not title and parser.h1_parts:
        title = _SPACES.sub(" ", "".join(parser.h1_parts)).strip()
    counts = {"hidden_html": parser.hidden} if parser.hidden else {}
    return text, title or None, counts
