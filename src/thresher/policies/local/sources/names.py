"""Document names: what other texts call the documents an episode has seen (pure).

A document's title is one name for it (the policy's original source: a text
stating another document's title links to it). A file's title is often not
what other files call it: a manual page titled ``DELUSER.CONF(5) File Formats
Manual DELUSER.CONF(5)`` is cited as ``deluser.conf(5)``, a README titled
"Hello!" by its package's name. Files are named after their subject, so a
document read from a file is also known by its file name
(:func:`document_names`): the name without its extension and without trailing
number parts (a manual section or a version: ``deluser.conf.5.txt`` is
``deluser.conf``), or, for a file called as every package's files are
(``README``, ``copyright``, ``NEWS``, ...:
:data:`thresher.corpus.filetypes.DOC_NAMES`), its folder's name
(``doc/passwd/copyright`` is ``passwd``). Names are matched in any case, on
word boundaries (:func:`~thresher.policies.local.bridges.linked_titles`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass

from thresher.corpus.filetypes import DOC_NAMES
from thresher.policies.local.constants import DEFAULT_CONSTANTS

__all__ = ["DocumentNames", "document_names"]

#: a part of a file name that is a number: a manual section, a version
_NUMBER = re.compile(r"\d+[a-z]?")
#: a name needs a run of letters
_LETTERS = re.compile(r"[^\W\d_]{2,}")


def document_names(doc_id: str) -> list[str]:
    """The names a document read from a file goes by besides its title (see the module
    docstring); none for an id that is not a file path (a dataset paragraph's hash)."""
    if "." not in doc_id and "/" not in doc_id and "\\" not in doc_id:
        return []  # a bare id, read first: most ids of a dataset are (every hop reads all)
    parts = doc_id.replace("\\", "/").split("/")
    base = parts[-1]
    pieces = base.split(".")
    if len(pieces) > 1:
        pieces = pieces[:-1]  # the extension
    while len(pieces) > 1 and _NUMBER.fullmatch(pieces[-1]):
        pieces = pieces[:-1]
    name = ".".join(pieces)
    if name.split(".", 1)[0].lower() in DOC_NAMES:
        # every package has one: the folder names what it is about
        folders = parts[:-1]
        name = folders[-1] if folders else ""
    if not name or not _LETTERS.search(name) or (len(parts) == 1 and "." not in base):
        return []  # a bare id without a path or an extension is no file name
    return [name]


@dataclass(frozen=True, slots=True)
class DocumentNames:
    """Titles and file names of the documents seen (a :class:`~.base.NameSource`).

    A file named by one plain word may be named after a common word (``group``,
    ``issue``, ``login``): matched in any case, such a word would link every text
    that uses it. So a one-word file name is kept only when at most
    ``common_share`` of the documents seen hold it (their ``words``: an estimate
    of its document frequency in the corpus from the episode's sample; the
    constant ``name_common_share``); a name with a joint (``deluser.conf``,
    ``base-passwd``) or several words is kept.
    """

    common_share: float = DEFAULT_CONSTANTS.name_common_share

    def names(
        self, titles: Mapping[str, str], words: Callable[[], Mapping[str, Set[str]]] | None = None
    ) -> dict[str, str]:
        out = dict(titles)
        found = [
            (name, doc) for doc in dict.fromkeys(titles.values()) for name in document_names(doc)
        ]
        plain = {name.lower() for name, _ in found if name.isalnum()}
        seen = words() if words is not None and plain else {}
        held: Counter[str] = Counter()
        if seen:
            for w in seen.values():  # one set intersection per document seen
                held.update(plain & w)
        for name, doc in found:
            if held[name.lower()] > self.common_share * len(seen):
                continue  # a common word, not a name
            out.setdefault(name, doc)
        return out
