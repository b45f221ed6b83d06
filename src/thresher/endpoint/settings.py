"""Where an OpenAI-compatible endpoint is and how long to wait for it.

The API key is read from the config or the environment and kept out of every
repr, log line and trace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from thresher.config import LLMConfig, check_url

__all__ = ["DEFAULT_BASE_URL", "OPENAI_BASE_URL", "PLACEHOLDER_KEY", "EndpointSettings"]

#: the LLM endpoint when none is configured (a local vLLM)
DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: the embedding endpoint when none is configured
OPENAI_BASE_URL = "https://api.openai.com/v1"
#: sent when no key is configured (vLLM and Ollama ignore it; the client needs one)
PLACEHOLDER_KEY = "not-needed"


@dataclass(frozen=True)
class EndpointSettings:
    """Where and how to reach the endpoint. ``api_key`` never appears in a repr.

    Attributes:
        base_url: the ``/v1`` root of the server.
        model: the model name ('' until discovered from ``/v1/models``).
        api_key: the key sent as a bearer token (excluded from repr).
        api_key_source: the environment variable it came from ('' when none was set).
        timeout_s: per request.
        max_retries: retries of a transient failure (429, 5xx, timeouts, dropped connections).
        backoff_s: the first wait between attempts (doubled each time, with jitter).
    """

    base_url: str
    model: str
    api_key: str = field(repr=False)
    api_key_source: str
    timeout_s: float
    max_retries: int
    backoff_s: float

    @classmethod
    def resolve(cls, config: LLMConfig, env: Mapping[str, str] | None = None) -> EndpointSettings:
        """The LLM endpoint: settings from ``config``, falling back to the environment.

        base_url: ``config.base_url``, ``THRESHER_LLM_BASE_URL``, ``OPENAI_BASE_URL``,
        then :data:`DEFAULT_BASE_URL`. model: ``config.model``, ``THRESHER_LLM_MODEL``,
        else '' (discovered later). key: ``$<config.api_key_env>``, ``OPENAI_API_KEY``,
        else a placeholder for keyless local servers.

        Raises:
            ConfigError: the chosen base URL is not an ``http(s)://`` URL with a host.
        """
        env = os.environ if env is None else env
        base_url, label = DEFAULT_BASE_URL, "the default"
        for label, value in (
            ("setting llm.base_url", config.base_url),
            ("THRESHER_LLM_BASE_URL", env.get("THRESHER_LLM_BASE_URL", "")),
            ("OPENAI_BASE_URL", env.get("OPENAI_BASE_URL", "")),
        ):
            if value:
                base_url = check_url(value, label)
                break
        model = config.model or env.get("THRESHER_LLM_MODEL", "")
        key, source = PLACEHOLDER_KEY, ""
        for name in (config.api_key_env, "OPENAI_API_KEY"):
            if name and env.get(name):
                key, source = env[name], name
                break
        return cls(
            base_url=base_url.rstrip("/"),
            model=model,
            api_key=key,
            api_key_source=source,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            backoff_s=config.backoff_s,
        )

    @classmethod
    def openai_env(
        cls,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None,
    ) -> EndpointSettings:
        """An endpoint named as the ``openai`` tools name one (the embeddings' endpoint).

        base_url: given, else ``OPENAI_BASE_URL``, else :data:`OPENAI_BASE_URL`. key:
        given (``""``: none), else ``OPENAI_API_KEY``; with none, a placeholder is sent
        (keyless local servers ignore it). Retries as ``LLMConfig``'s defaults.
        """
        env = os.environ if env is None else env
        if base_url:
            base = check_url(base_url, "the endpoint's base URL")
        elif env.get("OPENAI_BASE_URL"):
            base = check_url(env["OPENAI_BASE_URL"], "OPENAI_BASE_URL")
        else:
            base = OPENAI_BASE_URL
        if api_key is not None:
            key, source = api_key, ""
        else:
            key = env.get("OPENAI_API_KEY", "")
            source = "OPENAI_API_KEY" if key else ""
        defaults = LLMConfig()
        return cls(
            base_url=base.rstrip("/"),
            model=model,
            api_key=key or PLACEHOLDER_KEY,
            api_key_source=source,
            timeout_s=timeout_s,
            max_retries=defaults.max_retries,
            backoff_s=defaults.backoff_s,
        )
