"""Asking the policy for a turn's reply, within the episode's wall time.

The policy gets its :class:`~thresher.harness.observation.Observation` on a
reusable daemon thread (:mod:`thresher.workers`), not a ``ThreadPoolExecutor``:
a call that times out cannot be killed, and an executor joins its workers at
interpreter exit, so one hung call would hang the process. The wait is sliced
so a stop (the stream's reader, or the caller's ``should_stop``) is seen within
:data:`STOP_POLL_S`; the policy's thread then finishes on its own, abandoned. A policy
that declares ``in_process`` (:class:`~thresher.harness.policy.BasePolicy`) is
asked on the episode's thread instead.

A turn with no reply ends the episode (:class:`NoReply` says how it is recorded):
the caller stopped (``cancelled``), the wall time passed (``timeout``), the
policy's endpoint stayed down (a ``BackendUnavailableError``:
``endpoint_unavailable``), or the policy raised (``policy_error``: a policy bug
ends the episode, never the process). A reply abandoned (stopped, timed out) is
cancelled when the policy declares ``cancel`` (the LLM policy closes the model
call's connection).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thresher.errors import BackendUnavailableError
from thresher.harness.ending import CANCELLED_MESSAGE, Exit
from thresher.harness.observation import Observation
from thresher.harness.policy import Policy, cancel_work, runs_in_process
from thresher.harness.result import ExitReason
from thresher.workers import Job, submit

__all__ = ["STOP_POLL_S", "NoReply", "ask_policy"]

#: how often a waiting episode asks ``should_stop`` while the policy is thinking (seconds)
STOP_POLL_S = 0.05


class _Stopped(Exception):
    """The caller asked the episode to stop while the policy was thinking."""


@dataclass(frozen=True, slots=True)
class NoReply:
    """A turn the policy gave no reply for: what its trace records and how the episode ends.

    raw: the refused proposal's ``raw`` text; code, message: the refusal's;
    end: the episode's exit.
    """

    raw: str
    code: str
    message: str
    end: Exit


def ask_policy(
    policy: Policy,
    observation: Observation,
    *,
    wall_time_s: float,
    elapsed: Callable[[], float],
    stopped: Callable[[], bool],
) -> tuple[Any, float] | NoReply:
    """The policy's reply to ``observation`` and the seconds it took, or why none came.

    Args:
        policy: the policy (or session) driving the episode.
        observation: what it is given this turn.
        wall_time_s: the episode's wall time; ``elapsed`` says how much has gone.
        elapsed: seconds since the episode started.
        stopped: whether the episode's reader or caller asked it to stop.

    Returns:
        ``(reply, seconds)``, the reply as the policy gave it (not yet checked), or a
        :class:`NoReply` ending the episode.
    """
    start = time.perf_counter()
    try:
        if runs_in_process(policy):
            value = _call_here(policy, observation, wall_time_s, elapsed, stopped)
        else:
            job = submit(lambda: policy.propose(observation))
            value = _wait(job, wall_time_s, elapsed, stopped)
    except _Stopped:
        _cancel_call(policy, observation)
        return NoReply(
            "(cancelled before a reply)",
            "cancelled",
            CANCELLED_MESSAGE,
            Exit(ExitReason.CANCELLED, CANCELLED_MESSAGE),
        )
    except TimeoutError:
        _cancel_call(policy, observation)
        return NoReply(
            "(no reply before wall time)",
            "timeout",
            "policy did not reply",
            Exit(ExitReason.TIMEOUT, "the policy did not reply in time"),
        )
    except BackendUnavailableError as exc:  # the policy's endpoint stayed down: a typed exit
        return NoReply(
            str(exc)[:2000],
            "endpoint_unavailable",
            str(exc)[:2000],
            Exit(ExitReason.ENDPOINT_UNAVAILABLE, str(exc)),
        )
    except Exception as exc:  # a policy bug ends the episode, never the process
        message = f"{type(exc).__name__}: {exc}"
        end = Exit(ExitReason.POLICY_ERROR, message)
        return NoReply(message[:2000], "policy_exception", message[:2000], end)
    return value, round(time.perf_counter() - start, 6)


def _cancel_call(policy: Policy, observation: Observation) -> None:
    """Abandoning the policy's reply: a policy that declares ``cancel`` (the LLM policy:
    it closes the model call's connection) stops the work it started for it."""
    with contextlib.suppress(Exception):  # a failed cancel must not hide the exit
        cancel_work(policy, observation)


def _call_here(
    policy: Policy,
    observation: Observation,
    wall_time_s: float,
    elapsed: Callable[[], float],
    stopped: Callable[[], bool],
) -> Any:
    """An in-process policy's reply, on this thread (``in_process``, see
    :class:`~thresher.harness.policy.BasePolicy`): ``_Stopped`` when the caller stopped
    before it, ``TimeoutError`` when the reply came past the wall time, as :func:`_wait`
    would."""
    if stopped():
        raise _Stopped
    value = policy.propose(observation)
    if elapsed() > wall_time_s:
        raise TimeoutError
    return value


def _wait(
    job: Job, wall_time_s: float, elapsed: Callable[[], float], stopped: Callable[[], bool]
) -> Any:
    """The policy's reply, within the wall time; raises ``_Stopped`` once the caller stops.

    The wait is sliced so a stop is seen within :data:`STOP_POLL_S` (the
    policy's thread finishes on its own: a call cannot be killed, only abandoned).
    """
    while True:
        if stopped():
            raise _Stopped
        left = wall_time_s - elapsed()
        try:
            return job.result(min(STOP_POLL_S, left))
        except TimeoutError:
            if left <= STOP_POLL_S:  # that wait ran to the wall time
                raise
