"""The grep guard, and parity of the chromadb ($regex, Rust) runner with Python ``re``."""

from __future__ import annotations

import re
import threading

import chromadb
import pytest
from chromadb.config import Settings

from thresher.config import GrepConfig
from thresher.errors import PatternRejectedError
from thresher.index.grep.guard import check_pattern, grep_ids, rust_pattern

CONFIG = GrepConfig()

# Accepted patterns, each exercising a construct both engines must read alike.
PARITY_PATTERNS = [
    r"Port Amsel",
    r"(?i)port amsel",
    r"\bE\d{4}\b",
    r"\d{4}-\d{2}-\d{2}",
    r"[\w.]+@example\.(org|net)",
    r"Müller|naïve",
    r"(?i)CAFÉ",
    r"^The",
    r"(?m)^The last",
    r"(?s)storm\..*retired",
    r"storm\.$",
    r"(?m)storm\.$",
    r"weeks\.$",
    r"gills?\s+as",
    r"[^\x00-\x7F]",
    r"C:\\Users",
    r"--dry-run",
    r"\bVell\b.*\b1652\b",
    r"(a+)+$",
    r"(a|aa)+b",
    r"colou?r|centre",
    r"(?P<year>1[89]\d\d)",
    r"(?i:sicilian) Defence",
    r"(?x) salt \s war  # a comment",
    r"\.$",
    r"[a-c]{3,}",
    r"\u00e9",
    r"e.d",
]

REFUSED = {
    "": "empty",
    "a" * 257: "characters",
    r"(a)\1": "backreference",
    r"(?P<n>a)(?P=n)": "backreference",
    r"(?=a)b": "lookahead",
    r"(?!a)b": "lookahead",
    r"(?<=a)b": "lookbehind",
    r"(?<!a)b": "lookbehind",
    r"(?>a+)b": "atomic",
    r"a++": "possessive",
    r"a{2}+": "possessive",
    r"(?(1)a|b)": "conditional",
    r"a{1001}": "1001",
    r"(a{40}){40}": "nested",
    r"(?a)\w": "inline flag",
    r"(?L)a": "inline flag",
    r"(?x:a b)": "x flag",
    r"\Z": "\\Z",
    r"\<word": "word boundary",
    r"a{,3}": "'{'",
    r"[a[b]]": "'['",
    r"[a&&b]": "&&",
    r"[\b]": "\\b",
    r"(?#note)a": "comment",
    r"(?<name>a)": "(?P<name>",
    r"a$b": "'$'",
    r"\p{L}": "\\p",
    r"\0": "octal",
    r"(unclosed": "does not compile",
    "(?x)[a b]": "verbose",
}


def test_accepted_patterns_pass_the_guard() -> None:
    for pattern in PARITY_PATTERNS:
        check_pattern(pattern, CONFIG)


@pytest.mark.parametrize(("pattern", "named"), list(REFUSED.items()))
def test_refused_patterns_name_the_construct(pattern: str, named: str) -> None:
    with pytest.raises(PatternRejectedError, match=re.escape(named)):
        check_pattern(pattern, CONFIG)


def test_dollar_is_rewritten_for_rust() -> None:
    assert rust_pattern(r"end$", CONFIG) == r"end(?:$|\n\z)"
    assert rust_pattern(r"(a$|b)\$", CONFIG) == r"(a(?:$|\n\z)|b)\$"


def test_limits_follow_the_config() -> None:
    tight = GrepConfig(max_pattern_chars=5, max_repeat=3)
    with pytest.raises(PatternRejectedError, match="limit is 5"):
        check_pattern("abcdef", tight)
    with pytest.raises(PatternRejectedError, match="limit is 3"):
        check_pattern("a{4}", tight)
    check_pattern("a{3}", tight)


@pytest.fixture(scope="module")
def collection(tmp_path_factory, documents):
    """A bare chromadb collection holding the corpus texts plus newline edge cases."""
    client = chromadb.PersistentClient(
        path=str(tmp_path_factory.mktemp("grep")), settings=Settings(anonymized_telemetry=False)
    )
    col = client.create_collection("chunks", embedding_function=None)
    texts = {d.doc_id: d.text for d in documents}
    texts["edge-1"] = "ends with a newline: storm.\n"
    texts["edge-2"] = "two newlines at the end weeks.\n\n"
    ids = list(texts)
    col.add(ids=ids, documents=[texts[i] for i in ids], embeddings=[[0.5, 0.5]] * len(ids))
    return col, texts


def _chroma_matcher(col):
    return lambda p: col.get(where_document={"$regex": p}, include=[])["ids"]


@pytest.mark.parametrize("pattern", PARITY_PATTERNS)
def test_grep_matches_python_re_exactly(collection, pattern: str) -> None:
    col, texts = collection
    order = {cid: i for i, cid in enumerate(texts)}
    expected = [cid for cid, text in texts.items() if re.search(pattern, text)]
    got = grep_ids(_chroma_matcher(col), pattern, CONFIG, order, limit=len(texts))
    assert got == (expected, len(expected))
    # limit cuts in corpus order, the total counts every match; exclusion applies first
    assert grep_ids(_chroma_matcher(col), pattern, CONFIG, order, limit=2) == (
        expected[:2],
        len(expected),
    )
    skip = set(expected[:2])
    got = grep_ids(_chroma_matcher(col), pattern, CONFIG, order, limit=2, exclude=skip)
    assert got == (expected[2:4], len(expected) - len(skip))
    # limit 0 returns nothing but still counts
    assert grep_ids(_chroma_matcher(col), pattern, CONFIG, order, limit=0) == ([], len(expected))


def test_catastrophic_pattern_runs_in_linear_time(collection) -> None:
    col, texts = collection
    order = {cid: i for i, cid in enumerate(texts)}
    # Python's backtracking would take hours on hostile-no; Rust's engine does not backtrack.
    col.upsert(
        ids=["hostile-no", "hostile-yes"],
        documents=["a" * 40 + "!", "b " + "a" * 40],
        embeddings=[[0.5, 0.5]] * 2,
    )
    try:
        for pattern in (r"(a+)+$", r"(a|aa)+$", r"(a+a+)+$"):
            got = grep_ids(_chroma_matcher(col), pattern, CONFIG, order, limit=10)
            assert got == (["multi-2", "hostile-yes"], 2)
    finally:
        col.delete(ids=["hostile-no", "hostile-yes"])


def test_a_slow_search_is_cut_off() -> None:
    held = threading.Event()  # the search answers only after the grep gave up

    def slow(_pattern: str) -> list[str]:
        held.wait(60)
        return []

    try:
        with pytest.raises(PatternRejectedError, match="longer than 0.05 s"):
            grep_ids(slow, "x", GrepConfig(timeout_s=0.05), {}, limit=5)
    finally:
        held.set()


def test_a_search_that_waits_on_a_busy_machine_is_not_cut_off() -> None:
    """The bound is the search's own CPU time: a search held up by a loaded machine (or
    waiting on I/O) for more than ``timeout_s`` still answers, up to
    :data:`~thresher.index.grep.guard.WALL_FACTOR` times the bound."""
    import time

    from thresher.index.grep.guard import WALL_FACTOR

    def waits(_pattern: str) -> list[str]:
        time.sleep(0.4)  # no CPU: what a descheduled thread looks like
        return ["a#0"]

    config = GrepConfig(timeout_s=0.2)
    assert WALL_FACTOR * config.timeout_s >= 1.0
    assert grep_ids(waits, "x", config, {"a#0": 0}, limit=5) == (["a#0"], 1)


def test_a_search_that_burns_its_cpu_is_cut_off() -> None:
    held = threading.Event()

    def spins(_pattern: str) -> list[str]:
        while not held.is_set():
            pass
        return []

    try:
        with pytest.raises(PatternRejectedError, match="longer than 0.05 s"):
            grep_ids(spins, "x", GrepConfig(timeout_s=0.05), {}, limit=5)
    finally:
        held.set()


def test_engine_errors_become_rejections_and_other_errors_propagate() -> None:
    def refuses(_pattern: str) -> list[str]:
        raise ValueError("Regex syntax error: too big")

    def broken(_pattern: str) -> list[str]:
        raise OSError("disk on fire")

    with pytest.raises(PatternRejectedError, match="regex engine refused"):
        grep_ids(refuses, "x", CONFIG, {}, limit=5)
    with pytest.raises(OSError, match="disk on fire"):
        grep_ids(broken, "x", CONFIG, {}, limit=5)
