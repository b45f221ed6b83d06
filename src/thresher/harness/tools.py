"""The five tools and a turn's calls: plan, fetch, turn into result events.

A tool call is read in three files: this one (how a turn's calls run, each tool's
fetch against the Store and its pure result), :mod:`~thresher.harness.toolspec` (what
a :class:`~thresher.harness.toolspec.ToolSpec` is: its schema and argument check) and
:mod:`~thresher.harness.state` (how the result event changes the episode's state).

*Planning* (:func:`plan_calls`): the allow-list, the caps per turn and per episode,
the hard cutoff (retrieval tools only) and the arguments decide which calls run; the
rest get a ``refused`` result.

*Fetching* (:func:`fetch`): this module is the only code that calls the Store. A
retrieval call (``search_corpus``, ``grep_corpus``, ``read_document``) runs through
its spec's executor and returns raw hits or an error; it never raises. A turn's
retrieval calls are submitted to daemon workers together (a turn costs about its
slowest call), each with the turn's deadline. A store that searches inline
(:class:`~thresher.index.store.SearchesInline`: about a millisecond from memory) runs
the turn's searches and reads on the episode's thread instead, each when its turn to
be applied comes (handing one to a worker costs more than it takes; on a loaded
machine, workers beside the episode's thread fight it for the interpreter); a grep
still goes to a worker. A search's rerank by the policy (a declared
:class:`~thresher.harness.policy.SearchReranker`) runs on the episode's thread, in
call order: the policy is never called from two threads at once. ``prune_chunks``
and ``recall_chunks`` need no I/O: the cache serves them.

*Results* (pure): each call becomes its ``tool_result`` event, in call order, each
cut to the room the calls before it left (:class:`CallRunner` yields them; the
episode records each before the next is made). Rules, per the Context-1 report:

* search/grep: chunks already in the retrieval cache are excluded (the store
  did it; a chunk an earlier call of the same turn returned is dropped here:
  the first call wins); a chunk whose text equals an already shown chunk's
  enters the cache (so it stays excluded) but is not shown;
* the shown list is cut to fit the call's room: a chunk that does not fit is
  left out whole; if none fits, the call is an error saying the budget is too small;
* prune: unknown, not-in-context and already-pruned ids are reported back;
* recall: from the cache only, budget-checked chunk by chunk.

A document id is corpus data and must not forge a line, a tag or a control
sequence in the transcript: every id a header or footer quotes is escaped
(:func:`~thresher.harness.render.escape_id`), every composed line is kept to
one line (:func:`~thresher.harness.render.one_line`), and error and refusal
lines, which quote a store's message or the policy's own words, are escaped
whole. An id the policy sends back in its escaped form is mapped to the real
one (:func:`~thresher.harness.render.resolve_id`).

Everything else about a tool is derived from :data:`TOOLS`: the allow-list
(:data:`TOOL_NAMES`), the tools refused past the hard cutoff
(:data:`RETRIEVAL_TOOLS`), the argument check (:func:`check_arguments`), the
schemas a model is sent (:func:`tool_schemas`), and every text about a tool (the
prompts' tool list and guides, the MCP server's descriptions, the docs' tool table:
:mod:`thresher.harness.toolspec`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import Config, EpisodeConfig
from thresher.corpus.document import Chunk
from thresher.errors import PatternRejectedError, ThresherError, UnknownIdError
from thresher.harness.actions import Proposal, ToolCall
from thresher.harness.budget import HARD_REFUSAL, TranscriptCounter, UsageState, tool_room
from thresher.harness.policy import RerankRequest, SearchReranker
from thresher.harness.render import (
    MESSAGE_OVERHEAD,
    chunk_block,
    escape_id,
    flagged_in_view,
    one_line,
    resolve_id,
    tool_content,
    unescape_id,
)
from thresher.harness.state import EpisodeState, LineageRecord
from thresher.harness.toolspec import (
    Argument,
    CallContext,
    Fetched,
    FetchScope,
    ResultView,
    ToolSpec,
)
from thresher.harness.trace import ToolResult
from thresher.index.fusion import fuse_scores
from thresher.index.store import Hit, SearchesInline, Store
from thresher.workers import Job, submit

__all__ = [
    "TOOLS",
    "TOOL_NAMES",
    "RETRIEVAL_TOOLS",
    "INLINE_TOOLS",
    "SEARCHES",
    "CALL_RESERVE",
    "Fetched",
    "CallContext",
    "PlannedCall",
    "plan_calls",
    "CallRunner",
    "check_arguments",
    "tool_spec",
    "tool_schemas",
    "rank_by_similarity",
    "fetch",
    "rerank_search",
    "refused_result",
    "retrieval_result",
    "prune_result",
    "recall_result",
    "search_header",
    "grep_header",
    "read_header",
]


# -- a turn's calls: planned, run, their results yielded in call order -------------------


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """A tool call with normalized arguments, or the reason it is refused (``code``)."""

    call: ToolCall
    code: str = ""
    message: str = ""


def plan_calls(
    calls: tuple[ToolCall, ...], calls_made: int, caps: EpisodeConfig, usage: UsageState
) -> tuple[list[PlannedCall], bool]:
    """Decide which calls of a turn run; the rest are refused with a reason.

    Checks, in order: the tool allow-list, calls per turn, calls per episode,
    the hard cutoff (retrieval tools only), the arguments.

    Args:
        calls: the turn's calls (ids already normalized).
        calls_made: calls executed earlier in the episode.
        caps: the episode caps.
        usage: the usage the policy saw this turn (hard flag).

    Returns:
        ``(plan, hit_cap)``: one PlannedCall per call in order; ``hit_cap`` when a
        call was refused because the episode's call cap is used up.
    """
    plan: list[PlannedCall] = []
    accepted = 0
    hit_cap = False
    for i, call in enumerate(calls):
        if call.name not in TOOL_NAMES:
            why = f"unknown tool '{call.name}'; use one of " + ", ".join(TOOL_NAMES)
            plan.append(PlannedCall(call, "unknown_tool", why))
        elif i >= caps.max_calls_per_turn:
            why = f"at most {caps.max_calls_per_turn} calls per turn"
            plan.append(PlannedCall(call, "max_calls_per_turn", why))
        elif calls_made + accepted >= caps.max_calls:
            hit_cap = True
            why = f"the episode's {caps.max_calls} tool calls are used"
            plan.append(PlannedCall(call, "max_calls", why))
        elif usage.hard and call.name in RETRIEVAL_TOOLS:
            why = HARD_REFUSAL.format(used=usage.used, budget=usage.budget)
            plan.append(PlannedCall(call, "hard_cutoff", why))
        else:
            args, why = check_arguments(call.name, call.arguments)
            if why:
                plan.append(
                    PlannedCall(call, "bad_arguments", f"bad arguments for {call.name}: {why}")
                )
            else:
                accepted += 1
                plan.append(PlannedCall(replace(call, arguments=args)))
    return plan, hit_cap


#: tokens kept per not-yet-applied call of the turn (its header or error line)
CALL_RESERVE = 64


class CallRunner:
    """Runs one episode's tool calls against its state; the episode records their results.

    Args:
        state: the episode state (read; the episode applies each result yielded).
        store: the index.
        config: the episode's settings.
        counter: the episode's transcript counter.
        reranker: the policy, when it declares :class:`SearchReranker`.
        read_ranker: what picks a read's chunks, when the policy declares ``rank_read``
            (:func:`~thresher.harness.policy.read_ranker_of`).
        notice_reserve: tokens kept for the next turn's notice message.
        started: the episode's start on ``clock``, for its wall time.
        clock: the episode's monotonic clock in seconds (the tool deadline is read on
            it, and a worker job's end is stamped on it).
    """

    def __init__(
        self,
        state: EpisodeState,
        store: Store,
        config: Config,
        counter: TranscriptCounter,
        reranker: SearchReranker | None,
        notice_reserve: int,
        started: float,
        clock: Callable[[], float] = time.perf_counter,
        read_ranker: Callable[[RerankRequest], Sequence[Hit]] | None = None,
    ) -> None:
        self.read_ranker = read_ranker
        self.state = state
        self.store = store
        self.config = config
        self.tc = counter
        self.reranker = reranker
        self.notice_reserve = notice_reserve
        self.started = started
        self.clock = clock

    def run(
        self, turn: int, usage: UsageState, proposal: Proposal
    ) -> Generator[ToolResult, None, str]:
        """Plan, fetch concurrently, yield each call's result in call order; returns
        ``max_calls`` (a call hit the episode's cap), ``hard_refused`` (the hard cutoff
        refused every call) or "".

        The caller records (applies) each result before it asks for the next, which is
        cut to the room the ones before it left; a run closed early leaves the rest unmade."""
        cfg = self.config
        state = self.state
        plan, hit_cap = plan_calls(proposal.tool_calls, state.calls_made(), cfg.episode, usage)
        query = state.current_query
        jobs: dict[int, Job] = {}
        here: dict[int, Callable[[], Fetched]] = {}  # run on this thread when applied
        inline = self._searches_inline()
        for i, planned in enumerate(plan):
            call = planned.call
            if not planned.code and call.name in RETRIEVAL_TOOLS:
                if inline and call.name in INLINE_TOOLS:
                    here[i] = self.fetcher(call, query)
                else:
                    jobs[i] = submit(self.fetcher(call, query), self.clock)
                spec = tool_spec(call.name)
                if spec.view is not None and spec.view.sets_query:  # search_corpus
                    query = call.arguments[spec.argument.name]
        now = self.clock()
        wall_left = max(cfg.episode.wall_time_s - (now - self.started), 0.0)
        window = min(cfg.episode.tool_timeout_s, wall_left)
        deadline = now + window  # on the episode's clock, as the jobs' ends
        for i, planned in enumerate(plan):
            call = planned.call
            if planned.code:
                yield self.counted(refused_result(call, turn, planned.code, planned.message))
                continue
            ctx = self.call_context(turn, proposal, len(plan) - i - 1, call.call_id)
            spec = tool_spec(call.name)
            fetched = Fetched()  # prune and recall fetch nothing: the cache serves them
            if spec.retrieval:
                try:
                    if i in here:
                        fetched = here[i]()
                        if self.clock() > deadline:
                            raise TimeoutError
                    else:
                        fetched = jobs[i].result(deadline - self.clock())
                        if jobs[i].ended > deadline:  # ended late, read only now
                            raise TimeoutError
                except TimeoutError:
                    fetched = Fetched(error_code="timeout", error=_timeout_text(cfg, window))
                if spec.view is not None and spec.view.sets_query and self.reranker is not None:
                    # on this thread, in call order: the policy never reranks concurrently
                    searched = call.arguments[spec.argument.name]
                    fetched = rerank_search(
                        fetched, searched, state.question, self.store, _rerank_of(self.reranker)
                    )
                elif spec.view is not None and spec.view.whole_document and self.read_ranker:
                    # the policy's pick of the document's chunks (``rank_read``), as a rerank
                    doc_id = call.arguments[spec.argument.name]
                    fetched = rerank_search(
                        fetched, doc_id, state.question, self.store, self.read_ranker
                    )
            event = spec.apply(spec, call, fetched, state, ctx)
            yield event if event.tokens else self.counted(event)  # (tokens: fitted, counted)
        if hit_cap:
            return "max_calls"
        codes = [p.code for p in plan]
        if codes and all(c == "hard_cutoff" for c in codes):
            return "hard_refused"
        return ""

    def counted(self, event: ToolResult) -> ToolResult:
        """A result not yet counted (no chunks fitted), with its message's token count."""
        content = tool_content(event.header, [], event.footer)
        return replace(event, tokens=MESSAGE_OVERHEAD + self.tc.text(content))

    def _searches_inline(self) -> bool:
        """Whether the store runs the turn's searches and reads on this thread (a store
        that cannot say, e.g. its backend is gone, keeps them on workers, where the
        fetch reports that failure as the call's error)."""
        if not isinstance(self.store, SearchesInline):
            return False
        try:
            return self.store.searches_inline()
        except ThresherError:
            return False

    def fetcher(self, call: ToolCall, query: str) -> Callable[[], Fetched]:
        """The call's fetch against the state as it is now (the turn's snapshot)."""
        state = self.state
        seen = frozenset(state.cache.ids())
        in_context = frozenset(state.context.ids())
        return lambda: fetch(
            call.name,
            call.arguments,
            self.store,
            self.config,
            seen=seen,
            in_context=in_context,
            current_query=query,
            question=state.question,
        )

    def call_context(
        self, turn: int, proposal: Proposal, remaining_calls: int, call_id: str = ""
    ) -> CallContext:
        reserve = self.notice_reserve + CALL_RESERVE * remaining_calls
        room = tool_room(
            self.tc.transcript(self.state), self.state.correction, self.config.budget, reserve
        )
        return CallContext(
            turn=turn,
            hop=proposal.hop,
            parents=proposal.parents_of(call_id),
            room=room,
            per_call=self.config.budget.per_call_tokens,
            search_results=self.config.episode.search_results,
            counter=self.tc,
        )


def _timeout_text(cfg: Config, window: float) -> str:
    """What a timed-out call says: the limit that actually cut it (the tool timeout, or
    the episode's wall time when less of it was left)."""
    if window < cfg.episode.tool_timeout_s:
        return (
            f"timed out after {window:.3g}s (the episode's wall time of "
            f"{cfg.episode.wall_time_s:g}s ran out)"
        )
    return f"timed out after {cfg.episode.tool_timeout_s:g}s (episode.tool_timeout_s)"


# -- fetching: the only calls to the Store -----------------------------------------------


def check_arguments(name: str, arguments: Any) -> tuple[dict[str, Any], str]:
    """Validate and normalize a call's arguments (the harness's side of ``ToolSpec.check``).

    Args:
        name: a tool name from the allow-list.
        arguments: what the policy sent.

    Returns:
        ``(normalized, "")`` or ``({}, reason)``. Strings are stripped, blank ids
        dropped; a single id string for prune/recall becomes a one-item list; unknown
        extra keys are ignored. ``prune_chunks`` also takes ``keep`` instead of
        ``chunk_ids`` (every chunk in view but those is pruned), from a policy in
        process only: it is not offered to models.
    """
    normalized, problem = tool_spec(name).check(arguments)
    return normalized, "" if problem is None else problem.message


def rank_by_similarity(
    chunks: Sequence[Chunk], scores: Sequence[tuple[float, float]], rrf_k: int
) -> list[Hit]:
    """Order a document's chunks by relevance to a query: RRF of their BM25 and dense orders.

    The fusion is :func:`thresher.index.fusion.fuse_scores` with ``rrf_k``
    (``config.retrieval.rrf_k``); ties keep document order.
    """
    fused = fuse_scores([s[0] for s in scores], [s[1] for s in scores], rrf_k)
    return [
        Hit(
            chunk=chunks[f.item],
            score=f.score,
            method="get",
            bm25_rank=f.bm25_rank,
            dense_rank=f.dense_rank,
            bm25_score=float(scores[f.item][0]),
            dense_score=float(scores[f.item][1]),
        )
        for f in fused
    ]


#: ``retrieval.mode`` -> the Store method ``search_corpus`` runs
SEARCHES: dict[str, Callable[..., list[Hit]]] = {
    "hybrid": lambda store, query, **kw: store.hybrid_search(query, **kw),
    "bm25": lambda store, query, **kw: store.bm25_search(query, **kw),
    "dense": lambda store, query, **kw: store.dense_search(query, **kw),
}


def fetch(
    name: str,
    arguments: dict[str, Any],
    store: Store,
    config: Config,
    *,
    seen: Collection[str],
    in_context: Collection[str],
    current_query: str,
    question: str = "",
) -> Fetched:
    """Run one retrieval call against the Store through its spec's executor; never raises.

    Args:
        name: ``search_corpus``, ``grep_corpus`` or ``read_document``.
        arguments: checked arguments (see :func:`check_arguments`).
        store: the index.
        config: retrieval, grep and episode settings.
        seen, in_context, current_query, question: see
            :class:`~thresher.harness.toolspec.FetchScope`.

    Returns:
        A :class:`Fetched` with hits, or with ``error_code`` set
        (``pattern_rejected``, ``unknown_id``, ``tool_error``, ``tool_failed``,
        ``unknown_tool``).
    """
    start = time.perf_counter()
    spec = _BY_NAME.get(name)
    if spec is None or spec.execute is None:
        return Fetched(error_code="unknown_tool", error=f"'{name}' does not touch the index")
    scope = FetchScope(seen, in_context, current_query, question)
    try:
        fetched = spec.execute(arguments, store, config, scope)
        return replace(fetched, elapsed_s=time.perf_counter() - start)
    except PatternRejectedError as exc:
        return _failed("pattern_rejected", f"pattern refused: {exc}", start)
    except UnknownIdError as exc:
        return _failed("unknown_id", str(exc), start)
    except ThresherError as exc:
        return _failed("tool_error", str(exc), start)
    except Exception as exc:  # isolation boundary: a failing tool never ends the episode
        return _failed("tool_failed", f"{type(exc).__name__}: {exc}", start)


def run_search(
    arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope
) -> Fetched:
    """``search_corpus``: the configured retriever(s); the policy's rerank comes later
    (:func:`rerank_search`, on the episode's thread). Hybrid search fuses with the
    index's fitted weights unless ``retrieval.fitted_fusion`` is off (the store is asked
    with ``fitted=False`` only then, so a store without fitted weights serves as before)."""
    r = config.retrieval
    search = SEARCHES[r.mode]
    extra = filtered(config)
    if not r.fitted_fusion and r.mode == "hybrid":  # asked only then: older stores serve
        extra["fitted"] = False
    return Fetched(
        tuple(search(store, arguments["query"], k=r.candidates, exclude=scope.seen, **extra))
    )


def _rerank_of(reranker: SearchReranker) -> Callable[[RerankRequest], Sequence[Hit]]:
    """``reranker.rerank`` as a function, the method looked up when it is called (inside
    :func:`rerank_search`'s isolation: an object without it fails its call only)."""
    return lambda request: reranker.rerank(request)


def rerank_search(
    fetched: Fetched,
    query: str,
    question: str,
    store: Store,
    reranker: Callable[[RerankRequest], Sequence[Hit]],
) -> Fetched:
    """A ``search_corpus`` result reordered (and possibly cut) by the policy (``reranker``:
    its ``rerank``; or a ``read_document`` result by its ``rank_read``, ``query`` then
    the document id); never raises.

    The harness calls it on the episode's own thread, in call order, once the
    call's fetch is in: a policy's rerank never runs beside another, and sees
    the turn's searches in the order the policy proposed them. A failed fetch
    passes through; a rerank that raises fails the call as a fetch would
    (``tool_error`` for a typed error, such as the store's, else ``tool_failed``).
    """
    if fetched.error_code:
        return fetched
    start = time.perf_counter()

    def score_against_question(chunk_ids: Sequence[str]) -> list[tuple[float, float]]:
        return store.similarity(question or query, list(chunk_ids)) if chunk_ids else []

    request = RerankRequest(query, question or query, fetched.hits, score_against_question)
    try:
        hits = tuple(reranker(request))
    except ThresherError as exc:
        return _failed("tool_error", str(exc), start)
    except Exception as exc:  # isolation boundary: a failing rerank fails its call only
        return _failed("tool_failed", f"{type(exc).__name__}: {exc}", start)
    return replace(fetched, hits=hits, elapsed_s=fetched.elapsed_s + time.perf_counter() - start)


def run_grep(arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope) -> Fetched:
    """``grep_corpus``: at most ``grep.limit`` matches, how many matched (and whether
    counting stopped there), scored against the question."""
    limit = config.grep.limit
    found = store.grep(arguments["pattern"], limit=limit, exclude=scope.seen, **filtered(config))
    hits = list(found.hits[:limit])
    if hits and scope.question:
        scores = store.similarity(scope.question, [h.chunk.chunk_id for h in hits])
        hits = [
            replace(h, bm25_score=float(b), dense_score=float(d))
            for h, (b, d) in zip(hits, scores, strict=True)
        ]
    return Fetched(tuple(hits), max(found.total, len(hits)), capped=found.capped)


def run_read(arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope) -> Fetched:
    """``read_document``: the chunks not in view, ranked against the current query.

    A doc id is read as a transcript name: its escaped form (``&lt;``, ``&#xa;``)
    stands for the id it escapes when that exists, else the id is taken as written.
    """
    doc_id = arguments["doc_id"]
    plain = unescape_id(doc_id)
    try:  # the name as the transcript showed it first (an escaped-id twin cannot win)
        chunks = store.read_document(plain, **filtered(config))
    except UnknownIdError:
        if plain == doc_id:
            raise
        chunks = store.read_document(doc_id, **filtered(config))
    rest = [c for c in chunks if c.chunk_id not in scope.in_context]
    scores = store.similarity(scope.current_query, [c.chunk_id for c in rest]) if rest else []
    return Fetched(tuple(rank_by_similarity(rest, scores, config.retrieval.rrf_k)), len(chunks))


def filtered(config: Config) -> dict[str, Any]:
    """``{"where": DocFilter}`` for a Store call when ``retrieval.where`` or
    ``retrieval.path`` is set, else ``{}`` (so a store without filters still serves)."""
    from thresher.index.filters import DocFilter

    where = DocFilter.parse(config.retrieval.where, config.retrieval.path)
    return {} if where is None else {"where": where}


def _failed(code: str, message: str, start: float) -> Fetched:
    return Fetched(error_code=code, error=message, elapsed_s=time.perf_counter() - start)


# -- results: a call and what it fetched as its trace event (pure) -----------------------


def _base(call: ToolCall, turn: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"turn": turn, "call_id": call.call_id, "tool": call.name, "arguments": arguments}


def refused_result(call: ToolCall, turn: int, code: str, message: str) -> ToolResult:
    """A call the harness did not run (allow-list, caps, hard cutoff, bad arguments)."""
    arguments = dict(call.arguments) if isinstance(call.arguments, dict) else {}
    text = message if message.startswith("Error:") else f"Error: refused, {message}"
    return ToolResult(
        **_base(call, turn, arguments), status="refused", code=code, header=escape_id(text)
    )


def _error(call: ToolCall, ctx: CallContext, code: str, message: str, elapsed: float) -> ToolResult:
    return ToolResult(
        **_base(call, ctx.turn, dict(call.arguments)),
        status="error",
        code=code,
        header=escape_id(f"Error: {message}"),
        elapsed_s=elapsed,
    )


_CHUNK_FIELDS = tuple(Chunk.__dataclass_fields__)


def _chunk_dict(chunk: Chunk) -> dict[str, Any]:
    """``chunk.to_dict()`` without ``asdict``'s deep copy (metadata copied one level)."""
    data = {name: getattr(chunk, name) for name in _CHUNK_FIELDS}
    data["metadata"] = dict(chunk.metadata)
    return data


def _lineage(
    hit: Hit, call: ToolCall, ctx: CallContext, query: str, rank: int, dup: str | None
) -> dict[str, Any]:
    return LineageRecord(
        chunk_id=hit.chunk.chunk_id,
        doc_id=hit.chunk.doc_id,
        turn=ctx.turn,
        hop=ctx.hop,
        tool=call.name,
        call_id=call.call_id,
        query=query,
        rank=rank,
        score=float(hit.score),
        parents=ctx.parents,
        duplicate_of=dup,
        bm25_rank=hit.bm25_rank,
        dense_rank=hit.dense_rank,
        bm25_score=_float(hit.bm25_score),
        dense_score=_float(hit.dense_score),
    ).to_dict()


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


def _fit(
    ctx: CallContext,
    cap: int,
    blocks: list[str],
    header_of: Callable[[int], str],
    footer_of: Callable[[list[int], int], str],
) -> tuple[list[int], str, int]:
    """Which blocks fit in ``cap`` tokens: ``(kept indices, content, tokens)``.

    Blocks are tried in order; one that does not fit is skipped whole. The
    estimate (sum of block counts, the longest footer) is then checked on the
    exact message text, dropping the last kept block while it is over ``cap``;
    if nothing is left, each block alone is tried exactly, so a block that fits
    on its own is never refused.
    """

    def exact(keep: list[int]) -> tuple[str, int]:
        kept = [blocks[i] for i in keep]
        content = tool_content(header_of(len(kept)), kept, footer_of(keep, len(blocks)))
        return content, MESSAGE_OVERHEAD + ctx.counter.text(content)

    budget = cap - MESSAGE_OVERHEAD - ctx.counter.text(header_of(0) + footer_of([], len(blocks)))
    keep: list[int] = []
    used = 0
    for i, block in enumerate(blocks):
        n = ctx.counter.text(block + "\n")  # as it stands in the message: before a line
        if used + n <= budget:
            keep.append(i)
            used += n
    while keep:
        content, tokens = exact(keep)
        if tokens <= cap:
            return keep, content, tokens
        keep.pop()
    for i in range(len(blocks)):
        content, tokens = exact([i])
        if tokens <= cap:
            return [i], content, tokens
    content, tokens = exact([])
    return [], content, tokens


@dataclass(slots=True)
class _Selection:
    """A retrieval call's hits sorted into shown candidates, same-text duplicates and repeats."""

    fresh: list[tuple[int, Hit]]
    dups: list[tuple[int, Hit, str]]
    repeats: int


def _select(view: ResultView, fetched: Fetched, state: EpisodeState, limit: int) -> _Selection:
    """Which hits may be shown: new chunks (or pruned ones a read brings back), first of a text."""
    is_read = view.whole_document
    out = _Selection([], [], 0)
    hashes: dict[str, str] = {}
    for rank, hit in enumerate(fetched.hits, 1):
        if len(out.fresh) >= limit:
            break
        chunk = hit.chunk
        cached = chunk.chunk_id in state.cache
        if is_read and cached and chunk.chunk_id in state.pruned:
            out.fresh.append((rank, hit))  # reactivated
            continue
        if cached or (is_read and chunk.chunk_id in state.context):
            out.repeats += 1
            continue
        first = state.cache.first_with_hash(chunk.content_hash) or hashes.get(chunk.content_hash)
        if first is not None and first != chunk.chunk_id:
            out.dups.append((rank, hit, first))
            continue
        hashes.setdefault(chunk.content_hash, chunk.chunk_id)
        out.fresh.append((rank, hit))
    return out


def read_header(doc_id: str, fetched: Fetched, n: int) -> str:
    """``read_document``'s first line for ``n`` shown chunks."""
    return one_line(
        f"read_document {escape_id(doc_id)}: {n} of {fetched.total} chunk(s), most relevant first."
    )


def grep_header(pattern: str, fetched: Fetched, n: int) -> str:
    """``grep_corpus``'s first line for ``n`` shown chunks."""
    if fetched.capped:
        return (
            f"grep_corpus: {n} of at least {fetched.total} matching chunk(s) "
            "(counting stopped there)."
        )
    if fetched.total > n:
        return f"grep_corpus: {n} of {fetched.total} matching chunk(s)."
    return f"grep_corpus: {n} chunk(s) matching."


def search_header(query: str, fetched: Fetched, n: int) -> str:
    """``search_corpus``'s first line for ``n`` shown chunks."""
    return f"search_corpus: {n} new chunk(s)."


def _footer(view: ResultView, sel: _Selection, shown: int, candidates: int) -> str:
    """The tool message's closing notes: what was left out and why."""
    is_read = view.whole_document
    notes = []
    if candidates > shown:
        notes.append(f"{candidates - shown} more result(s) left out to fit the token budget.")
    if sel.dups:
        same = ", ".join(escape_id(first) for first in sorted({d[2] for d in sel.dups}))
        notes.append(f"{len(sel.dups)} result(s) not shown: same text as {same}.")
    if sel.repeats:
        where = "already in context" if is_read else "already shown this turn"
        notes.append(f"{sel.repeats} result(s) {where}.")
    if candidates == 0 and not is_read:
        notes.append("No new chunks (chunks seen this episode are excluded).")
    return one_line(" ".join(notes))


def retrieval_result(
    spec: ToolSpec, call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """The event of a search_corpus / grep_corpus / read_document call (``spec``: its tool)."""
    if fetched.error_code:
        return _error(call, ctx, fetched.error_code, fetched.error, fetched.elapsed_s)
    args = dict(call.arguments)
    query = str(args.get(spec.argument.name, ""))
    view = spec.view or ResultView(search_header)
    limit = ctx.search_results if view.search_results else len(fetched.hits)
    sel = _select(view, fetched, state, limit)
    cap = ctx.room if view.whole_document else min(ctx.per_call, ctx.room)

    def header_of(n: int) -> str:
        return view.header(query, fetched, n)

    def footer_of(keep: list[int], m: int) -> str:
        return _footer(view, sel, len(keep), m)

    blocks = [chunk_block(hit.chunk) for _, hit in sel.fresh]
    keep, _content, tokens = _fit(ctx, cap, blocks, header_of, footer_of)
    if sel.fresh and not keep:
        return _no_room(call, ctx, cap, blocks, header_of(1), fetched.elapsed_s)
    shown = [sel.fresh[i] for i in keep]
    new_chunks = [_chunk_dict(h.chunk) for _, h in shown if h.chunk.chunk_id not in state.cache]
    new_chunks += [_chunk_dict(h.chunk) for _, h, _ in sel.dups]
    lineage = [_lineage(h, call, ctx, query, r, None) for r, h in shown]
    lineage += [_lineage(h, call, ctx, query, r, first) for r, h, first in sel.dups]
    return ToolResult(
        **_base(call, ctx.turn, args),
        header=header_of(len(keep)),
        footer=footer_of(keep, len(sel.fresh)),
        shown=[h.chunk.chunk_id for _, h in shown],
        new_chunks=new_chunks,
        lineage=lineage,
        duplicates=[[h.chunk.chunk_id, first] for _, h, first in sel.dups],
        reactivated=[h.chunk.chunk_id for _, h in shown if h.chunk.chunk_id in state.cache],
        query=query if view.sets_query else "",
        tokens=tokens,
        elapsed_s=fetched.elapsed_s,
    )


def _no_room(
    call: ToolCall, ctx: CallContext, cap: int, blocks: list[str], header: str, elapsed: float
) -> ToolResult:
    """The error of a call none of whose results fits in the room left."""
    smallest = min(
        MESSAGE_OVERHEAD + ctx.counter.text(tool_content(header, [b], "")) for b in blocks
    )
    return _error(
        call,
        ctx,
        "budget_exhausted",
        f"not enough token budget for even one result (the smallest needs about "
        f"{smallest} tokens, {max(cap, 0)} are available). Prune chunks or give your "
        "final answer.",
        elapsed,
    )


def _resolve_ids(raw: list[str], state: EpisodeState) -> list[str]:
    """The policy's ids, each mapped to the cached id it names (escaped copies too), once each."""
    return list(dict.fromkeys(resolve_id(cid, state.cache.__contains__) for cid in raw))


def _reject(chunk_id: str, code: str, message: str) -> dict[str, str]:
    return {"id": chunk_id, "code": code, "message": message}


def _rejected_text(rejected: list[dict[str, str]], verb: str) -> str:
    """``Not pruned: a, b (already pruned); c (unknown id: never retrieved).``"""
    if not rejected:
        return ""
    groups: dict[str, list[str]] = {}
    for r in rejected:
        groups.setdefault(r["message"], []).append(r["id"])
    parts = [
        f"{', '.join(escape_id(i) for i in ids)} ({message})" for message, ids in groups.items()
    ]
    return one_line(f"Not {verb}: " + "; ".join(parts) + ".")


def prune_result(call: ToolCall, state: EpisodeState, turn: int) -> ToolResult:
    """Prune: remove valid ids from the context; report every other id with a reason.

    With ``keep`` instead of ``chunk_ids``: every chunk in view but the kept ones is
    pruned; a kept id that is not in view is reported (``Not kept: …``).
    """
    if "keep" in call.arguments:
        return _prune_all_but(call, state, turn)
    ids = _resolve_ids(call.arguments["chunk_ids"], state)
    pruned: list[str] = []
    rejected: list[dict[str, str]] = []
    for cid in ids:
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid in state.pruned:
            rejected.append(_reject(cid, "already_pruned", "already pruned"))
        elif cid not in state.context:
            rejected.append(_reject(cid, "not_in_context", "not in context"))
        else:
            pruned.append(cid)
    # the ids are the call's own (its arguments are in the transcript): the header counts
    # them, the footer names each id that was not pruned and why
    header = f"Pruned {len(pruned)} chunk(s)."
    return ToolResult(
        **_base(call, turn, dict(call.arguments)),
        status="ok" if pruned else "error",
        code="" if pruned else rejected[0]["code"],
        header=header,
        footer=_rejected_text(rejected, "pruned"),
        pruned=pruned,
        rejected=rejected,
        flagged=flagged_in_view(state),
    )


def _prune_all_but(call: ToolCall, state: EpisodeState, turn: int) -> ToolResult:
    keep = _resolve_ids(call.arguments["keep"], state)
    rejected: list[dict[str, str]] = []
    for cid in keep:
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid not in state.context:
            rejected.append(_reject(cid, "not_in_context", "not in context"))
    kept = set(keep)
    pruned = [cid for cid in state.context.ids() if cid not in kept]
    return ToolResult(
        **_base(call, turn, dict(call.arguments)),
        status="ok",
        header=f"Pruned {len(pruned)} chunk(s); kept {len(kept) - len(rejected)}.",
        footer=_rejected_text(rejected, "kept"),
        pruned=pruned,
        rejected=rejected,
        flagged=flagged_in_view(state),
    )


def apply_prune(
    spec: ToolSpec, call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """:func:`prune_result` as a :class:`~thresher.harness.toolspec.Transition`."""
    return prune_result(call, state, ctx.turn)


def apply_recall(
    spec: ToolSpec, call: ToolCall, fetched: Fetched, state: EpisodeState, ctx: CallContext
) -> ToolResult:
    """:func:`recall_result` as a :class:`~thresher.harness.toolspec.Transition`."""
    return recall_result(call, state, ctx)


def _recall_header(n: int) -> str:
    return f"Recalled {n} chunk(s)."


def recall_result(call: ToolCall, state: EpisodeState, ctx: CallContext) -> ToolResult:
    """Recall: bring pruned chunks back from the cache, as many as the room allows."""
    ids = _resolve_ids(call.arguments["chunk_ids"], state)
    candidates: list[str] = []
    rejected: list[dict[str, str]] = []
    for cid in ids:
        origin = state.lineage.origin(cid)
        if cid not in state.cache:
            rejected.append(_reject(cid, "unknown_id", "unknown id: never retrieved"))
        elif cid in state.context:
            rejected.append(_reject(cid, "already_active", "already in context"))
        elif origin is not None and origin.duplicate_of is not None:
            msg = f"same text as {escape_id(origin.duplicate_of)}; recall that id"
            rejected.append(_reject(cid, "duplicate_content", msg))
        else:
            candidates.append(cid)
    chunks = [state.cache.get(cid) for cid in candidates]
    blocks = [chunk_block(c) for c in chunks if c is not None]
    no_room = "not enough token budget; prune first"

    def footer_of(keep: list[int], m: int) -> str:
        left = [
            _reject(c, "no_room", no_room) for i, c in enumerate(candidates[:m]) if i not in keep
        ]
        return _rejected_text(rejected + left, "recalled")

    keep, _content, tokens = _fit(ctx, ctx.room, blocks, _recall_header, footer_of)
    recalled = [candidates[i] for i in keep]
    header = _recall_header(len(recalled))
    footer = footer_of(keep, len(candidates))
    rejected += [_reject(c, "no_room", no_room) for c in candidates if c not in recalled]
    return ToolResult(
        **_base(call, ctx.turn, dict(call.arguments)),
        status="ok" if recalled else "error",
        code="" if recalled else rejected[0]["code"],
        header=header,
        footer=footer,
        shown=recalled,
        recalled=recalled,
        rejected=rejected,
        flagged=flagged_in_view(state),
        tokens=tokens,
    )


# -- the five tools ----------------------------------------------------------------------

_MODE_WORDS = {
    "hybrid": "by keywords and meaning (BM25 and dense retrieval, fused)",
    "bm25": "by keywords (BM25)",
    "dense": "by meaning (dense retrieval)",
}


def _describe_search(config: Config) -> str:
    return (
        f"Search the corpus {_MODE_WORDS[config.retrieval.mode]}. "
        "Chunks you have already been shown are never returned again, so repeating a "
        "query only yields weaker matches: rephrase instead."
    )


def _search_behaviour(config: Config) -> str:
    r, b, e = config.retrieval, config.budget, config.episode
    how = {
        "hybrid": "BM25 and dense retrieval in parallel, fused by reciprocal rank fusion "
        f"(k={r.rrf_k})",
        "bm25": "BM25 alone",
        "dense": "dense retrieval alone",
    }[r.mode]
    return (
        f"{how}; the top {r.candidates} candidates, reordered by the policy when it "
        f"declares a reranker; at most {e.search_results} new chunks cut to "
        f"{b.per_call_tokens} tokens; chunks already seen this episode are excluded"
    )


_CHUNK_IDS = "ids exactly as written in the id attribute of <chunk> blocks"

#: the tools, in the order models are shown them (names as in the Context-1 report)
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="search_corpus",
        arguments=(Argument("query", "text", "one focused sub-query"),),
        describe=_describe_search,
        behaviour=_search_behaviour,
        apply=retrieval_result,
        execute=run_search,
        view=ResultView(search_header, search_results=True, sets_query=True),
        direct=lambda c: (
            "Hybrid search (BM25 and dense, fused by reciprocal rank fusion) over the "
            "index: the best k chunks for a query, with their text."
        ),
    ),
    ToolSpec(
        name="grep_corpus",
        arguments=(Argument("pattern", "text", "a regular expression"),),
        describe=lambda c: (
            f"Find chunks whose text matches a regular expression (at most {c.grep.limit}, "
            "unseen chunks only). Use it for exact names, numbers and phrases."
        ),
        behaviour=lambda c: (
            f"regular expression over the corpus, at most {c.grep.limit} chunks "
            f"(`grep.limit`), seen chunks excluded; pattern size ({c.grep.max_pattern_chars} "
            f"characters) and run time ({c.grep.timeout_s:g} s) bounded"
        ),
        apply=retrieval_result,
        execute=run_grep,
        view=ResultView(grep_header),
        guide="for exact names or numbers",
        direct=lambda c: (
            "Regular-expression search over the index's chunks (bounded in size and time): "
            "the first matching chunks in corpus order and how many matched."
        ),
    ),
    ToolSpec(
        name="read_document",
        arguments=(Argument("doc_id", "text", "a doc attribute of a <chunk> block"),),
        describe=lambda c: (
            "Read the rest of one document: its chunks you have not seen, most relevant to "
            "your current query first, cut to the remaining budget."
        ),
        behaviour=lambda c: (
            "a whole document's chunks not in view, ranked against the current query "
            "and cut to the remaining budget"
        ),
        apply=retrieval_result,
        execute=run_read,
        view=ResultView(read_header, whole_document=True),
        guide="to see more of a promising document",
        direct=lambda c: "Every chunk of one document, in order, by its doc_id.",
    ),
    ToolSpec(
        name="prune_chunks",
        arguments=(
            Argument("chunk_ids", "ids", _CHUNK_IDS),
            Argument(
                "keep",
                "ids",
                "prune every chunk in view but these (in-process policies only)",
                offered=False,
                may_be_empty=True,
            ),
        ),
        describe=lambda c: (
            "Remove chunks you no longer need from your context to free token budget. "
            "Pruned chunks can be brought back with recall_chunks."
        ),
        behaviour=lambda c: (
            "remove chunks from the active context (validated: unknown and already-pruned "
            "ids are reported, not silently ignored)"
        ),
        apply=apply_prune,
    ),
    ToolSpec(
        name="recall_chunks",
        arguments=(Argument("chunk_ids", "ids", _CHUNK_IDS),),
        describe=lambda c: (
            "Bring previously pruned chunks back into your context by id (no new search)."
        ),
        behaviour=lambda c: "thresher's addition: bring pruned chunks back from the cache",
        apply=apply_recall,
    ),
)

_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
#: the tool allow-list
TOOL_NAMES: tuple[str, ...] = tuple(_BY_NAME)
#: tools that add new corpus text: run concurrently, refused past the hard cutoff
RETRIEVAL_TOOLS: frozenset[str] = frozenset(s.name for s in TOOLS if s.retrieval)
#: the retrieval tools a store that searches inline
#: (:class:`~thresher.index.store.SearchesInline`) runs on the episode's thread: a
#: search and a document read, about a millisecond each from memory; a grep's regex
#: scan can take tens of milliseconds, so it keeps a worker, beside them
INLINE_TOOLS: frozenset[str] = frozenset({"search_corpus", "read_document"})


def tool_spec(name: str) -> ToolSpec:
    """The spec of the tool ``name`` (raises ``KeyError`` for a name off the allow-list)."""
    return _BY_NAME[name]


def tool_schemas(config: Config | None = None) -> list[dict[str, Any]]:
    """The tools' JSON Schemas as a model is sent them, in :data:`TOOLS` order (fresh copies)."""
    cfg = config or Config()
    return [spec.schema(cfg) for spec in TOOLS]
