"""The grep side index: the same hits, total and order as chromadb's full scan.

Each pattern runs twice over one corpus: through :func:`grep_indexed` (trigram
candidates checked by the ``regex`` module) and through chromadb's ``$regex`` scan
(:func:`grep_ids`, what grep did before the side index). They must agree exactly,
on hand-picked patterns, on generated ones, and on texts chosen where Python,
the ``regex`` module and Rust read characters differently.
"""

from __future__ import annotations

import chromadb
import pytest
from chromadb.config import Settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thresher.config import GrepConfig
from thresher.errors import PatternRejectedError
from thresher.index.grep.guard import grep_ids
from thresher.index.grep.plan import indexed_form, required_trigrams
from thresher.index.grep.side_index import GrepIndex, grep_indexed, scan_texts

from .test_grep import PARITY_PATTERNS

EXACT = GrepConfig(count_cap=10**9, timeout_s=60)  # count all; never time out on a busy machine

# Texts where engines differ: dotted capital I, KELVIN SIGN, LONG S, Arabic-Indic
# digits, superscripts (not \w in Rust), a file separator (Python's \s, not Rust's),
# zero-width joiner (Rust's \w), final newlines, ISO dates, markers' neighbours.
EDGE_TEXTS = [
    "İstanbul and Istanbul were both named.",
    "The \u212aelvin scale; a \u017fhort s; SICILIAN and sicilian.",
    "Dated ١٩٩٠-٠١-٠٢ in Arabic-Indic digits, and 2031-04-12 in ASCII.",
    "x² and H₂O are numbers of another kind.",
    "field\x1cseparator and a\u200djoiner",
    "ends with a newline: storm.\n",
    "two newlines at the end weeks.\n\n",
    "river",
    "The river\nThe second line ends with river",
    "Müller met Zürich's mayor in São Paulo; MÜLLER shouted.",
    "Symphonies and a symphony by Jr. Smith Sr. and John Smith Jr. later.",
    "born in Lyon; born in lyon; $12.5 million and $3 billion",
    "mail me at a.b@example.org or c@example.net, not x@example.com",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
    "quantum photon QUANTUM Photons",
    "1899 1900 18999 1789 born 1812",
    "",
]

MORE_PATTERNS = [
    r"(?i)istanbul",
    r"(?i)kelvin",
    r"(?i)short s",
    r"\d{4}-\d{2}-\d{2}",
    r"\b\d{4}-\d{2}-\d{2}\b",
    r"\w+\s\w+",
    r"x\w",
    r"field\sseparator",
    r"a\wjoiner",
    r"river$",
    r"(?m)river$",
    r"(?m)^The",
    r"^The ",
    r"\Ariver",
    r"(?i)müller",
    r"Müller|Zürich|São Paulo",
    r"[A-Z][a-z]+ [A-Z][a-z]+ (Jr|Sr)\.",
    r"(?i)\bsymphon(y|ies)\b",
    r"born in [A-Z]\w+",
    r"\$\d+(\.\d+)? (million|billion)",
    r"(?i)quantum|photon",
    r"[\w.]+@[\w.]+\.(com|org)",
    r"\b1[89]\d\d\b",
    r"\w",
    r"(a+)+$",
    r"(?s)storm\..",
    r"[^a-z ]{3}",
    r"(?i)[q-s]uantum",
    r"colou?r|centre|Olympic",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, documents):
    """Corpus texts in order, a chromadb collection of them and their side index."""
    texts = [d.text for d in documents] + EDGE_TEXTS
    ids = [f"c{i:03d}" for i in range(len(texts))]
    client = chromadb.PersistentClient(
        path=str(tmp_path_factory.mktemp("grepix")), settings=Settings(anonymized_telemetry=False)
    )
    col = client.create_collection("chunks", embedding_function=None)
    col.add(ids=ids, documents=texts, embeddings=[[0.5, 0.5]] * len(ids))
    path = tmp_path_factory.mktemp("side") / "grep.sqlite3"
    assert GrepIndex.build(path, texts) == len(texts)
    index = GrepIndex.open(path, len(texts))
    assert index is not None
    yield ids, texts, col, index
    client.close()


def _both(corpus, pattern: str, limit: int, exclude=(), config: GrepConfig = EXACT):
    ids, _texts, col, index = corpus
    order = {c: i for i, c in enumerate(ids)}

    def matching(p: str) -> list[str]:
        return col.get(where_document={"$regex": p}, include=[])["ids"]

    def scan() -> tuple[list[str], int]:
        return grep_ids(matching, pattern, config, order, limit, exclude)

    scanned: list[bool] = []

    def fallback() -> tuple[list[str], int]:
        scanned.append(True)
        return scan()

    fast = grep_indexed(index, ids, pattern, config, limit, exclude, fallback)
    if pattern not in CATASTROPHIC:  # those may take the scan: the regex module gives up
        assert not scanned, f"{pattern!r}: the side index should have answered"
    return fast, scan()


# Backtracking patterns the regex module may give up on (then chromadb's scan answers).
CATASTROPHIC = {r"(a+)+$", r"(a|aa)+b", r"(a+a+)+$"}


@pytest.mark.parametrize("pattern", PARITY_PATTERNS + MORE_PATTERNS)
def test_side_index_agrees_with_the_scan(corpus, pattern: str) -> None:
    (hits, total, capped), (want_hits, want_total) = _both(corpus, pattern, limit=1000)
    assert (hits, total, capped) == (want_hits, want_total, False)
    (hits, total, _), (want_hits, _) = _both(corpus, pattern, limit=2, exclude=want_hits[:1])
    assert hits == want_hits and total == max(want_total - 1, 0)


def test_counting_stops_at_the_cap_with_the_first_hits_in_order(corpus) -> None:
    config = GrepConfig(count_cap=3, timeout_s=60)
    (hits, total, capped), (want_hits, want_total) = _both(corpus, r"\w", 2, config=config)
    assert want_total > 3 and capped and total == 3 and hits == want_hits[:2]
    (hits, total, capped), _ = _both(corpus, r"(?i)istanbul", 2, config=config)
    assert (total, capped) == (1, False)  # fewer than the cap: exact


def test_required_trigrams_hold_for_every_matching_text(corpus) -> None:
    import regex

    _ids, texts, _col, _index = corpus
    for pattern in PARITY_PATTERNS + MORE_PATTERNS:
        query = required_trigrams(pattern)
        if query is None or pattern in CATASTROPHIC:  # nothing to check / backtracks for ages
            continue
        for text in texts:
            if regex.search(pattern, text, timeout=5):
                assert _satisfies(query, indexed_form(text)), (pattern, text)


def _satisfies(query, form: str) -> bool:
    if isinstance(query, str):
        return query in form
    kind, parts = query
    results = (_satisfies(p, form) for p in parts)
    return all(results) if kind == "and" else any(results)


def test_unknown_characters_fall_back_to_the_scan(tmp_path) -> None:
    texts = ["plain text", "a new letter \U0001e5d0 here"]  # unassigned in Unicode 14
    GrepIndex.build(tmp_path / "g.sqlite3", texts)
    index = GrepIndex.open(tmp_path / "g.sqlite3", 2)
    assert index is not None
    scanned = (["b"], 1)
    got = grep_indexed(index, ["a", "b"], "letter", EXACT, 5, (), lambda: scanned)
    assert got == (["b"], 1, False)


def test_a_missing_or_mismatched_side_index_is_not_used(tmp_path) -> None:
    assert GrepIndex.open(tmp_path / "none.sqlite3", 3) is None
    GrepIndex.build(tmp_path / "g.sqlite3", ["one", "two"])
    assert GrepIndex.open(tmp_path / "g.sqlite3", 3) is None


@pytest.mark.parametrize("pattern", [r"[^\s\S]", r"ri[^\d\D]?ver", r"[^a\W\w]"])
def test_a_negated_class_of_every_character_is_refused_on_both_paths(corpus, pattern) -> None:
    """chromadb's engine refuses an empty class; the regex module would match anything."""
    ids, _texts, col, index = corpus
    order = {c: i for i, c in enumerate(ids)}

    def scan() -> tuple[list[str], int]:
        def matching(p: str) -> list[str]:
            return col.get(where_document={"$regex": p}, include=[])["ids"]

        return grep_ids(matching, pattern, EXACT, order, 10)

    with pytest.raises(PatternRejectedError, match="regex engine refused"):
        scan()
    with pytest.raises(PatternRejectedError, match="regex engine refused"):
        grep_indexed(index, ids, pattern, EXACT, 10, (), scan)


def test_the_guard_still_refuses(corpus) -> None:
    with pytest.raises(PatternRejectedError, match="backreference"):
        _both(corpus, r"(a)\1", 5)


_WORDS = ["the", "The", "sulfur", "Io", "bread", "Müller", "river", "İstanbul", "2031", "a", "s"]
_ATOMS = st.sampled_from(
    _WORDS + [r"\d", r"\w", r"\s", r"\b", ".", "[a-z]", "[0-9]", "[^a-z]", r"\.", "-", " "]
)


@st.composite
def _patterns(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        atom = draw(_ATOMS)
        quant = draw(st.sampled_from(["", "", "?", "+", "*", "{2}", "{1,3}"]))
        if quant and atom != r"\b":
            atom = f"(?:{atom}){quant}"
        parts.append(atom)
    body = "".join(parts)
    if draw(st.booleans()):
        body = body + "|" + draw(_ATOMS)
    flags = draw(st.sampled_from(["", "", "i", "m", "im"]))
    anchor = draw(st.sampled_from(["", "", "^"]))
    return (f"(?{flags})" if flags else "") + anchor + body


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_patterns())
def test_generated_patterns_agree_with_the_scan(corpus, pattern: str) -> None:
    try:
        fast, (want_hits, want_total) = _both(corpus, pattern, limit=1000)
    except PatternRejectedError:
        return
    assert fast == (want_hits, want_total, False), pattern


@pytest.mark.parametrize("pattern", PARITY_PATTERNS + MORE_PATTERNS)
def test_the_full_scan_of_the_side_index_agrees_with_chromadbs(corpus, pattern: str) -> None:
    """The embedded index's fallback (every text checked, no chromadb) finds what
    chromadb's ``$regex`` scan finds."""
    if pattern in CATASTROPHIC:
        pytest.skip("backtracks for ages in the regex module")
    ids, _texts, col, index = corpus
    order = {c: i for i, c in enumerate(ids)}

    def chroma(rust: str) -> list[str]:
        return col.get(where_document={"$regex": rust}, include=[])["ids"]

    def side(_rust: str) -> list[str]:
        return scan_texts(index, ids, pattern)

    assert grep_ids(side, pattern, EXACT, order, 1000) == grep_ids(
        chroma, pattern, EXACT, order, 1000
    )
