"""The endpoint client: settings resolution, backoff arithmetic, and retries over real HTTP."""

from __future__ import annotations

import random
import socket
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thresher.config import LLMConfig
from thresher.errors import BackendUnavailableError
from thresher.llm.client import (
    DEFAULT_BASE_URL,
    MAX_WAIT_S,
    ChatClient,
    EndpointRequestError,
    EndpointSettings,
    EndpointUnavailableError,
    backoff_delay,
    parse_retry_after,
)
from thresher.testing.replay_server import ReplayServer, http_error, reply


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


def test_endpoint_down_for_good_is_a_typed_error():
    sleeps: list[float] = []
    client = client_for(f"http://127.0.0.1:{free_port()}/v1", sleeps, model="m", max_retries=2)
    with pytest.raises(EndpointUnavailableError, match="after 3 attempt") as info:
        client.complete([{"role": "user", "content": "x"}], [], {})
    assert isinstance(info.value, BackendUnavailableError) and len(sleeps) == 2
    assert "connection failed" in str(info.value)


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


def test_client_errors_are_not_retried(tmp_path):
    sleeps: list[float] = []
    with ReplayServer([http_error(400, message="context too long")], tmp_path) as server:
        client = client_for(server.base_url, sleeps, model="m")
        with pytest.raises(EndpointRequestError, match="HTTP 400: context too long"):
            client.complete([{"role": "user", "content": "x"}], [], {})
        assert sleeps == [] and len(server.chat_requests()) == 1
