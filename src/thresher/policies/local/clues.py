"""The clue chain: its links read from a question's form, and one document per clue (pure).

**The form.** The form read is the *clue chain*: statements linked by placeholders
("(1) Patent X names [A] as its lead inventor. (2) [A] works at [B]. ... What is
[?]?"), the form of BrowseComp-style puzzles and of ``thresher synth tasks``.
Each statement holding a placeholder is one link; the ask ("What is [?]?": a
sentence opening with a question word or ending with a question mark) and
sentences without a placeholder ("Each letter stands for one entity") are not,
nor is a lead-in before the question's first colon ("Clues: ...", "Start from
the first statement: ...") when it holds no placeholder. No phrasing of any
question generator is assumed beyond the placeholders themselves. Nested
questions ("the company that employs the lead inventor of patent Z") need no
parse: a follow-up query drops the question words its chain's documents already
hold, which leaves the outer relations
(:func:`~thresher.policies.local.bridges.residual_words`). :func:`links` returns
the chain's links in the order they resolve; a follow-up query pairs a bridge
with the first link its chain has not yet resolved (:func:`next_link`), so each
hop asks the relation it still needs, not the whole question again.

**The documents.** A question stated as linked clues needs one document per
clue, each continuing the chain from the previous one: it holds the name the
previous clue's document states. :func:`clue_docs` picks those documents in
clue order (:class:`CluePick`, with whether each clearly continues the chain),
from the documents' words and sentences and their links on the followed chain
(:mod:`.chain`); :func:`by_link` puts them first in an answer order
(:mod:`.answer`), and :func:`how_stated` tells which of a document's chunks
states its clue, where the planner reads the chain's next link
(:func:`~thresher.policies.local.planner.clue_edge`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.text import STOPWORDS, contains_phrase, content_words, sentences, words

__all__ = [
    "PLACEHOLDER",
    "links",
    "next_link",
    "link_words",
    "placeholders",
    "is_clue_chain",
    "Sentences",
    "CluePick",
    "by_link",
    "clue_docs",
    "how_stated",
]

#: a placeholder of a clue chain: [A] ... [Z], [?]
PLACEHOLDER = re.compile(r"\[(?:[A-Z]|\?)\]")
_NUMBERED = re.compile(r"\(\d{1,2}\)\s*")
_ASK = re.compile(r"^(?:what|which|who|whom|where|when|how|name)\b", re.IGNORECASE)


def is_clue_chain(question: str) -> bool:
    """Whether ``question`` is a chain of statements linked by placeholders ([A], [?])."""
    return len(PLACEHOLDER.findall(question)) >= 2


def links(question: str) -> list[str]:
    """The chain's links in resolution order (``[question]`` when no form is read)."""
    found = _clue_links(question) if is_clue_chain(question) else []
    return found or [question]


def placeholders(link: str) -> list[str]:
    """The placeholders of a link in order of appearance (``["[C]", "[B]"]``)."""
    return PLACEHOLDER.findall(link)


def link_words(link: str) -> list[str]:
    """A link's content words in order (placeholders dropped)."""
    text = PLACEHOLDER.sub(" ", link)
    out: list[str] = []
    for w in re.findall(r"[^\W_]+(?:-[^\W_]+)*", text):
        lw = w.lower()
        if lw in STOPWORDS or len(lw) < 2 or lw in (o.lower() for o in out):
            continue
        out.append(w)
    return out


def next_link(chain: list[str], covered: Iterable[str]) -> str:
    """The first link of ``chain`` that ``covered`` texts do not already hold.

    A link is held when at least half its content words occur in the texts (the
    documents found so far state it); the last link when all are held.
    """
    seen: set[str] = set()
    for text in covered:
        seen |= content_words(text)
    for link in chain:
        words = {w.lower() for w in link_words(link)}
        if words and len(words & seen) * 2 < len(words):
            return link
    return chain[-1]


def _clue_links(question: str) -> list[str]:
    text = _without_lead_in(_NUMBERED.sub("", question))
    out = []
    for sent in sentences(text):
        if not sent or _ASK.match(sent) or sent.endswith("?"):
            continue
        if PLACEHOLDER.search(sent) and link_words(sent):
            out.append(sent)
    return out


def _without_lead_in(text: str) -> str:
    """``text`` less what precedes its first sentence's colon, when that lead-in holds no
    placeholder and the rest of the sentence states a link ("Here are the facts:
    [A] was born in ..."); a link that is a field ("Assignee: [A]") keeps its label."""
    first = next(iter(sentences(text)), "")
    head, colon, rest = first.partition(":")
    if not colon or PLACEHOLDER.search(head) or not PLACEHOLDER.search(rest):
        return text
    if not link_words(rest):
        return text
    return text.strip()[len(head) + 1 :].lstrip()


#: a document's sentences: (content words, names and codes the question lacks) each
Sentences = Sequence[tuple[frozenset[str], frozenset[str]]]


def by_link(
    clues: Sequence[str],
    order: Sequence[str],
    words: Mapping[str, set[str] | frozenset[str]],
    parent: Mapping[str, list[str]],
    keep: int,
    sentences: Mapping[str, Sentences] | None = None,
    titles: Mapping[str, str] | None = None,
    constants: Constants = DEFAULT_CONSTANTS,
) -> list[str]:
    """``order`` with, first, the best document for each clue of a clue chain
    (:func:`clue_docs`, same arguments); the rest follow in their order."""
    picks = clue_docs(clues, order, words, parent, keep, sentences, titles, constants)
    out = [p.doc for p in picks]
    return out + [d for d in order if d not in out]


class CluePick(NamedTuple):
    """The document :func:`clue_docs` takes for one clue of a clue chain."""

    clue: int  #: the clue's index (0-based)
    doc: str
    #: whether it clearly continues the chain from the previous pick: one sentence
    #: holds the name the previous pick states and more than half the clue's words
    #: (see ``_states``)
    linked: bool
    #: the names the chain came through up to this pick (each pick's stated name):
    #: known already, they are not the next link
    passed: frozenset[str] = frozenset()


def clue_docs(
    clues: Sequence[str],
    order: Sequence[str],
    words: Mapping[str, set[str] | frozenset[str]],
    parent: Mapping[str, list[str]],
    keep: int,
    sentences: Mapping[str, Sentences] | None = None,
    titles: Mapping[str, str] | None = None,
    constants: Constants = DEFAULT_CONSTANTS,
) -> list[CluePick]:
    """The best document for each clue of a clue chain that one answers, in clue
    order (a clue none answers is skipped).

    A question stated as linked clues needs one document per clue. For each clue
    in order, among the best ``keep`` × ``clue_pool_factor`` documents of those in
    ``words`` (and any further one found through the previous clue's document or
    sharing a name with it), the one with a sentence holding most of the clue's
    words (share × ``clue_words_weight``; the whole document's ``words`` when
    ``sentences`` lack it) takes the next place. A document continues the chain and
    counts more, by its strongest evidence of the link: when it holds the name the
    previous clue's document gives in its sentence stating that clue
    (+``link_stated``: the clue's unknown, less the names the chain came through to
    it; the names of each sentence on a tie; ``sentences`` of each document), else
    when its nearest chain link (``parent``) is the previous clue's document
    (+``link_parent``), else when it holds any name that document holds but those
    the chain came through (+``link_shared``); +``link_about`` more when the stated
    name is in its title (``titles``, lowercased) and the clue opens with the
    placeholder it stands for: the document is about the clue's subject.
    A pick needs share plus bonus of at least ``clue_min_score``; ties go to the
    better ranked. The numbers are the ``constants``' (:mod:`.constants`).

    On ``clue_words_weight``: at 1, a patent citing the stated code with 3 of the
    clue's 5 words (0.6 + 1.5) beat the e-mail stating the whole clue (1.0 + a
    weaker link); at 2 a document stating the whole clue wins unless another
    continues the chain clearly better.
    """
    c = constants
    sents = sentences or {}
    heads = titles or {}
    names = {d: frozenset().union(*(n for _, n in ss)) for d, ss in sents.items()}
    pool = [d for d in order if d in words]
    out: list[str] = []
    answered: list[int] = []
    linked: list[bool] = []
    came: list[frozenset[str]] = []
    asked: set[str] = set()  # the previous clue's words
    passed: frozenset[str] = frozenset()  # names the chain came through: not its unknown
    for n, clue in enumerate(clues):
        # split as the documents' words are: a code "SY-2015-438482" is sy, 2015, 438482
        want = content_words(" ".join(link_words(clue)))
        if not want:
            continue
        prev = out[-1] if out else None
        # the document stating a clue is about its subject: the page about the name
        # the previous clue resolved only when the clue opens with it ("[A] has ...",
        # not "The [B] is held every year in [A]")
        opens = placeholders(clue)[:1]
        about_prev = bool(answered and opens and opens[0] in placeholders(clues[answered[-1]]))
        shared: frozenset[str] = frozenset()
        stated: frozenset[str] = frozenset()
        if prev is not None:
            shared = names.get(prev, frozenset()) - passed
            ss = sents.get(prev, ())
            if ss and asked:
                # the sentences holding most of the previous clue's words: on a tie
                # ("X (born 1951) is from Sypouthair", "X was born in Vrastby in
                # 1951"), the names of each
                most = max(len(w & asked) for w, _ in ss)
                stated = frozenset().union(*(n for w, n in ss if len(w & asked) == most))
                stated -= passed

        scored = [
            (
                _share(want, words[d], sents.get(d, ()), stated),
                _bonus(
                    d,
                    prev,
                    parent,
                    names,
                    stated,
                    shared,
                    heads.get(d, "") if about_prev else "",
                    c,
                ),
                -i,
                d,
            )
            for i, d in enumerate(pool)
            if d not in out
            and (
                i < keep * c.clue_pool_factor
                or prev in parent.get(d, [])
                or shared & names.get(d, frozenset())
            )
        ]
        if not scored:
            break
        weight = c.clue_words_weight
        share, extra, _, doc = max(scored, key=lambda s: (weight * s[0] + s[1], s[2]))
        if share + extra >= c.clue_min_score:
            out.append(doc)
            answered.append(n)
            held = sents.get(doc, ())
            linked.append(_states(want, held, stated, prev, parent.get(doc, []), c))
            asked = want
            passed = passed | stated
            came.append(passed)
    return [CluePick(*p) for p in zip(answered, out, linked, came, strict=True)]


def _share(
    want: set[str],
    words: frozenset[str] | set[str],
    sentences: Sentences,
    stated: frozenset[str] = frozenset(),
) -> float:
    """The share of a clue's words one sentence of a document holds (its best one),
    counting the name the previous clue's document states (``stated``) as one more
    word; with no sentences given, the share the document's words hold. A clue is
    one statement: a page naming the product in one sentence and a launch in
    another does not state "we will launch the product at ...", and of two e-mails
    naming the expo, the one launching something *at the expo* states "we will
    launch the [C] at the [B]"."""
    if sentences:
        extra = 1 if stated else 0
        return max(len(want & w) + (1 if stated & n else 0) for w, n in sentences) / (
            len(want) + extra
        )
    return len(want & words) / len(want)


def how_stated(
    clue: str,
    passed: frozenset[str],
    sentences: Sequence[tuple[str, frozenset[str], frozenset[str]]],
) -> tuple[int, int]:
    """How well a chunk states ``clue``, by its best sentence (text, content words,
    names): the clue's words it holds plus one for a name the chain came through
    (``passed``), then how much of the clue's phrasing it shares, function words
    included ("Re: Launch plans for the Grysnurk VP-220" holds the word and the
    name as well as "We will launch the Grysnurk VP-220 at the Waivrox Textile
    Forum", which also says "we will ... at the")."""
    want = content_words(" ".join(link_words(clue)))
    phrasing = set(words(PLACEHOLDER.sub(" ", clue)))
    return max(
        (
            (len(want & w) + bool(passed & n), len(phrasing & set(words(text))))
            for text, w, n in sentences
        ),
        default=(0, 0),
    )


def _states(
    want: set[str],
    sentences: Sentences,
    stated: frozenset[str],
    prev: str | None,
    links: list[str],
    constants: Constants,
) -> bool:
    """Whether a document clearly states a clue, so the chain goes on from it: one
    sentence holds the name the previous pick states and, with it, more than
    ``clue_state_share`` (half) of the clue's words (the name alone, "X" in a patent listing X as inventor, does
    not state "X is managed by [C]"; nor does a patent whose one sentence names the
    stated patent and another its lead inventor state "the lead inventor named on
    patent [B] is [C]"). With no stated name: half the clue's words, in the first
    pick or one found through the previous pick."""
    least = constants.clue_state_share
    if not stated:
        return (prev is None or prev in links) and _share(want, frozenset(), sentences) >= least
    held = [(w, n) for w, n in sentences if stated & n]
    return bool(held) and _share(want, frozenset(), held, stated) > least


def _bonus(
    doc: str,
    prev: str | None,
    parent: Mapping[str, list[str]],
    names: Mapping[str, frozenset[str]],
    stated: frozenset[str],
    shared: frozenset[str],
    title: str,
    constants: Constants,
) -> float:
    """How strongly ``doc`` continues the chain from ``prev`` (see :func:`clue_docs`)."""
    c = constants
    held = names.get(doc, frozenset())
    # the strongest evidence of the link counts, once: a document holding the name
    # the previous one states was usually also found by searching it
    link = max(
        c.link_stated if stated & held else 0.0,
        c.link_parent if prev in parent.get(doc, []) else 0.0,
        c.link_shared if shared & held else 0.0,
    )
    about = c.link_about if any(contains_phrase(title, n) for n in stated) else 0.0
    return link + about
