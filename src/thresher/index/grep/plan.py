"""How a grep pattern is answered from the trigram side index: the trigrams every match
must contain, and a pattern that checks a candidate exactly as chromadb's engine would.

Both are read from the pattern's parse tree (:mod:`thresher.index.grep.syntax`, which
has the shape of Python's own), after :func:`thresher.index.grep.guard.rust_pattern` has
accepted it.

**Required trigrams** (:func:`required_trigrams`). Texts are indexed in a normal
form (:func:`normalize`): every decimal digit (``\\p{Nd}``, as the ``regex``
module knows them, a superset of chromadb's tables) becomes ``0``, ASCII capitals
and the two non-ASCII letters that fold to ASCII ones (KELVIN SIGN, LONG S) become
small ASCII letters; nothing else changes. A pattern's literals are read in the
same form (``\\d`` and ``[0-9]`` are the literal ``0``; a case-insensitive
literal is used only when it is ASCII or has no case), and combined as in Russ
Cox's trigram query analysis (exact sets, prefixes and suffixes across
concatenation, alternation and repetition). The result is a boolean query over
strings (phrases of trigrams to FTS5) that every match's text contains (a
superset: candidates are checked);
``None`` when the pattern requires none (``\\w``, ``.``), when every chunk is a
candidate.

**The checking pattern** (:func:`checking_pattern`) is the pattern rewritten for
the ``regex`` module, whose ``\\w \\d \\s \\b`` follow Unicode TS #18 as Rust's
``regex`` crate does, with case-insensitive parts spelled out as classes of
Rust's simple case-folding orbits (Python's ``re`` would also match ``İ`` for
``(?i)i``; Rust does not). Texts holding a character Python's Unicode database
does not know (assigned after Unicode 14) are not checked here: see
:func:`has_unknown_characters`; the caller falls back to chromadb's scan.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thresher.index.grep.syntax import (
    Anchor,
    AnyChar,
    Branch,
    CharClass,
    ClassCategory,
    ClassChar,
    ClassRange,
    Flag,
    Group,
    Literal,
    Node,
    NotLiteral,
    Repeat,
    parse,
)

__all__ = [
    "Query",
    "normalize",
    "indexed_form",
    "required_trigrams",
    "checking_pattern",
    "has_unknown_characters",
    "fts_query",
]

#: a requirement on a text: a string it contains (3 characters or more), ("and", parts),
#: ("or", parts), or None (nothing)
Query = str | tuple[str, tuple[Any, ...]] | None

_MAX_SET = 16  # the most strings an exact set, prefix or suffix set may hold
_MAX_CLASS = 8  # the most characters a class may stand for as a literal
_MAX_TERMS = 48  # the most strings one query may name
_IGNORECASE = Flag.IGNORECASE
_MULTILINE = Flag.MULTILINE
_DOTALL = Flag.DOTALL
_FOLD_TO_ASCII = {"\u212a": "k", "\u017f": "s"}  # KELVIN SIGN, LATIN SMALL LETTER LONG S
START, END = "\x02", "\x03"  # around each indexed text, so that ^ and $ narrow the search


@functools.cache
def _table() -> dict[int, str]:
    import regex

    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    table = {ord(d): "0" for d in regex.findall(r"\p{Nd}", everything)}
    table.update({c: chr(c + 32) for c in range(65, 91)})
    table.update({ord(k): v for k, v in _FOLD_TO_ASCII.items()})
    return table


def normalize(text: str) -> str:
    """The form texts are indexed in: decimal digits to ``0``, ASCII letters (and the
    letters folding to them) to small letters; all else unchanged."""
    return text.translate(_table())


def indexed_form(text: str) -> str:
    """What the trigram index holds for ``text``: its normal form between START and END."""
    return START + normalize(text) + END


def _norm_char(c: str) -> str:
    return normalize(c)


# -- Rust's simple case folding, from Python's Unicode database ------------------------------


def _simple_fold(c: str) -> str:
    folded = c.casefold()
    if len(folded) == 1:
        return folded
    lower = c.lower()
    return lower if len(lower) == 1 else c


@functools.cache
def _orbits() -> dict[str, frozenset[str]]:
    """Every cased character -> the characters that fold alike (its simple-folding orbit)."""
    groups: dict[str, set[str]] = {}
    for code in range(0x1F000):  # no cased character lies beyond
        c = chr(code)
        folded = _simple_fold(c)
        if folded != c:
            groups.setdefault(folded, {folded}).add(c)
    out: dict[str, frozenset[str]] = {}
    for members in groups.values():
        orbit = frozenset(members)
        for c in orbit:
            out[c] = orbit
    return out


def _orbit(c: str) -> frozenset[str]:
    return _orbits().get(c, frozenset(c))


@functools.lru_cache(maxsize=1 << 16)
def _is_unknown(c: str) -> bool:
    return unicodedata.category(c) == "Cn"


# Blocks every character of which Unicode 14 assigns (Latin, IPA, diacritics, Cyrillic,
# Latin Extended Additional, most punctuation, currency, letterlike symbols, arrows):
# a text of these alone needs no closer look.
_ASSIGNED_BLOCKS = re.compile(
    "[^\x00-\u036f\u0400-\u04ff\u1e00-\u1eff\u2010-\u2027\u2030-\u205e\u20a0-\u20c0"
    "\u2100-\u214f\u2190-\u21ff]"
)


def has_unknown_characters(text: str) -> bool:
    """True when ``text`` holds a character Python's Unicode database does not know
    (its classes and case folding could differ from chromadb's there)."""
    return any(_is_unknown(c) for c in set(_ASSIGNED_BLOCKS.findall(text)))


# -- the checking pattern -----------------------------------------------------------------------


def checking_pattern(pattern: str) -> str:
    """``pattern`` for the ``regex`` module, meaning what it means to Rust's ``regex``.

    Raises:
        ValueError: the pattern holds a construct this rewrite does not handle (the
            guard refuses all of them; the caller then scans with chromadb).
    """
    parsed = parse(pattern)
    return _emit(parsed.nodes, parsed.flags)


def _escape_char(code: int) -> str:
    return f"\\U{code:08x}"


def _class(codes: set[int], ranges: list[tuple[int, int]], cats: list[str], negate: bool) -> str:
    parts = [_escape_char(c) for c in sorted(codes)]
    parts += [f"{_escape_char(a)}-{_escape_char(b)}" for a, b in ranges]
    return "[" + ("^" if negate else "") + "".join(parts + cats) + "]"


_COMPLEMENTS = ({"d", "D"}, {"s", "S"}, {"w", "W"})


def _emit_in(node: CharClass, flags: Flag) -> str:
    names = {item.name for item in node.items if isinstance(item, ClassCategory)}
    if node.negate and any(pair <= names for pair in _COMPLEMENTS):
        # matches nothing; chromadb's engine refuses it, the regex module matches anything
        raise ValueError("a negated class of every character (such as [^\\s\\S])")
    codes: set[int] = set()
    ranges: list[tuple[int, int]] = []
    cats: list[str] = []
    for item in node.items:
        if isinstance(item, ClassChar):
            codes.add(item.code)
        elif isinstance(item, ClassRange):
            ranges.append((item.low, item.high))
        else:
            cats.append("\\" + item.name)
    if flags & _IGNORECASE:
        extra = {ord(o) for c in codes for o in _orbit(chr(c))}
        for cased, orbit in _orbits().items():
            if any(a <= ord(cased) <= b for a, b in ranges):
                extra.update(ord(o) for o in orbit)
        codes |= extra
    return _class(codes, ranges, cats, node.negate)


def _emit_literal(code: int, flags: Flag, negate: bool = False) -> str:
    if flags & _IGNORECASE and len(_orbit(chr(code))) > 1:
        return _class({ord(o) for o in _orbit(chr(code))}, [], [], negate)
    return _class({code}, [], [], True) if negate else _escape_char(code)


_AT = {"boundary": r"\b", "non_boundary": r"\B", "string_start": r"\A"}


def _emit_anchor(node: Anchor, flags: Flag) -> str:
    if node.kind == "beginning":
        return "(?m:^)" if flags & _MULTILINE else r"\A"
    if node.kind == "end":
        return "(?m:$)" if flags & _MULTILINE else "(?-m:$)"
    return _AT[node.kind]


def _emit(nodes: Sequence[Node], flags: Flag) -> str:
    out = []
    for node in nodes:
        if isinstance(node, Literal):
            out.append(_emit_literal(node.code, flags))
        elif isinstance(node, NotLiteral):
            out.append(_emit_literal(node.code, flags, negate=True))
        elif isinstance(node, AnyChar):
            out.append("(?s:.)" if flags & _DOTALL else "(?-s:.)")
        elif isinstance(node, CharClass):
            out.append(_emit_in(node, flags))
        elif isinstance(node, Anchor):
            out.append(_emit_anchor(node, flags))
        elif isinstance(node, Branch):
            out.append("(?:" + "|".join(_emit(alt, flags) for alt in node.alternatives) + ")")
        elif isinstance(node, Group):
            out.append("(?:" + _emit(node.body, (flags | node.add) & ~node.remove) + ")")
        else:
            bound = "" if node.high is None else str(node.high)
            lazy = "?" if node.lazy else ""
            out.append(f"(?:{_emit(node.body, flags)}){{{node.low},{bound}}}{lazy}")
    return "".join(out)


# -- required trigrams --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Info:
    """What is known of the strings (normal form) a sub-pattern matches."""

    exact: frozenset[str] | None  # all of them, when few
    prefix: frozenset[str]  # each starts with one of these ({""}: unknown)
    suffix: frozenset[str]  # each ends with one of these
    must: Query  # a requirement each satisfies besides the above


_ANY = _Info(None, frozenset({""}), frozenset({""}), None)
_EMPTY = _Info(frozenset({""}), frozenset({""}), frozenset({""}), None)


def _exact(strings: set[str]) -> _Info:
    frozen = frozenset(strings)
    return _Info(frozen, frozen, frozen, None)


def _and(*parts: Query) -> Query:
    flat: list[Any] = []
    for p in parts:
        if p is None:
            continue
        for q in p[1] if isinstance(p, tuple) and p[0] == "and" else (p,):
            if q not in flat:
                flat.append(q)
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else ("and", tuple(flat))


def _or(*parts: Query) -> Query:
    flat: list[Any] = []
    for p in parts:
        if p is None:
            return None  # one branch needs nothing: the alternation needs nothing
        for q in p[1] if isinstance(p, tuple) and p[0] == "or" else (p,):
            if q not in flat:
                flat.append(q)
    return flat[0] if len(flat) == 1 else ("or", tuple(flat))


def _string_query(s: str) -> Query:
    """A text containing ``s`` (a phrase of trigrams to FTS5); nothing when shorter than 3."""
    return s if len(s) >= 3 else None


def _any_of(strings: frozenset[str]) -> Query:
    return _or(*(_string_query(s) for s in sorted(strings)))


def _full(info: _Info) -> Query:
    if info.exact is not None:
        return _and(info.must, _any_of(info.exact))
    return _and(info.must, _any_of(info.prefix), _any_of(info.suffix))


def _cross(a: frozenset[str], b: frozenset[str]) -> frozenset[str] | None:
    if len(a) * len(b) > _MAX_SET:
        return None
    return frozenset(x + y for x in a for y in b)


def _small(
    strings: frozenset[str] | None, fallback: frozenset[str] | None = None
) -> frozenset[str]:
    """A prefix or suffix set small enough to carry on (else ``fallback``, else unknown)."""
    for candidate in (strings, fallback):
        if candidate is not None and len(candidate) <= _MAX_SET:
            return candidate
    return frozenset({""})


def _concat(x: _Info, y: _Info) -> _Info:
    if x.exact is not None and y.exact is not None:
        both = _cross(x.exact, y.exact)
        if both is not None:
            return _Info(both, both, both, _and(x.must, y.must))
    must = _and(_full(x), _full(y))
    joint = _cross(x.suffix, y.prefix)
    if joint is not None:
        must = _and(must, _any_of(joint))
    prefix = x.prefix if x.exact is None else _small(_cross(x.exact, y.prefix), x.exact)
    suffix = y.suffix if y.exact is None else _small(_cross(x.suffix, y.exact), y.exact)
    return _Info(None, prefix, suffix, must)


def _alternate(infos: list[_Info]) -> _Info:
    exact: frozenset[str] | None = frozenset()
    for info in infos:
        if exact is None or info.exact is None or len(exact | info.exact) > _MAX_SET:
            exact = None
            break
        exact = exact | info.exact
    if exact is not None:
        return _Info(exact, exact, exact, _or(*(i.must for i in infos)))
    prefix = frozenset().union(*(i.prefix for i in infos))
    suffix = frozenset().union(*(i.suffix for i in infos))
    return _Info(None, _small(prefix), _small(suffix), _or(*(_full(i) for i in infos)))


def _repeat(x: _Info, low: int, high: int | None) -> _Info:
    if low == 0:
        if high == 1 and x.exact is not None:
            return _alternate([_EMPTY, x])
        return _ANY
    copies = x
    for _ in range(min(low, 4) - 1):
        copies = _concat(copies, x)
    if high == low and low <= 4:
        return copies
    prefix = copies.prefix if copies.exact is None else copies.exact
    suffix = x.suffix if x.exact is None else x.exact
    return _Info(None, prefix, suffix, _full(copies))


def _literal_info(code: int, flags: Flag) -> _Info:
    c = chr(code)
    if flags & _IGNORECASE and len(_orbit(c)) > 1 and not c.isascii() and c not in _FOLD_TO_ASCII:
        return _ANY  # a non-ASCII cased letter: its folding partners are not normalized
    if unicodedata.category(c) == "Cn":
        return _ANY
    return _exact({_norm_char(c)})


def _class_info(node: CharClass, flags: Flag) -> _Info:
    if node.negate:
        return _ANY
    chars: set[str] = set()
    for item in node.items:
        if isinstance(item, ClassCategory):
            if item.name != "d":
                return _ANY
            chars.add("0")
        elif isinstance(item, ClassChar):
            chars.add(chr(item.code))
        else:
            if item.high - item.low > 64:
                return _ANY
            chars.update(chr(c) for c in range(item.low, item.high + 1))
    infos = [_literal_info(ord(c), flags) if c != "0" else _exact({"0"}) for c in sorted(chars)]
    if any(i.exact is None for i in infos):
        return _ANY
    strings = {s for i in infos for s in (i.exact or ())}
    return _exact(strings) if 0 < len(strings) <= _MAX_CLASS else _ANY


#: the anchors that stand for a marker or newline of the indexed form
_MARKED = frozenset({"beginning", "string_start", "end"})


def _marked_anchors(nodes: Sequence[Node]) -> int:
    """How many anchors of ``nodes`` (at any depth) stand for a marker or newline."""
    count = 0
    for node in nodes:
        if isinstance(node, Anchor):
            count += node.kind in _MARKED
        elif isinstance(node, Branch):
            count += sum(_marked_anchors(alt) for alt in node.alternatives)
        elif isinstance(node, Group):
            count += _marked_anchors(node.body)
        elif isinstance(node, Repeat):  # a body repeated holds its anchors again
            count += _marked_anchors(node.body) * (1 if node.high == 1 else 2)
    return count


def _anchor_info(node: Anchor, flags: Flag) -> _Info:
    """An anchor as the marker or newline next to it in the indexed form."""
    multiline = bool(flags & _MULTILINE)
    if node.kind == "string_start" or (node.kind == "beginning" and not multiline):
        return _exact({START})
    if node.kind == "beginning":
        return _exact({START, "\n"})
    if node.kind == "end":
        return _exact({END, "\n"} if multiline else {END, "\n" + END})
    return _EMPTY


def _info(nodes: Sequence[Node], flags: Flag, marks: bool = True) -> _Info:
    """What ``nodes`` require of a matching text; ``marks`` False reads every anchor as
    the empty string (anchors are zero-width: two of them side by side hold at one
    position, which a concatenation of their markers would not say)."""
    result = _EMPTY
    for node in nodes:
        part: _Info
        if isinstance(node, Literal):
            part = _literal_info(node.code, flags)
        elif isinstance(node, CharClass):
            part = _class_info(node, flags)
        elif isinstance(node, Anchor):
            part = _anchor_info(node, flags) if marks else _EMPTY
        elif isinstance(node, Branch):
            part = _alternate([_info(alt, flags, marks) for alt in node.alternatives])
        elif isinstance(node, Group):
            part = _info(node.body, (flags | node.add) & ~node.remove, marks)
        elif isinstance(node, Repeat):
            part = _repeat(_info(node.body, flags, marks), node.low, node.high)
        else:  # any character, or all but one
            part = _ANY
        result = _concat(result, part)
    return result


def _limit(query: Query, budget: list[int]) -> Query:
    """Drop conjuncts past ``_MAX_TERMS`` strings (a weaker query is still a superset)."""
    if query is None:
        return None
    if isinstance(query, str):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        return query
    kind, parts = query
    if kind == "and":
        return _and(*(_limit(p, budget) for p in parts))
    kept = [_limit(p, budget) for p in parts]
    return None if any(k is None for k in kept) else _or(*kept)


def required_trigrams(pattern: str) -> Query:
    """The strings (indexed form) every text matching ``pattern`` contains, as a query.

    Returns:
        ``None`` when the pattern requires no string of 3 characters or more (then
        every chunk is a candidate).
    """
    parsed = parse(pattern)
    # one anchor narrows by its marker; with more, two may stand side by side (``^^``,
    # ``^(^a)``, ``(?:$){2}``), so none does (a weaker query is still a superset)
    marks = _marked_anchors(parsed.nodes) <= 1
    return _limit(_full(_info(parsed.nodes, parsed.flags, marks)), [_MAX_TERMS])


def fts_query(query: Query) -> str:
    """``query`` in SQLite FTS5 syntax (each string a quoted phrase of its trigrams)."""
    if query is None:
        raise ValueError("an empty query has no FTS5 form")
    if isinstance(query, str):
        return '"' + query.replace('"', '""') + '"'
    kind, parts = query
    joined = f" {kind.upper()} ".join(fts_query(p) for p in parts)
    return f"({joined})"
