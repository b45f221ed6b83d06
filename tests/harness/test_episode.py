"""The episode loop: guards, exit reasons, usage line, hard cutoff, final answers, replay."""

from __future__ import annotations

import copy
import json
import threading

from thresher.harness.actions import FinalAnswer, Proposal, RankedDocument, ToolCall, answer, call
from thresher.harness.budget import HARD_NOTICE, SOFT_NOTICE, TranscriptCounter, usage_line
from thresher.harness.episode import MAX_HARD_REFUSALS, MAX_REFUSED_PROPOSALS, run_episode
from thresher.harness.policy import BasePolicy
from thresher.harness.result import ExitReason
from thresher.harness.state import replay
from thresher.harness.trace import (
    EpisodeEnd,
    FinalEvent,
    ProposalEvent,
    Refusal,
    ToolResult,
    UsageReport,
    read_jsonl,
    write_jsonl,
)
from thresher.policies.scripted import ScriptedPolicy
from thresher.tokens import get_counter

from .manual_clock import ManualClock

Q = "In which province is the town where the Halvard Glassworks was founded?"


def turn(*calls, **kw):
    return Proposal(tool_calls=tuple(calls), **kw)


def run(store, config, actions, question=Q, **kw):
    policy = ScriptedPolicy(actions)
    return run_episode(question, store, policy, config, **kw), policy


def events(result, kind):
    return [e for e in result.trace if isinstance(e, kind)]


def test_two_hop_episode_answers_with_ranked_justified_documents(store, config):
    r, policy = run(
        store,
        config,
        [
            turn(call("search_corpus", query="Halvard Glassworks founded"), hop=1),
            turn(
                call("search_corpus", query="Marrowick province"), hop=2, parents=("glassworks#0",)
            ),
            answer(
                ("marrowick", "Places Marrowick in Tessaly."),
                ("glassworks#0", "Founded in Marrowick."),
            ),
        ],
    )
    assert r.exit_reason is ExitReason.ANSWERED and not r.partial
    assert [d.doc_id for d in r.documents] == ["marrowick", "glassworks"]
    top = r.documents[0]
    assert top.rank == 1 and "Tessaly" in top.text and top.title == "Marrowick"
    assert top.justification == "Places Marrowick in Tessaly."
    assert r.documents[1].chunk_ids == ("glassworks#0",)
    assert r.tool_calls == {"search_corpus": 2} and r.turns == 3
    state = replay(r.trace)
    hop2 = state.lineage.origin("marrowick#0")
    assert hop2 is not None and hop2.hop == 2 and hop2.parents == ("glassworks#0",)
    assert hop2.query == "Marrowick province" and hop2.tool == "search_corpus"
    json.dumps(r.to_dict(with_trace=True))  # JSON-safe


def test_usage_line_counts_what_is_sent_next(store, config):
    r, policy = run(
        store,
        config,
        [
            turn(call("search_corpus", query="glassworks")),
            turn(call("grep_corpus", pattern="Tessaly")),
            answer(),
        ],
    )
    tc = TranscriptCounter(get_counter())
    previous = 0
    for obs in policy.observations:
        counted = tc.messages(obs.messages)
        assert obs.usage.used == counted  # exact, this turn's own notice message included
        assert obs.messages[-1]["content"].splitlines()[0] == usage_line(counted, 32_768)
        assert counted > previous  # the new tool output is counted now, not a turn late
        previous = counted


def test_soft_notice_then_hard_cutoff_refuses_all_but_prune_recall_and_final(store, config):
    small = config.override({"budget.total": 1500, "budget.reply_reserve": 100})

    def at_cutoff(obs):
        assert obs.usage.hard and HARD_NOTICE in obs.notices and SOFT_NOTICE in obs.notices
        return turn(
            call("search_corpus", "s", query="lighthouse"),
            call("grep_corpus", "g", pattern="Orrin"),
            call("read_document", "r", doc_id="kestrin"),
            call("prune_chunks", "p", chunk_ids=[a.chunk_id for a in obs.active]),
            call("recall_chunks", "c", chunk_ids=[obs.active[0].chunk_id]),
        )

    r, policy = run(
        store,
        small,
        [
            turn(call("search_corpus", query="glassworks town trade")),
            turn(call("search_corpus", query="market town wool tin salt rope cider")),
            turn(call("search_corpus", query="History of Tessaly river Vennor")),
            at_cutoff,
            lambda obs: answer(obs.active[0].chunk_id),
        ],
    )
    assert any(o.usage.soft and not o.usage.hard for o in policy.observations)
    assert all(o.usage.used <= 1500 - 100 for o in policy.observations)
    last = {e.call_id: e for e in events(r, ToolResult) if e.turn == 3}
    for cid in "sgr":
        assert last[cid].status == "refused" and last[cid].code == "hard_cutoff"
        assert "hard token limit" in last[cid].header
    assert last["p"].status == "ok"
    assert last["c"].status == "ok" and last["c"].recalled  # recall allowed (and it fits)
    assert r.exit_reason is ExitReason.ANSWERED


def test_hard_cutoff_with_a_policy_that_keeps_searching_ends_with_budget(store, config):
    small = config.override({"budget.total": 1500, "budget.reply_reserve": 100})
    searches = [turn(call("search_corpus", query=q)) for q in ("glassworks", "town", "salt", "tin")]
    keep_trying = [turn(call("search_corpus", query="again"))] * (MAX_HARD_REFUSALS + 5)
    r, _ = run(store, small, searches + keep_trying)
    assert r.exit_reason is ExitReason.BUDGET and r.partial
    assert r.documents and all(d.justification == "" for d in r.documents)


def test_prompt_larger_than_budget_ends_before_calling_the_policy(store, config):
    r, policy = run(store, config.override({"budget.total": 50}), [answer()])
    assert r.exit_reason is ExitReason.BUDGET and not policy.observations
    assert isinstance(r.trace[-1], EpisodeEnd) and "over the budget" in r.message


def test_empty_question_is_invalid_input(store, config):
    r, policy = run(store, config, [answer()], question="   ")
    assert r.exit_reason is ExitReason.INVALID_INPUT and r.documents == ()
    assert [e.type for e in r.trace] == ["episode_start", "episode_end"]


def test_max_turns_gives_a_partial_result_ranked_by_retrieval(store, config):
    capped = config.override({"episode.max_turns": 2})
    r, _ = run(
        store,
        capped,
        [
            turn(call("search_corpus", query="Halvard Glassworks Marrowick")),
            turn(call("search_corpus", query="lighthouse")),
            answer(),
        ],
    )
    assert r.exit_reason is ExitReason.MAX_TURNS and r.partial and r.turns == 2
    assert r.documents[0].doc_id == "glassworks"  # rank 1 of the first search
    assert [d.rank for d in r.documents] == list(range(1, len(r.documents) + 1))
    assert len(r.documents) <= capped.episode.max_final_documents


def test_calls_per_turn_and_per_episode_caps(store, config):
    capped = config.override({"episode.max_calls_per_turn": 2, "episode.max_calls": 3})
    r, _ = run(
        store,
        capped,
        [
            turn(*(call("grep_corpus", pattern=p) for p in ("salt", "tin", "wool"))),
            turn(call("grep_corpus", pattern="rope"), call("grep_corpus", pattern="cider")),
            answer(),
        ],
    )
    codes = [(e.turn, e.status, e.code) for e in events(r, ToolResult)]
    assert codes == [
        (0, "ok", ""),
        (0, "ok", ""),
        (0, "refused", "max_calls_per_turn"),
        (1, "ok", ""),
        (1, "refused", "max_calls"),
    ]
    assert r.exit_reason is ExitReason.MAX_CALLS and r.tool_calls == {"grep_corpus": 3}


def test_policy_that_raises_ends_with_policy_error_and_trace_intact(store, config):
    def boom(obs):
        raise ValueError("model fell over")

    r, _ = run(store, config, [turn(call("search_corpus", query="glassworks")), boom])
    assert r.exit_reason is ExitReason.POLICY_ERROR and "model fell over" in r.message
    assert events(r, Refusal)[-1].code == "policy_exception"
    assert r.documents  # partial: what was in context
    assert replay(r.trace).exit_reason == "policy_error"


def test_garbage_is_refused_and_recorded_then_policy_error(store, config):
    garbage = [
        "not a proposal",
        Proposal(),
        Proposal(tool_calls=(call("search_corpus", query="x"),), final=FinalAnswer(())),
    ]
    r, policy = run(store, config, garbage)
    codes = [e.code for e in events(r, Refusal)]
    assert codes == ["not_a_proposal", "empty_proposal", "both_calls_and_final"]
    assert len(codes) == MAX_REFUSED_PROPOSALS
    assert r.exit_reason is ExitReason.POLICY_ERROR
    assert all(not e.valid for e in events(r, ProposalEvent))
    # the refusal is shown to the policy on the next turn
    assert any(n.startswith("[Refused:") for n in policy.observations[1].notices)


def test_refusals_reset_when_the_policy_recovers(store, config):
    r, _ = run(store, config, [Proposal(), Proposal(), answer(), Proposal()])
    assert r.exit_reason is ExitReason.ANSWERED


def test_script_exhausted_is_policy_error(store, config):
    r, _ = run(store, config, [turn(call("grep_corpus", pattern="salt"))])
    assert r.exit_reason is ExitReason.POLICY_ERROR and "exhausted" in r.message


def test_final_answer_parsed_from_text_and_unknown_ids_recorded(store, config):
    text = (
        'Done.\n<Document id="glassworks#0"><Justification>Founded there.</Justification>'
        '</Document>\n<Document id="made-up"><Justification>x</Justification></Document>'
    )
    r, _ = run(store, config, [turn(call("grep_corpus", pattern="Halvard")), Proposal(text=text)])
    assert r.exit_reason is ExitReason.ANSWERED and r.doc_ids == ["glassworks"]
    assert r.documents[0].justification == "Founded there."
    dropped = [e for e in events(r, Refusal) if e.code == "unknown_id"]
    assert dropped and "made-up" in dropped[0].message
    assert events(r, FinalEvent)[0].documents[0]["doc_id"] == "glassworks"


def test_final_naming_only_unknown_ids_is_refused(store, config):
    r, _ = run(store, config, [answer("ghost"), answer("ghost"), answer("ghost")])
    assert [e.code for e in events(r, Refusal)] == ["no_known_documents"] * 3
    assert r.exit_reason is ExitReason.POLICY_ERROR


def test_bad_tool_names_and_arguments_are_refused_per_call(store, config):
    r, _ = run(
        store,
        config,
        [
            turn(
                ToolCall("delete_corpus", {}, "x"),
                call("search_corpus", "e", query="   "),
                call("prune_chunks", "n", chunk_ids=[]),
                call("grep_corpus", "ok", pattern="salt"),
            ),
            answer(),
        ],
    )
    by_id = {e.call_id: e for e in events(r, ToolResult)}
    assert by_id["x"].code == "unknown_tool" and by_id["e"].code == "bad_arguments"
    assert by_id["n"].code == "bad_arguments" and by_id["ok"].status == "ok"
    assert r.tool_calls == {"grep_corpus": 1}


def test_endpoint_usage_is_reconciled(store, config):
    def reported(extra):
        def act(obs):
            usage = {"prompt_tokens": obs.usage.counted + extra, "completion_tokens": 7}
            return turn(call("grep_corpus", pattern="salt"), usage=usage)

        return act

    r, policy = run(store, config, [reported(40), reported(40), answer()])
    reports = events(r, UsageReport)
    assert [u.correction for u in reports] == [40, 40]
    assert policy.observations[1].usage.correction == 40
    assert policy.observations[1].usage.used == policy.observations[1].usage.counted + 40
    assert r.usage.completion_tokens == 14


def test_wall_time_timeout_of_a_hanging_policy(store, config):
    """The policy replies only once the episode is over (an event set after it): the
    wall time, passed on the episode's clock while the policy hangs, ends the episode."""
    quick = config.override({"episode.wall_time_s": 2.0})
    hang = threading.Event()
    clock = ManualClock()

    def hanging(obs):
        clock.advance(obs.wall_time_left_s + 0.05)
        return hang.wait(300) or answer()

    r, _ = run(store, quick, [hanging], clock=clock)
    hang.set()
    assert r.exit_reason is ExitReason.TIMEOUT
    assert events(r, Refusal)[-1].code == "timeout"


class InProcessScript(ScriptedPolicy):
    """A scripted policy that declares itself in-process (as the local policy does)."""

    in_process = True


def test_an_in_process_policy_is_called_on_the_episodes_thread(store, config):
    threads: list[int] = []

    def note(action):
        return lambda obs: threads.append(threading.get_ident()) or action

    policy = InProcessScript([note(turn(call("grep_corpus", pattern="salt"))), note(answer())])
    r = run_episode(Q, store, policy, config)
    assert r.exit_reason is ExitReason.ANSWERED
    assert threads == [threading.get_ident()] * 2


def test_an_in_process_policy_past_the_wall_time_times_out_and_a_stop_is_seen(store, config):
    """The policy replies only after the wall time it was told is left has passed."""
    quick = config.override({"episode.wall_time_s": 2.0})
    clock = ManualClock()

    def past_the_wall_time(obs):
        clock.advance(obs.wall_time_left_s + 0.05)
        return answer()

    slow = InProcessScript([past_the_wall_time])
    r = run_episode(Q, store, slow, quick, clock=clock)
    assert r.exit_reason is ExitReason.TIMEOUT
    assert events(r, Refusal)[-1].code == "timeout"
    never = InProcessScript([lambda obs: answer()])
    r = run_episode(Q, store, never, config, should_stop=lambda: True)
    assert r.exit_reason is ExitReason.CANCELLED and not never.observations


def test_internal_error_still_returns_a_result(store, config):
    def explode(event):
        if event.type == "tool_result":
            raise RuntimeError("viewer crashed")

    r, _ = run(
        store, config, [turn(call("grep_corpus", pattern="salt")), answer()], on_event=explode
    )
    assert r.exit_reason is ExitReason.ERROR and "viewer crashed" in r.message
    assert r.trace and r.trace[0].type == "episode_start"


def test_replay_from_jsonl_equals_live_state_at_every_turn(store, config, tmp_path):
    snapshots = []

    def prune_first(obs):
        return turn(call("prune_chunks", chunk_ids=[obs.active[0].chunk_id]))

    def recall_it(obs):
        return turn(
            call("recall_chunks", chunk_ids=list(obs.pruned)),
            call("read_document", doc_id="tessaly-history"),
        )

    r, _ = run(
        store,
        config,
        [
            turn(call("search_corpus", query="glassworks"), call("grep_corpus", pattern="Orrin")),
            prune_first,
            recall_it,
            answer("glassworks"),
        ],
        on_turn=lambda s: snapshots.append(copy.deepcopy(s)),
    )
    events_back = read_jsonl(write_jsonl(r.trace, tmp_path / "trace.jsonl"))
    assert events_back == list(r.trace)
    for t, snap in enumerate(snapshots):
        assert replay(events_back, t) == snap
    final = replay(events_back)
    assert final.exit_reason == "answered" and final.final[0]["doc_id"] == "glassworks"


def test_final_with_ranked_document_objects_and_max_documents(store, config):
    capped = config.override({"episode.max_final_documents": 1})
    final = FinalAnswer((RankedDocument("town-00"), RankedDocument("town-01")))
    r, _ = run(
        store, capped, [turn(call("grep_corpus", pattern="market town")), Proposal(final=final)]
    )
    assert r.doc_ids == ["town-00"]
    assert [e.code for e in events(r, Refusal)] == ["too_many_documents"]


class Faceless(BasePolicy):
    name = "faceless"

    @property
    def system_prompt(self):
        raise RuntimeError("no prompt")

    def propose(self, observation):
        return answer()


def test_a_policy_that_cannot_describe_itself_is_policy_error(store, config):
    r = run_episode(Q, store, Faceless(), config)
    assert r.exit_reason is ExitReason.POLICY_ERROR and "no prompt" in r.message


def test_episode_end_records_the_documents_of_partial_results(store, config):
    capped = config.override({"episode.max_turns": 1})
    r, _ = run(store, capped, [turn(call("grep_corpus", pattern="Marrowick"))])
    end = r.trace[-1]
    assert isinstance(end, EpisodeEnd) and end.partial
    assert [d["doc_id"] for d in end.documents] == r.doc_ids and r.doc_ids


def test_refusal_caps_are_settings(store, config):
    garbage = ["not a proposal"] * 10
    r, _ = run(store, config.override({"episode.max_refused_in_a_row": 5}), garbage)
    assert r.exit_reason is ExitReason.POLICY_ERROR
    assert len(events(r, Refusal)) == 5
    small = config.override(
        {"budget.total": 1500, "budget.reply_reserve": 100, "episode.max_hard_refused_turns": 1}
    )
    searches = [turn(call("search_corpus", query=q)) for q in ("glassworks", "town", "salt", "tin")]
    keep_trying = [turn(call("search_corpus", query="again"))] * 10
    r, policy = run(store, small, searches + keep_trying)
    assert r.exit_reason is ExitReason.BUDGET
    assert "1 turns of refused retrieval" in r.message


def test_each_call_of_a_turn_records_its_own_parents(store, config):
    # two follow-ups from two different bridge sources: each one's lineage names its own
    r, _ = run(
        store,
        config,
        [
            turn(call("search_corpus", query="Halvard Glassworks founded"), hop=1),
            turn(
                call("search_corpus", "a", query="Marrowick province"),
                call("search_corpus", "b", query="Tessaly salt"),
                hop=2,
                parents=("glassworks#0", "other#0"),
                call_parents={"a": ("glassworks#0",)},
            ),
            answer(("marrowick", "Places Marrowick in Tessaly.")),
        ],
    )
    by_call = {
        rec["call_id"]: tuple(rec["parents"])
        for e in r.trace
        if isinstance(e, ToolResult)
        for rec in e.lineage
    }
    assert by_call["a"] == ("glassworks#0",)
    assert by_call.get("b", ("glassworks#0", "other#0")) == ("glassworks#0", "other#0")
    proposals = [e for e in r.trace if isinstance(e, ProposalEvent)]
    assert any(p.proposal.get("call_parents") == {"a": ["glassworks#0"]} for p in proposals)
