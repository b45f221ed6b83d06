"""Document ids at ingestion: one id per real file across every folder indexed; no id that
could name another document.

A file's id is its path relative to the folder it was read under (its *root*),
prefixed by that root's *label* in the index::

    first folder ever indexed (label "")   notes/a.md
    any other folder (label "c2")          c2/README.md

The index records its roots (label -> real path, in its manifest or server
header). :func:`label_documents` labels each file document (:attr:`Document.root`
set by the loader; records and dataset paragraphs, whose ``root`` is empty, keep
their own ids):

- the file belongs to the deepest recorded root holding it, so the same file
  reached by any spelling (``./a/../a``, a linked folder, the file named alone,
  a parent folder named later) keeps one id;
- a file under no recorded root makes its folder a new root (:func:`new_label`):
  the index's first root gets the empty label; a recorded root whose folder is
  gone passes its label to a new folder holding its documents' paths (a moved
  folder keeps its ids and nothing is re-embedded); any other folder gets its
  name, made unique against the labels in use and the entries of the first
  root's folder;
- a file of the first root whose path starts with a label is refused with an
  error: it could not be told apart from that root's documents.

:func:`check_ids` refuses ids that could name another document: the form of a
chunk id (``doc#N``), an id the index holds for a document read from another
file that still exists, or another id's HTML-escaped or unescaped form.
:func:`legacy_roots` migrates an index that records no roots when its file
documents all came from one folder, and raises ``IndexVersionError`` (rebuild)
otherwise. The rules with examples: ``docs/ingestion.md``, "Document ids".
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from pathlib import PurePosixPath

from thresher.corpus.document import Document
from thresher.corpus.ids import is_chunk_form, unescaped_id
from thresher.errors import IdRefusedError, IndexVersionError, InputError
from thresher.index.manifest import DocEntry

__all__ = ["Roots", "check_ids", "label_documents", "legacy_roots", "new_label", "root_origins"]

Roots = dict[str, str]
"""Label -> real path of every root an index records; ``""`` is its first folder."""

_RECORD_FILES = (".jsonl", ".json")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def new_label(
    root: str,
    roots: Mapping[str, str],
    origins: Mapping[str, Sequence[str]] | None = None,
    heads: Set[str] = frozenset(),
) -> str:
    """The label of a folder not yet recorded (see the module docstring).

    Args:
        root: the folder's real path.
        roots: the roots recorded.
        origins: label -> origins of the documents indexed under it; a root whose
            folder is gone passes its label to ``root`` only when ``root`` holds
            (a sample of) those documents' paths: a moved folder, not an unrelated
            one while a drive is unmounted.
        heads: first path components of the ids in use (a label is never one).

    Returns:
        ``""`` for an index's first root; a moved folder's old label; else the
        folder's name made unique.
    """
    if not roots:
        return ""
    moved = [lb for lb, real in roots.items() if _moved_here(root, real, (origins or {}).get(lb))]
    if moved:
        named = os.path.basename(root.rstrip(os.sep))
        same = [lb for lb in moved if os.path.basename(roots[lb].rstrip(os.sep)) == named]
        return (same or moved)[0]
    base = os.path.basename(root.rstrip(os.sep)) or "root"
    first = roots.get("")
    n = 1
    while True:
        label = base if n == 1 else f"{base}-{n}"
        taken = (
            label in roots
            or label in heads
            or (first is not None and os.path.lexists(os.path.join(first, label)))
        )
        if not taken:
            return label
        n += 1


_SAMPLE = 50


def _moved_here(root: str, old: str, origins: Sequence[str] | None) -> bool:
    """Whether the gone folder ``old`` seems moved to ``root``: it no longer exists and
    ``root`` holds the paths of (up to :data:`_SAMPLE` of) its documents."""
    if not origins or os.path.isdir(old):
        return False
    rels = [os.path.relpath(o, old) for o in origins[:_SAMPLE] if _under(o, old)]
    return bool(rels) and all(os.path.isfile(os.path.join(root, r)) for r in rels)


def root_origins(roots: Mapping[str, str], known: Mapping[str, DocEntry]) -> dict[str, list[str]]:
    """Label -> origins of the indexed documents whose id carries that label."""
    out: dict[str, list[str]] = {}
    for doc_id, entry in known.items():
        if not entry.origin:
            continue
        head = doc_id.split("/", 1)[0] if "/" in doc_id else ""
        label = head if head in roots and head else ""
        if label in roots and _under(entry.origin, roots[label]):
            out.setdefault(label, []).append(entry.origin)
    return out


def label_documents(
    documents: Iterable[Document],
    roots: Roots,
    known: Mapping[str, DocEntry] | None = None,
) -> Iterator[Document]:
    """``documents`` with file documents given their index ids; ``roots`` gains new roots.

    Args:
        documents: as the loader yields them (a file's ``doc_id`` is its path
            relative to ``root``).
        roots: the index's roots, updated in place.
        known: the documents the index holds (to recognize a moved folder).

    Raises:
        InputError: a file of the first root whose path starts with another root's label.
    """
    heads = {_head(d) for d in known or {}}
    for doc in documents:
        if not doc.root:
            heads.add(_head(doc.doc_id))
            yield doc
            continue
        path = os.path.join(doc.root, *doc.doc_id.split("/"))
        holding = [label for label, real in roots.items() if _under(path, real)]
        if holding:
            label = max(holding, key=lambda lb: len(roots[lb]))
        else:
            label = new_label(doc.root, roots, root_origins(roots, known or {}), heads)
            roots[label] = doc.root  # a moved folder's label now points to where it is
        rel = PurePosixPath(*os.path.relpath(path, roots[label]).split(os.sep)).as_posix()
        if label == "" and rel.split("/", 1)[0] in roots:
            top = rel.split("/", 1)[0]
            raise InputError(
                f"{doc.origin or path}: its id {rel!r} would fall among the documents of the "
                f"folder {roots[top]} (labelled {top!r} in this index); rename the folder "
                f"{os.path.join(roots[''], top)} or build a new index"
            )
        doc_id = rel if label == "" else f"{label}/{rel}"
        heads.add(_head(doc_id))
        yield dataclasses.replace(doc, doc_id=doc_id, source=doc_id)


def _head(doc_id: str) -> str:
    return doc_id.split("/", 1)[0]


def legacy_roots(known: Mapping[str, DocEntry], location: object) -> Roots:
    """The roots of an index written before roots were recorded, from its documents' origins.

    Raises:
        IndexVersionError: its files came from more than one folder (it must be rebuilt).
    """
    found: dict[str, None] = {}
    for doc_id, entry in known.items():
        origin = entry.origin
        if not origin or origin.lower().endswith(_RECORD_FILES):
            continue
        tail = os.sep + doc_id.replace("/", os.sep)
        if origin.endswith(tail):
            found[os.path.realpath(origin[: -len(tail)] or os.sep)] = None
    if len(found) > 1:
        folders = " ".join(sorted(found))
        raise IndexVersionError(
            f"the index at {location} was built before documents were told apart by folder, "
            f"from files of {len(found)} folders ({folders}), whose equal relative paths "
            "overwrote each other; rebuild it: "
            f"`thresher index {folders} --index NEW_FOLDER` (then use NEW_FOLDER), "
            f"or delete {location} and index again"
        )
    return {"": next(iter(found))} if found else {}


def check_ids(plan: Mapping[str, tuple[Document, str]], known: Mapping[str, DocEntry]) -> None:
    """Refuse ids that could name another document than their own.

    Raises:
        IdRefusedError: an id has the form of a chunk id (``doc#N``: it would be taken
            for a chunk of ``doc``); an id the index holds for a document read from
            another file that still exists, unless both are record files (a record
            named like a text file); or a new
            id is the escaped form
            (``R&amp;D.txt``) or unescaped form of another document's id: a
            policy, shown ids escaped, could name either.
    """
    for doc_id, (doc, _) in plan.items():
        if is_chunk_form(doc_id):
            raise IdRefusedError(
                f"document id {doc_id!r} ({doc.source}) has the form of a chunk id "
                "(DOC#N) and would be taken for a chunk of another document; give it "
                "an id that does not end in '#' and digits",
                doc_id,
            )
    for doc_id, (doc, _) in plan.items():
        if doc_id in known and _other_file(known[doc_id].origin, doc.origin):
            raise IdRefusedError(
                f"document id {doc_id!r} ({doc.source}, read from {doc.origin}) is held in the "
                f"index by a document read from {known[doc_id].origin}, which is still there; "
                "give one of them another id (rename the file or the record)",
                doc_id,
            )
    new = [d for d in plan if d not in known]
    if not new:
        return
    every = set(plan) | set(known)
    escaped = {unescaped_id(e): e for e in every if "&" in e}
    for doc_id in new:
        plain = unescaped_id(doc_id)
        twin = plain if plain != doc_id and plain in every else escaped.get(doc_id)
        if twin is not None and twin != doc_id:
            raise IdRefusedError(
                f"document id {doc_id!r} ({plan[doc_id][0].source}) and the id {twin!r} of "
                "another document read the same once HTML entities are decoded, so a "
                "policy shown ids escaped could name either; rename one of them",
                doc_id,
            )


def _other_file(old: str, new: str) -> bool:
    """Whether two origins are two different files that both exist, not both record
    files (a document whose old file is gone was moved, and may take over its id; a
    record id, or a pooled paragraph, may be redefined by a later record file)."""
    if not old or not new or old == new:
        return False
    if old.lower().endswith(_RECORD_FILES) and new.lower().endswith(_RECORD_FILES):
        return False
    try:
        return not os.path.samefile(old, new)
    except OSError:
        return False
