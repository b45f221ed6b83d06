"""The program half of the environment: thresher's harness, run in-process per rollout.

verifiers' v1 harnesses run an agent program whose every model call goes through the
rollout's interception endpoint, which records the calls as a message graph. A harness
may run its loop in-process instead of launching a program, as long as every model call
goes through that endpoint; this one does: each rollout drives a
``thresher.env.SearchEnv`` over the task's index, sending each ``Step``'s messages and tool
schemas to the endpoint as a chat completion (``tool_choice: auto``, no response format)
and handing the reply to ``SearchEnv.step``, until the episode ends. The tools (search,
grep, read, prune, recall), the token budget, the refusals and the trace are thresher's.

Mode ``edit`` (the default) sends the harness's transcript as it is: after a prune or a
recall the next request is not an extension of the previous one, and verifiers records
it as a new branch of the rollout's message graph, so the rewritten history is what the
model is trained on. Mode ``append`` sends a prompt that only grows (one branch); see
thresher's docs/rl.md for what it loses.

When the episode ends, ``trace.info["thresher"]`` holds thresher's trace (its events as
JSON), the exit reason, the mode, the turns whose prefix was not preserved and the reward
the environment computed; the task's reward and metrics are computed from that trace.
A model call that fails ends the episode ``endpoint_unavailable`` in thresher's trace and
fails the rollout (verifiers records an errored rollout, never scored as 0).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, ClassVar, Literal

import openai
import verifiers.v1 as vf
from thresher.api import resolve_config
from thresher.env import SearchEnv
from thresher.index.backends import open_store
from thresher.index.store import Store
from thresher.policies.llm.messages import short_call_id
from thresher.tasks.task import Task

from thresher_search.taskset import ThresherSearchData

__all__ = ["ThresherSearchHarness", "ThresherSearchHarnessConfig"]

_STORES: dict[str, Store] = {}
_LOCK = threading.Lock()  # one episode step at a time per process: the store is shared


def _store(index: str) -> Store:
    """The open store of ``index``, opened once per process."""
    with _LOCK:
        if index not in _STORES:
            _STORES[index] = open_store(index)
        return _STORES[index]


def _locked(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with _LOCK:
        return fn(*args, **kwargs)


def _with_model_ids(messages: list[dict[str, Any]], ids: dict[str, str]) -> list[dict[str, Any]]:
    """``messages`` with the tool-call ids thresher shortened (``short_call_id``) put back
    as the model wrote them (``ids``: short id -> the model's id), so a prompt restates the
    model's own replies and verifiers' graph finds them as the prefix they are."""
    out = []
    for message in messages:
        m = dict(message)
        if m.get("role") == "tool" and m.get("tool_call_id") in ids:
            m["tool_call_id"] = ids[m["tool_call_id"]]
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {**c, "id": ids.get(c.get("id"), c.get("id"))} for c in m["tool_calls"]
            ]
        out.append(m)
    return out


class ThresherSearchHarnessConfig(vf.HarnessConfig):
    """The episode's knobs (``--env.agent.harness.*``)."""

    id: str = "thresher-search"
    mode: Literal["edit", "append"] = "edit"
    """``edit``: prunes rewrite the history the model sees (a new graph branch); ``append``:
    the prompt only grows."""
    config: Path | None = None
    """A thresher settings file (TOML/JSON: budget, episode caps, chunking); default settings
    when unset."""
    training: bool = False
    """thresher's training mode: no wall-time cut (turn and token caps instead)."""


class ThresherSearchHarness(vf.Harness[ThresherSearchHarnessConfig]):
    """Runs one thresher episode per rollout, every model call through the endpoint."""

    APPENDS_SYSTEM_PROMPT: ClassVar[bool] = True
    EXECUTES_CODE: ClassVar[bool] = False
    NEEDS_CONTAINER: ClassVar[bool] = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
    ) -> vf.ProgramResult:
        if not isinstance(data, ThresherSearchData):
            data = ThresherSearchData.model_validate(data.model_dump())
        task = Task.from_dict(data.task)
        store = await asyncio.to_thread(_store, data.index)
        env = SearchEnv(
            store,
            resolve_config(self.config.config),
            self.config.mode,
            system_prompt=data.system_prompt,
            model=ctx.model,
            beta=data.beta,
            training=self.config.training,
        )
        client = openai.AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
        try:
            step = await asyncio.to_thread(_locked, env.reset, task)
            lost: list[int] = []
            ids: dict[str, str] = {}
            while not step.done:
                if not step.prefix_preserved:
                    lost.append(int(step.info.get("turn", 0)))
                try:
                    completion = await client.chat.completions.create(
                        model=ctx.model,
                        messages=_with_model_ids(step.messages, ids),
                        tools=step.tools,
                        tool_choice="auto",
                    )
                except openai.OpenAIError as exc:
                    await asyncio.to_thread(_locked, env.fail, exc)
                    self._record(trace, env, lost)
                    raise vf.ProviderError(f"model call failed: {exc}") from exc
                choice = completion.choices[0]
                for call in choice.message.tool_calls or []:
                    if call.id:
                        ids[short_call_id(call.id)] = call.id
                usage = completion.usage.model_dump() if completion.usage else None
                step = await asyncio.to_thread(
                    _locked,
                    env.step,
                    choice.message.model_dump(exclude_none=True),
                    finish_reason=choice.finish_reason,
                    usage=usage,
                )
            self._record(trace, env, lost)
        finally:
            await client.close()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    def _record(self, trace: vf.Trace, env: SearchEnv, lost: list[int]) -> None:
        rollout = env.rollout()
        trace.info["thresher"] = {
            "trace": [e.to_dict() for e in rollout.trace],
            "exit_reason": rollout.result.exit_reason.value,
            "mode": env.mode,
            "prefix_lost_turns": lost,
            "reward": None if rollout.reward is None else rollout.reward.total,
            "unscorable": rollout.unscorable,
        }
