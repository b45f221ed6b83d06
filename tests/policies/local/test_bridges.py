"""Bridge extraction and text helpers: pure functions on hand-made chunks."""

from __future__ import annotations

from thresher.index.bm25 import Bm25Index
from thresher.policies.local.bridges import (
    Anchor,
    bridge_queries,
    linked_titles,
    residual_words,
)
from thresher.policies.local.entities import entity_spans
from thresher.policies.local.memo import cued_spans
from thresher.policies.local.text import (
    best_sentences,
    contains_phrase,
    content_words,
    sentences,
    stem,
    word_runs,
)

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


def _leads_to(query: str, gold: str, *others: str) -> bool:
    """Whether a search for ``query`` finds ``gold`` first among these texts (BM25): a
    bridge is judged by where it leads, not by its exact words."""
    texts = [gold, *others]
    hits = Bm25Index.build([f"t{i}" for i in range(len(texts))], texts).search(query, k=1)
    return bool(hits) and hits[0][0] == "t0"


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


EMAIL = (
    "From: Cyhist Tholsoun <cyhist.tholsoun@vratain-microsystems.example>\n"
    "To: Grabra Krepym <grabra.krepym@vratain-microsystems.example>\n"
    "Subject: Welcome Grabra Krepym\n"
    "\n"
    "Please welcome Grabra Krepym, who has joined Vratain Microsystems as a test engineer.\n"
    "Best regards,\n"
    "Cyhist Tholsoun\n"
)
PATENT = "Patent number: CH-2019-699317\nLead inventor: Grabra Krepym\nAssignee: Bitrourk"
DEMO_Q = (
    "In which town is the company that employs the lead inventor of patent CH-2019-699317 "
    "headquartered?"
)


def test_a_chain_link_names_the_next_hop_beside_the_phrase_that_led_there():
    # the e-mail was found by the inventor's name: the name beside it in a sentence is the
    # next link, and the words its chain already holds (patent, lead, inventor) leave the query
    anchor = Anchor("e#0", "e", "Welcome Grabra Krepym", EMAIL, 0.4, (PATENT,), "Grabra Krepym")
    best = bridge_queries(DEMO_Q, [anchor], {}, limit=1)[0]
    assert best.phrase == "Vratain Microsystems"
    assert _leads_to(
        best.query,
        "Vratain Microsystems is headquartered in the town of Orsk.",
        "Vratain Microsystems sells sensors.",
        "Bitrourk is headquartered in the town of Lemvy.",
        PATENT,
        EMAIL,
    ), best.query


def test_a_span_opening_a_known_title_outranks_other_names():
    anchor = Anchor("e#0", "e", "Welcome Grabra Krepym", EMAIL, 0.4)
    plain = bridge_queries(DEMO_Q, [anchor], {}, limit=5)
    last = plain[-1].phrase
    known = {f"{last} Annual Report 2019": "filings/x"}
    hinted = [b.phrase for b in bridge_queries(DEMO_Q, [anchor], known, limit=5)]
    assert hinted.index(last) < len(plain) - 1


def test_sentences_end_at_line_breaks():
    assert sentences("Subject: Launch\nFrom: A B\n\nWe will launch it. Then go.") == [
        "Subject: Launch",
        "From: A B",
        "We will launch it.",
        "Then go.",
    ]


def test_a_clue_chain_pairs_each_bridge_with_its_next_link():
    question = (
        "Clues: (1) We will launch the Nencun HT-410 at the [A]. (2) The Tholze [B] will be "
        "unveiled at the [A]. (3) The Tholze [B] uses the process protected by patent [C]. "
        "Each letter stands for one entity throughout. What code is [?]?"
    )
    email = (
        "Subject: Launch plans for the Nencun HT-410\nFrom: Kailta Bailfa <k@x.example>\n\n"
        "We will launch the Nencun HT-410 at the Tredato Imaging Summit. Keep the price out."
    )
    clue2 = "The Tholze QX-7 will be unveiled at the Tredato Imaging Summit."
    clue3 = "The Tholze QX-7 uses the process protected by patent KA-2020-114477."
    summit = "The Tredato Imaging Summit opens."
    first = bridge_queries(question, [Anchor("m#0", "m", "Launch", email, 0.8)], {}, limit=1)[0]
    assert first.phrase == "Tredato Imaging Summit"
    assert _leads_to(first.query, clue2, summit, clue3, email), first.query  # clue 2's page
    # one bridge further along the chain, the follow-up asks the third link
    page2 = "The Tholze QX-7 will be unveiled there."
    later = Anchor("n#0", "n", "Tholze", page2, 0.8, (email,))
    later_query = bridge_queries(question, [later], {}, limit=1)[0].query
    assert _leads_to(later_query, clue3, page2, summit, email), later_query
    # the same page known to answer clue 2 (found by the question's own search: no
    # bridge led to it) asks the third link too
    known = Anchor("n#0", "n", "Tholze", page2, 0.8, clue=1)
    known_query = bridge_queries(question, [known], {}, limit=1)[0].query
    assert _leads_to(known_query, clue3, page2, summit, email), known_query
    # unknown, it is taken for clue 1's page: it names the product, and asks clue 2
    # (whose words it holds), not clue 3
    unknown = Anchor("n#0", "n", "Tholze", page2, 0.8)
    unknown_query = bridge_queries(question, [unknown], {}, limit=1)[0].query
    assert "Tholze QX-7" in unknown_query
    assert not _leads_to(unknown_query, clue3, page2), unknown_query


def test_a_document_found_through_a_name_passes_its_own_name_on():
    """Found through patent A, patent B states "B relies on A": the next clue asks what
    names B, this document's own code (its title), not one of its inventors."""
    question = (
        "Follow the chain. The Nysbon DC-2 uses the process protected by patent [A]. Among the "
        "prior art, patent [B] relies on patent [A]. The [C] is built on the method described "
        "in patent [B]. Which name belongs in place of [?]?"
    )
    text = (
        "Patent number: TY-2006-863820\nInventors: Behur Shoursirky; Bokrin Jaifest\n\n"
        "Among the prior art, patent TY-2006-863820 relies on patent TY-1996-043505."
    )
    email = "The Nysbon DC-2 uses the process protected by patent TY-1996-043505."
    patent = Anchor("b#0", "b", "TY-2006-863820", text, 0.9, (email,), "TY-1996-043505")
    best = bridge_queries(question, [patent], {}, limit=1)[0]
    assert best.phrase == "TY-2006-863820"
    assert _leads_to(
        best.query,
        "The Corvex Loom is built on the method described in patent TY-2006-863820.",
        text,
        email,
        "Patent TY-2006-863820 lists Behur Shoursirky among its inventors.",
    ), best.query
    # reached by the question's own search (no phrase led here), its own name is no bridge
    found = Anchor("b#0", "b", "TY-2006-863820", text, 0.9)
    assert all(b.phrase != "TY-2006-863820" for b in bridge_queries(question, [found], {}))


def test_stem_joins_a_relation_word_to_the_texts_form_of_it():
    assert stem("director") == stem("directors") == stem("directed") == "direct"
    assert stem("player") == stem("players") == stem("played")
    assert stem("located") == stem("location")
    assert stem("village") == stem("villages")
    assert stem("station") != stem("stated") == stem("states")
    assert stem("country") != stem("county")


def test_a_relation_word_of_the_question_picks_the_name_it_introduces():
    film = Anchor(
        "f-1#0",
        "f-1",
        "Glass Harbor",
        "Glass Harbor is a 2014 drama film directed by Orlen Vask, written by Tesa Marrow "
        "and starring Duna Pell.",
        0.9,
    )
    question = "Who is the spouse of the director of Glass Harbor?"
    sent = film.text.lower()
    cued = cued_spans(sent, ["Orlen Vask", "Tesa Marrow", "Duna Pell"], frozenset({"direct"}))
    assert cued == {"orlen vask": frozenset({"direct"})}
    # a known title the film names (Duna Pell) is a bridge, but the director is asked
    bridges = bridge_queries(question, [film], {"Duna Pell": "p-9"}, limit=3)
    assert bridges[0].phrase == "Orlen Vask"
    # "directed by" resolved "director": the follow-up asks what is left (the spouse)
    assert _leads_to(
        bridges[0].query,
        "Orlen Vask and his spouse Mira Tell live in Aarden.",
        "Orlen Vask directed films.",
        "Duna Pell and her spouse Kel Dorr met on set.",
        film.text,
    ), bridges[0].query


def test_an_initial_ends_no_sentence_and_a_possessive_is_no_part_of_a_name():
    text = "Trail End is a 1936 film directed by Erle C. Kenton. It stars Jack Holt."
    assert sentences(text) == [
        "Trail End is a 1936 film directed by Erle C. Kenton.",
        "It stars Jack Holt.",
    ]
    assert "Paul Verhoeven" in entity_spans("It follows Paul Verhoeven's script.")


def test_word_runs_keep_initials_and_offer_the_name_after_a_describing_word():
    text = (
        "hall, who was the first president of the american psychological association, "
        "wrote it with g. stanley hall."
    )
    runs = word_runs(text)
    assert "american psychological association" in runs  # a relation word may cue it
    assert "g. stanley hall" in runs
    # the cue stands before the tail, not inside it
    cued = cued_spans(text, runs, frozenset({stem("president")}))
    assert "american psychological association" in cued


def test_a_lowercased_film_page_still_gives_its_director_as_the_bridge():
    film = Anchor(
        "f-1#0",
        "f-1",
        "glass harbor",
        "glass harbor is a 2014 drama film directed by orlen vask, written by tesa marrow "
        "and starring duna pell.",
        0.9,
    )
    bridges = bridge_queries("who is the spouse of the director of glass harbor?", [film], {})
    assert bridges[0].phrase == "orlen vask"
