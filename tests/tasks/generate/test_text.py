"""Sentences, candidate entities and normalized matching."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thresher.tasks.generate.text import (
    contains,
    entities,
    mask,
    normalize,
    quote_matches,
    sentences,
)


def kinds(sentence: str) -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in entities(sentence)]


def test_names_codes_words_and_numbers() -> None:
    assert kinds("Patent GO-2021-138181 names Kilmiv Furwan as its lead inventor.") == [
        ("GO-2021-138181", "code"),
        ("Kilmiv Furwan", "name"),
    ]
    assert kinds("Fallil Filtration maintains its head office in Lathlin.") == [
        ("Fallil Filtration", "name"),
        ("Lathlin", "word"),
    ]
    assert kinds("The Baigir NZ-750 is a charging station first sold in 2004.") == [
        ("Baigir NZ-750", "name"),
        ("NZ-750", "code"),
        ("2004", "year"),
    ]
    assert kinds("At year end we had 1,975 employees.") == [("1,975", "number")]


def test_connectors_join_names_and_leading_stop_words_drop() -> None:
    assert kinds("The University of Tessaly was founded by Orvel Kestrin in 1891.") == [
        ("University of Tessaly", "name"),
        ("Orvel Kestrin", "name"),
        ("1891", "year"),
    ]


def test_a_sentence_opening_word_alone_is_not_an_entity() -> None:
    assert kinds("Marrowick lies on the river.") == []
    assert kinds("It lies near Marrowick.") == [("Marrowick", "word")]


def test_punctuation_breaks_a_name() -> None:
    assert kinds("He met Anna Berg, Carl Dahl and Eva Lund.") == [
        ("Anna Berg", "name"),
        ("Carl Dahl", "name"),
        ("Eva Lund", "name"),
    ]


def test_sentences_split_lines_and_sentence_ends() -> None:
    text = "# Title line\n\nFirst one. Second one here!\n| a | b |\n- item text"
    assert sentences(text) == ["Title line", "First one.", "Second one here!", "a | b", "item text"]


def test_normalize_and_contains_on_word_bounds() -> None:
    assert normalize("  The “Baigir” NZ-750, made\tin 2004! ") == "the baigir nz 750 made in 2004"
    hay = normalize("Fallil Filtration maintains its head office in Lathlin.")
    assert contains(hay, "LATHLIN")
    assert contains(hay, "head office")
    assert not contains(hay, "Lath")
    assert not contains(hay, "")
    assert quote_matches("fallil  filtration maintains", "Fallil Filtration maintains its office")


def test_mask_is_case_insensitive() -> None:
    assert (
        mask("Krarby is in Krarby county; krarby.", "Krarby", "[A]") == "[A] is in [A] county; [A]."
    )


@given(st.text(max_size=200))
def test_entities_are_verbatim_spans(text: str) -> None:
    for sentence in sentences(text) or [text]:
        for m in entities(sentence):
            assert sentence[m.start : m.start + len(m.text)] == m.text


@given(st.text(max_size=120))
def test_normalize_is_idempotent(text: str) -> None:
    assert normalize(normalize(text)) == normalize(text)
