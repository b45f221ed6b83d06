"""Refusals the model can read, and placeholders it cannot copy (issue 26, items 7 and 4).

Driven by what Qwen2.5-Coder-0.5B wrote (the recorded wire file, ``wire.py``),
played back through the replay server.
"""

from __future__ import annotations

from policies.llm.test_policy import FINAL, SEARCH, episode
from policies.llm.test_real_model import _mistral_accepts
from policies.llm.wire import content, served
from thresher.harness.result import ExitReason
from thresher.policies.llm.messages import NOT_RUN
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.testing.replay_server import reply, tool_call


def _after(run, i: int) -> list[dict]:
    """Request ``i``'s messages after the system prompt and the question."""
    return run.requests[i]["messages"][2:]


def _roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


# -- 7. a refused call is answered as a tool result for that call --------------------------
def test_a_refused_call_is_answered_by_a_tool_result_for_its_id(tmp_path, store, config):
    # 0: the model's fenced grep_corpus call, run; then the same call again and a repeated
    # search beside a fine one: refused, and answered call by call
    grep = '{"pattern": "company (lead inventor) of patent TO-2015-748801 headquartered"}'
    again = reply(
        tool_call("search_corpus", {"query": "Halvard Glassworks founded"}),
        tool_call("grep_corpus", {"pattern": "Marrowick"}),
    )
    run = episode(tmp_path, store, config, [served(0), SEARCH, again, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert [x.code for x in run.refusals()] == ["repeated_search"]
    sent = run.requests[3]["messages"]
    assert _mistral_accepts(sent)
    assistant, first, second = sent[-3:]
    assert _roles(sent[-3:]) == ["assistant", "tool", "tool"]
    calls = assistant["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["search_corpus", "grep_corpus"]
    assert [first["tool_call_id"], second["tool_call_id"]] == [c["id"] for c in calls]
    assert first["content"].startswith("Refused: you already searched for 'Halvard Glassworks")
    assert "do not send it again. Instead: read_document" in first["content"]
    assert second["content"].startswith(NOT_RUN)
    assert second["content"].rstrip().endswith("]")  # the usage line rides on the last answer
    assert "[Refused:" not in str(sent) and "not accepted" not in str(sent)
    # the model's own first call is in the transcript as it ran
    assert any(
        c["function"]["arguments"] == grep
        for m in sent
        for c in m.get("tool_calls") or ()
        if c["function"]["name"] == "grep_corpus"
    )


def test_a_refused_text_reply_is_shown_with_the_answer_to_it(tmp_path, store, config):
    # 9: text that is no action; 4: the model echoing an earlier notice back
    assert content(9) == "<tool result>Search Corpus</tool>"
    run = episode(tmp_path, store, config, [served(9), served(4), SEARCH, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    assert [x.code for x in run.refusals()] == ["no_action", "placeholder_id"]
    for i in (1, 2):
        assert _mistral_accepts(run.requests[i]["messages"])
    after = _after(run, 2)
    assert _roles(after) == ["assistant", "user", "assistant", "user"]
    assert after[0]["content"] == "<tool result>Search Corpus</tool>"
    assert after[1]["content"].startswith("Refused: your reply has neither a tool call")
    assert after[2]["content"] == content(4)[:300]
    assert after[3]["content"].startswith("Refused: your final answer names")
    # no bracketed harness notice is left to echo in what the harness says: only the usage line
    said = [m for m in after if m["role"] != "assistant"]
    notices = [line for m in said for line in m["content"].splitlines() if line.startswith("[")]
    assert notices and all(line.startswith("[Token usage:") for line in notices)


# -- 4. placeholders ------------------------------------------------------------------------
def test_the_prompt_shows_no_id_to_copy():
    assert "DOC_ID" not in SYSTEM_PROMPT and 'id="' not in SYSTEM_PROMPT
    assert "<Document" not in SYSTEM_PROMPT  # the answer's form is described in words


def test_a_copied_placeholder_is_refused_naming_the_documents_in_view(tmp_path, store, config):
    # 64: the model copied the prompt's example id; here after a search put documents in view
    copied = reply(content=content(64))
    docid = reply(content='<Document id="DOC_ID"><Justification>x</Justification></Document>')
    run = episode(tmp_path, store, config, [SEARCH, copied, docid, FINAL])
    assert run.result.exit_reason is ExitReason.ANSWERED
    first, second = run.refusals()
    assert (first.code, second.code) == ("placeholder_id", "placeholder_id")
    for refusal in (first, second):
        assert "the documents in view are glassworks" in refusal.message
    assert '"DOC_ID"' in second.message


def test_a_placeholder_before_any_search_says_to_search_first(tmp_path, store, config):
    docid = reply(content='<Document id="DOC_ID"><Justification>x</Justification></Document>')
    run = episode(tmp_path, store, config, [docid, SEARCH, FINAL])
    (refusal,) = run.refusals()
    assert refusal.code == "placeholder_id"
    assert "no document has been shown to you yet" in refusal.message
