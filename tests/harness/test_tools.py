"""The five tools with the report's semantics, run through real episodes on a real index."""

from __future__ import annotations

import threading

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import run_episode
from thresher.harness.trace import ToolResult
from thresher.policies.scripted import ScriptedPolicy

from .manual_clock import ManualClock

Q = "In which province is the town where the Halvard Glassworks was founded?"


def turn(*calls):
    return Proposal(tool_calls=tuple(calls))


def run(store, config, actions, question=Q, **kw):
    policy = ScriptedPolicy(actions)
    result = run_episode(question, store, policy, config, **kw)
    return result, policy


def results(result, tool=None):
    return [e for e in result.trace if isinstance(e, ToolResult) and tool in (None, e.tool)]


def shown_ids(result):
    return [cid for e in results(result) for cid in e.shown]


def test_exclusion_covers_search_then_grep_and_grep_then_search(store, config):
    r, _ = run(
        store,
        config,
        [
            turn(call("search_corpus", query="Halvard Glassworks Marrowick")),
            turn(call("grep_corpus", pattern="Marrowick")),
            turn(call("search_corpus", query="Marrowick")),
            answer("glassworks"),
        ],
    )
    search1, grep, search2 = results(r)
    assert "glassworks#0" in search1.shown
    assert not set(grep.shown) & set(search1.shown)
    assert not set(search2.shown) & (set(search1.shown) | set(grep.shown))
    assert len(shown_ids(r)) == len(set(shown_ids(r)))


def test_grep_returns_at_most_five_chunks(store, config):
    r, _ = run(store, config, [turn(call("grep_corpus", pattern="market town")), answer()])
    (grep,) = results(r)
    assert grep.status == "ok" and len(grep.shown) == 5


def test_grep_says_how_many_matched_when_it_cut_to_the_limit(store, config):
    """ "5 of 20": the policy learns that its pattern matched more than it was shown."""
    r, policy = run(store, config, [turn(call("grep_corpus", pattern="market town")), answer()])
    (grep,) = results(r)
    matched = len(store.grep("market town", limit=1000).hits)
    assert matched > 5
    assert grep.header == f"grep_corpus: 5 of {matched} matching chunk(s)."
    assert f"5 of {matched} matching" in policy.observations[-1].messages[-2]["content"]
    # scored against the question (grep has no query of its own): lineage carries it
    assert all(lin["bm25_score"] is not None and lin["dense_score"] is not None
               for lin in grep.lineage)  # fmt: skip


def test_grep_says_when_counting_stopped(index_dir, config):
    """A side index stops counting at ``grep.count_cap``: the header says "at least"."""
    from thresher.index.embedded.store import EmbeddedStore

    with EmbeddedStore(index_dir, config.override({"grep.count_cap": 2})) as capped:
        r, _ = run(capped, config, [turn(call("grep_corpus", pattern="market town")), answer()])
    (grep,) = results(r)
    # counting goes on to the limit (5), then stops: more chunks match "market town"
    assert grep.header == "grep_corpus: 5 of at least 5 matching chunk(s) (counting stopped there)."


def test_grep_under_the_limit_says_only_what_matched(store, config):
    r, _ = run(store, config, [turn(call("grep_corpus", pattern="Marrowick")), answer()])
    (grep,) = results(r)
    assert grep.header == f"grep_corpus: {len(grep.shown)} chunk(s) matching."


def test_identical_text_under_two_ids_is_shown_once(store, config):
    r, policy = run(
        store,
        config,
        [
            turn(call("grep_corpus", pattern="Cape Orrin")),
            turn(call("search_corpus", query="lighthouse Cape Orrin automated")),
            answer(),
        ],
    )
    shown = shown_ids(r)
    assert sum(cid in ("mirror-a#0", "mirror-b#0") for cid in shown) == 1
    grep = results(r)[0]
    assert grep.duplicates and grep.duplicates[0][1] in grep.shown
    # the duplicate is cached (so it stays excluded) but was never in context
    state_cache = {c["chunk_id"] for e in results(r) for c in e.new_chunks}
    assert {"mirror-a#0", "mirror-b#0"} <= state_cache


def test_same_turn_duplicates_first_call_wins(store, config):
    q = "glassworks founded river town"
    r, _ = run(
        store,
        config,
        [turn(call("search_corpus", "a", query=q), call("search_corpus", "b", query=q)), answer()],
    )
    first, second = results(r)
    # as if run one after the other: the second call shows the next fresh results
    assert first.shown and not set(first.shown) & set(second.shown)
    assert "10 result(s) already shown this turn" in second.footer


def test_read_document_reranks_excludes_context_and_fits_budget(store, config):
    r, _ = run(
        store,
        config,
        [
            turn(call("search_corpus", query="museum of pressed glass in Vennor")),
            turn(call("read_document", doc_id="tessaly-history")),
            answer("tessaly-history"),
        ],
    )
    search, read = results(r)
    in_context = {c for c in search.shown if c.startswith("tessaly-history#")}
    assert in_context, "the search should find part of the history document"
    assert not set(read.shown) & in_context
    assert len(read.shown) + len(in_context) == 4
    ranks = [rec["rank"] for rec in read.lineage]
    assert ranks == sorted(ranks)
    assert read.lineage[0]["query"] == "tessaly-history"
    assert r.documents[0].doc_id == "tessaly-history"


def test_read_document_unknown_id_is_an_error_result(store, config):
    r, policy = run(store, config, [turn(call("read_document", doc_id="no-such-doc")), answer()])
    (read,) = results(r)
    assert read.status == "error" and read.code == "unknown_id"
    assert "no-such-doc" in policy.observations[1].messages[-2]["content"]


def test_bad_pattern_is_an_error_result_not_an_exception(store, config):
    r, _ = run(store, config, [turn(call("grep_corpus", pattern="(a")), answer()])
    (grep,) = results(r)
    assert grep.status == "error" and grep.code == "pattern_rejected"
    assert r.exit_reason == "answered"


def test_prune_reports_unknown_not_in_context_and_already_pruned(store, config):
    def prune_first_twice(obs):
        first = obs.active[0].chunk_id
        return turn(
            call("prune_chunks", "p1", chunk_ids=[first, "nope#9"]),
            call("prune_chunks", "p2", chunk_ids=[first, "mirror-b#0", "mirror-a#0"]),
        )

    r, _ = run(
        store,
        config,
        [turn(call("grep_corpus", pattern="Cape Orrin")), prune_first_twice, answer()],
    )
    grep, p1, p2 = results(r)
    first = grep.shown[0]
    dup = grep.duplicates[0][0]
    assert p1.pruned == [first]
    assert [(x["id"], x["code"]) for x in p1.rejected] == [("nope#9", "unknown_id")]
    codes = {x["id"]: x["code"] for x in p2.rejected}
    assert codes[first] == "already_pruned" and codes[dup] == "not_in_context"
    assert p2.status == "error" and "already pruned" in p2.footer


def test_prune_keep_prunes_every_other_chunk_in_view(store, config):
    def keep_first(obs):
        return turn(call("prune_chunks", keep=[obs.active[0].chunk_id, "nope#9"]))

    def keep_none(obs):
        return turn(call("prune_chunks", keep=[]))

    r, policy = run(
        store,
        config,
        [turn(call("search_corpus", query="Halvard Glassworks")), keep_first, keep_none, answer()],
    )
    search, kept, emptied = results(r)
    assert kept.status == "ok" and kept.pruned == search.shown[1:]
    assert [(x["id"], x["code"]) for x in kept.rejected] == [("nope#9", "unknown_id")]
    assert kept.header.startswith(f"Pruned {len(search.shown) - 1} chunk(s); kept 1")
    assert "Not kept: nope#9" in kept.footer
    assert emptied.pruned == search.shown[:1] and not policy.observations[3].active


def test_prune_with_both_chunk_ids_and_keep_is_refused(store, config):
    r, _ = run(
        store,
        config,
        [
            turn(call("search_corpus", query="Halvard Glassworks")),
            turn(call("prune_chunks", chunk_ids=["a#0"], keep=["b#0"])),
            answer(),
        ],
    )
    _, refused = results(r)
    assert refused.status == "refused" and "not both" in refused.header + refused.footer


def test_recall_brings_pruned_chunks_back_with_lineage(store, config):
    def prune_all(obs):
        return turn(call("prune_chunks", chunk_ids=[a.chunk_id for a in obs.active]))

    def recall_some(obs):
        return turn(call("recall_chunks", chunk_ids=[*obs.pruned[:2], "nope#1", obs.pruned[0]]))

    r, policy = run(
        store,
        config,
        [
            turn(call("search_corpus", query="Halvard Glassworks")),
            prune_all,
            recall_some,
            answer(),
        ],
    )
    search, prune, recall = results(r)
    assert recall.recalled == search.shown[:2] and recall.shown == recall.recalled
    assert [(x["id"], x["code"]) for x in recall.rejected] == [("nope#1", "unknown_id")]
    obs = policy.observations[3]
    assert [a.chunk_id for a in obs.active] == search.shown[:2]
    assert all(a.lineage is not None and a.lineage.call_id == search.call_id for a in obs.active)
    assert "Halvard" in obs.messages[-2]["content"]  # recalled text is shown again


def test_recall_is_budget_checked(store, config):
    small = config.override({"budget.total": 1400, "budget.reply_reserve": 200})

    def prune_all(obs):
        return turn(call("prune_chunks", chunk_ids=[a.chunk_id for a in obs.active]))

    def fill_then_recall(obs):
        return turn(call("recall_chunks", chunk_ids=list(obs.pruned)))

    r, policy = run(
        store,
        small,
        [
            turn(call("search_corpus", query="glassworks town trade")),
            turn(call("search_corpus", query="market town wool tin salt rope cider")),
            prune_all,
            fill_then_recall,
            answer(),
        ],
    )
    recall = results(r, "recall_chunks")[0]
    assert recall.recalled, "some chunks fit"
    assert any(x["code"] == "no_room" for x in recall.rejected)
    assert all(o.usage.used <= small.budget.total for o in policy.observations)


def test_search_cut_to_per_call_budget_never_half_a_chunk(store, config):
    tight = config.override({"budget.per_call_tokens": 150})
    r, _ = run(store, tight, [turn(call("search_corpus", query="glassworks")), answer()])
    (search,) = results(r)
    assert 0 < len(search.shown) < 10 and search.tokens <= 150
    assert "left out to fit the token budget" in search.footer


def test_budget_smaller_than_one_chunk_is_an_error_result(store, config):
    tiny = config.override({"budget.per_call_tokens": 20})
    r, _ = run(store, tiny, [turn(call("search_corpus", query="glassworks")), answer()])
    (search,) = results(r)
    assert search.status == "error" and search.code == "budget_exhausted"
    assert "not enough token budget" in search.header and not search.new_chunks


class SlowStore:
    """The real store behind a gate: calls wait until ``release`` (or time out)."""

    def __init__(self, store, parties: int = 0) -> None:
        self._store = store
        self.barrier = threading.Barrier(parties) if parties else None
        self.release = threading.Event()

    def __getattr__(self, name):
        return getattr(self._store, name)

    def pinned(self):
        return self  # an episode reads through the gate (not the store's pinned view)

    def searches_inline(self) -> bool:
        return False  # its calls wait on a gate: never run them on the episode's thread

    def hybrid_search(self, query, k=50, exclude=()):
        if self.barrier is not None:
            self.barrier.wait(timeout=10)  # raises BrokenBarrierError if calls were serial
        else:
            self.release.wait(timeout=10)
        return self._store.hybrid_search(query, k=k, exclude=exclude)


def test_calls_of_one_turn_run_concurrently_and_apply_in_call_order(store, config):
    slow = SlowStore(store, parties=3)
    queries = ["glassworks", "Marrowick salt market", "lighthouse"]
    r, _ = run(
        slow,
        config,
        [turn(*(call("search_corpus", f"c{i}", query=q) for i, q in enumerate(queries))), answer()],
    )
    found = results(r)
    assert [e.call_id for e in found] == ["c0", "c1", "c2"]
    assert all(e.status == "ok" for e in found), [e.header for e in found]


def test_a_tool_that_times_out_becomes_an_error_result(store, config):
    """The search is held until the episode is over (an event set after it); once the
    grep beside it is applied (it answered in time), the episode's clock passes the
    tool timeout: the search times out whatever the machine's speed, with no wait."""
    slow = SlowStore(store)
    quick = config.override({"episode.tool_timeout_s": 2.0})
    clock = ManualClock()

    def after_the_grep(event):
        if isinstance(event, ToolResult) and event.tool == "grep_corpus":
            clock.advance(2.5)

    r, _ = run(
        slow,
        quick,
        [
            turn(call("grep_corpus", pattern="Tessaly"), call("search_corpus", query="glassworks")),
            answer(),
        ],
        on_event=after_the_grep,
        clock=clock,
    )
    slow.release.set()
    grep, search = results(r)
    assert search.status == "error" and search.code == "timeout"
    assert grep.status == "ok" and r.exit_reason == "answered"


class BrokenStore(SlowStore):
    def hybrid_search(self, query, k=50, exclude=()):
        raise RuntimeError("disk on fire")


def test_a_failing_tool_becomes_an_error_result(store, config):
    r, policy = run(BrokenStore(store), config, [turn(call("search_corpus", query="x")), answer()])
    (search,) = results(r)
    assert search.code == "tool_failed" and "disk on fire" in search.header
    # every retrieval call failed and nothing was found: not a success (issue 23)
    assert r.exit_reason == "tools_failed" and r.partial and not r.documents


def test_reranker_reorders_search_candidates(store, config):
    def reverse(query, hits):
        return list(reversed(hits))

    plain, _ = run(store, config, [turn(call("search_corpus", query="glassworks")), answer()])
    rer, _ = run(
        store, config, [turn(call("search_corpus", query="glassworks")), answer()], reranker=reverse
    )
    assert results(plain)[0].shown != results(rer)[0].shown
