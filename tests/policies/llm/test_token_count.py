"""The LLM path's token count against the server's usage (issue 26, item 12).

The harness counts with OpenAI's o200k vocabulary; a server counts with its
model's vocabulary after rendering its chat template. The LLM policy declares
the template's costs (:data:`~thresher.tokens.CHATML_TOOLS_COST`), so the count
before the first reply is close, and the harness fits the vocabulary ratio from
every reported usage, so later counts follow the server.
"""

from __future__ import annotations

import pytest

from policies.llm.test_policy import FINAL, SEARCH, episode
from policies.llm.wire import exchanges, served
from thresher.harness.budget import TranscriptCounter
from thresher.harness.trace import QueryState, UsageReport
from thresher.testing.replay_server import reply, tool_call
from thresher.tokens import CHATML_TOOLS_COST, get_counter


def _first_requests() -> list[tuple[int, dict, int]]:
    """Recorded requests sent before any tool ran (the count a first turn starts from),
    with the prompt tokens llama.cpp reported for them (Qwen2.5's own template)."""
    out = []
    for i, e in enumerate(exchanges()):
        usage = (e.get("response") or {}).get("usage") or {}
        messages = (e.get("request") or {}).get("messages") or []
        first = messages and not any(m.get("tool_calls") for m in messages)
        if e["status"] == 200 and usage.get("prompt_tokens") and first:
            out.append((i, e["request"], usage["prompt_tokens"]))
    return out


def test_the_count_before_any_reply_is_within_two_percent_of_the_servers():
    counter = TranscriptCounter(get_counter("o200k_base"), cost=CHATML_TOOLS_COST)
    firsts = _first_requests()
    assert len(firsts) >= 50
    for i, request, server in firsts:
        ours = counter.messages(request["messages"]) + counter.tools(request["tools"])
        assert abs(ours - server) / server <= 0.02, (i, ours, server)


def _drifts(run) -> list[float]:
    used = {q.turn: q.used for q in run.events(QueryState)}
    return [
        (used[u.turn] - u.prompt_tokens) / u.prompt_tokens
        for u in run.events(UsageReport)
        if u.prompt_tokens
    ]


def _counted(entry: dict) -> dict:
    """``entry`` answered with usage the replay server counts on the request it got."""
    return {**entry, "count_prompt": True}


@pytest.mark.parametrize("first", [0, 38])
def test_every_later_count_is_within_two_percent_of_a_server_with_another_vocabulary(
    tmp_path, store, config, first
):
    # the model's own calls (0: a fenced grep_corpus; 38: three calls in one reply), then
    # more calls and the answer; the server counts with a vocabulary whose ratio to ours
    # differs between prose, JSON and the retrieved text, so only a fitted ratio follows it
    script = [
        _counted(served(first)),
        _counted(reply(tool_call("search_corpus", {"query": "Halvard Glassworks founded"}))),
        _counted(reply(tool_call("grep_corpus", {"pattern": "Marrowick"}))),
        _counted(reply(tool_call("read_document", {"doc_id": "glassworks"}))),
        _counted(FINAL),
    ]
    run = episode(tmp_path, store, config, script)
    drifts = _drifts(run)
    shown = [f"{d:+.1%}" for d in drifts]
    assert len(drifts) == 5
    # each count is anchored on the last report and only what was added since is
    # estimated; once a reply to a transcript holding retrieved text was reported, the
    # ratio of retrieved text is known too (until then it is counted at the prompt's)
    seen = [i for i, body in enumerate(run.requests) if _holds_chunks(body)]
    later = drifts[seen[0] + 1 :]
    assert len(later) >= 2 and all(abs(d) <= 0.02 for d in later), shown


def _holds_chunks(body: dict) -> bool:
    return any(m["role"] == "tool" and "<chunk " in m["content"] for m in body["messages"])


def test_a_declared_template_cost_is_calibrated_and_leaves_no_offset(tmp_path, store, config):
    usage = {"prompt_tokens": 1500, "completion_tokens": 10}
    first = reply(tool_call("search_corpus", {"query": "glass works"}), usage=usage)
    run = episode(tmp_path, store, config, [first, SEARCH, FINAL])
    (report,) = run.events(UsageReport)
    assert report.prompt_tokens == 1500 and report.correction == 0
    assert run.policy.prompt_cost is CHATML_TOOLS_COST
    # the next count is the fitted one: it grew by the new messages, not by an offset
    turn0, turn1 = (q for q in run.events(QueryState) if q.turn in (0, 1))
    assert turn1.used > 1500 and turn1.correction == 0 and turn0.used != 1500


def _recorded_episodes() -> list[list[dict]]:
    """Runs of recorded exchanges where each request extends the one before (one
    episode's turns), with the prompt tokens llama.cpp reported."""
    episodes: list[list[dict]] = []
    for e in exchanges():
        usage = (e.get("response") or {}).get("usage") or {}
        if e["method"] != "POST" or e["status"] != 200 or not usage.get("prompt_tokens"):
            continue
        sent = e["request"]["messages"]
        last = episodes[-1][-1]["request"]["messages"] if episodes else []
        if last and len(sent) > len(last) and sent[:2] == last[:2]:
            episodes[-1].append(e)
        else:
            episodes.append([e])
    return [run for run in episodes if len(run) > 1]


def _episode_drift(run: list[dict], counter: TranscriptCounter) -> tuple[float, float]:
    """(ours - server's) / server's over an episode's requests, each counted before its
    reply with what earlier replies reported (as the harness does), and the worst
    request's."""
    ours = theirs = correction = 0
    worst = 0.0
    for e in run:
        messages, tools = e["request"]["messages"], e["request"].get("tools") or []
        counted = counter.messages(messages) + counter.tools(tools)
        server = e["response"]["usage"]["prompt_tokens"]
        ours, theirs = ours + counted + correction, theirs + server
        worst = max(worst, abs(counted + correction - server) / server)
        fitted = counter.calibrate(server, counted, counter.raw_text(messages, tools))
        correction = max(0, server - counted) if fitted is None else fitted
    return (ours - theirs) / theirs, worst


def test_every_recorded_episodes_total_is_within_two_percent_of_the_servers():
    runs = _recorded_episodes()
    assert len(runs) >= 25 and max(len(r) for r in runs) == 8
    o200k = get_counter("o200k_base")
    fitted = [_episode_drift(r, TranscriptCounter(o200k, cost=CHATML_TOOLS_COST)) for r in runs]
    flat = [_episode_drift(r, TranscriptCounter(o200k))[0] for r in runs]  # before: 4 + 3
    assert max(abs(total) for total, _ in fitted) <= 0.01, [f"{d:+.2%}" for d, _ in fitted]
    # every request too, the first with retrieved text included (its ids' digits counted)
    assert max(worst for _, worst in fitted) <= 0.02, [f"{w:.2%}" for _, w in fitted]
    assert sum(abs(d) > 0.02 for d in flat) > len(runs) // 2  # most were off by more
