"""What the policy reads of text, through an episode's memo or a fresh one, gives one answer (pure)."""

from __future__ import annotations

from thresher.corpus.document import Chunk
from thresher.index.reader_memo import ReaderMemo
from thresher.policies.local.bridges import (
    Anchor,
    Bridge,
    bridge_queries,
    residual_words,
)
from thresher.policies.local.candidate import Candidate
from thresher.policies.local.chain import Chain
from thresher.policies.local.memo import TextMemo, ask_words, cued_spans, heads_of
from thresher.policies.local.sources import CapitalSpans, NamedSpans, SpanUnion

QUESTION = "Who directed the film whose soundtrack was composed by Danny Elfman?"
FILM = Anchor(
    "p-1#0",
    "p-1",
    "Big Eyes",
    "Big Eyes is a 2014 film directed by Tim Burton and starring Amy Adams. "
    "Its score was composed by Danny Elfman. Tim Burton also produced Big Eyes "
    "with Scott Alexander.",
    0.9,
)
ELFMAN = Anchor(
    "p-2#0",
    "p-2",
    "Danny Elfman",
    "Danny Elfman composed the music of Big Eyes and of Beetlejuice, a Tim Burton film. "
    "He founded Oingo Boingo Records.",
    0.7,
    via="Danny Elfman",
)

#: the film's page copied under another title: its sentences are read again, asked another
#: relation (its title holds "directed" and "film": what the question asks of it is the rest)
COPY = Anchor("p-7#0", "p-7", "Directed Film", FILM.text, 0.95)


def _calls() -> list[tuple[list[Anchor], dict[str, str], set[str], set[str]]]:
    """An episode's calls: known titles grow, documents close, phrases get asked."""
    first = {"Big Eyes": "p-1", "Danny Elfman": "p-2", "Tim Burton": "p-3"}
    second = {**first, "Oingo Boingo Records Discography": "p-4", "Amy Adams": "p-5"}
    return [
        ([FILM], first, {"p-1"}, set()),
        ([FILM, ELFMAN], second, {"p-1", "p-2"}, set()),
        # Tim Burton's page is now in view: his title is no bridge any more
        ([FILM, ELFMAN], second, {"p-1", "p-2", "p-3"}, {"amy adams"}),
        ([ELFMAN, FILM], {**second, "Scott Alexander": "p-6"}, {"p-1"}, {"tim burton"}),
        ([FILM, COPY], second, {"p-1"}, set()),
        ([COPY, FILM], second, {"p-1"}, set()),
    ]


def test_an_episode_memo_reads_what_a_fresh_memo_reads_call_after_call() -> None:
    for shared in (None, ReaderMemo()):
        memo = TextMemo(shared=shared)
        for anchors, known, done, asked in _calls():
            fresh = bridge_queries(QUESTION, anchors, known, exclude_docs=done, asked=asked)
            kept = bridge_queries(
                QUESTION, anchors, known, exclude_docs=done, asked=asked, memo=memo
            )
            assert kept == fresh
            assert fresh  # each call finds bridges: the comparison says something


def test_named_spans_are_read_after_the_sources_spans_as_a_union_reads_them() -> None:
    named = NamedSpans(("oingo boingo",))
    known = {"Big Eyes": "p-1", "oingo boingo": "p-9"}
    memo = TextMemo()
    beside = bridge_queries(QUESTION, [ELFMAN], known, spans=CapitalSpans(), named=named, memo=memo)
    union = SpanUnion((CapitalSpans(), named))  # one source reading both
    assert beside == bridge_queries(QUESTION, [ELFMAN], known, spans=union)
    assert "oingo boingo" in {b.phrase.lower() for b in beside}
    # the memo keeps the source's own spans: a call without the names reads those
    assert bridge_queries(QUESTION, [ELFMAN], known, memo=memo) == bridge_queries(
        QUESTION, [ELFMAN], known
    )


def test_ask_words_keep_the_first_of_each_word_in_any_case() -> None:
    words = ask_words("Who founded the Halvard glassworks, and when did halvard close it?")
    assert [w for w, _, _ in words] == ["founded", "Halvard", "glassworks", "close"]
    assert words[0] == ("founded", "founded", "found")
    # a word the chain holds leaves the query whatever case it was first written in
    assert residual_words("Halvard built halvard glassworks", [], seen=frozenset({"halvard"})) == [
        "built",
        "glassworks",
    ]


def test_a_span_is_cued_where_a_relation_word_stands_beside_any_of_its_occurrences() -> None:
    sent = "tim burton met amy adams. the film was directed by tim burton in 2014."
    assert cued_spans(sent, ["Tim Burton", "Amy Adams"], frozenset({"direct"})) == {
        "tim burton": frozenset({"direct"})
    }
    assert cued_spans(sent, ["Tim Burton"], frozenset({"produc"})) == {}
    assert cued_spans("burton", ["Tim Burton"], frozenset({"burton"})) == {}


def test_heads_of_a_title_of_one_or_two_words_are_none() -> None:
    assert heads_of("Big Eyes") == () and heads_of("Beetlejuice") == ()
    assert heads_of("Vratain Microsystems Annual Report") == (
        "vratain microsystems",
        "vratain microsystems annual",
    )


def test_refound_candidates_read_at_once_are_those_looked_up_one_by_one() -> None:
    def cand(doc: str, text: str, subquery: str = "Q?", rank: int = 1) -> Candidate:
        chunk = Chunk(f"{doc}#{rank}", doc, 0, doc, text, 0, len(text), doc)
        return Candidate(chunk, subquery=subquery, rank=rank)

    patent = cand("patent", "Lead inventor: Grabra Krepym.")
    email = cand("email", "Grabra Krepym has joined Vratain Microsystems.", "Grabra town")
    via = {
        "Grabra town": Bridge("Grabra town", "Grabra Krepym", "entity", "patent#1", 1.0),
        "Vratain town": Bridge("Vratain town", "Vratain Microsystems", "entity", "email#1", 1.0),
    }
    filing = "Vratain Microsystems is headquartered in Lebruthholt."
    pools = {
        "Vratain town": {
            "other#5": cand("other", "Vratain Microsystems again.", "Vratain town", 5),
            "filing#2": cand("filing", filing, "Vratain town", 2),
            "email#3": cand("email", "Vratain Microsystems hires.", "Vratain town", 3),
        },
        "Grabra town": {"email#1": email},
        "not a follow-up": {"filing#1": cand("filing", filing, "not a follow-up", 1)},
    }
    cands = {c.chunk.chunk_id: c for c in (patent, email)}
    chain = Chain(via, cands, pools)
    found = chain.refound()
    assert set(found) == {"filing", "email"}
    for doc in ("filing", "email", "other", "patent"):
        assert found.get(doc) is chain._refound(doc)
    first = cand("filing", filing)  # the question's own search found it
    assert chain.links(first, found) == chain.links(first) == ["email", "patent"]
