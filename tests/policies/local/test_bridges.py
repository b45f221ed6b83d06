"""Bridge extraction and text helpers: pure functions on hand-made chunks."""

from __future__ import annotations

import re

from thresher.policies.local.bridges import (
    Anchor,
    bridge_queries,
    entity_spans,
    linked_titles,
    question_patterns,
    residual_words,
)
from thresher.policies.local.text import best_sentences, contains_phrase, content_words, sentences

JOURNAL = Anchor(
    "p-1#0",
    "p-1",
    "Journal of Psychotherapy Integration",
    "The Journal of Psychotherapy Integration is a peer-reviewed academic journal published "
    "by the American Psychological Association on behalf of the Society for the Exploration "
    "of Psychotherapy Integration.",
    0.9,
)
QUESTION = (
    "Who was the first president of the association which published "
    "Journal of Psychotherapy Integration?"
)


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


def test_linked_titles_word_boundaries_and_own_title():
    text = "Marrowick lies in Tessaly; Tessalyan glass is famous."
    assert linked_titles(text, ["Tessaly", "Marrowick", "Vennor"], own_title="Marrowick") == [
        "Tessaly"
    ]
    assert not contains_phrase("tessalyan glass", "Tessaly")


def test_bridge_queries_name_what_the_question_lacks():
    known = {
        "American Psychological Association": "p-2",
        "Journal of Psychotherapy Integration": "p-1",
    }
    bridges = bridge_queries(QUESTION, [JOURNAL], known, limit=3)
    assert bridges, "the anchor names the publisher"
    top = bridges[0]
    assert top.phrase == "American Psychological Association" and top.kind == "title"
    assert top.query.startswith("American Psychological Association")
    assert "president" in top.query  # the question's words the anchor does not cover
    assert top.source == "p-1#0"
    assert all(b.phrase != "Journal of Psychotherapy Integration" for b in bridges)


def test_bridge_queries_skip_asked_and_retained():
    known = {"American Psychological Association": "p-2"}
    asked = {"american psychological association"}
    assert all(
        b.phrase != "American Psychological Association"
        for b in bridge_queries(QUESTION, [JOURNAL], known, asked=asked)
    )
    kinds = {
        b.phrase: b.kind for b in bridge_queries(QUESTION, [JOURNAL], known, exclude_docs={"p-2"})
    }
    assert kinds.get("American Psychological Association") != "title"


def test_residual_words_and_sentences():
    assert residual_words("Who founded the Halvard Glassworks?", ["Halvard Glassworks"]) == [
        "founded"
    ]
    assert sentences("One. Two is here! 3 follows? yes") == [
        "One.",
        "Two is here!",
        "3 follows? yes",
    ]
    text = "Marrowick is a town. It lies in Tessaly. Salt is traded."
    assert best_sentences(text, ["Which province, Tessaly?"], limit=1) == ("It lies in Tessaly.")
    assert content_words("The Glassworks of Marrowick") == {"glassworks", "marrowick"}


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
    assert "21 April 2021" in spans  # not joined with the next line's label
    assert not any("\n" in s or "Assignee" in s or "Granted" in s for s in spans)
    assert "CHUVY PATENT REGISTRY" not in spans and "RECORD NOTES" not in spans
