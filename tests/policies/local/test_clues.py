"""The clue chain: one document per clue of a question stated as linked clues (pure)."""

from __future__ import annotations

from thresher.policies.local.clues import CluePick, by_link, clue_docs, how_stated


def test_by_link_takes_one_document_per_clue_in_clue_order() -> None:
    clues = ["Patent X names [A] as its lead inventor.", "[A] works at [B] as a chemist."]
    words = {
        "noise": {"chemist", "patent"},
        "works": {"works", "chemist", "lab"},
        "patent": {"patent", "names", "lead", "inventor"},
    }
    assert by_link(clues, ["noise", "works", "patent"], words, {}, 5) == [
        "patent",
        "works",
        "noise",
    ]


def test_by_link_prefers_the_document_holding_the_name_the_previous_clue_states() -> None:
    """Two patents hold the clue's words; the one the product page names (in its sentence
    stating the first clue) continues the chain, even ranked far below the other."""
    clues = ["The Bronseix [A] is built on patent [B].", "Patent [B] names [C] as lead inventor."]
    words = {
        "page": frozenset({"bronseix", "built", "patent", "gr-1"}),
        "other": frozenset({"patent", "names", "lead", "inventor"}),
        "right": frozenset({"patent", "names", "lead", "inventor"}),
    }
    sentences = {
        "page": [(frozenset({"bronseix", "built", "patent"}), frozenset({"gr-1"}))],
        "other": [(frozenset({"patent", "names"}), frozenset({"gr-2", "gr-1"}))],  # cites it
        "right": [(frozenset({"patent", "names"}), frozenset({"gr-1", "ada lo"}))],
    }
    filler = [f"f{i}" for i in range(20)]
    order = ["page", "other", *filler, "right"]
    titles = {"page": "bronseix", "other": "gr-2", "right": "gr-1"}
    out = by_link(clues, order, words, {}, 5, sentences, titles)
    assert out[:2] == ["page", "right"]
    # without the title, the stated name alone ties them: the better ranked wins
    assert by_link(clues, order, words, {}, 5, sentences)[:2] == ["page", "other"]


def test_by_link_reaches_past_the_best_documents_for_one_found_through_the_previous_clue() -> None:
    """The town page sits far down the order and shares no name in view with the filing
    (the filing's sentence naming the town is in a chunk not in view), but a follow-up
    from the filing found it: it continues the chain."""
    clues = ["[A] maintains its head office in [B].", "[B] stands on the [C]."]
    filler = [f"f{i}" for i in range(20)]
    words = {
        "filing": frozenset({"maintains", "head", "office"}),
        "town": frozenset({"stands", "river"}),
        **{f: frozenset({"noise"}) for f in filler},
    }
    order = ["filing", *filler, "town"]
    out = by_link(clues, order, words, {"town": ["filing"]}, 5)
    assert out[:2] == ["filing", "town"]
    assert by_link(clues, order, words, {}, 5)[:2] == ["filing", "f0"]


def test_by_link_prefers_the_document_stating_the_whole_clue_over_a_citing_one() -> None:
    """The patent citing the code the product page states holds 2 of the clue's 5 words;
    the e-mail states the whole clue, the code included: the clue's words count twice,
    so the e-mail answers the clue."""
    clues = [
        "The Bronseix [A] is built on patent [B].",
        "The Trelbi [C] is built on the method described in patent [B].",
    ]
    words = {
        "page": frozenset({"bronseix", "built", "patent"}),
        "citing": frozenset({"patent", "described"}),
        "stating": frozenset({"trelbi", "built", "method", "described", "patent"}),
    }
    sentences = {
        "page": [
            (frozenset({"bronseix", "built", "patent"}), frozenset({"gr-1"})),
            (frozenset({"lab"}), frozenset({"lab x"})),
        ],
        "citing": [(frozenset({"patent", "described"}), frozenset({"gr-1", "gr-2"}))],
        "stating": [(words["stating"], frozenset({"gr-1", "trelbi q-7"}))],
    }
    order = ["page", "citing", "stating"]
    assert by_link(clues, order, words, {}, 5, sentences)[:2] == ["page", "stating"]


def test_a_clue_is_answered_by_one_sentence_not_by_words_spread_over_a_page() -> None:
    """The product page names the product in one sentence and a launch in another; the
    e-mail states "we will launch the product at ..." in one: the e-mail answers."""
    clues = ["The Zagraith [A] is built on patent X-1.", "We will launch the Zagraith [A] at [B]."]
    sentences = {
        "email0": [(frozenset({"zagraith", "built", "patent"}), frozenset({"zagraith dz-1"}))],
        "page": [
            (frozenset({"zagraith", "made"}), frozenset({"zagraith dz-1"})),
            (frozenset({"year", "launch"}), frozenset()),
        ],
        "email": [(frozenset({"launch", "zagraith"}), frozenset({"zagraith dz-1", "expo"}))],
    }
    words = {d: frozenset().union(*(w for w, _ in ss)) for d, ss in sentences.items()}
    order = ["email0", "page", "email"]
    assert by_link(clues, order, words, {}, 5, sentences)[:2] == ["email0", "email"]
    # by the words of the whole document, the better-ranked page would tie and win
    assert by_link(clues, order, words, {}, 5)[:2] == ["email0", "page"]


def test_the_unknown_a_document_states_leaves_out_the_names_the_chain_came_through() -> None:
    """Patent B states "B relies on A", found through A: clue 3's document holds B. The
    patent A page holds A, the name the chain came through: no link, and the chain
    stops there (``linked``) rather than at whatever holds clue 3's words."""
    clues = [
        "The Nysbon DC-2 uses patent [A].",
        "Patent [B] relies on patent [A].",
        "The [C] is built on patent [B].",
    ]
    sentences = {
        "email": [(frozenset({"nysbon", "dc-2", "uses", "patent"}), frozenset({"ty-1"}))],
        "b": [(frozenset({"patent", "relies"}), frozenset({"ty-1", "ty-2"}))],
        "a": [(frozenset({"built", "patent"}), frozenset({"ty-1"}))],
        "c": [(frozenset({"built", "patent"}), frozenset({"ty-2", "krel vk-6"}))],
    }
    words = {d: frozenset().union(*(w for w, _ in ss)) for d, ss in sentences.items()}
    picks = clue_docs(clues, ["email", "b", "a", "c"], words, {}, 5, sentences)
    assert [p[:3] for p in picks] == [(0, "email", True), (1, "b", True), (2, "c", True)]
    assert [p.passed for p in picks] == [set(), {"ty-1"}, {"ty-1", "ty-2"}]
    # without the page that holds B, patent A's words answer clue 3 but do not link
    picks = clue_docs(clues, ["email", "b", "a"], words, {}, 5, sentences)
    assert picks[-1][:3] == (2, "a", False)


def test_a_clues_code_is_matched_as_the_documents_words_split_it() -> None:
    """ "SY-2015-438482" is one word of the clue and sy, 2015, 438482 in a document: the
    patent itself states clue 1, the better-ranked one citing another code does not."""
    clues = ["The lead inventor named on patent SY-2015-438482 is [A].", "[A] works at [B]."]
    sentences = {
        "citing": [(frozenset({"lead", "inventor", "named", "patent", "sy", "2015", "173205"}),
                    frozenset({"ada lo"}))],
        "itself": [(frozenset({"lead", "inventor", "named", "patent", "sy", "2015", "438482"}),
                    frozenset({"bo li"}))],
    }  # fmt: skip
    words = {d: frozenset().union(*(w for w, _ in ss)) for d, ss in sentences.items()}
    assert by_link(clues, ["citing", "itself"], words, {}, 5, sentences)[0] == "itself"


def test_the_page_about_the_previous_name_is_preferred_only_when_the_clue_is_about_it() -> None:
    """ "The [B] is held every year in [A]" is stated by the expo's page as much as by the
    page about the town [A] (both say "held" and name the town): the better ranked wins.
    "[A] is where it is held" is about [A]: the town's page wins from further down."""
    first = "Ty Ny was born in the town of [A]."
    sentences = {
        "person": [(frozenset({"ty", "ny", "born", "town"}), frozenset({"vrastby"}))],
        "town": [(frozenset({"held", "vrastby"}), frozenset({"vrastby"}))],
        "expo": [(frozenset({"held", "vrastby"}), frozenset({"vrastby", "seib expo"}))],
    }
    words = {d: frozenset().union(*(w for w, _ in ss)) for d, ss in sentences.items()}
    titles = {"person": "ty ny", "town": "vrastby", "expo": "seib expo"}
    order = ["person", "expo", "town"]
    held = [first, "The [B] is held every year in [A]."]
    assert by_link(held, order, words, {}, 5, sentences, titles)[:2] == ["person", "expo"]
    about = [first, "[A] is where it is held."]
    assert by_link(about, order, words, {}, 5, sentences, titles)[:2] == ["person", "town"]


def test_a_pick_holding_only_the_stated_name_does_not_carry_the_chain_on() -> None:
    """Clue 2 is "[B] is managed by [C]": a patent listing B as inventor holds B but not
    "managed". It may still be placed for the clue, but the chain stops before it, so
    the next hop asks clue 2 again; the e-mail stating it carries the chain on."""
    clues = ["Patent TY-1 names [B] as its lead inventor.", "[B] is managed by [C]."]
    sentences = {
        "patent": [(frozenset({"patent", "ty", "1", "names", "lead", "inventor"}),
                    frozenset({"bo li"}))],
        "other": [(frozenset({"inventor", "patent"}), frozenset({"bo li"}))],
        "email": [(frozenset({"managed"}), frozenset({"bo li", "cy do"}))],
    }  # fmt: skip
    words = {d: frozenset().union(*(w for w, _ in ss)) for d, ss in sentences.items()}
    picks = clue_docs(clues, ["patent", "other"], words, {}, 5, sentences)
    assert [p[:3] for p in picks] == [(0, "patent", True), (1, "other", False)]
    picks = clue_docs(clues, ["patent", "other", "email"], words, {}, 5, sentences)
    assert picks[1] == CluePick(1, "email", True, frozenset({"bo li"}))


def test_the_chunk_stating_a_clue_is_told_by_its_words_its_name_and_its_phrasing() -> None:
    """A subject line holds "launch" and the product the chain came through as well as
    the sentence stating the clue; the sentence also says "we will ... at the"."""
    clue = "We will launch the [B] at the [C]."
    passed = frozenset({"grysnurk vp-220"})
    subject = ("Re: Launch plans for the Grysnurk VP-220", frozenset({"launch", "plans", "grysnurk"}),
               frozenset({"launch", "grysnurk vp-220"}))  # fmt: skip
    body = ("We will launch the Grysnurk VP-220 at the Waivrox Textile Forum.",
            frozenset({"launch", "grysnurk", "waivrox", "textile", "forum"}),
            frozenset({"grysnurk vp-220", "waivrox textile forum"}))  # fmt: skip
    other = ("The Grysnurk VP-220 ships in May.", frozenset({"grysnurk", "ships", "may"}),
             frozenset({"grysnurk vp-220"}))  # fmt: skip
    assert how_stated(clue, passed, [subject]) == (2, 2)  # launch + the name; "launch", "the"
    assert how_stated(clue, passed, [body]) > how_stated(clue, passed, [subject])
    assert how_stated(clue, passed, [other]) < how_stated(clue, passed, [subject])
    assert how_stated(clue, passed, []) == (0, 0)
