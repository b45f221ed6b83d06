"""Checking candidate chains in batches, with the same outcome as one at a time.

A candidate passes the checks of :mod:`thresher.tasks.generate.verify` in a fixed
order and the first failure names its rejection. Most of the time goes to the
two checks that search the store (single-shot solvability, distractor mining);
they depend on the candidate alone, so they run as batch jobs
(:mod:`thresher.batch`: threads, or Ray workers that open the index once). The
rest stays on the caller, in candidate order:

1. :func:`prepare` (caller, before the jobs): phrasing, the text checks, a
   duplicate of a task kept before this batch, the ambiguity check; a candidate
   still standing gets a :class:`StoreRequest`;
2. :class:`StoreChecks` (a job): ``single_shot_found``, then, unless every
   evidence chunk was found, ``mine_distractors``;
3. :func:`settle` (caller, in candidate order): counts each check passed up to
   the first failure exactly as the sequential order would (a duplicate of a
   task kept earlier in the same batch is found here), asks the LLM to answer
   (LLM mode), and keeps the task or names its rejection.

Because every check is a function of the candidate, the corpus and the tasks
kept before it, the kept tasks and every count equal the sequential run's.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from thresher.batch.runner import JobResult
from thresher.batch.stores import StoreSource, resolve_store
from thresher.tasks.generate.distract import mine_distractors
from thresher.tasks.generate.explore import CorpusView
from thresher.tasks.generate.extend import Chain
from thresher.tasks.generate.phrase import (
    LLMPhraser,
    PhraseError,
    Phrasing,
    clues,
    phrase_offline,
    phrase_salient,
    phrase_sentences,
)
from thresher.tasks.generate.text import normalize
from thresher.tasks.generate.verify import (
    TEXT_CHECKS,
    ambiguous_hop,
    answers_agree,
    single_shot_found,
    text_checks,
)

__all__ = [
    "StoreRequest",
    "StoreChecks",
    "Prepared",
    "Kept",
    "prepare",
    "settle",
    "request_results",
]


@dataclass(frozen=True, slots=True)
class StoreRequest:
    """What the store checks of one candidate need (plain data: it travels to workers)."""

    question: str
    evidence_ids: tuple[str, ...]
    clues: tuple[str, ...]
    evidence_docs: tuple[str, ...]
    forbidden: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoreChecks:
    """The job: ``(found, distractors)``; ``distractors`` is None when every evidence
    chunk was found (single-shot solvable: the sequential run mines none then)."""

    store: StoreSource
    k: int = 5
    n_distractors: int = 8

    def __call__(self, request: StoreRequest) -> tuple[int, list[str] | None]:
        store = resolve_store(self.store)
        found, _top = single_shot_found(store, request.question, request.evidence_ids, self.k)
        if found == len(request.evidence_ids):
            return found, None
        distractors = mine_distractors(
            store,
            list(request.clues),
            list(request.evidence_ids),
            list(request.evidence_docs),
            list(request.forbidden),
            n=self.n_distractors,
        )
        return found, distractors


@dataclass(slots=True)
class Prepared:
    """A candidate after the caller's checks: counts so far, and what is left to run.

    Attributes:
        chain: the candidate chain.
        passed: checks passed so far, in order (counted only when settled).
        reason: the rejection found so far (None: still standing).
        phrasing: the question (None when phrasing failed).
        texts: the evidence chunks' texts (what the LLM answers from).
        key: the duplicate key (answer and evidence chunks).
        ambiguous: whether a hop is ambiguous (None: not checked).
        request: the store checks to run (None: rejected before them).
    """

    chain: Chain
    passed: list[str] = field(default_factory=list)
    reason: str | None = None
    phrasing: Phrasing | None = None
    texts: list[str] = field(default_factory=list)
    key: tuple[str, ...] = ()
    ambiguous: bool | None = None
    request: StoreRequest | None = None


@dataclass(frozen=True, slots=True)
class Kept:
    """A candidate that passed every check."""

    phrasing: Phrasing
    found: int
    distractors: list[str]


def prepare(
    view: CorpusView,
    chain: Chain,
    mode: str,
    phraser: LLMPhraser | None,
    rng: random.Random,
    seen_keys: set[tuple[str, ...]],
    phrasing: str = "clues",
) -> Prepared:
    """The caller's checks of one candidate, up to the store checks (no counting here).

    ``phrasing`` (offline): ``clues`` (:func:`phrase_offline`), ``sentences``
    (:func:`phrase_sentences`) or ``salient`` (:func:`phrase_salient`, words rated by
    the chunks of ``view`` holding them)."""
    out = Prepared(chain)
    if mode == "llm":
        assert phraser is not None
        try:
            out.phrasing = phraser.phrase(chain)
        except PhraseError as exc:
            out.reason = exc.reason
            return out
        out.passed.append("llm_unparsable")
    else:
        if phrasing == "salient":
            out.phrasing = phrase_salient(chain, rng, lambda t: len(view.postings.get(t, ())))
        else:
            phrase = phrase_sentences if phrasing == "sentences" else phrase_offline
            out.phrasing = phrase(chain, rng)
    phrased = out.phrasing
    texts = {h.chunk_id: view.chunks[h.chunk_id].text for h in chain.hops}
    out.texts = list(texts.values())
    reason, _share = text_checks(chain, phrased, texts, require_anchor=mode == "offline")
    for check in TEXT_CHECKS:
        if check == reason:
            out.reason = reason
            return out
        out.passed.append(check)
    out.key = (normalize(chain.answer), *chain.chunk_ids)
    if out.key in seen_keys:  # a duplicate of a task kept before this batch
        return out
    out.ambiguous = ambiguous_hop(view, chain) is not None
    if not out.ambiguous:
        out.request = StoreRequest(
            phrased.question,
            tuple(chain.chunk_ids),
            tuple(clues(chain)),
            tuple(h.doc_id for h in chain.hops),
            (chain.answer, *chain.bridges),
        )
    return out


def settle(
    prepared: Prepared,
    result: JobResult[tuple[int, list[str] | None]] | None,
    mode: str,
    phraser: LLMPhraser | None,
    min_distractors: int,
    seen_keys: set[tuple[str, ...]],
    passed: Counter[str],
) -> str | Kept:
    """Count one candidate's checks in order: its rejection reason, or the kept task.

    ``result`` is its store checks' job result (None when it had none to run). A
    job that failed twice gives ``check_failed`` (counted by the caller apart
    from the checks).
    """
    passed.update(prepared.passed)
    if prepared.reason is not None:
        return prepared.reason
    if prepared.key in seen_keys:
        return "duplicate"
    passed["duplicate"] += 1
    if prepared.ambiguous:
        return "ambiguous"
    passed["ambiguous"] += 1
    if result is None or result.value is None:
        return "check_failed"
    found, distractors = result.value
    chain, phrasing = prepared.chain, prepared.phrasing
    assert phrasing is not None
    if distractors is None:
        return "single_shot_solvable"
    passed["single_shot_solvable"] += 1
    if mode == "llm":
        assert phraser is not None
        predicted = phraser.answer(phrasing.question, prepared.texts)
        if not answers_agree(predicted, chain.answer):
            return "llm_answer_mismatch"
        passed["llm_answer_mismatch"] += 1
    if len(distractors) < min_distractors:
        return "too_few_distractors"
    passed["too_few_distractors"] += 1
    seen_keys.add(prepared.key)
    return Kept(phrasing, found, distractors)


def request_results(
    prepared: Sequence[Prepared], results: Sequence[JobResult[tuple[int, list[str] | None]]]
) -> list[JobResult[tuple[int, list[str] | None]] | None]:
    """Each prepared candidate's job result (None for those without a store request)."""
    it = iter(results)
    return [next(it) if p.request is not None else None for p in prepared]
