"""Question decomposition: clue chains read link by link (pure)."""

from __future__ import annotations

from thresher.policies.local.clues import is_clue_chain, link_words, links

CLUES = (
    "Start from the first statement and follow it through the others: (1) Groxhan Jandu was "
    "born in 1992 in the town of [A]. (2) [A] stands on the [B]. (3) The [B] flows through "
    "the centre of [?]. What name is [?]?"
)


def test_clue_chains_split_into_links_without_the_ask_or_the_instructions():
    assert is_clue_chain(CLUES)
    assert [link_words(x) for x in links(CLUES)] == [
        ["Groxhan", "Jandu", "born", "1992", "town"],
        ["stands"],
        ["flows", "centre"],
    ]


def test_a_plain_question_is_its_own_single_link():
    question = "Who is the spouse of the director of Titanic?"
    assert not is_clue_chain(question)
    assert links(question) == [question]


def test_link_words_drop_placeholders_and_boilerplate_and_keep_codes():
    assert link_words("Patent GR-1995-243340 names [A] as its lead inventor.") == [
        "Patent",
        "GR-1995-243340",
        "names",
        "lead",
        "inventor",
    ]
    assert link_words("Each bracketed letter names one entity [?]") == [
        "bracketed",
        "letter",
        "names",
        "entity",
    ]


def test_instructions_and_lead_ins_are_not_links_whatever_their_wording():
    # no placeholder: not a link; a lead-in before the first colon without one: dropped
    question = (
        "Here is what we know: the painter of [A] was born in [B]. Nobody has said more. "
        "[B] lies on the river [?]. Tell me the river, please: which is [?]?"
    )
    assert [link_words(x) for x in links(question)] == [
        ["painter", "born"],
        ["lies", "river"],
    ]
    # a field's label stays when nothing but the placeholder follows it
    assert links("Assignee: [A]. [A] employs [?].")[0] == "Assignee: [A]."
