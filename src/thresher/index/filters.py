"""Filters on documents: a Chroma-style ``where`` on their metadata, and a path glob.

A :class:`DocFilter` narrows every search (BM25, dense, hybrid), grep and read
to the documents it admits, on every backend: the store resolves it to the
chunk ids it admits (the backend evaluates the ``where``; the glob is matched here
against document ids) and treats every other chunk as excluded, before any cut.

``where`` is written as for Chroma's ``Collection.get(where=...)``:
``{"lang": "en"}``, ``{"year": {"$gte": 2019}}``,
``{"$and": [{"lang": "en"}, {"kind": {"$in": ["memo", "mail"]}}]}``. Field names
are a document's own metadata keys (a JSONL record's ``metadata``, a dataset
name), or one of the fields every chunk has: ``doc_id``, ``title``, ``source``.
The glob is :func:`fnmatch.fnmatchcase` over document ids (``*`` also matches
``/``): ``--path 'filings/*'``, ``--path '*.md'``. ``allow`` and ``hide`` list
document ids: a task's own documents (its per-question corpus), the documents an
attack's control run must not see.
:class:`thresher.index.filtered.FilteredStore` shows a store through one filter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from thresher.corpus.sanitize import has_surrogate
from thresher.errors import InputError

__all__ = ["DocFilter", "BUILTIN_FIELDS", "OPERATORS"]

#: fields every chunk's metadata holds under their own name (not ``meta:``)
BUILTIN_FIELDS = frozenset({"doc_id", "title", "source", "position"})
#: the comparison operators a field may take, as in Chroma
OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"})
_LOGICAL = frozenset({"$and", "$or"})
_USER_PREFIX = "meta:"  # how thresher.index.records stores a document's own metadata


@dataclass(frozen=True, slots=True)
class DocFilter:
    """Which documents a search may return.

    Attributes:
        where: a Chroma-style ``where`` on document metadata (None: any).
        path: a glob on document ids (None: any).
        allow: the only document ids admitted (None: any); ids the index lacks are
            ignored (a task's own documents: its per-question corpus).
        hide: document ids never admitted, as if the index lacked them (an attack's
            control run).
    """

    where: Mapping[str, Any] | None = None
    path: str | None = None
    allow: frozenset[str] | None = None
    hide: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, where: str | Mapping[str, Any] | None, path: str | None) -> DocFilter | None:
        """A filter from a ``where`` (JSON text or a mapping) and a glob; None when both
        are empty.

        Raises:
            InputError: ``where`` is not JSON, not an object, or uses an unknown operator.
        """
        if isinstance(where, str):
            text = where.strip()
            if not text:
                where = None
            else:
                try:
                    where = json.loads(text)
                except ValueError as exc:
                    raise InputError(
                        f"--where must be a JSON object like Chroma's where, e.g. "
                        f'\'{{"lang": "en"}}\'; got {text!r} ({exc})'
                    ) from exc
        if where is not None:
            if not isinstance(where, Mapping):
                raise InputError(f"where must be a JSON object, got {type(where).__name__}")
            _check(where)
            where = dict(where) or None
        path = path or None
        return cls(where, path) if where is not None or path is not None else None

    @classmethod
    def only(cls, doc_ids: Iterable[str]) -> DocFilter:
        """The filter admitting only ``doc_ids``."""
        return cls(allow=frozenset(doc_ids))

    @classmethod
    def without(cls, doc_ids: Iterable[str]) -> DocFilter:
        """The filter admitting every document but ``doc_ids``."""
        return cls(hide=frozenset(doc_ids))

    @property
    def key(self) -> str:
        """A stable text naming this filter (for caches and traces)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def by_id(self) -> bool:
        """Whether ``allow`` or ``hide`` restricts documents by id."""
        return self.allow is not None or bool(self.hide)

    def narrowed(self, other: DocFilter | None) -> DocFilter:
        """The filter admitting what both this one and ``other`` admit.

        Raises:
            InputError: both have a path glob, and they differ (one glob cannot say both).
        """
        if other is None or other == self:
            return self
        if self.path is not None and other.path is not None and self.path != other.path:
            raise InputError(
                f"two path globs ({self.path!r} and {other.path!r}) cannot narrow one search; "
                "give one"
            )
        wheres = [w for w in (self.where, other.where) if w is not None]
        where: Mapping[str, Any] | None = (
            None if not wheres else wheres[0] if len(wheres) == 1 else {"$and": wheres}
        )
        allows = [a for a in (self.allow, other.allow) if a is not None]
        allow = None if not allows else frozenset.intersection(*allows)
        return DocFilter(where, self.path or other.path, allow, self.hide | other.hide)

    def chroma_where(self) -> dict[str, Any] | None:
        """``where`` as chromadb sees it: a document's own keys under ``meta:``."""
        return None if self.where is None else _translate(self.where)

    def admits_doc(self, doc_id: str) -> bool:
        """Whether ``doc_id`` passes the path glob and the id lists (the ``where`` is the
        store's to judge)."""
        return (
            (self.path is None or fnmatchcase(doc_id, self.path))
            and (self.allow is None or doc_id in self.allow)
            and doc_id not in self.hide
        )

    def to_dict(self) -> dict[str, Any]:
        """``where`` and ``path``, and the id lists (sorted) when they are set."""
        out: dict[str, Any] = {"where": self.where, "path": self.path}
        if self.allow is not None:
            out["allow"] = sorted(self.allow)
        if self.hide:
            out["hide"] = sorted(self.hide)
        return out


#: the deepest ``$and``/``$or`` nesting a ``where`` may have
MAX_WHERE_DEPTH = 32
_SCALAR = (str, int, float, bool)
_ORDER = frozenset({"$gt", "$gte", "$lt", "$lte"})


def _check(where: Mapping[str, Any], depth: int = 0) -> None:
    """Raise ``InputError`` for a ``where`` Chroma would not read (checked here, where the
    message can say what to write): every rule of chromadb's own ``validate_where``,
    and no text it could not encode (a lone surrogate)."""
    if depth > MAX_WHERE_DEPTH:
        raise InputError(f"where: $and/$or nested deeper than {MAX_WHERE_DEPTH} levels")
    if not where:
        return
    for key, value in where.items():
        if not isinstance(key, str) or has_surrogate(key):
            raise InputError(
                f"where: field name {key!r} is not valid Unicode (a lone surrogate); "
                "send UTF-8 text"
            )
        if key in _LOGICAL:
            if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
                raise InputError(f"where: {key} takes a list of conditions, got {value!r}")
            if len(value) < 2:
                raise InputError(
                    f"where: {key} takes at least two conditions, got {len(value)}; "
                    "write a single condition without it"
                )
            for v in value:
                if not v:
                    raise InputError(f"where: {key} holds an empty condition {{}}")
                _check(v, depth + 1)
        elif key.startswith("$"):
            raise InputError(
                f"where: unknown operator {key!r} at the top; use $and, $or, or a field name"
            )
        elif isinstance(value, Mapping):
            unknown = sorted(set(value) - OPERATORS)
            if unknown or len(value) != 1:
                raise InputError(
                    f"where: field {key!r} takes one operator of "
                    f"{', '.join(sorted(OPERATORS))}; got {dict(value)!r}"
                )
            ((op, operand),) = value.items()
            _check_operand(key, op, operand)
        elif not isinstance(value, _SCALAR):
            raise InputError(f"where: field {key!r} compares with a string, number or boolean")
        elif isinstance(value, str) and has_surrogate(value):
            raise InputError(f"where: field {key!r}'s value is not valid Unicode; send UTF-8 text")


def _check_operand(key: str, op: str, operand: Any) -> None:
    """Raise ``InputError`` for an operand Chroma refuses for ``op``."""
    if op in _ORDER:
        if isinstance(operand, bool) or not isinstance(operand, int | float):
            raise InputError(f"where: {key!r} {op} compares with a number, got {operand!r}")
        return
    values = operand if isinstance(operand, list) else [operand]
    if op in ("$in", "$nin") and (not isinstance(operand, list) or not operand):
        raise InputError(f"where: {key!r} {op} takes a non-empty list, got {operand!r}")
    if isinstance(operand, list) and not operand:
        raise InputError(f"where: {key!r} {op} takes a value or a non-empty list, got []")
    if not all(isinstance(v, _SCALAR) for v in values) or len({type(v) for v in values}) > 1:
        raise InputError(
            f"where: {key!r} {op} takes strings, numbers or booleans, all of one type; "
            f"got {operand!r}"
        )
    if any(isinstance(v, str) and has_surrogate(v) for v in values):
        raise InputError(f"where: {key!r} {op} holds text that is not valid Unicode")


def _translate(where: Mapping[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for key, value in where.items():
        if key in _LOGICAL:
            parts.append({key: [_translate(v) for v in value]})
        else:
            name = key if key in BUILTIN_FIELDS else _USER_PREFIX + key
            parts.append({name: value})
    return parts[0] if len(parts) == 1 else {"$and": parts}
