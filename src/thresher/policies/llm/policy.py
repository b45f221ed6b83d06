"""LLMPolicy: chat completions with tools over an OpenAI-compatible endpoint.

Each turn the policy sends the harness's rendered transcript
(``observation.messages``) in a role structure every mainstream chat template
accepts (:func:`~thresher.policies.llm.messages.chat_messages`: no user
message after a user message or a tool result) with the five tool schemas
(until a chunk has been shown, each reply is constrained to one tool call by a
``response_format`` JSON Schema, or ``tool_choice`` ``required``: see
:meth:`LLMPolicy.response_format`), and turns the reply
into a :class:`~thresher.harness.actions.Proposal`, or into a
:class:`~thresher.harness.actions.MalformedReply` that the harness refuses
and explains to the model at the next turn. The policy keeps no episode
state: what it needs (earlier searches, refused replies so far) is read from
the transcript, so one instance can serve concurrent episodes.

The server's context must hold the budget and a reply: the policy overrides
``budget_ceiling`` (a :class:`~thresher.harness.policy.BasePolicy` hook: the context
the server reports less ``llm.max_tokens``), so a budget left at its default is fitted
to the server before the first turn, and a given one that does not fit is refused
(:class:`ContextTooSmallError`).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from thresher.config import Config
from thresher.endpoint.settings import EndpointSettings
from thresher.errors import ThresherError
from thresher.harness.actions import MalformedReply, Proposal
from thresher.harness.observation import Observation
from thresher.harness.policy import BasePolicy, BudgetCeiling
from thresher.harness.render import escape_id
from thresher.llm.client import ChatClient
from thresher.llm.context import ContextSize
from thresher.policies.llm.messages import chat_messages
from thresher.policies.llm.parse import parse_completion, refused_replies, searched_queries
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.policies.llm.samples import read_sample, token_request
from thresher.policies.llm.schemas import call_response_format, tool_schemas
from thresher.tokens import CHATML_TOOLS_COST, PromptCost, get_counter

__all__ = [
    "LLMPolicy",
    "MalformedReplyLimitError",
    "ContextTooSmallError",
    "context1_policy",
    "check_refused",
    "read_completion",
    "CONTEXT1_MODEL",
]

#: the Hugging Face name of Chroma's Context-1 weights (the default model of ``context-1``)
CONTEXT1_MODEL = "chromadb/context-1"


class MalformedReplyLimitError(ThresherError):
    """The model's replies were refused ``llm.max_malformed`` times in one episode."""


class ContextTooSmallError(ThresherError):
    """The server's context cannot hold the token budget plus a reply (checked at start)."""


class LLMPolicy(BasePolicy):
    """A tool-calling LLM as the policy.

    Args:
        config: settings; ``config.llm`` names the endpoint (see ``docs/serving.md``),
            ``config.chunking.tokenizer`` counts reply length.
        system_prompt: replaces :data:`~thresher.policies.llm.prompt.SYSTEM_PROMPT`.
        client: a ready :class:`ChatClient` (default: one built from the settings).
        env: environment for the settings fallbacks (default ``os.environ``).
        sleep: the wait between retries (default ``time.sleep``; tests record it).
        prompt_cost: the tokens the server's chat template adds (default: ChatML with
            Hermes tool tags, :data:`~thresher.tokens.CHATML_TOOLS_COST`); the harness
            counts with it and calibrates the text ratio from each reported usage.
        **llm: overrides of ``config.llm`` fields (``model="gpt-oss-20b"``, ...).

    Raises:
        ConfigError: an unknown or ill-typed ``llm`` override.
    """

    name = "llm"

    def __init__(
        self,
        config: Config | None = None,
        *,
        system_prompt: str | None = None,
        client: ChatClient | None = None,
        env: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] | None = None,
        prompt_cost: PromptCost | None = None,
        **llm: Any,
    ) -> None:
        cfg = config or Config()
        if llm:
            cfg = cfg.override({f"llm.{k}": v for k, v in llm.items()})
        self.config = cfg
        self.settings = client.settings if client else EndpointSettings.resolve(cfg.llm, env)
        self.system_prompt = SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.prompt_cost = prompt_cost or CHATML_TOOLS_COST
        self.client = client or ChatClient(self.settings, sleep=sleep or time.sleep)
        self._count = get_counter(cfg.chunking.tokenizer).count
        self._lock = threading.Lock()
        self._stats: Counter[str] = Counter()
        self._context_read = False
        self._context: ContextSize | None = None
        #: why the last read failed, raised once more by the next check (not read twice)
        self._context_error: ThresherError | None = None
        #: the model call in flight per observation (by id), for :meth:`cancel`
        self._inflight: dict[int, ChatClient] = {}

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The five tools as JSON Schemas for this policy's config (sent with every request,
        counted by the harness)."""
        return tool_schemas(self.config)

    def _nothing_shown(self, observation: Observation | None) -> bool:
        return observation is not None and not observation.cache

    def response_format(self, observation: Observation | None = None) -> dict[str, Any] | None:
        """The ``response_format`` of the request for ``observation``: while no chunk has
        been shown and ``llm.first_response_format`` is ``json_schema``, a JSON Schema
        admitting one call of a retrieval tool
        (:func:`~thresher.policies.llm.schemas.call_response_format`; a final answer can
        only name shown documents, so the model has to call a tool), else None (not sent)."""
        if self._nothing_shown(observation) and (
            self.config.llm.first_response_format == "json_schema"
        ):
            return call_response_format(self.config)
        return None

    def tool_choice(self, observation: Observation | None = None) -> str:
        """The ``tool_choice`` of the request for ``observation``: while no chunk has been
        shown, ``llm.first_tool_choice`` (a server that honours ``required`` constrains the
        reply to tool calls), or ``auto`` when :meth:`response_format` constrains it
        instead; once a chunk has been shown, ``auto``."""
        if self._nothing_shown(observation) and self.response_format(observation) is None:
            return self.config.llm.first_tool_choice
        return "auto"

    def request_params(self, observation: Observation | None = None) -> dict[str, Any]:
        """The request fields sent besides model, messages and tools (for ``observation``'s
        turn: see :meth:`tool_choice` and :meth:`response_format`; with
        ``llm.return_tokens``, vLLM's fields asking for the token ids and log-probabilities:
        :func:`~thresher.policies.llm.samples.token_request`)."""
        llm = self.config.llm
        params: dict[str, Any] = {
            "temperature": llm.temperature,
            "max_tokens": llm.max_tokens,
            "tool_choice": self.tool_choice(observation),
            "parallel_tool_calls": True,
        }
        response_format = self.response_format(observation)
        if response_format is not None:
            params["response_format"] = response_format
        if llm.reasoning_effort:
            params["reasoning_effort"] = llm.reasoning_effort
        if llm.return_tokens:  # vLLM: the prompt's and the reply's token ids, log-probs
            params.update(token_request())
        return params

    def context_size(self) -> ContextSize | None:
        """The server's context size (read once per instance; None: the server reports none).

        Raises:
            EndpointUnavailableError: the server is down (the next call raises it again
                without asking; the one after asks again).
        """
        with self._lock:
            if self._context_read:
                return self._context
            failed, self._context_error = self._context_error, None
        if failed is not None:  # just read and failed (before this episode's first turn)
            raise failed
        try:
            size = self.client.context_size()
        except ThresherError as exc:
            with self._lock:
                self._context_error = exc
            raise
        with self._lock:
            self._context, self._context_read = size, True
        return size

    def budget_ceiling(self) -> BudgetCeiling | None:
        """The largest ``budget.total`` the server's context holds with a reply of
        ``llm.max_tokens`` (the hook
        :meth:`~thresher.harness.policy.BasePolicy.budget_ceiling`); None when the
        server reports no context size."""
        size = self.context_size()
        if size is None:
            return None
        max_tokens = self.config.llm.max_tokens
        return BudgetCeiling(
            size.tokens - max_tokens,
            f"the server's context of {size.tokens} tokens ({size.source}) "
            f"less llm.max_tokens={max_tokens}",
        )

    def check_context(self, budget: int | None = None) -> None:
        """Check that the server's context holds ``budget`` (default ``budget.total``) and a reply.

        Raises:
            ContextTooSmallError: ``budget + llm.max_tokens`` is over the context
                size the server reports (a server that reports none is not checked).
        """
        size = self.context_size()
        budget = self.config.budget.total if budget is None else budget
        max_tokens = self.config.llm.max_tokens
        need = budget + max_tokens
        if size is None or need <= size.tokens:
            return
        raise ContextTooSmallError(
            f"the server's context is {size.tokens} tokens ({size.source}), but an episode "
            f"may send budget.total={budget} tokens and ask for "
            f"llm.max_tokens={max_tokens} more ({need}): lower budget.total "
            f"to at most {max(size.tokens - max_tokens, 0)} (or leave it unset: it is then "
            "fitted to the server), or start the server with a larger context "
            "(llama.cpp -c, vLLM --max-model-len)"
        )

    def cancel(self, observation: Observation) -> None:
        """End the model call made for ``observation`` (its episode ended: wall time, a
        stop): its connection is closed, so the server stops generating, and it is not
        retried. Other episodes' calls go on."""
        with self._lock:
            call = self._inflight.pop(id(observation), None)
        if call is not None:
            call.close()

    def stats(self) -> dict[str, int]:
        """Counters over this instance's life: ``requests``, ``retries``, ``malformed:<code>``."""
        with self._lock:
            return dict(self._stats)

    def propose(self, observation: Observation) -> Proposal | MalformedReply:
        """Ask the model for this turn's tool calls or final answer.

        Returns:
            A Proposal (with the endpoint's usage, plus ``retries`` when any, the model
            asked for, and the reply's tokens when the completion reports them:
            :func:`~thresher.policies.llm.samples.read_sample`), or a MalformedReply
            the harness refuses with its code and corrective message (with the same).

        Raises:
            ContextTooSmallError: the server's context cannot hold the episode's budget.
            MalformedReplyLimitError: ``llm.max_malformed`` replies were already refused.
            EndpointUnavailableError: no server at ``base_url`` (at once), or the endpoint
                stayed unreachable through the retries; the harness ends the episode
                ``endpoint_unavailable``.
            EndpointResponseError: (an ``EndpointUnavailableError``) the endpoint answered
                with something that is not a chat completion; not retried.
            EndpointRequestError: the endpoint rejected the request (4xx).
        """
        messages = list(observation.messages)
        check_refused(messages, self.config)
        self.check_context(observation.usage.budget)
        params = self.request_params(observation)
        call = self.client.fork()
        with self._lock:
            self._inflight[id(observation)] = call
        try:
            response = call.complete(
                chat_messages(messages),
                self.tool_schemas(),
                params,
                timeout_s=observation.wall_time_left_s,
            )
        finally:
            with self._lock:
                self._inflight.pop(id(observation), None)
            call.close()
        reply = read_completion(response.body, observation, self.config, self._count, params)
        usage = dict(reply.usage or {})
        if response.retries:
            usage["retries"] = len(response.retries)
        with self._lock:
            self._stats["requests"] += response.attempts
            self._stats["retries"] += len(response.retries)
            if isinstance(reply, MalformedReply):
                self._stats[f"malformed:{reply.code}"] += 1
        sample = read_sample(response.body)
        return replace(reply, usage=usage or None, model=response.model, sample=sample)


def check_refused(messages: Sequence[dict[str, Any]], config: Config) -> None:
    """Refuse to ask again once ``llm.max_malformed`` replies of this transcript were refused.

    Raises:
        MalformedReplyLimitError: ``messages`` show ``llm.max_malformed`` refused replies.
    """
    limit = config.llm.max_malformed
    refused = refused_replies(messages)
    if refused >= limit:
        raise MalformedReplyLimitError(
            f"{refused} replies were refused this episode (llm.max_malformed={limit}); "
            "the model is not following the tool format: check the server's tool-call "
            "parser (docs/serving.md) or raise llm.max_malformed"
        )


def read_completion(
    body: dict[str, Any],
    observation: Observation,
    config: Config,
    count_tokens: Callable[[str], int],
    params: Mapping[str, Any],
) -> Proposal | MalformedReply:
    """The reply to ``observation`` that the chat completion ``body`` holds (a
    :class:`Proposal`, or a :class:`MalformedReply` the harness refuses): read by
    :func:`~thresher.policies.llm.parse.parse_completion` against what the transcript
    shows, as a request sent with ``params`` (its ``tool_choice`` and
    ``response_format`` are recorded in the reply's usage). Pure."""
    messages = observation.messages
    return parse_completion(
        body,
        searched=searched_queries(messages),
        max_content_tokens=config.llm.max_tokens,
        count_tokens=count_tokens,
        id_salt=f"{len(messages)}:",
        in_view=[escape_id(a.chunk.doc_id) for a in observation.active],
        tool_choice=str(params.get("tool_choice", "auto")),
        response_format=str((params.get("response_format") or {}).get("type", "")),
    )


def context1_policy(config: Config | None = None, **options: Any) -> LLMPolicy:
    """An :class:`LLMPolicy` whose model defaults to ``chromadb/context-1``.

    The model named by ``config.llm.model``, a ``model=`` option or
    ``THRESHER_LLM_MODEL`` still wins.
    """
    cfg = config or Config()
    env = options.get("env")
    env_model = (os.environ if env is None else env).get("THRESHER_LLM_MODEL")
    if not cfg.llm.model and "model" not in options and not env_model:
        options["model"] = CONTEXT1_MODEL
    return LLMPolicy(cfg, **options)
