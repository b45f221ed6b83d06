"""Phrase: turn a chain of facts into a question, offline (templates) or with an LLM.

Offline, from the documents' own sentences (:func:`phrase_sentences`, used on
documentation): the first hop's sentence as a reader sees it, the bridge it
introduces replaced by what a reader would call it ("a setting", "a page"),
then the later hops' sentences with the incoming bridge as "that setting" and
the answer as a blank, in a few seeded plain-prose frames::

    A page says: "Set a setting to mock modules that cannot be imported." On the
    page about that setting: "The default of that setting is ___." What is the
    missing name?

Offline, by a few words (:func:`phrase_salient`): the same chain with each hop
named only by the few words of its sentence rarest in the corpus, as a person
names what they look for (never a bridge, the answer or markup)::

    A page about autodoc mentions mock, modules, imported and names a setting.
    On the page about that setting (default), which name is given?

Offline, clues (:func:`phrase_offline`): each hop's fact becomes a *clue*, the
sentence with the bridge entities replaced by letters (``[A]``, ``[B]``, ...)
and the answer by ``[?]``; a seeded template strings the clues together and
asks for ``[?]``. The anchor stays in the first clue, so the question names
where to start; the bridges and the answer never appear in it::

    Clues: (1) Patent GO-2021-138181 names [A] as its lead inventor. (2) [A] is
    currently employed by [B] as a test engineer. (3) [B] maintains its head
    office in [?]. Each letter stands for one name throughout. What name is [?]?

LLM mode (:class:`LLMPhraser`): the facts go to a chat model through the
chat client of :mod:`thresher.llm` (passed in by the caller) with a request to write
one natural question and to quote, verbatim, the sentence each hop rests on;
a second request asks the model to answer the question from the evidence
chunks alone, which :mod:`thresher.tasks.generate.verify` compares with the answer.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from thresher.tasks.generate.docrefs import mask_ref, noun_for, reader_text, role_of, tidy
from thresher.tasks.generate.extend import Chain
from thresher.tasks.generate.text import STOP, mask, normalize

__all__ = [
    "Phrasing",
    "clues",
    "phrase_offline",
    "phrase_sentences",
    "phrase_salient",
    "salient_words",
    "LLMPhraser",
    "PhraseError",
    "parse_json_reply",
]

LETTERS = "ABCDEFGH"
_TEMPLATES = (
    "Clues: {numbered} Each letter stands for one {noun} throughout. What {kind} is [?]?",
    "Follow the chain. {joined} Which {kind} belongs in place of [?]?",
    "{joined} Each bracketed letter names one {noun}. What is [?]?",
    "Start from the first statement and follow it through the others: {numbered} "
    "What {kind} is [?]?",
)
_KINDS = {"year": "year", "number": "number", "code": "code"}


@dataclass(frozen=True, slots=True)
class Phrasing:
    """A question and the quotes it rests on (one per hop, verbatim from the evidence)."""

    question: str
    quotes: tuple[str, ...]
    mode: str
    answer: str = ""


class PhraseError(Exception):
    """The LLM's reply could not be used (``reason`` is counted as a rejection)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def _end(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else text + "."


def clues(chain: Chain) -> list[str]:
    """The chain's facts with bridges as ``[A]``, ``[B]``, ... and the answer as ``[?]``."""
    names = {b: f"[{LETTERS[i]}]" for i, b in enumerate(chain.bridges)}
    out = []
    for i, hop in enumerate(chain.hops):
        text = hop.sentence
        final = i == len(chain.hops) - 1
        # longest first, so a bridge inside another name is not masked half-way
        targets = sorted(
            [*([(chain.answer, "[?]")] if final else []), *names.items()],
            key=lambda t: -len(t[0]),
        )
        for target, placeholder in targets:
            text = mask(text, target, placeholder)
        if hop.link and names.get(hop.link, "") not in text:
            text = f"The document about {names[hop.link]} says: {text}"
        out.append(_end(text))
    return out


def phrase_offline(chain: Chain, rng: random.Random) -> Phrasing:
    """A template question over the chain's clues (seeded choice of template).

    The quotes are the hops' facts, verbatim.
    """
    parts = clues(chain)
    question = rng.choice(_TEMPLATES).format(
        numbered=" ".join(f"({i}) {c}" for i, c in enumerate(parts, 1)),
        joined=" ".join(parts),
        kind=_KINDS.get(chain.answer_kind, "name"),
        noun="entity",
    )
    return Phrasing(question, tuple(h.sentence for h in chain.hops), "offline", chain.answer)


_OPENINGS = ("One page of the documentation says: ", "The documentation says: ", "A page reads: ")
_FOLLOW = (
    "On the page about that {noun}: ",
    "Where that {noun} is described: ",
    "Following that {noun}, another page says: ",
)
_ASKS = ("What is the missing {kind}?", "Which {kind} fills the blank?", "What goes in the blank?")
#: words kept on each side of the blank in the last hop's sentence (the rest would let
#: one search find the last page without following the chain)
BLANK_WINDOW = 10
_BLANK_MARK = "Qblankmarkq"


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def _one_article(text: str, noun: str) -> str:
    """``text`` with "a <noun>" read as English where the masked name sat inside a noun
    phrase that already has its determiner, at most one word before it: ``an explicit a
    name URL`` -> ``an explicit name URL``, ``the a setting`` -> ``the setting``. Only the
    placeholder's own article goes; the sentence's words are kept."""
    pattern = (
        r"\b(a|an|the|this|that|these|those|its|your|their|our|each|every|any)"
        rf"((?:\s+[\w-]+)?)\s+an?\s+({re.escape(noun)})\b"
    )
    return re.sub(pattern, r"\1\2 \3", text, flags=re.IGNORECASE)


def _mask_all(sentence: str, target: str, placeholder: str) -> str:
    """Every occurrence of ``target`` replaced: in a role, literal or link, and bare, with
    the dotted name around it (``pkg.Target.method``) replaced whole."""
    text = mask_ref(sentence, target, placeholder)
    if not target:
        return text
    dotted = rf"(?<![\w-])(?:\w+\.)*\.?{re.escape(target)}(?:\.\w+)*(?:\(\))?(?![\w-])"
    return re.sub(dotted, lambda _m: placeholder, text, flags=re.IGNORECASE)


def _window(text: str, marker: str, keep: int) -> str:
    words = text.split()
    at = [i for i, w in enumerate(words) if marker in w]
    if not at:
        return text
    lo, hi = max(0, at[0] - keep), min(len(words), at[-1] + keep + 1)
    return ("… " if lo else "") + " ".join(words[lo:hi]) + (" …" if hi < len(words) else "")


def phrase_sentences(chain: Chain, rng: random.Random) -> Phrasing:
    """A question made of the hops' own sentences, as a reader sees them (no letters).

    The first sentence names the anchor, its bridge replaced by "a <noun>"; each
    later sentence has its incoming bridge as "that <noun>" (or, when the hop's
    page is the bridge's own page or link target, is introduced as that page's
    text); the answer of the last is a blank, shown with at most
    :data:`BLANK_WINDOW` words either side. The quotes are the hops' facts, verbatim.
    """
    nouns = [noun_for(h.out, h.out_kind, role_of(h.sentence, h.out)) for h in chain.hops[:-1]]
    parts: list[str] = []
    for i, hop in enumerate(chain.hops):
        text = hop.sentence
        if i > 0:
            text = _mask_all(text, hop.link, f"that {nouns[i - 1]}")
        if i < len(chain.hops) - 1:
            text = _one_article(
                _mask_all(text, hop.out, f"{_article(nouns[i])} {nouns[i]}"), nouns[i]
            )
        else:
            text = _mask_all(text, chain.answer, _BLANK_MARK)
            text = _window(reader_text(text), _BLANK_MARK, BLANK_WINDOW)
        text = _end(tidy(reader_text(text))).replace(_BLANK_MARK, "___")
        if i == 0:
            parts.append(rng.choice(_OPENINGS) + f"“{text}”")
        else:
            follow = rng.choice(_FOLLOW).format(noun=nouns[i - 1])
            parts.append(follow[0].upper() + follow[1:] + f"“{text}”")
    kind = _KINDS.get(chain.answer_kind, "name")
    question = " ".join(parts) + " " + rng.choice(_ASKS).format(kind=kind)
    return Phrasing(question, tuple(h.sentence for h in chain.hops), "offline", chain.answer)


#: words each hop is named by in :func:`phrase_salient`
SALIENT_WORDS = 4
_S_OPEN = (
    "A page about {anchor} mentions {words} and names {art} {noun}.",
    "The documentation on {anchor} ({words}) names {art} {noun}.",
)
_S_MIDDLE = (
    "The page about that {prev} mentions {words} and names {art} {noun}.",
    "Where that {prev} is described ({words}), {art} {noun} is named.",
)
_S_LAST = (
    "On the page about that {prev} ({words}), which {kind} is given?",
    "Where that {prev} is described, about {words}: what is the {kind}?",
)


def salient_words(
    sentence: str, df: Callable[[str], int], avoid: Sequence[str], k: int = SALIENT_WORDS
) -> list[str]:
    """The ``k`` words of ``sentence`` rarest in the corpus, in sentence order.

    Words are the sentence's normalized tokens as a reader sees it (markup by its
    text); a word counts when it has a letter, is not a stop word, is longer than two
    characters, occurs in the corpus (``df(word) > 0``: the number of chunks holding
    it) and is no token of the names in ``avoid`` (bridges, answer, anchor). Ties go
    to the earlier word."""
    banned = {t for name in avoid for t in normalize(reader_text(name)).split()}
    tokens = normalize(reader_text(sentence)).split()
    seen: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if (
            tok in seen
            or tok in banned
            or tok in STOP
            or len(tok) < 3
            or not any(c.isalpha() for c in tok)
            or df(tok) <= 0
        ):
            continue
        seen[tok] = i
    rarest = sorted(seen, key=lambda t: (df(t), seen[t]))[:k]
    return sorted(rarest, key=seen.__getitem__)


def _listed(words: Sequence[str]) -> str:
    return ", ".join(words) if words else "it"


def phrase_salient(
    chain: Chain, rng: random.Random, df: Callable[[str], int], k: int = SALIENT_WORDS
) -> Phrasing:
    """A question naming each hop by a few of its sentence's rarest words (no quotes).

    The first hop names the anchor and up to ``k`` of its sentence's words
    (:func:`salient_words`), then "a <noun>" for its bridge; each later hop is "that
    <noun>" and up to ``k`` words of its sentence; the last asks for the answer's
    kind. No word of a bridge, the answer or the anchor is picked (the anchor is
    named whole, once). ``df(word)``: the chunks of the corpus holding the
    normalized word. The quotes are the hops' facts, verbatim, as in
    :func:`phrase_sentences`.
    """
    nouns = [noun_for(h.out, h.out_kind, role_of(h.sentence, h.out)) for h in chain.hops[:-1]]
    avoid = [chain.anchor, chain.answer, *chain.bridges]
    kind = _KINDS.get(chain.answer_kind, "name")
    parts: list[str] = []
    last = len(chain.hops) - 1
    for i, hop in enumerate(chain.hops):
        words = _listed(salient_words(hop.sentence, df, avoid, k))
        if i == 0:
            frame, fill = rng.choice(_S_OPEN), {"anchor": chain.anchor}
        elif i < last:
            frame, fill = rng.choice(_S_MIDDLE), {"prev": nouns[i - 1]}
        else:
            frame, fill = rng.choice(_S_LAST), {"prev": nouns[i - 1]}
        noun = nouns[i] if i < last else ""
        text = frame.format(words=words, art=_article(noun), noun=noun, kind=kind, **fill)
        parts.append(text[0].upper() + text[1:])
    question = " ".join(parts)
    return Phrasing(question, tuple(h.sentence for h in chain.hops), "offline", chain.answer)


# -- LLM mode ------------------------------------------------------------------------------

PHRASE_PROMPT = """\
You write one multi-hop question for a retrieval benchmark from a chain of facts.
Each fact is a sentence from a different document; the bridge of a fact is the \
entity that leads to the next fact. Write a single natural question that:
- names the anchor entity and needs every fact, in order, to be answered;
- never names a bridge entity or the answer;
- has exactly the given answer.
Reply with JSON only: {"question": "...", "quotes": ["...", ...], "answer": "..."} \
where quotes holds, for each fact in order, the exact sentence (copied verbatim) the \
question relies on."""

CHECK_PROMPT = """\
Answer the question using only the passages given. Reply with JSON only: \
{"answer": "..."} with a short answer (a name, number or date), or \
{"answer": "UNANSWERABLE"} if the passages do not answer it."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_reply(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model reply (bare, fenced or embedded), or None."""
    for candidate in (*_FENCE.findall(text), text):
        candidate = candidate.strip()
        for attempt in (candidate, *(m.group(0) for m in _OBJECT.finditer(candidate))):
            try:
                value = json.loads(attempt)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


class LLMPhraser:
    """Phrase and check questions with a chat model behind an OpenAI-compatible endpoint.

    Args:
        client: a :class:`thresher.llm.client.ChatClient` (or anything
            with its ``complete(messages, tools, params)`` method).
        temperature, max_tokens: sampling settings of both requests.
    """

    def __init__(self, client: Any, *, temperature: float = 0.7, max_tokens: int = 1024) -> None:
        self.client = client
        self.params = {"temperature": temperature, "max_tokens": max_tokens}

    def _ask(self, system: str, user: str) -> dict[str, Any]:
        response = self.client.complete(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            [],
            self.params,
        )
        try:
            content = response.body["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise PhraseError("llm_unparsable", "no message in the completion") from exc
        if not isinstance(content, str):
            content = json.dumps(content)
        value = parse_json_reply(content)
        if value is None:
            raise PhraseError("llm_unparsable", content[:120])
        return value

    def phrase(self, chain: Chain) -> Phrasing:
        """A natural question for ``chain`` with the model's quotes.

        Raises:
            PhraseError: ``llm_unparsable`` (no JSON object, no question, quotes not strings).
            EndpointUnavailableError / EndpointRequestError: from the client.
        """
        facts = [
            {"hop": i + 1, "fact": h.sentence, "bridge": h.out if i < len(chain.hops) - 1 else None}
            for i, h in enumerate(chain.hops)
        ]
        user = json.dumps(
            {"anchor": chain.anchor, "answer": chain.answer, "facts": facts}, ensure_ascii=False
        )
        value = self._ask(PHRASE_PROMPT, user)
        question, quotes = value.get("question"), value.get("quotes", [])
        if not isinstance(question, str) or not question.strip():
            raise PhraseError("llm_unparsable", "no question in the reply")
        if not isinstance(quotes, list) or not all(isinstance(q, str) for q in quotes):
            raise PhraseError("llm_unparsable", "quotes must be a list of strings")
        answer = value.get("answer", chain.answer)
        return Phrasing(question.strip(), tuple(quotes), "llm", str(answer))

    def answer(self, question: str, passages: Sequence[str]) -> str:
        """The model's answer to ``question`` from ``passages`` alone ('' if unparsable)."""
        user = json.dumps({"question": question, "passages": list(passages)}, ensure_ascii=False)
        try:
            value = self._ask(CHECK_PROMPT, user)
        except PhraseError:
            return ""
        answer = value.get("answer", "")
        return answer if isinstance(answer, str) else str(answer)
