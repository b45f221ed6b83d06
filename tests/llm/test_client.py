"""The endpoint client: settings resolution, backoff arithmetic, and retries over real HTTP.

What is retried (429/5xx, timeouts, dropped connections) and what fails at
once (refused connections, bodies that are not a chat completion, other 4xx)
is checked against a real server process, or a port nobody listens on.
"""

from __future__ import annotations

import json
import random
import socket
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thresher.config import LLMConfig
from thresher.endpoint.client import (
    EndpointRequestError,
    EndpointResponseError,
    EndpointTimeoutError,
    EndpointUnavailableError,
)
from thresher.endpoint.retry import MAX_WAIT_S, backoff_delay, no_connection, parse_retry_after
from thresher.endpoint.settings import DEFAULT_BASE_URL, EndpointSettings
from thresher.errors import BackendUnavailableError
from thresher.llm.client import ChatClient
from thresher.testing.replay_server import (
    ReplayServer,
    cut_off,
    delayed,
    dropped,
    garbage,
    http_error,
    reply,
)


def test_settings_precedence_config_then_env_then_default():
    env = {"THRESHER_LLM_BASE_URL": "http://a/v1/", "OPENAI_BASE_URL": "http://b/v1"}
    assert EndpointSettings.resolve(LLMConfig(), env).base_url == "http://a/v1"
    assert EndpointSettings.resolve(LLMConfig(), {"OPENAI_BASE_URL": "http://b/v1"}).base_url == (
        "http://b/v1"
    )
    assert EndpointSettings.resolve(LLMConfig(), {}).base_url == DEFAULT_BASE_URL
    s = EndpointSettings.resolve(LLMConfig(base_url="http://c/v1", model="m"), env)
    assert (s.base_url, s.model) == ("http://c/v1", "m")
    assert (
        EndpointSettings.resolve(LLMConfig(), {"THRESHER_LLM_MODEL": "gpt-oss"}).model == "gpt-oss"
    )


def test_key_from_the_named_variable_never_in_repr():
    env = {"MY_KEY": "sk-secret-1", "OPENAI_API_KEY": "sk-secret-2"}
    s = EndpointSettings.resolve(LLMConfig(api_key_env="MY_KEY"), env)
    assert s.api_key == "sk-secret-1" and s.api_key_source == "MY_KEY"
    assert "sk-secret" not in repr(s)
    fallback = EndpointSettings.resolve(LLMConfig(), {"OPENAI_API_KEY": "sk-secret-2"})
    assert fallback.api_key_source == "OPENAI_API_KEY"
    keyless = EndpointSettings.resolve(LLMConfig(), {})
    assert keyless.api_key and keyless.api_key_source == ""


def test_retry_after_forms():
    assert parse_retry_after("3") == 3.0 and parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = 1_700_000_000.0
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)


@given(
    attempt=st.integers(0, 12),
    base=st.floats(0, 10),
    retry_after=st.none() | st.floats(0, 500),
    seed=st.integers(0, 2**32 - 1),
)
def test_backoff_bounds(attempt, base, retry_after, seed):
    wait = backoff_delay(attempt, base, retry_after, random.Random(seed))
    assert 0 <= wait <= MAX_WAIT_S
    assert wait >= min(MAX_WAIT_S, retry_after or 0.0)
    assert wait >= min(MAX_WAIT_S, base * 2**attempt * 0.5) - 1e-9


def client_for(url: str, sleeps: list[float], **kw) -> ChatClient:
    config = LLMConfig(base_url=url, model=kw.pop("model", ""), **kw)
    return ChatClient(EndpointSettings.resolve(config, {}), sleep=sleeps.append)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NO_SERVER_FIX = (
    "start the model server (see docs/serving.md) or set llm.base_url / THRESHER_LLM_BASE_URL"
)


@pytest.mark.parametrize("model", ["m", ""])  # "": the /v1/models discovery fails fast too
def test_refused_connection_fails_at_once_with_the_fix(model):
    sleeps: list[float] = []
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = client_for(url, sleeps, model=model, max_retries=4)
    with pytest.raises(EndpointUnavailableError) as info:
        client.complete([{"role": "user", "content": "x"}], [], {})
    assert isinstance(info.value, BackendUnavailableError)
    assert str(info.value).startswith(f"no server at {url}: {NO_SERVER_FIX}")
    assert "connection refused" in str(info.value)
    assert sleeps == []  # one attempt, no retry


def test_unknown_host_counts_as_no_server():
    # the chain openai raises: APIConnectionError <- transport ConnectError <- socket error
    def chained(root: BaseException) -> Exception:
        try:
            try:
                raise root
            except OSError as exc:
                raise ConnectionError("transport: connect failed") from exc
        except ConnectionError as exc:
            return exc

    assert no_connection(chained(socket.gaierror(-2, "Name or service not known")))
    assert no_connection(chained(ConnectionRefusedError(111, "refused"))) == "connection refused"
    assert no_connection(chained(ConnectionResetError(104, "reset"))) is None


TRANSIENT = {
    "HTTP 503": http_error(503),
    "timeout": delayed(reply(content="late"), 2.0),
    "dropped before the response": dropped(),
    "dropped mid-response": cut_off(reply(content="half")),
}


@pytest.mark.parametrize("kind", list(TRANSIENT))
@pytest.mark.server
def test_transient_failures_are_still_retried(kind, tmp_path):
    sleeps: list[float] = []
    # only the delayed reply meets a short timeout: the others' replies may be slow under load
    timeout_s = 0.5 if kind == "timeout" else 30.0
    with ReplayServer([TRANSIENT[kind], reply(content="ok")], tmp_path) as server:
        client = client_for(server.base_url, sleeps, model="m", timeout_s=timeout_s, backoff_s=0.01)
        response = client.complete([{"role": "user", "content": "x"}], [], {})
        assert len(server.chat_requests()) == 2
    assert response.body["choices"][0]["message"]["content"] == "ok"
    assert response.attempts == 2 and len(response.retries) == len(sleeps) == 1


NOT_A_COMPLETION = {
    "HTML page": (
        garbage("<!DOCTYPE html><html><title>Open WebUI</title></html>", content_type="text/html"),
        "text/html",
        "not JSON",
    ),
    "JSON without choices": (
        garbage('{"status": "ok", "version": "1.2"}', content_type="application/json"),
        "application/json",
        "no choices",
    ),
    "choice without a message": (
        {"completion": {"choices": [{"index": 0, "text": "legacy completion"}]}},
        "application/json",
        "no message",
    ),
    "JSON that is not an object": (garbage("[1, 2, 3]"), "text/plain", "not a JSON object"),
    "garbage": (garbage("\x00\x01 ok?" * 40), "text/plain", "not JSON"),
}


@pytest.mark.parametrize("kind", list(NOT_A_COMPLETION))
@pytest.mark.server
def test_a_body_that_is_not_a_completion_is_named_and_not_retried(kind, tmp_path):
    entry, ctype, problem = NOT_A_COMPLETION[kind]
    sleeps: list[float] = []
    with ReplayServer([entry, reply(content="never reached")], tmp_path) as server:
        client = client_for(server.base_url, sleeps, model="m", max_retries=4)
        with pytest.raises(EndpointResponseError) as info:
            client.complete([{"role": "user", "content": "x"}], [], {})
        assert len(server.chat_requests()) == 1 and sleeps == []
    message = str(info.value)
    assert isinstance(info.value, EndpointUnavailableError)  # the episode: endpoint_unavailable
    assert f"{server.base_url} answered with something that is not a chat completion" in message
    assert problem in message and "HTTP 200" in message and f"content-type {ctype}" in message
    assert "the /v1 root of an OpenAI-compatible server" in message and "llm.base_url" in message
    sent = entry.get("raw") or json.dumps(entry.get("completion"))
    head = " ".join(sent.split())
    assert f"body {head[:100]!r}" in message  # the first 100 characters, quoted
    assert len(head) <= 100 or head[:101] not in message


@pytest.mark.server
def test_a_models_listing_that_is_not_json_is_named(tmp_path):
    # base_url at a web UI's root: /models answers its HTML page with 200
    page = garbage("<html><body>Sign in</body></html>", content_type="text/html")
    sleeps: list[float] = []
    with ReplayServer([], tmp_path, models_reply=page) as server:
        client = client_for(server.base_url, sleeps)
        with pytest.raises(EndpointResponseError, match="not a model list") as info:
            client.complete([{"role": "user", "content": "x"}], [], {})
        assert len(server.requests()) == 1 and sleeps == []
    assert "content-type text/html" in str(info.value) and "Sign in" in str(info.value)


@pytest.mark.server
def test_retry_after_is_honored_and_counted(tmp_path):
    sleeps: list[float] = []
    script = [http_error(429, retry_after="7"), http_error(503), reply(content="hi")]
    with ReplayServer(script, tmp_path) as server:
        client = client_for(server.base_url, sleeps, backoff_s=0.01)
        response = client.complete([{"role": "user", "content": "x"}], [], {"temperature": 0.5})
        assert response.attempts == 3 and [r.reason for r in response.retries] == [
            "HTTP 429",
            "HTTP 503",
        ]
        assert sleeps[0] == 7.0 and sleeps[1] < 1.0
        assert client.model() == "replay"  # discovered from /v1/models, once
        bodies = server.chat_requests()
        assert len(bodies) == 3 and all(b["model"] == "replay" for b in bodies)
        assert bodies[0]["temperature"] == 0.5 and "tools" not in bodies[0]


@pytest.mark.server
def test_client_errors_are_not_retried(tmp_path):
    sleeps: list[float] = []
    with ReplayServer([http_error(400, message="context too long")], tmp_path) as server:
        client = client_for(server.base_url, sleeps, model="m")
        with pytest.raises(EndpointRequestError, match="HTTP 400: context too long"):
            client.complete([{"role": "user", "content": "x"}], [], {})
        assert sleeps == [] and len(server.chat_requests()) == 1


@pytest.mark.server
def test_timeouts_on_a_live_server_name_llm_timeout_s(tmp_path):
    # the server is up and slow: the advice is llm.timeout_s, not "start the server"
    late = delayed(reply(content="late"), 2.0)
    with ReplayServer([late, late], tmp_path) as server:
        client = client_for(
            server.base_url, [], model="m", timeout_s=0.3, backoff_s=0.01, max_retries=1
        )
        with pytest.raises(EndpointTimeoutError) as info:
            client.complete([{"role": "user", "content": "x"}], [], {})
    message = str(info.value)
    assert "llm.timeout_s=0.3" in message and "start the server" not in message
    assert isinstance(info.value, EndpointUnavailableError)
