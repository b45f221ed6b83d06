"""``grep_corpus``: a guarded regular-expression search over chunk texts.

Where it runs: an index with a grep side index (an embedded index) answers from
it (:mod:`thresher.index.grep.side_index`): trigram candidates, each checked the
way chromadb's engine reads the pattern, counting stopped at
``GrepConfig.count_cap``. Otherwise, and whenever the side index
cannot answer exactly: chromadb's ``where_document={"$regex": ...}``, i.e. Rust's
``regex`` crate, which matches in linear time, so no pattern can backtrack
catastrophically (``(a+)+$`` is as cheap as ``a+``), over every chunk. Python
``re`` only compiles the pattern (to reject what Python cannot parse); it never
runs it over the corpus.

The guard accepts the subset of syntax on which Python ``re`` and Rust
``regex`` agree, so a pattern means what a Python user expects:

- refused outright: empty patterns, patterns longer than
  ``GrepConfig.max_pattern_chars``, backreferences (``\\1``, ``(?P=name)``),
  lookaround (``(?=``, ``(?!``, ``(?<=``, ``(?<!``), atomic groups ``(?>``,
  possessive quantifiers (``a*+``), conditionals ``(?(``, comment groups
  ``(?#``, ``(?<name>`` (write ``(?P<name>``), inline flags other than
  ``i m s x`` (``x`` only as a global flag at the start), repetition counts
  (nested counts multiplied) above ``GrepConfig.max_repeat``;
- refused because the two engines read them differently: ``\\<``/``\\>``
  (word boundaries in Rust), ``\\Z``, ``\\z``, ``\\p``, octal and other unknown
  escapes, an unescaped ``{`` that is not a quantifier, ``[`` inside a class,
  ``&&``/``--``/``~~`` inside a class, ``\\b`` inside a class, whitespace or
  ``#`` inside a class in verbose mode;
- translated: ``$`` (end, or before a final newline, in Python) becomes
  ``(?:$|\\n\\z)`` for Rust, and must end the pattern, a group or a branch.

The runner is backend-agnostic: it takes a function that returns the ids of
the chunks matching a Rust-syntax pattern, orders them in corpus order,
skips excluded ids, counts them and cuts to ``limit``, all under a time bound
(:func:`bounded`): the search's own CPU time is held to ``GrepConfig.timeout_s``,
so a busy machine (a loaded CI runner, several ingests at once) does not refuse
a harmless pattern, and its wall time to :data:`WALL_FACTOR` times that (a
search waiting on a server, whose CPU time is not this process's).
"""

from __future__ import annotations

import re
import string
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeVar

from thresher.config import GrepConfig
from thresher.errors import PatternRejectedError, ThresherError

__all__ = ["check_pattern", "rust_pattern", "grep_ids", "bounded"]

_LETTER_ESCAPES = frozenset("dDsSwWbBAntrfv")
_CLASS_LETTER_ESCAPES = frozenset("dDsSwWntrfv")
_PUNCT_ESCAPES = frozenset(string.punctuation + " ") - {"<", ">"}
_HEX_ESCAPES = {"x": 2, "u": 4}
_QUANTIFIER = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")
_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_HEX = frozenset("0123456789abcdefABCDEF")
_END_ANCHOR = r"(?:$|\n\z)"
#: Rust's regex crate refuses ``\w{250}`` (its compiled-size limit: Unicode ``\w`` is large;
#: 200 compiles): refused here too, so a grep means the same with or without the side index
_WORD_CLASS_REPEAT = re.compile(r"(?:\\[wW]|\[[^\]]*\\[wW][^\]]*\])\{(\d+)")
_WORD_CLASS_MAX = 200
T = TypeVar("T")


def _reject(pattern: str, why: str) -> PatternRejectedError:
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return PatternRejectedError(f"grep pattern {shown!r} refused: {why}")


def check_pattern(pattern: str, config: GrepConfig) -> None:
    """Check that ``pattern`` is safe and means the same in Python and Rust.

    Args:
        pattern: a regular expression in Python ``re`` syntax.
        config: the bounds (``max_pattern_chars``, ``max_repeat``).

    Raises:
        PatternRejectedError: naming the refused construct (see module docs).
    """
    rust_pattern(pattern, config)


def rust_pattern(pattern: str, config: GrepConfig) -> str:
    """Check ``pattern`` (as :func:`check_pattern`) and return its Rust form.

    Returns:
        The pattern with ``$`` rewritten so that Rust matches what Python does.

    Raises:
        PatternRejectedError: naming the refused construct.
    """
    if not pattern:
        raise _reject(pattern, "the pattern is empty")
    if len(pattern) > config.max_pattern_chars:
        raise _reject(
            pattern,
            f"it has {len(pattern)} characters; the limit is {config.max_pattern_chars}",
        )
    out = _Scanner(pattern, config).scan()
    for m in _WORD_CLASS_REPEAT.finditer(pattern):
        if int(m.group(1)) > _WORD_CLASS_MAX:
            raise _reject(
                pattern,
                f"{m.group(1)} repetitions of a Unicode word class are too large for the regex "
                f"engine (the limit is {_WORD_CLASS_MAX}); use [A-Za-z0-9_] or fewer repeats",
            )
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        raise _reject(pattern, f"it does not compile: {exc}") from exc
    return out


class _Scanner:
    """One left-to-right pass: refuses constructs, tracks repetition, rewrites ``$``."""

    def __init__(self, pattern: str, config: GrepConfig) -> None:
        self.p = pattern
        self.config = config
        self.i = 0
        self.out: list[str] = []
        self.verbose = False
        self.levels: list[int] = [1]  # largest repetition product inside each open group
        self.atom = 1  # repetition product of the atom a quantifier would apply to

    def fail(self, why: str) -> PatternRejectedError:
        return _reject(self.p, why)

    def scan(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if self.verbose and c in string.whitespace:
                self.emit(c)
            elif self.verbose and c == "#":
                end = p.find("\n", self.i)
                end = len(p) if end < 0 else end
                self.out.append(p[self.i : end])
                self.i = end
            elif c == "\\":
                self.escape(in_class=False)
                self.atom = 1
            elif c == "[":
                self.char_class()
                self.atom = 1
            elif c == "(":
                self.group_open()
            elif c == ")":
                inner = self.levels.pop() if len(self.levels) > 1 else 1
                self.levels[-1] = max(self.levels[-1], inner)
                self.atom = inner
                self.emit(c)
            elif c in "*+?":
                self.emit(c)
                self.after_quantifier(f"{c}", 1)
            elif c == "{":
                m = _QUANTIFIER.match(p, self.i)
                if m is None:
                    raise self.fail("an unescaped '{' that is not a repetition count (write \\{)")
                low, comma, high = m.group(1), m.group(2), m.group(3)
                bound = int(high) if comma and high else int(low)
                self.out.append(m.group(0))
                self.i = m.end()
                self.after_quantifier(m.group(0), bound)
            elif c == "$":
                self.end_anchor()
            else:
                self.emit(c)
                self.atom = 1
        return "".join(self.out)

    def emit(self, text: str) -> None:
        self.out.append(text)
        self.i += len(text)

    def after_quantifier(self, shown: str, bound: int) -> None:
        product = self.atom * bound
        if product > self.config.max_repeat:
            nested = " (nested counts multiplied)" if self.atom > 1 else ""
            raise self.fail(
                f"repetition {shown} repeats {product} times{nested}; "
                f"the limit is {self.config.max_repeat}"
            )
        self.levels[-1] = max(self.levels[-1], product)
        nxt = self.p[self.i : self.i + 1]
        if nxt == "+":
            raise self.fail(f"possessive quantifier {shown}+ is not supported")
        if nxt == "?":
            self.emit("?")

    def end_anchor(self) -> None:
        j = self.i + 1
        if self.verbose:
            while j < len(self.p) and self.p[j] in string.whitespace:
                j += 1
        if j < len(self.p) and self.p[j] not in "|)":
            raise self.fail("'$' must end the pattern, a group or an alternative")
        self.out.append(_END_ANCHOR)
        self.i += 1
        self.atom = 1

    def escape(self, in_class: bool) -> None:
        p, i = self.p, self.i
        if i + 1 >= len(p):
            raise self.fail("it ends with a lone backslash")
        c = p[i + 1]
        if c.isdigit():
            if c == "0":
                raise self.fail("octal escape \\0 is not supported (use \\x00)")
            raise self.fail(f"backreference \\{c} is not supported")
        if c in _HEX_ESCAPES:
            width = _HEX_ESCAPES[c]
            digits = p[i + 2 : i + 2 + width]
            if len(digits) != width or not set(digits) <= _HEX:
                raise self.fail(f"escape \\{c} needs exactly {width} hex digits")
            self.emit(p[i : i + 2 + width])
            return
        allowed = _CLASS_LETTER_ESCAPES if in_class else _LETTER_ESCAPES
        if c in allowed or c in _PUNCT_ESCAPES:
            self.emit(p[i : i + 2])
            return
        where = " inside a character class" if in_class else ""
        if c in "<>":
            raise self.fail(f"escape \\{c} is a word boundary in Rust (write {c} unescaped)")
        raise self.fail(f"escape \\{c}{where} is not supported")

    def char_class(self) -> None:
        p = self.p
        start = self.i
        self.emit("[")
        if p.startswith("^", self.i):
            self.emit("^")
        if p.startswith("]", self.i):
            self.emit("]")
        while self.i < len(p):
            c = p[self.i]
            if c == "]":
                self.emit("]")
                return
            if c == "\\":
                self.escape(in_class=True)
            elif c == "[":
                raise self.fail("an unescaped '[' inside a character class (write \\[)")
            elif p[self.i : self.i + 2] in ("&&", "--", "~~"):
                raise self.fail(
                    f"'{p[self.i : self.i + 2]}' inside a character class "
                    "(a set operation in Rust; escape one of them)"
                )
            elif self.verbose and (c in string.whitespace or c == "#"):
                raise self.fail("whitespace or '#' inside a character class in verbose mode")
            else:
                self.emit(c)
        raise self.fail(f"the character class at position {start} is not closed")

    def group_open(self) -> None:
        p, i = self.p, self.i
        head = p[i : i + 4]
        refused = {
            "(?=": "lookahead (?=...)",
            "(?!": "lookahead (?!...)",
            "(?<=": "lookbehind (?<=...)",
            "(?<!": "lookbehind (?<!...)",
            "(?P=": "backreference (?P=name)",
            "(?>": "atomic group (?>...)",
            "(?(": "conditional (?(...)",
            "(?#": "comment group (?#...)",
        }
        for prefix, name in refused.items():
            if head.startswith(prefix):
                raise self.fail(f"{name} is not supported")
        if head.startswith("(?<"):
            raise self.fail("named group (?<name>...) is not supported (write (?P<name>...))")
        if head.startswith("(?P<") or head.startswith("(?:"):
            end = p.index(">", i) + 1 if head.startswith("(?P<") and ">" in p[i:] else i + 3
            self.push(p[i:end])
            return
        if head.startswith("(?"):
            m = _FLAGS.match(p, i)
            if m is None:
                raise self.fail(f"group syntax {p[i : i + 4]!r} is not supported")
            on, off, close = m.group(1), m.group(2) or "", m.group(3)
            bad = sorted(set(on + off) - set("imsx"))
            if bad:
                raise self.fail(f"inline flag {bad[0]!r} is not supported (only i, m, s, x)")
            if "x" in on + off:
                if not (i == 0 and close == ")" and not off):
                    raise self.fail("the x flag is only supported as (?x) at the very start")
                self.verbose = True
            if close == ")":
                self.emit(m.group(0))
                return
            self.push(m.group(0))
            return
        self.push("(")

    def push(self, text: str) -> None:
        self.emit(text)
        self.levels.append(1)


def grep_ids(
    match_ids: Callable[[str], Sequence[str]],
    pattern: str,
    config: GrepConfig,
    order: Mapping[str, int],
    limit: int,
    exclude: Collection[str] = (),
) -> tuple[list[str], int]:
    """Ids of the first ``limit`` chunks (corpus order) whose text matches ``pattern``.

    Args:
        match_ids: returns the ids of every chunk whose text matches a pattern in
            Rust ``regex`` syntax (for chromadb: ``collection.get(where_document=
            {"$regex": p}, include=[])["ids"]``).
        pattern: the user's pattern (Python syntax; checked here).
        config: bounds on pattern size, repetition and run time (``timeout_s``).
        order: chunk id -> position in corpus order (ids missing from it sort last).
        limit: the most ids returned (0 or less: none, but the matches are still counted).
        exclude: ids skipped before the cut to ``limit``.

    Returns:
        (matching chunk ids in corpus order, at most ``limit``; how many chunks
        matched after exclusion).

    Raises:
        PatternRejectedError: the pattern is refused, or the search ran longer than
            ``config.timeout_s``.
    """
    translated = rust_pattern(pattern, config)
    ids = bounded(lambda: list(match_ids(translated)), config.timeout_s, pattern)
    excluded = exclude if isinstance(exclude, AbstractSet) else set(exclude)
    tail = len(order)
    kept = list(dict.fromkeys(c for c in ids if c not in excluded))
    kept.sort(key=lambda c: (order.get(c, tail), c))
    return kept[: max(limit, 0)], len(kept)


WALL_FACTOR = 5.0
"""A bounded search may take this many times its CPU bound in wall time (see :func:`bounded`)."""


def bounded(fn: Callable[[], T], timeout_s: float, pattern: str) -> T:
    """Run ``fn`` (a search for ``pattern``) in a daemon thread and give up
    (``PatternRejectedError``) once it used ``timeout_s`` seconds of CPU, or
    :data:`WALL_FACTOR` times that in wall time; or re-raise its error (the regex
    engine refusing the pattern as ``PatternRejectedError``).

    Where a thread's CPU clock cannot be read (not Linux or macOS), ``timeout_s``
    bounds the wall time.
    """
    values: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            values.append(fn())
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    worker = threading.Thread(target=run, name="thresher-grep", daemon=True)
    worker.start()
    cpu = _cpu_clock(worker)
    wall = timeout_s * (WALL_FACTOR if cpu is not None else 1.0)
    deadline = time.monotonic() + wall
    step = max(timeout_s / 4, 0.005)
    while True:
        worker.join(max(0.0, min(step, deadline - time.monotonic())))
        if not worker.is_alive():
            break
        if time.monotonic() >= deadline or (cpu is not None and cpu() >= timeout_s):
            raise _reject(
                pattern,
                f"the search ran longer than {timeout_s:g} s of CPU time (or {wall:g} s in "
                "all); make it more specific",
            )
    if errors:
        error = errors[0]
        if _engine_refused(error):
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise _reject(
                pattern,
                f"the regex engine refused it ({first_line or type(error).__name__}); a "
                r"pattern such as \w{300} compiles too large: use fewer or shorter repetitions",
            ) from error
        raise error
    return values[0]


def _cpu_clock(thread: threading.Thread) -> Callable[[], float] | None:
    """The CPU seconds ``thread`` has used so far, as a function; None where they
    cannot be read (then the caller bounds the wall time)."""
    if thread.ident is None:
        return None
    try:
        cid = time.pthread_getcpuclockid(thread.ident)
        start = time.clock_gettime(cid)
    except (AttributeError, OSError, ValueError):  # Windows; the thread already ended
        return None

    def used() -> float:
        try:
            return time.clock_gettime(cid) - start
        except OSError:  # the thread ended between two looks
            return 0.0

    return used


def _engine_refused(error: BaseException) -> bool:
    """Whether ``error`` is the engine refusing the pattern, not the backend failing.

    The match function runs one regex query, so an error of the engine's own
    library (chromadb reports a compiled size over Rust's limit as a bare sqlite
    "constraint failed") or one naming the regex is about the pattern; thresher's
    own errors (an unreachable server) pass through.
    """
    if isinstance(error, ThresherError):
        return False
    library = type(error).__module__.split(".")[0]
    return library == "chromadb" or "regex" in str(error).lower()
