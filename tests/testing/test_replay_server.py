"""The replay server: a real HTTP process that plays back scripted replies and logs requests."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request

import pytest

from thresher.testing.replay_server import (
    ReplayServer,
    cut_off,
    delayed,
    dropped,
    garbage,
    http_error,
    reply,
    tool_call,
)

pytestmark = pytest.mark.server  # the LLM replay server, a process on loopback


def post(url: str, data: dict, timeout: float = 5.0) -> tuple[int, dict, str]:
    request = urllib.request.Request(
        url, json.dumps(data).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def test_plays_back_in_order_and_records_requests(tmp_path):
    script = [
        reply(tool_call("search_corpus", {"query": "q"}), usage={"prompt_tokens": 7}),
        http_error(429, retry_after="3"),
        garbage("not json"),
    ]
    with ReplayServer(script, tmp_path, model="replay-x") as server:
        url = server.base_url + "/chat/completions"
        with urllib.request.urlopen(server.base_url + "/models", timeout=5) as r:
            assert json.loads(r.read())["data"][0]["id"] == "replay-x"
        status, _, text = post(url, {"messages": [{"role": "user", "content": "one"}]})
        completion = json.loads(text)
        assert status == 200 and completion["usage"] == {"prompt_tokens": 7}
        call = completion["choices"][0]["message"]["tool_calls"][0]
        assert call["id"] == "call_0" and json.loads(call["function"]["arguments"]) == {
            "query": "q"
        }
        assert completion["choices"][0]["finish_reason"] == "tool_calls"
        status, headers, _ = post(url, {"messages": [{"role": "user", "content": "two"}]})
        assert status == 429 and headers["Retry-After"] == "3"
        assert post(url, {"n": 3})[2] == "not json"
        status, _, text = post(url, {"n": 4})
        assert status == 410 and "exhausted after 3 replies" in text
        bodies = server.chat_requests()
        assert [b.get("messages", [{}])[0].get("content") for b in bodies[:2]] == ["one", "two"]
        assert [r["entry"] for r in server.requests()] == [None, 0, 1, 2, None]
    assert server._proc is None  # stopped on exit


def test_drop_and_delay(tmp_path):
    with ReplayServer(
        [dropped(), delayed(reply(content="late"), 1.0), reply(content="ok")], tmp_path
    ) as s:
        url = s.base_url + "/chat/completions"
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            post(url, {})
        with pytest.raises(TimeoutError):
            post(url, {}, timeout=0.2)
        status, _, text = post(url, {})
        assert status == 200 and json.loads(text)["choices"][0]["message"]["content"] == "ok"


def test_content_type_cut_off_and_models_reply(tmp_path):
    page = garbage("<html>sign in</html>", content_type="text/html")
    script = [page, cut_off(reply(content="x" * 200)), reply(content="ok")]
    with ReplayServer(script, tmp_path, models_reply=page) as s:
        url = s.base_url + "/chat/completions"
        status, headers, text = post(url, {})
        assert (status, headers["Content-Type"], text) == (200, "text/html", "<html>sign in</html>")
        # half the body arrives, then the connection closes: a short read, not a response
        with pytest.raises(http.client.IncompleteRead):
            post(url, {})
        assert json.loads(post(url, {})[2])["choices"][0]["message"]["content"] == "ok"
        with urllib.request.urlopen(s.base_url + "/models", timeout=5) as r:
            assert r.headers["Content-Type"] == "text/html" and r.read() == b"<html>sign in</html>"
        assert [r["entry"] for r in s.requests()] == [0, 1, 2, None]


def test_a_tokens_script_answers_as_vllm_when_asked(tmp_path):
    from thresher.testing.replay_server import (
        toy_completion_ids,
        toy_logprobs,
        toy_prompt_ids,
    )

    first = reply(tool_call("search_corpus", {"query": "q"}))
    entries = [first, first, reply(content="x", prompt_token_ids=[4], token_ids=[5])]
    messages = [{"role": "user", "content": "one"}]
    with ReplayServer(entries, tmp_path, tokens=True) as server:
        url = server.base_url + "/chat/completions"
        asked = {"messages": messages, "return_token_ids": True, "logprobs": True}
        body = json.loads(post(url, asked)[2])
        plain = json.loads(post(url, {"messages": messages})[2])
        unasked = json.loads(post(url, {"messages": messages})[2])
    choice = body["choices"][0]
    assert body["prompt_token_ids"] == toy_prompt_ids(asked)
    assert choice["token_ids"] == toy_completion_ids(first["message"])
    assert [c["logprob"] for c in choice["logprobs"]["content"]] == toy_logprobs(
        choice["token_ids"]
    )
    assert "prompt_token_ids" not in plain and "token_ids" not in plain["choices"][0]
    # an entry's own ids are served whatever was asked
    assert unasked["prompt_token_ids"] == [4] and unasked["choices"][0]["token_ids"] == [5]
    # the toy template preserves prefixes: the prompt's ids, then the reply's, begin the
    # ids of the prompt with the reply appended
    grown = {"messages": [*messages, first["message"], {"role": "tool", "content": "r"}]}
    extended = body["prompt_token_ids"] + choice["token_ids"]
    assert toy_prompt_ids(grown)[: len(extended)] == extended
