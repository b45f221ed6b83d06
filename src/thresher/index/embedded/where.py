"""Evaluating a Chroma-style ``where`` on one chunk's stored metadata.

The embedded backend keeps each chunk's flat metadata (:mod:`thresher.index.records`)
and answers a :class:`~thresher.index.filters.DocFilter`'s ``where`` itself, in the
form :meth:`~thresher.index.filters.DocFilter.chroma_where` gives (already checked
by :mod:`thresher.index.filters`). The rules are Chroma's:

- ``{"k": v}`` is ``{"k": {"$eq": v}}``; several keys in one mapping must all hold;
- ``$eq``/``$in``: the key is present with an equal value, where a bool equals only a
  bool, a string only a string, and an int or float any number of the same value;
- ``$ne``/``$nin``: the complement of ``$eq``/``$in`` (a chunk without the key passes);
- ``$gt``/``$gte``/``$lt``/``$lte``: the key holds a number (not a bool) so ordered
  against the operand;
- ``$and``/``$or``: all / any of the conditions listed.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["matches"]

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
_MISSING = object()


def matches(where: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """Whether a chunk whose metadata is ``meta`` satisfies ``where``."""
    for key, condition in where.items():
        if key == "$and":
            held = all(matches(c, meta) for c in condition)
        elif key == "$or":
            held = any(matches(c, meta) for c in condition)
        else:
            held = _field(meta.get(key, _MISSING), condition)
        if not held:
            return False
    return True


def _field(value: Any, condition: Any) -> bool:
    if isinstance(condition, Mapping):
        ((op, operand),) = condition.items()
    else:
        op, operand = "$eq", condition
    if op in _ORDER:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and _ORDER[op](value, operand)
    single = op in ("$eq", "$ne")  # else $in, $nin
    found = _same(value, operand) if single else any(_same(value, o) for o in operand)
    return found if op in ("$eq", "$in") else not found


def _same(value: Any, operand: Any) -> bool:
    if value is _MISSING:
        return False
    if isinstance(value, bool) or isinstance(operand, bool):
        return isinstance(value, bool) and isinstance(operand, bool) and value == operand
    if isinstance(value, str) or isinstance(operand, str):
        return isinstance(value, str) and isinstance(operand, str) and value == operand
    return bool(value == operand)
