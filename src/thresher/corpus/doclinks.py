"""Document links: the links a page makes to other pages, and the documents they name (pure).

A link names a *document* by its path, where a cross-reference
(:func:`thresher.corpus.docrefs.cross_references`) names an object or a label.
The markup of the common documentation formats, whatever the project:

- Sphinx ``:doc:`path``` and ``:doc:`Title <path>```, MyST ``{doc}`path```;
- Markdown ``[text](path.md#anchor)`` (:data:`~thresher.corpus.docrefs.MD_LINK`),
  and reference-style ``[text][label]``, ``[label][]`` or ``[label]`` with its
  definition ``[label]: path.md`` anywhere in the same text (:func:`link_definitions`);
- HTML ``<a href="path.html">``.

:func:`document_links` reads a sentence's links (targets as written; links with
a scheme, ``mailto:``, in-page ``#anchors`` and files that are not pages, such
as images, are left out). :class:`DocPaths` resolves a target, read from the
citing document, to the document ids of an index it can mean: a relative target
is joined to the citing document's folder (``./`` and ``../`` normalised), one
starting with ``/`` is relative to the documentation root, which an id does not
state, so it is matched as a path suffix (the one sharing most of the citing
document's folders when several match). The ``#anchor`` and ``?query`` are
dropped; a page's extension may be written as its source's or as the built
``.html``, or left out; a folder means its ``index`` (or ``README``) page.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

from thresher.corpus.docrefs import MD_LINK, ROLE, DocMention, role_target

__all__ = ["PAGE_SUFFIXES", "DocPaths", "document_links", "link_definitions", "page_stem"]

#: the extensions a page's path may carry in a link: its source's, or the built page's
PAGE_SUFFIXES = (".rst", ".md", ".txt", ".markdown", ".mdx", ".html", ".htm")
#: the pages a link to a folder means, in order of preference
_FOLDER_PAGES = ("index", "README", "readme")
#: MyST's ``{doc}`` role (group 1: its content)
_MYST_DOC = re.compile(r"\{doc\}`([^`\n]+)`")
#: an HTML anchor's href (group 1)
_HREF = re.compile(r"""<a\s[^>]*?\bhref\s*=\s*["']([^"'\s]+)["']""", re.IGNORECASE)
#: a Markdown link reference definition ``[label]: target`` on a line of its own
_DEFINITION = re.compile(r"""^[ ]{0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s>]+)>?""", re.MULTILINE)
#: a reference-style Markdown link: ``[text][label]``, ``[label][]`` (group 2: the label),
#: or the shortcut ``[label]`` (neither a definition nor followed by a link's target)
_REF_LINK = re.compile(r"(?<![!\]\\])\[([^\[\]\n]+)\](?:\[([^\]\n]*)\]|(?![\[(:]))")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def page_stem(path: str) -> str:
    """``path`` without a page extension (:data:`PAGE_SUFFIXES`)."""
    low = path.lower()
    for suffix in PAGE_SUFFIXES:
        if low.endswith(suffix):
            return path[: -len(suffix)]
    return path


def _is_page(target: str) -> bool:
    """Whether a link ``target`` may name a page of the documentation (not a URL with a
    scheme, an e-mail, an anchor in the same page, or a file such as an image)."""
    if not target or target.startswith("#") or _SCHEME.match(target) or "://" in target:
        return False
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path.strip("./"):
        return False
    name = posixpath.basename(path.rstrip("/"))
    return path.endswith("/") or "." not in name or page_stem(name) != name


def link_definitions(text: str) -> dict[str, str]:
    """The Markdown link reference definitions of ``text``: label (lowercased) -> target,
    the first definition of a label winning (as CommonMark reads them)."""
    out: dict[str, str] = {}
    for m in _DEFINITION.finditer(text):
        out.setdefault(" ".join(m.group(1).lower().split()), m.group(2))
    return out


def document_links(sentence: str, definitions: Mapping[str, str] | None = None) -> list[DocMention]:
    """The links of ``sentence`` to other pages, in text order (kind ``doc``; ``role``
    ``doc`` for Sphinx's and MyST's role, ``md`` for Markdown, ``html`` for an anchor).

    Args:
        sentence: the text read (a sentence, or any span of a page).
        definitions: the page's reference definitions (:func:`link_definitions`), for
            reference-style Markdown links; without them those are not read.
    """
    found: list[DocMention] = []
    for m in ROLE.finditer(sentence):
        if m.group(1) == "doc":
            target, offset = role_target(m.group(2))
            found.append(DocMention(target.strip(), "doc", m.start(2) + offset, "doc"))
    for m in _MYST_DOC.finditer(sentence):
        target, offset = role_target(m.group(1))
        found.append(DocMention(target.strip(), "doc", m.start(1) + offset, "doc"))
    for m in MD_LINK.finditer(sentence):
        found.append(DocMention(m.group(2).strip("<>"), "doc", m.start(2), "md"))
    if definitions:
        for m in _REF_LINK.finditer(sentence):
            label = " ".join((m.group(2) or m.group(1)).lower().split())
            defined = definitions.get(label)
            if defined is not None:
                found.append(DocMention(defined, "doc", m.start(), "md"))
    for m in _HREF.finditer(sentence):
        found.append(DocMention(m.group(1), "doc", m.start(1), "html"))
    out = [d for d in found if _is_page(d.text)]
    out.sort(key=lambda d: d.start)
    return out


class DocPaths:
    """The document ids of an index, looked up by the path a link writes (see the module).

    Args:
        doc_ids: every document id of the index (POSIX paths in its folder).
    """

    def __init__(self, doc_ids: Iterable[str]) -> None:
        self.by_stem: dict[str, list[str]] = {}
        #: a stem's last part -> the stems ending with it (an absolute link's candidates)
        self.by_name: dict[str, list[str]] = {}
        for doc in doc_ids:
            stem = page_stem(doc)
            held = self.by_stem.setdefault(stem, [])
            if not held:
                self.by_name.setdefault(posixpath.basename(stem), []).append(stem)
            held.append(doc)

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_stem.values())

    def resolve(self, target: str, from_doc: str) -> tuple[str, ...]:
        """The document ids ``target``, as written in ``from_doc``, can mean (sorted;
        empty when none, and never ``from_doc`` itself)."""
        path = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
        if not _is_page(path):
            return ()
        folder = path.endswith("/")
        stem = page_stem(path.rstrip("/"))
        if stem.startswith("/"):
            tries = [] if folder else [stem]
            tries += [f"{stem}/{page}" for page in _FOLDER_PAGES]
            for t in tries:
                hits = self._suffix(t, from_doc)
                if hits:
                    return hits
            return ()
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(from_doc), stem))
        if joined == ".." or joined.startswith("../"):
            return ()
        tries = [] if folder else [joined]
        tries += [posixpath.normpath(f"{joined}/{page}") for page in _FOLDER_PAGES]
        for t in tries:
            hits = tuple(sorted(d for d in self.by_stem.get(t, ()) if d != from_doc))
            if hits:
                return hits
        return ()

    def _suffix(self, absolute: str, from_doc: str) -> tuple[str, ...]:
        """The documents whose stem ends with ``absolute`` (a ``/``-rooted stem), those
        sharing most leading folders with ``from_doc`` when several do."""
        suffix = "/" + absolute.strip("/")
        stems = [
            s
            for s in self.by_name.get(posixpath.basename(suffix), ())
            if ("/" + s).endswith(suffix)
        ]
        if not stems:
            return ()
        home = from_doc.split("/")[:-1]

        def shared(stem: str) -> int:
            n = 0
            for a, b in zip(home, stem.split("/"), strict=False):
                if a != b:
                    break
                n += 1
            return n

        best = max(shared(s) for s in stems)
        docs = (d for s in stems if shared(s) == best for d in self.by_stem[s])
        return tuple(sorted(d for d in docs if d != from_doc))
