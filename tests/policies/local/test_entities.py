"""Names and codes a text states: entity spans and the question's grep patterns (pure)."""

from __future__ import annotations

import re

from thresher.policies.local.entities import entity_spans, question_patterns
from thresher.policies.local.text import sentences


def test_question_patterns_quoted_names_and_codes():
    q = 'Which band released "Tinted Windows" and who filed patent NI-1999-657215?'
    patterns = question_patterns(q)
    assert set(patterns) == {re.escape("NI-1999-657215"), re.escape("Tinted Windows")}
    assert question_patterns("Who founded the glassworks?") == []


def test_entity_spans_keep_joining_words_inside_only():
    spans = entity_spans("He studied at the University of the Arts in London and the Met.")
    assert "University of the Arts" in spans and "London" in spans
    assert all(not s.lower().startswith("the ") for s in spans)
    assert entity_spans('The album "Tinted Windows" sold well.')[0] == "Tinted Windows"


def test_entity_spans_stay_on_one_line_and_skip_labels_and_headings():
    text = (
        "CHUVY PATENT REGISTRY (fictional)\n"
        "Granted: 21 April 2021\n"
        "Assignee: Bitrourk Microsystems\n"
        "RECORD NOTES\n"
        "She studied at the University of the Arts."
    )
    spans = entity_spans(text)
    assert "Bitrourk Microsystems" in spans and "University of the Arts" in spans
    assert not any("April" in s for s in spans)  # a date is a value, not the next document
    assert entity_spans("Revenue grew in 2020.") == []  # a sentence's capital, no name
    assert not any("\n" in s or "Assignee" in s or "Granted" in s for s in spans)
    assert "CHUVY PATENT REGISTRY" not in spans and "RECORD NOTES" not in spans


def test_a_text_without_capitals_offers_its_word_runs_as_names():
    text = (
        "glass harbor is a 2014 american biographical drama film directed by orlen vask, "
        "written by tesa marrow. she studied at the university of the arts. "
        "paul verhoeven's script was shot on 5 june in paris"
    )
    # sentence ends are read without capitals, still not after an initial
    assert sentences("directed by erle c. kenton. it stars jack holt.") == [
        "directed by erle c. kenton.",
        "it stars jack holt.",
    ]
    spans = entity_spans(text)
    assert {"orlen vask", "tesa marrow", "university of the arts", "paul verhoeven"} <= set(spans)
    assert "paris" in spans
    # a run of five words describes rather than names; calendar words and numbers cut runs
    assert not any("biographical" in s or "june" in s for s in spans)
    # a cased text keeps reading names by their capitals, and so do its lowercase sentences
    assert entity_spans("it was directed by someone.", cased=True) == []
    assert entity_spans(text.title()) != spans
