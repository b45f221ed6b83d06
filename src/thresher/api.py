"""The library entry point: ``thresher.search(question, index=..., policy=..., config=...)``.

:func:`searching` is the same episode as a stream of its trace events, read as
they are applied (what the CLI's live view reads)::

    with searching(question, index="./idx") as episode:
        for event in episode:
            print(event.type)
    result = episode.result
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thresher.config import Config

if TYPE_CHECKING:
    from thresher.harness.policy import Policy, SearchReranker
    from thresher.harness.result import Result
    from thresher.harness.stream import EpisodeStream
    from thresher.harness.trace import TraceEvent
    from thresher.index.store import Store

__all__ = ["search", "searching", "close_indexes", "resolve_config", "with_k", "with_filter"]


def close_indexes() -> None:
    """Close every index ``search`` keeps open for reuse (one in use closes when its
    call ends); the next call opens its index again. Also runs at interpreter exit."""
    from thresher.index.handles import close_indexes as close_kept

    close_kept()


def resolve_config(config: Config | str | Path | Mapping[str, Any] | None) -> Config:
    """A Config from a Config, a ``.toml``/``.json`` path, dotted overrides, or None (defaults).

    Raises ``ConfigError`` for an unreadable file or an unknown/ill-typed setting.
    """
    if config is None:
        return Config()
    if isinstance(config, Config):
        return config
    if isinstance(config, str | Path):
        return Config.load(config)
    return Config().override(dict(config))


def with_k(config: Config, k: int | None) -> Config:
    """``config`` asking for ``k`` documents (``episode.k``), its cap raised to fit.

    Raises ``ConfigError`` for a ``k`` below 1.
    """
    from thresher.errors import ConfigError

    if k is None:
        return config
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k is how many documents to return, a whole number from 1; got {k!r}")
    cap = max(config.episode.max_final_documents, k)
    return config.override({"episode.max_final_documents": cap, "episode.k": k})


def with_filter(config: Config, where: str | Mapping[str, Any] | None, path: str | None) -> Config:
    """``config`` with a document filter (``retrieval.where``, ``retrieval.path``) set.

    Raises ``InputError`` for a ``where`` that is not a JSON object of Chroma's form.
    """
    import json

    from thresher.index.filters import DocFilter

    checked = DocFilter.parse(where, path)
    if checked is None:
        DocFilter.parse(config.retrieval.where, config.retrieval.path)  # a config file's
        return config
    values: dict[str, Any] = {}
    if checked.where is not None:
        values["retrieval.where"] = json.dumps(checked.where)
    if checked.path is not None:
        values["retrieval.path"] = checked.path
    return config.override(values)


@contextlib.contextmanager
def searching(
    question: str,
    index: str | Path | Store,
    policy: str | Policy = "local",
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    k: int | None = None,
    where: str | Mapping[str, Any] | None = None,
    path: str | None = None,
    policy_options: Mapping[str, Any] | None = None,
    trace: str | Path | None = None,
    reranker: SearchReranker | None = None,
    reuse: bool | None = None,
) -> Iterator[EpisodeStream]:
    """One search episode as a stream of its trace events, run as the block reads it.

    Arguments as for :func:`search`. The index is open inside the block. Leaving
    the block ends the episode: read to its end, it has its Result; left early (a
    ``break``, an exception, Ctrl-C), it ends ``cancelled``. Either way
    ``episode.result`` is set after the block and the trace is written to ``trace``.

    Yields:
        An :class:`~thresher.harness.stream.EpisodeStream`.

    Raises:
        IndexNotFoundError: no index at ``index``.
        ConfigError: a bad config value or an unknown policy name.
    """
    from thresher.harness.episode import iter_episode
    from thresher.harness.trace import write_jsonl
    from thresher.index.backends import open_store
    from thresher.index.handles import borrowed, reuse_default
    from thresher.index.store import Store
    from thresher.policies import build_policy

    cfg = with_filter(with_k(resolve_config(config), k), where, path)
    chosen = build_policy(policy, cfg, policy_options) if isinstance(policy, str) else policy
    with contextlib.ExitStack() as held:
        if isinstance(index, Store):
            store = index
        elif reuse_default() if reuse is None else reuse:
            store = held.enter_context(borrowed(str(index), cfg))
        else:
            store = held.enter_context(contextlib.closing(open_store(str(index), cfg)))
        episode = iter_episode(question, store, chosen, cfg, reranker=reranker)
        try:
            yield episode
        finally:
            episode.close()  # ends it (cancelled) if the block left early
            if trace is not None and episode.result is not None:
                write_jsonl(episode.result.trace, trace)


def search(
    question: str,
    index: str | Path | Store,
    policy: str | Policy = "local",
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    k: int | None = None,
    where: str | Mapping[str, Any] | None = None,
    path: str | None = None,
    policy_options: Mapping[str, Any] | None = None,
    trace: str | Path | None = None,
    reranker: SearchReranker | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    reuse: bool | None = None,
) -> Result:
    """Run one search episode and return its ranked documents.

    Args:
        question: the question (empty: a Result with exit reason ``invalid_input``).
        index: an index folder, a Chroma server URL, or an open Store (left open).
        policy: a Policy object, a registered name (``thresher.policies.policy_names()``),
            or ``package.module:Factory``.
        config: a Config, a config file path, ``{"budget.total": 16384, ...}``, or None.
        k: how many documents to return (``episode.k``; raises
            ``episode.max_final_documents`` when above it). None: the policy's own number.
        where: a Chroma-style ``where`` on document metadata (a mapping or JSON text,
            ``{"lang": "en"}``): every search, grep and read sees only the documents
            it admits (``retrieval.where``).
        path: a glob on document ids (``"filings/*"``; ``retrieval.path``), likewise.
        policy_options: keyword arguments for a policy built by name.
        trace: write the episode's trace to this JSONL file.
        reranker: reorders search candidates (a :class:`SearchReranker`; default: the
            policy itself when it declares one).
        on_event: called with each trace event as it happens (live views).
        reuse: keep the index open for the next call on it (see
            :mod:`thresher.index.handles`; reopened when a new generation commits,
            dropped by :func:`close_indexes`). None: yes, unless
            ``$THRESHER_REUSE_INDEX`` is ``0``. False: open and close it in this call.

    Returns:
        A :class:`~thresher.harness.result.Result` (never None; partial on caps).

    Raises:
        IndexNotFoundError: no index at ``index``.
        ConfigError: a bad config value or an unknown policy name.

    The episode is exactly :func:`~thresher.harness.episode.run_episode`'s: what a
    policy declares (its retrieval mode, its reranker) is applied there, so the CLI,
    the evaluation protocol and training run the same episode for the same policy.
    :func:`searching` gives the same episode as a stream of its events.
    """
    with searching(
        question,
        index,
        policy,
        config,
        k=k,
        where=where,
        path=path,
        policy_options=policy_options,
        trace=trace,
        reranker=reranker,
        reuse=reuse,
    ) as episode:
        for event in episode:
            try:
                if on_event is not None:
                    on_event(event)
            except Exception as exc:  # a live view's failure ends the episode, not the call
                episode.fail(exc)
                break
    assert episode.result is not None  # read to its end, or ended by fail()
    return episode.result
