"""How an episode opens: what it asks of its store and policy before the first turn.

Both may declare optional protocols, probed here once per episode:

* a store that declares :class:`~thresher.index.store.PinsGeneration` is pinned
  to its live generation (:func:`pin`): the episode reads one index, and an
  ingest committed mid-episode shows in the next one;
* a policy that declares ``budget_ceiling``
  (:class:`~thresher.harness.policy.BasePolicy` documents every hook) has a
  ``budget.total`` left at its default lowered to what its model holds, with a
  notice (:func:`fit_budget`); a given budget is left for the policy to refuse;
* a policy's ``retrieval_mode`` sets the episode's ``retrieval.mode``
  (:func:`episode_config`), its ``prompt_cost`` has its prompt template's cost
  counted (:func:`prompt_cost`);
* a policy that declares ``start`` starts a session for the episode, and a
  policy (or session) that declares ``use_reader_memo`` gets the store's reader
  memo when it keeps one (:class:`~thresher.index.store.KeepsReaderMemo`)
  (:func:`open_policy`).

A store that cannot answer (closed, its backend gone) is used as given: the
episode's first call reports that failure as the call's error, not the start.
The start is recorded (``episode_start``) before anything can end the episode:
a policy that cannot start or describe itself (``policy_error``), an empty
question or one that held invalid Unicode (``invalid_input``) end it there
(:func:`cannot_begin`); so does a question with no letter or digit ("?"), which
has nothing to search for (:func:`check_searchable`, which the CLI and the
servers call before any episode).
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from thresher.config import Config
from thresher.errors import NoSearchableWordsError, ThresherError
from thresher.harness.ending import Exit
from thresher.harness.policy import (
    Policy,
    budget_ceiling_of,
    hand_reader_memo,
    prompt_cost_of,
    retrieval_mode_of,
    session_for,
)
from thresher.harness.result import ExitReason
from thresher.harness.trace import EpisodeStart
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import KeepsReaderMemo, PinsGeneration, Store
from thresher.tokens import PromptCost

__all__ = [
    "Opening",
    "pin",
    "episode_config",
    "fit_budget",
    "prompt_cost",
    "open_policy",
    "cannot_begin",
    "check_searchable",
    "NO_SEARCHABLE_WORDS",
]

#: a letter or a digit, in any script: what a question needs to be searched at all
_WORD = re.compile(r"[^\W_]")
#: why a question with none is refused
NO_SEARCHABLE_WORDS = "the question has no searchable words (no letter or digit); ask it in words"

_log = logging.getLogger(__name__)
#: notices of fitted budgets already logged (each once per process, not once per episode)
_noticed: set[str] = set()
_noticed_lock = threading.Lock()


def pin(store: Store) -> Store:
    """``store`` fixed on its live index generation for one episode, when it can be
    (:class:`~thresher.index.store.PinsGeneration`): the episode's searches, reads and
    recalls read one index, whatever an ingest commits meanwhile. As given otherwise,
    also when it cannot say (closed, its backend gone): the episode's first call then
    reports that failure as the call's error."""
    if not isinstance(store, PinsGeneration):
        return store
    try:
        return store.pinned()
    except ThresherError:
        return store


def episode_config(policy: Policy, config: Config) -> Config:
    """The config an episode of ``policy`` runs with: ``config`` plus what the policy declares.

    A policy's ``retrieval_mode`` (:class:`~thresher.harness.policy.BasePolicy`) sets
    ``retrieval.mode``; the result is recorded in the trace's start event.
    """
    mode = retrieval_mode_of(policy)
    if mode is not None and mode != config.retrieval.mode:
        return config.override({"retrieval.mode": mode})
    return config


def fit_budget(policy: Policy, config: Config) -> tuple[Config, str]:
    """``config`` with ``budget.total`` fitted to what ``policy`` holds, and the notice saying so.

    A policy that declares ``budget_ceiling`` (:class:`~thresher.harness.policy.BasePolicy`)
    whose ceiling is below
    ``budget.total`` gets the ceiling when the budget was not given
    (:meth:`~thresher.config.Config.is_given`); a given budget is kept (the policy
    refuses it, saying what fits), as is every budget when the ceiling is unknown, not
    positive, or its query fails. The notice ("" when nothing changed) is also logged
    as a warning, once per process.
    """
    if config.is_given("budget.total"):
        return config, ""
    try:
        ceiling = budget_ceiling_of(policy)
    except Exception:  # the server cannot say (down, broken): the first turn reports it
        return config, ""
    if ceiling is None or not 0 < ceiling.tokens < config.budget.total:
        return config, ""
    notice = (
        f"budget.total lowered from {config.budget.total} to {ceiling.tokens} tokens to fit "
        f"{ceiling.reason}; set budget.total to choose it"
    )
    with _noticed_lock:
        first = notice not in _noticed
        _noticed.add(notice)
    if first:
        _log.warning("%s", notice)
    return config.fitted({"budget.total": ceiling.tokens}), notice


def prompt_cost(policy: Policy) -> PromptCost | None:
    """The prompt template cost ``policy`` declares (its ``prompt_cost``); None when it
    declares none."""
    return prompt_cost_of(policy)


@dataclass(frozen=True, slots=True)
class Opening:
    """What the policy said of itself at the episode's start.

    session: the session a policy that declares ``start`` started
    for the episode (None: the policy given drives it, or it could not start);
    tool_schemas, system_prompt, name: as recorded in the start event;
    broken: why the policy could not start or describe itself ("" if it could).
    """

    session: Policy | None
    tool_schemas: list[dict[str, Any]]
    system_prompt: str
    name: str
    broken: str = ""

    def start_event(self, question: str, config: Config, tokenizer: str) -> EpisodeStart:
        """The episode's ``episode_start`` event: its question, what the policy said of
        itself, the ``config`` it runs with, the ``tokenizer`` that counts it."""
        return EpisodeStart(
            question=question,
            policy=self.name,
            system_prompt=self.system_prompt,
            tool_schemas=self.tool_schemas,
            config=config.to_dict(),
            tokenizer=tokenizer,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )


def open_policy(given: Policy, question: str, store: Store) -> Opening:
    """Start ``given`` for one episode of ``question`` over ``store`` (already pinned):
    its session when it is episodic, the store's reader memo handed to what drives
    the episode when that uses one, and what it says of itself. A failure is an
    :class:`Opening` with ``broken`` set, never an exception."""
    session: Policy | None = None
    try:
        session = session_for(given, question)  # this episode's own session, if any
        policy = given if session is None else session
        hand_reader_memo(policy, lambda: _reader_memo(store))
        schemas = list(policy.tool_schemas() or [])
        system_prompt = str(policy.system_prompt)
        name = str(policy.name)
    except Exception as exc:  # a policy that cannot even start or describe itself
        return Opening(session, [], "", type(given).__name__, f"{type(exc).__name__}: {exc}")
    return Opening(session, schemas, system_prompt, name)


def check_searchable(question: str) -> None:
    """Refuse a non-empty question with no letter or digit in any script ("?", "…!").

    An empty one is left to the caller, whose message says how to ask.

    Raises:
        NoSearchableWordsError: saying so (:data:`NO_SEARCHABLE_WORDS`).
    """
    if question.strip() and not _WORD.search(question):
        raise NoSearchableWordsError(NO_SEARCHABLE_WORDS)


def cannot_begin(opened: Opening, question: str, invalid_text: bool) -> Exit | None:
    """Why an episode of ``question`` (scrubbed; ``invalid_text``: it held a lone
    surrogate) with the policy as ``opened`` ends at its start; None when it begins."""
    if opened.broken:
        return Exit(ExitReason.POLICY_ERROR, opened.broken)
    if not question.strip():
        return Exit(ExitReason.INVALID_INPUT, "the question is empty")
    if not _WORD.search(question):
        return Exit(ExitReason.INVALID_INPUT, NO_SEARCHABLE_WORDS)
    if invalid_text:
        return Exit(
            ExitReason.INVALID_INPUT,
            "the question holds text that is not valid Unicode (a lone surrogate); send UTF-8 text",
        )
    return None


def _reader_memo(store: Store) -> ReaderMemo | None:
    """The store's per-generation reader memo, if it keeps one; None also when the
    store cannot say (its backend is gone): the episode's first call reports that
    failure, not the policy's start."""
    if not isinstance(store, KeepsReaderMemo):
        return None
    try:
        return store.reader_memo()
    except ThresherError:
        return None
