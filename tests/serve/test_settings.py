"""Serve settings: what a request may choose and tighten, and nothing more."""

from __future__ import annotations

import pytest

from thresher.config import Config
from thresher.errors import ConfigError, InputError
from thresher.serve.settings import (
    ServeSettings,
    UnknownCollection,
    collection_name_for,
    is_loopback,
    request_config,
)


def test_requests_may_tighten_but_not_loosen_or_reach_outside_their_sections():
    base = Config()
    tight = request_config(base, {"budget": {"total": 8192}, "episode.max_turns": 4})
    assert tight.budget.total == 8192 and tight.episode.max_turns == 4
    assert request_config(base, {"retrieval.mode": "bm25"}).retrieval.mode == "bm25"
    with pytest.raises(InputError, match="over this server's limit of 300"):
        request_config(base, {"episode.wall_time_s": 3000})
    for key in ("llm.base_url", "llm.api_key_env", "retrieval.embedder", "chunking.max_tokens"):
        with pytest.raises(InputError, match="may not set"):
            request_config(base, {key: "x"})
    with pytest.raises(ConfigError):
        request_config(base, {"episode.max_turnz": 1})


def test_policies_and_collections_a_request_may_name():
    s = ServeSettings({"main": "idx", "law": "http://127.0.0.1:8000/law"}, policies=("bm25",))
    assert s.choose_policy(None) == "local" and s.choose_policy("bm25") == "bm25"
    with pytest.raises(InputError, match="choose one of local, bm25"):
        s.choose_policy("os:system")
    assert s.choose_collection(None) == ("main", "idx")
    assert s.choose_collection("law")[1].endswith("/law")
    with pytest.raises(UnknownCollection, match="served: main, law"):
        s.choose_collection("other")


def test_settings_are_checked():
    with pytest.raises(ConfigError, match="needs an index"):
        ServeSettings({})
    with pytest.raises(ConfigError, match="collection name"):
        ServeSettings({"../x": "idx"})
    with pytest.raises(ConfigError, match="max_concurrent"):
        ServeSettings({"a": "idx"}, max_concurrent=0)
    with pytest.raises(ConfigError, match="max_connections_per_client"):
        ServeSettings({"a": "idx"}, max_connections_per_client=0)
    for label in ("header_timeout_s", "idle_timeout_s"):
        with pytest.raises(ConfigError, match=label):
            ServeSettings({"a": "idx"}, **{label: 0})


def test_connection_flags_reach_the_settings():
    import argparse

    from thresher.cli.serve_cmd import add_serving_args, settings_from_args

    parser = argparse.ArgumentParser()
    add_serving_args(parser)
    flags = ["--index", "idx", "--header-timeout", "2.5", "--idle-timeout", "3"]
    settings = settings_from_args(parser.parse_args([*flags, "--max-connections-per-client", "7"]))
    assert settings.header_timeout_s == 2.5 and settings.idle_timeout_s == 3.0
    assert settings.max_connections_per_client == 7
    defaults = settings_from_args(parser.parse_args(["--index", "idx"]))
    assert (defaults.header_timeout_s, defaults.idle_timeout_s) == (5.0, 5.0)
    assert defaults.max_connections_per_client < defaults.max_connections


def test_loopback_and_collection_names():
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.8.0.1"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "10.0.0.1", "example.org", "::"))
    assert collection_name_for("/data/idx/") == "idx"
    assert collection_name_for("http://127.0.0.1:8000/chunks") == "chunks"
