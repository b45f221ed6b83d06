"""The one text analyzer (``thresher.corpus.analyzer``) the local policy and synthesis share."""

from __future__ import annotations

from thresher.corpus import analyzer
from thresher.policies.local import text as policy_text
from thresher.tasks.generate import text as synth_text


def test_accents_are_folded_so_a_plain_spelling_meets_the_text() -> None:
    assert analyzer.fold("Akinoshū") == "Akinoshu"
    assert analyzer.words("The Akinoshū Café") == ["the", "akinoshu", "cafe"]
    assert analyzer.words("ﬁnal") == ["final"]
    assert analyzer.fold("東京") == "東京"  # other scripts are kept
    assert policy_text.contains_phrase("held in akinoshū every year", "Akinoshu")
    assert synth_text.quote_matches("held in Akinoshu", "It is held in Akinoshū.")


def test_the_stemmer_joins_agent_nouns_to_their_verbs_and_keeps_other_words_apart() -> None:
    stem = analyzer.stem
    assert stem("director") == stem("directors") == stem("directed") == stem("direction")
    assert stem("player") == stem("players") == stem("played") == "play"
    assert stem("founder") == stem("founded")
    assert stem("village") == stem("villages")
    assert stem("station") != stem("stated")
    assert stem("stated") == stem("states")
    assert stem("country") != stem("county")
    assert stem("order") == "order"  # too short to lose "er"


def test_sentences_break_at_lines_and_ends_but_not_after_an_initial() -> None:
    text = 'Directed by Erle C. Kenton. The film "Big Eyes." Then it ran. x\nHeading\n\nNext.'
    assert analyzer.sentences(text) == [
        "Directed by Erle C. Kenton.",
        'The film "Big Eyes."',
        "Then it ran. x",
        "Heading",
        "Next.",
    ]


def test_policy_and_synthesis_read_with_the_same_analyzer() -> None:
    assert policy_text.STOPWORDS is analyzer.STOPWORDS
    assert policy_text.stem is analyzer.stem
    assert analyzer.STOPWORDS <= synth_text.STOP
    assert analyzer.CALENDAR <= synth_text.STOP
    text = "## Overview\nThe plant opened in 1999. Vrastby hosts it."
    assert synth_text.sentences(text) == [
        "Overview",
        "The plant opened in 1999.",
        "Vrastby hosts it.",
    ]
    assert analyzer.normalize("“Hello—World” Akinoshū, Inc.") == "hello world akinoshu inc"


def test_a_text_without_capitals_is_cut_at_its_sentence_ends_all_the_same() -> None:
    assert analyzer.caseless("held in akinoshu. it ran.")
    assert not analyzer.caseless("Held in Akinoshu.")
    assert not analyzer.caseless("1999 2000")  # no letters: nothing to say
    assert analyzer.sentences("held by erle c. kenton. e.g. this. it ran!\nnext") == [
        "held by erle c. kenton.",
        "e.g. this.",
        "it ran!",
        "next",
    ]
