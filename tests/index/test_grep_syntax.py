"""grep's own parse tree of a pattern (``thresher.index.grep.syntax``).

It has the shape of CPython's parser's tree (``re._parser``, private, so read only
here, as a reference, and skipped where it is missing), and what grep_plan builds
from it means what Python ``re`` means on texts where the two engines agree.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from devdata import REPO_ROOT
from thresher.config import GrepConfig
from thresher.errors import PatternRejectedError
from thresher.index.grep import syntax as gs
from thresher.index.grep.guard import rust_pattern
from thresher.index.grep.plan import checking_pattern, indexed_form, required_trigrams

from .test_grep import PARITY_PATTERNS

CONFIG = GrepConfig()

# -- generated patterns in the syntax the guard accepts ----------------------------------------

_CHARS = ["a", "b", "c", "x", "A", "Z", "0", "7", "é", "ü", "ß", "k", " ", "-", "_", ",", "\n"]
_ESCAPES = [
    r"\d",
    r"\D",
    r"\w",
    r"\W",
    r"\s",
    r"\S",
    r"\.",
    r"\-",
    r"\_",
    r"\\",
    r"\x41",
    r"\u00e9",
]
_ESCAPES += [r"\n", r"\t", r"\ ", r"\#", r"\{", r"\[", r"\(", r"\|", r"\$"]
_CLASS_PARTS = [
    "a",
    "b",
    "z",
    "0",
    "9",
    "é",
    "-",
    "_",
    ".",
    r"\d",
    r"\w",
    r"\s",
    r"\S",
    r"\]",
    "a-f",
]
_CLASS_PARTS += ["0-9", "A-Z", "à-ÿ", r"\x00-\x7f", r"\u0100-\u017f", r"\-", r"\^"]
_QUANTIFIERS = ["", "", "", "?", "*", "+", "{2}", "{1,3}", "{2,}", "*?", "+?", "??", "{1,2}?"]


def _class(draw: Any) -> str:
    parts = draw(st.lists(st.sampled_from(_CLASS_PARTS), min_size=1, max_size=4))
    negate = draw(st.sampled_from(["", "", "^"]))
    body = "".join(parts)
    if body.startswith("^") and not negate:
        body = "\\" + body
    return f"[{negate}{body}]"


@st.composite
def _atom(draw: Any, depth: int) -> str:
    kind = draw(st.sampled_from(["char", "char", "escape", "class", ".", "anchor", "group"]))
    if kind == "char":
        return draw(st.sampled_from(_CHARS))
    if kind == "escape":
        return draw(st.sampled_from(_ESCAPES))
    if kind == "class":
        return _class(draw)
    if kind == "anchor":
        return draw(st.sampled_from(["^", r"\b", r"\B", r"\A"]))
    if kind == "group" and depth < 2:
        opener = draw(st.sampled_from(["(", "(?:", "(?P<g>", "(?i:", "(?-i:", "(?s:", "(?m-s:"]))
        return opener + draw(_alternation(depth + 1)) + ")"
    return "."


@st.composite
def _sequence(draw: Any, depth: int) -> str:
    out = []
    for _ in range(draw(st.integers(0 if depth else 1, 4))):
        atom = draw(_atom(depth))
        if atom not in ("^", r"\b", r"\B", r"\A"):
            atom += draw(st.sampled_from(_QUANTIFIERS))
        out.append(atom)
    return "".join(out)


@st.composite
def _alternation(draw: Any, depth: int = 0) -> str:
    first = draw(_sequence(depth))
    # branches sharing a head (factored out) and one-character branches (merged into a class)
    shared = draw(st.sampled_from(["", "", "a", "ab", r"\d", "[xy]"]))
    rest = draw(st.lists(_sequence(depth), max_size=3))
    end = draw(st.sampled_from(["", "", "$"]))
    return "|".join(shared + b for b in [first, *rest]) + end


@st.composite
def guarded_patterns(draw: Any) -> str:
    flags = draw(st.sampled_from(["", "", "", "(?i)", "(?m)", "(?s)", "(?im)", "(?x)"]))
    pattern = flags + draw(_alternation())
    try:
        rust_pattern(pattern, CONFIG)
    except PatternRejectedError:
        assume(False)
    return pattern


# -- the tree against CPython's parser ----------------------------------------------------------


def _cpython_parser() -> tuple[Any, Any]:
    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:  # pragma: no cover  (a Python without the private module)
        pytest.skip("this Python has no re._parser to compare with")


_FLAG_BITS = {gs.Flag.IGNORECASE: 2, gs.Flag.MULTILINE: 8, gs.Flag.DOTALL: 16, gs.Flag.VERBOSE: 64}


def _bits(flags: gs.Flag) -> int:
    return sum(bit for flag, bit in _FLAG_BITS.items() if flags & flag)


def _ours(nodes: tuple[gs.Node, ...]) -> list[Any]:
    """Our tree in a plain form that CPython's converts to as well."""
    out: list[Any] = []
    for n in nodes:
        if isinstance(n, gs.Literal | gs.NotLiteral):
            out.append((type(n).__name__, n.code))
        elif isinstance(n, gs.AnyChar):
            out.append(("any",))
        elif isinstance(n, gs.CharClass):
            items = [
                ("c", i.code)
                if isinstance(i, gs.ClassChar)
                else ("r", i.low, i.high)
                if isinstance(i, gs.ClassRange)
                else ("cat", i.name)
                for i in n.items
            ]
            out.append(("class", n.negate, items))
        elif isinstance(n, gs.Anchor):
            out.append(("at", n.kind))
        elif isinstance(n, gs.Branch):
            out.append(("branch", [_ours(a) for a in n.alternatives]))
        elif isinstance(n, gs.Group):
            out.append(("group", _bits(n.add), _bits(n.remove), _ours(n.body)))
        else:
            out.append(("repeat", n.low, n.high, n.lazy, _ours(n.body)))
    return out


def _theirs(nodes: Any, c: Any) -> list[Any]:
    cats = {
        c.CATEGORY_DIGIT: "d",
        c.CATEGORY_NOT_DIGIT: "D",
        c.CATEGORY_SPACE: "s",
        c.CATEGORY_NOT_SPACE: "S",
        c.CATEGORY_WORD: "w",
        c.CATEGORY_NOT_WORD: "W",
    }
    ats = {
        c.AT_BEGINNING: "beginning",
        c.AT_END: "end",
        c.AT_BEGINNING_STRING: "string_start",
        c.AT_BOUNDARY: "boundary",
        c.AT_NON_BOUNDARY: "non_boundary",
    }
    out: list[Any] = []
    for op, av in nodes:
        if op is c.LITERAL:
            out.append(("Literal", av))
        elif op is c.NOT_LITERAL:
            out.append(("NotLiteral", av))
        elif op is c.ANY:
            out.append(("any",))
        elif op is c.IN:
            negate = bool(av) and av[0][0] is c.NEGATE
            items = [
                ("c", v) if o is c.LITERAL else ("r", *v) if o is c.RANGE else ("cat", cats[v])
                for o, v in (av[1:] if negate else av)
            ]
            out.append(("class", negate, items))
        elif op is c.AT:
            out.append(("at", ats[av]))
        elif op is c.BRANCH:
            out.append(("branch", [_theirs(a, c) for a in av[1]]))
        elif op is c.SUBPATTERN:
            _group, add, remove, sub = av
            out.append(("group", add, remove, _theirs(sub, c)))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, sub = av
            high = None if high is c.MAXREPEAT else high
            out.append(("repeat", low, high, op is c.MIN_REPEAT, _theirs(sub, c)))
        else:
            raise AssertionError(f"unexpected {op} in {nodes}")
    return out


def _same_tree(pattern: str) -> None:
    parser, constants = _cpython_parser()
    theirs = parser.parse(pattern)
    ours = gs.parse(pattern)
    assert _ours(ours.nodes) == _theirs(list(theirs), constants), pattern
    assert _bits(ours.flags) == theirs.state.flags & (2 | 8 | 16 | 64), pattern


@pytest.mark.parametrize("pattern", PARITY_PATTERNS)
def test_the_tree_is_cpythons_on_the_parity_patterns(pattern: str) -> None:
    _same_tree(pattern)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(guarded_patterns())
@example(r"ab|ac|a")  # a shared head taken out, an empty branch left
@example(r"a|b|[c-e]|\d")  # one-character branches merged into a class
@example(r"(?:ab)*(?:c)+?(x)|(?:)")  # a plain group is a repetition's body, else spliced
@example("(?x) a \\  b # comment \\\n still comment\n c")  # an escaped newline in a comment
@example(r"[]a]|[^]]|[a-]|[\d-]")
def test_the_tree_is_cpythons_on_generated_patterns(pattern: str) -> None:
    _same_tree(pattern)


@pytest.mark.parametrize(
    "pattern", [r"(?<=a)b", r"\1", r"a**", r"(?i", r"[a", r"a{2", r"^*", r"\p{L}", r"(?P=n)"]
)
def test_what_grep_refuses_is_an_error_here_too(pattern: str) -> None:
    with pytest.raises(ValueError):
        gs.parse(pattern)


# -- what grep_plan builds from it ----------------------------------------------------------------

_TEXT = st.text(
    st.sampled_from(list("abcxAZ07 -_,.\n") + ["é", "ü", "ß", "{", "$", "#"]),
    min_size=1,
    max_size=12,
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(guarded_patterns(), st.lists(_TEXT, min_size=1, max_size=8))
@example("^^^.", ["0"])  # anchors side by side hold at one position (found by hypothesis)
@example("(?m)^(^a)", ["b\na"])
@example("a(?:$){2}", ["a"])
def test_the_checking_pattern_and_trigrams_agree_with_python_re(
    pattern: str, texts: list[str]
) -> None:
    """On ASCII and Latin-1 letters Python's ``re`` and the checking pattern agree; every
    text that matches holds the pattern's required trigrams."""
    try:
        checker = regex.compile(checking_pattern(pattern), regex.V0)
    except ValueError:  # a negated class of everything: the scan answers (and refuses it)
        return
    query = required_trigrams(pattern)
    for text in texts:
        matched = checker.search(text) is not None
        assert matched == (re.search(pattern, text) is not None), (pattern, text)
        if matched:
            assert _holds(query, indexed_form(text)), (pattern, text, query)


def _holds(query: Any, text: str) -> bool:
    if query is None:
        return True
    if isinstance(query, str):
        return query in text
    kind, parts = query
    results = [_holds(p, text) for p in parts]
    return all(results) if kind == "and" else any(results)


def test_no_module_reads_pythons_private_regex_parser() -> None:
    private = re.compile(
        r"""import_module\(\s*["'](re\._|sre_)|^\s*(from|import)\s+(re\._|sre_)""", re.M
    )
    users = [
        str(p.relative_to(REPO_ROOT))
        for p in (REPO_ROOT / "src").rglob("*.py")
        if private.search(p.read_text(encoding="utf-8"))
    ]
    assert users == [], "read patterns with thresher.index.grep.syntax"
