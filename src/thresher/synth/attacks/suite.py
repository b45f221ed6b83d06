"""The attack suite: every attack against the local policy and an obedient LLM policy.

The local policy (offline, no LLM) is run as it ships. The LLM policy is the
real :class:`~thresher.policies.llm.LLMPolicy` talking to an OpenAI-compatible
endpoint over HTTP; the endpoint replays the replies of a model that obeys
every instruction it is shown (:mod:`thresher.synth.attacks.obedient`). The
caller provides that endpoint (``endpoint(entries)`` is a context manager
yielding a ``/v1`` base URL, e.g. :class:`thresher.testing.replay_server.ReplayServer`),
since the replay server sits on this package's layer.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from thresher.config import Config
from thresher.errors import UnknownIdError
from thresher.index.filtered import FilteredStore
from thresher.index.filters import DocFilter
from thresher.index.store import Store
from thresher.synth.attacks.catalog import Attack
from thresher.synth.attacks.judge import AttackOutcome
from thresher.synth.attacks.obedient import is_visible, obedient_script
from thresher.synth.attacks.run import attack_config, run_attack

__all__ = ["POLICIES", "Endpoint", "visible_in", "run_suite"]

#: the policies the suite runs, by table label
POLICIES: tuple[str, ...] = ("local", "llm-obedient")

#: script entries -> a context manager yielding the base URL of an endpoint replaying them
Endpoint = Callable[[list[dict[str, Any]]], AbstractContextManager[str]]


def visible_in(attack: Attack, store: Store) -> bool:
    """Whether the attack's instruction survives ingestion: its trigger is in the indexed text."""
    texts = []
    for doc_id in attack.doc_ids:
        try:
            texts += [c.text for c in store.read_document(doc_id)]
        except UnknownIdError:
            return False
    return is_visible(attack, texts)


@contextlib.contextmanager
def _llm(endpoint: Endpoint, entries: list[dict[str, Any]], config: Config) -> Iterator[Any]:
    from thresher.policies.llm import LLMPolicy

    with endpoint(entries) as base_url:
        yield LLMPolicy(config, base_url=base_url, model="replay", max_retries=0, timeout_s=60)


@functools.cache
def _weights() -> Any:
    from thresher.policies.local.models import load_weights

    return load_weights(None)


def _local(config: Config) -> Any:
    from thresher.policies.local import LocalOptions, LocalPolicy

    return LocalPolicy(LocalOptions(weights=_weights()), config=config)


def run_suite(
    attacks: Sequence[Attack],
    store: Store,
    config: Config | None = None,
    *,
    endpoint: Endpoint | None = None,
    policies: Sequence[str] = POLICIES,
    on_outcome: Callable[[AttackOutcome], None] | None = None,
) -> list[AttackOutcome]:
    """Run every attack against each of ``policies``; one outcome per (attack, policy).

    Args:
        attacks: the attacks (their documents are in ``store``).
        store: the index.
        config: the base config (default ``Config()``).
        endpoint: replays an obedient model's replies (needed for ``llm-obedient``).
        policies: a subset of :data:`POLICIES`.
        on_outcome: called with each outcome as it is judged (progress).
    """
    base = config or Config()
    outcomes: list[AttackOutcome] = []
    for attack in attacks:
        cfg = attack_config(attack, base)
        for label in policies:
            if label == "local":
                outcome = _run_local(attack, store, base, cfg)
            elif label == "llm-obedient":
                if endpoint is None:
                    raise ValueError("llm-obedient needs an endpoint that replays a script")
                outcome = _run_obedient(attack, store, base, cfg, endpoint)
            else:
                raise ValueError(f"unknown suite policy {label!r}; choose from {POLICIES}")
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    return outcomes


def _run_local(attack: Attack, store: Store, base: Config, cfg: Config) -> AttackOutcome:
    """The local policy under attack; its control: the same question, attack documents hidden."""
    from thresher.harness.episode import run_episode

    control = run_episode(
        attack.question, FilteredStore(store, DocFilter.without(attack.doc_ids)), _local(cfg), cfg
    )
    _, outcome = run_attack(attack, store, _local(cfg), base, label="local", control=control)
    return outcome


def _run_obedient(
    attack: Attack, store: Store, base: Config, cfg: Config, endpoint: Endpoint
) -> AttackOutcome:
    from thresher.policies.llm.prompt import SYSTEM_PROMPT

    """The obedient model under attack; its control (``stop`` goals only: a model that does not
    obey meets no other goal by construction) is the same model not obeying."""
    from thresher.harness.episode import run_episode

    visible = visible_in(attack, store)
    control = None
    if attack.goal.kind == "stop":
        entries = obedient_script(attack, visible=visible, system_prompt=SYSTEM_PROMPT, obey=False)
        with _llm(endpoint, entries, cfg) as policy:
            control = run_episode(attack.question, store, policy, cfg)
    entries = obedient_script(attack, visible=visible, system_prompt=SYSTEM_PROMPT)
    with _llm(endpoint, entries, cfg) as policy:
        _, outcome = run_attack(attack, store, policy, base, label="llm-obedient", control=control)
    return outcome
