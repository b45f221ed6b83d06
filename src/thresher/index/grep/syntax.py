"""The parse tree of a grep pattern, read by thresher itself (no private ``re`` module).

:mod:`thresher.index.grep.plan` plans a grep from the tree of a pattern the guard
(:func:`thresher.index.grep.guard.rust_pattern`) has accepted: literals, escapes
(``\\d \\D \\s \\S \\w \\W \\b \\B \\A``, the letter escapes ``\\n \\t \\r \\f \\v``,
``\\xHH``, ``\\uHHHH``, escaped punctuation), ``.``, classes (negated, ranges,
class escapes), groups (capturing, ``(?P<name>``, ``(?:``, scoped flags ``(?imsx-imsx:``),
global flags at the start (``(?imsx)``), alternation, the quantifiers ``* + ? {n}
{n,} {n,m}`` (greedy or lazy) and the anchors ``^ $``. Anything else raises
``ValueError`` (the guard refuses it before).

The tree has the shape of CPython's own parser's for these patterns (its
``re._parser``, which is private): a class of one character is that character
(``[^a]`` a :class:`NotLiteral`), an unflagged non-capturing group is spliced into
its sequence (and is a repetition's body as it stands), and an alternation first
takes out the leading items its branches share, then becomes one class when every
branch is one character or class. ``tests/index/test_grep_syntax.py`` holds the two
equal on generated patterns while the private parser exists.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal as TypingLiteral

__all__ = [
    "Flag",
    "Literal",
    "NotLiteral",
    "AnyChar",
    "ClassChar",
    "ClassRange",
    "ClassCategory",
    "CharClass",
    "Anchor",
    "Branch",
    "Group",
    "Repeat",
    "Node",
    "Parsed",
    "parse",
]


class Flag(enum.IntFlag):
    """The inline flags grep accepts."""

    IGNORECASE = 1
    MULTILINE = 2
    DOTALL = 4
    VERBOSE = 8


_FLAG_LETTERS = {"i": Flag.IGNORECASE, "m": Flag.MULTILINE, "s": Flag.DOTALL, "x": Flag.VERBOSE}

Category = TypingLiteral["d", "D", "s", "S", "w", "W"]
AnchorKind = TypingLiteral["beginning", "end", "string_start", "boundary", "non_boundary"]


@dataclass(frozen=True, slots=True)
class Literal:
    """One character (by code point)."""

    code: int


@dataclass(frozen=True, slots=True)
class NotLiteral:
    """Any character but one (``[^a]``)."""

    code: int


@dataclass(frozen=True, slots=True)
class AnyChar:
    """``.``"""


@dataclass(frozen=True, slots=True)
class ClassChar:
    """A character inside a class."""

    code: int


@dataclass(frozen=True, slots=True)
class ClassRange:
    """``lo-hi`` inside a class (code points, inclusive)."""

    low: int
    high: int


@dataclass(frozen=True, slots=True)
class ClassCategory:
    """``\\d \\D \\s \\S \\w \\W`` inside a class (or alone, as a class of one)."""

    name: Category


ClassItem = ClassChar | ClassRange | ClassCategory


@dataclass(frozen=True, slots=True)
class CharClass:
    """``[...]`` (items in order, repeats dropped), or a category escape outside one."""

    items: tuple[ClassItem, ...]
    negate: bool = False


@dataclass(frozen=True, slots=True)
class Anchor:
    """``^`` (beginning), ``$`` (end), ``\\A`` (string_start), ``\\b``, ``\\B``."""

    kind: AnchorKind


# Compound nodes compare by identity, as CPython's do (its sub-patterns have no ``==``):
# an alternation takes out a shared leading item only when it is a single character,
# class or anchor.


@dataclass(frozen=True, slots=True, eq=False)
class Branch:
    """``a|b|...``: each alternative a sequence (possibly empty)."""

    alternatives: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True, slots=True, eq=False)
class Group:
    """A capturing group, or a group with scoped flags (``(?i:...)``, ``(?-i:...)``)."""

    add: Flag
    remove: Flag
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Repeat:
    """``body{low,high}`` (``high`` None: unbounded); lazy with a trailing ``?``."""

    low: int
    high: int | None
    lazy: bool
    body: tuple[Node, ...]


Node = Literal | NotLiteral | AnyChar | CharClass | Anchor | Branch | Group | Repeat


@dataclass(frozen=True, slots=True)
class Parsed:
    """A pattern's top-level sequence and its global flags (``(?i)`` at the start)."""

    nodes: tuple[Node, ...]
    flags: Flag


_CATEGORIES: dict[str, Category] = {"d": "d", "D": "D", "s": "s", "S": "S", "w": "w", "W": "W"}
_ANCHOR_ESCAPES: dict[str, AnchorKind] = {
    "b": "boundary",
    "B": "non_boundary",
    "A": "string_start",
}
_CHAR_ESCAPES = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11}
_HEX_WIDTH = {"x": 2, "u": 4}
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_WHITESPACE = frozenset(" \t\n\r\v\f")
_SPECIAL = frozenset(".\\[{()*+?^$|")
_MAX_REPEAT_COUNT = 4294967295  # CPython's limit on a repetition count


def parse(pattern: str) -> Parsed:
    """The tree of ``pattern`` (Python ``re`` syntax, a pattern the grep guard accepts).

    Raises:
        ValueError: the pattern is malformed or holds a construct grep refuses.
    """
    reader = _Reader(pattern)
    nodes = reader.alternation(reader.flags & Flag.VERBOSE, nested=0)
    if reader.i < len(pattern):
        raise ValueError(f"unbalanced parenthesis at position {reader.i}")
    return Parsed(tuple(nodes), reader.flags)


class _Reader:
    """Recursive descent over the pattern, position ``i``."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.flags = Flag(0)

    # -- characters --------------------------------------------------------------------------
    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def take(self) -> str:
        if self.i >= len(self.p):
            raise ValueError("unexpected end of pattern")
        c = self.p[self.i]
        self.i += 1
        return c

    def match(self, text: str) -> bool:
        if self.p.startswith(text, self.i):
            self.i += len(text)
            return True
        return False

    # -- alternation and sequence -------------------------------------------------------------
    def alternation(self, verbose: Flag | bool, nested: int) -> list[Node]:
        branches = [self.sequence(verbose, nested + 1, first=not nested)]
        while self.match("|"):
            if not nested:
                verbose = self.flags & Flag.VERBOSE
            branches.append(self.sequence(verbose, nested + 1, first=False))
        if len(branches) == 1:
            return branches[0]
        out: list[Node] = []
        while all(branches) and all(b[0] == branches[0][0] for b in branches):
            out.append(branches[0][0])  # a leading item every branch shares
            for b in branches:
                del b[0]
        merged = _as_class(branches)
        out.append(merged if merged is not None else Branch(tuple(tuple(b) for b in branches)))
        return out

    def sequence(self, verbose: Flag | bool, nested: int, first: bool) -> list[Node]:
        out: list[Node | _Plain] = []
        while (c := self.peek()) is not None and c not in "|)":
            self.i += 1
            if verbose and c in _WHITESPACE:
                continue
            if verbose and c == "#":  # a comment, to the end of the line
                while (d := self.take() if self.peek() is not None else None) not in (None, "\n"):
                    if d == "\\":
                        self.take()  # an escaped character, a newline too, stays in it
                continue
            if c == "\\":
                out.append(self.escape())
            elif c not in _SPECIAL:
                out.append(Literal(ord(c)))
            elif c == "[":
                out.append(self.char_class())
            elif c in "*+?{":
                self.quantifier(c, out)
            elif c == ".":
                out.append(AnyChar())
            elif c == "(":
                if self.group(out, verbose, nested, first):
                    verbose = self.flags & Flag.VERBOSE
            elif c == "^":
                out.append(Anchor("beginning"))
            elif c == "$":
                out.append(Anchor("end"))
            else:  # pragma: no cover  (every special character is handled above)
                raise ValueError(f"unexpected {c!r}")
        spliced: list[Node] = []
        for node in out:  # an unflagged non-capturing group is spliced into its sequence
            spliced.extend(node.body if isinstance(node, _Plain) else (node,))
        return spliced

    # -- atoms --------------------------------------------------------------------------------
    def escape(self) -> Node:
        c = self.take()
        if c in _CATEGORIES:
            return CharClass((ClassCategory(_CATEGORIES[c]),))
        if c in _ANCHOR_ESCAPES:
            return Anchor(_ANCHOR_ESCAPES[c])
        return Literal(self.char_escape(c, in_class=False))

    def char_escape(self, c: str, in_class: bool) -> int:
        if c in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[c]
        if c in _HEX_WIDTH:
            digits = self.p[self.i : self.i + _HEX_WIDTH[c]]
            if len(digits) != _HEX_WIDTH[c] or not set(digits) <= _HEX:
                raise ValueError(f"incomplete escape \\{c}{digits}")
            self.i += len(digits)
            return int(digits, 16)
        if c.isascii() and c.isalnum():
            where = " inside a class" if in_class else ""
            raise ValueError(f"escape \\{c}{where} is not handled")
        return ord(c)

    def char_class(self) -> Node:
        negate = self.match("^")
        items: list[ClassItem] = []
        while True:
            c = self.peek()
            if c is None:
                raise ValueError("unterminated character set")
            self.i += 1
            if c == "]" and items:
                break
            first = self.class_atom(c)
            if self.peek() == "-" and self.i + 1 < len(self.p):
                self.i += 1
                c2 = self.take()
                if c2 == "]":
                    items += [first, ClassChar(ord("-"))]
                    break
                second = self.class_atom(c2)
                if not isinstance(first, ClassChar) or not isinstance(second, ClassChar):
                    raise ValueError(f"bad character range at position {self.i}")
                if second.code < first.code:
                    raise ValueError(f"bad character range at position {self.i}")
                items.append(ClassRange(first.code, second.code))
            else:
                items.append(first)
        unique = tuple(dict.fromkeys(items))
        if len(unique) == 1 and isinstance(unique[0], ClassChar):
            code = unique[0].code
            return NotLiteral(code) if negate else Literal(code)
        return CharClass(unique, negate)

    def class_atom(self, c: str) -> ClassItem:
        if c != "\\":
            return ClassChar(ord(c))
        e = self.take()
        if e in _CATEGORIES:
            return ClassCategory(_CATEGORIES[e])
        if e in "bBA":
            raise ValueError(f"escape \\{e} inside a class is not handled")
        return ClassChar(self.char_escape(e, in_class=True))

    def quantifier(self, c: str, out: list[Node | _Plain]) -> None:
        low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}.get(c, (0, None))
        if c == "{":
            end = self.p.find("}", self.i)
            spec = self.p[self.i : end] if end >= 0 else ""
            lo, comma, hi = spec.partition(",")
            if end < 0 or not lo or not set(lo + hi) <= _DIGITS:
                raise ValueError(f"a '{{' that is not a repetition count at position {self.i}")
            self.i = end + 1
            low = int(lo)
            high = (int(hi) if hi else None) if comma else low
            if max(low, high or 0) > _MAX_REPEAT_COUNT:
                raise ValueError("the repetition number is too large")
            if high is not None and high < low:
                raise ValueError("min repeat greater than max repeat")
        if not out or isinstance(out[-1], Anchor):
            raise ValueError("nothing to repeat")
        last = out[-1]
        if isinstance(last, Repeat):
            raise ValueError("multiple repeat")
        if self.peek() == "+":
            raise ValueError("possessive quantifiers are not handled")
        lazy = self.match("?")
        body = last.body if isinstance(last, _Plain) else (last,)
        out[-1] = Repeat(low, high, lazy, body)

    def group(
        self, out: list[Node | _Plain], verbose: Flag | bool, nested: int, first: bool
    ) -> bool:
        """Read a group after its ``(``; True when it was global flags (``(?i)``)."""
        add = remove = Flag(0)
        capture = True
        if self.match("?"):
            c = self.take()
            if c == "P" and self.match("<"):
                end = self.p.find(">", self.i)
                if end < 0 or not self.p[self.i : end].isidentifier():
                    raise ValueError("bad group name")
                self.i = end + 1
            elif c == ":":
                capture = False
            elif c in _FLAG_LETTERS or c == "-":
                flags = self.inline_flags(c)
                if flags is None:
                    if not first or out:
                        raise ValueError("global flags not at the start of the expression")
                    return True
                add, remove = flags
                capture = False
            else:
                raise ValueError(f"group syntax (?{c} is not handled")
        inner = bool(verbose or add & Flag.VERBOSE) and not remove & Flag.VERBOSE
        body = self.alternation(inner, nested + 1)
        if not self.match(")"):
            raise ValueError("missing ), unterminated subpattern")
        if capture or add or remove:
            out.append(Group(add, remove, tuple(body)))
        else:
            out.append(_Plain(tuple(body)))
        return False

    def inline_flags(self, c: str) -> tuple[Flag, Flag] | None:
        """Flags after ``(?``: None for global ones (``(?i)``, now set), else (add, remove)."""
        add = remove = Flag(0)
        while c in _FLAG_LETTERS:
            add |= _FLAG_LETTERS[c]
            c = self.take()
        if c == ")":
            self.flags |= add
            return None
        if c == "-":
            c = self.take()
            if c not in _FLAG_LETTERS:
                raise ValueError("missing flag after '-'")
            while c in _FLAG_LETTERS:
                remove |= _FLAG_LETTERS[c]
                c = self.take()
        if c != ":":
            raise ValueError(f"unknown flag {c!r}")
        if add & remove:
            raise ValueError("bad inline flags: flag turned on and off")
        return add, remove


@dataclass(frozen=True, slots=True, eq=False)
class _Plain:
    """An unflagged non-capturing group while its sequence is read (then spliced in)."""

    body: tuple[Node, ...]


def _as_class(branches: list[list[Node]]) -> CharClass | None:
    """The alternation as one class, when each branch is one character or unnegated class."""
    items: list[ClassItem] = []
    for branch in branches:
        if len(branch) != 1:
            return None
        (node,) = branch
        if isinstance(node, Literal):
            items.append(ClassChar(node.code))
        elif isinstance(node, CharClass) and not node.negate:
            items.extend(node.items)
        else:
            return None
    return CharClass(tuple(dict.fromkeys(items)))
