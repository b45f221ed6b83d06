"""Which lines of a chunk a grep pattern matched, with their line numbers.

``grep`` returns whole chunks; a person (``thresher grep``) wants the lines. The
pattern is read as the grep itself reads it (Rust's ``regex`` semantics, through
:func:`thresher.index.grep.plan.checking_pattern` and the ``regex`` module), and
each search is bounded in time.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from thresher.index.grep.plan import checking_pattern

__all__ = ["MatchLine", "matching_lines"]


@dataclass(frozen=True, slots=True)
class MatchLine:
    """One line of a chunk holding the start of a match.

    Attributes:
        line: 1-based line number within the chunk's text.
        text: the line, without its newline.
    """

    line: int
    text: str


def matching_lines(
    pattern: str, text: str, *, limit: int = 5, timeout_s: float = 1.0
) -> list[MatchLine]:
    """The lines of ``text`` where a match of ``pattern`` starts, first ``limit`` of them.

    A match spanning several lines is shown by its first. A pattern the grep
    accepted but this reading cannot handle, or a search that runs out of time,
    gives no lines (the chunk id alone is then shown).
    """
    try:
        compiled = regex.compile(checking_pattern(pattern), regex.V0)
    except (ValueError, regex.error):
        return []
    starts = [0]
    lines = text.split("\n")
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out: list[MatchLine] = []
    seen: set[int] = set()
    try:
        for m in compiled.finditer(text, timeout=timeout_s):
            number = _line_of(starts, m.start())
            if number not in seen:
                seen.add(number)
                out.append(MatchLine(number, lines[number - 1]))
                if len(out) >= limit:
                    break
    except TimeoutError:
        pass
    return out


def _line_of(starts: list[int], offset: int) -> int:
    """The 1-based line holding ``offset``, given each line's start offset."""
    from bisect import bisect_right

    return bisect_right(starts, offset)
