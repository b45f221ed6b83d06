"""The serving commands: registered, refuse an open address without a key, client errors."""

from __future__ import annotations

import subprocess

import pytest

from serve.helpers import thresher_cmd
from thresher.errors import BackendUnavailableError
from thresher.serve.client import ThresherClient

pytestmark = pytest.mark.server  # `thresher serve` and `thresher mcp` as processes


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(thresher_cmd(*args), capture_output=True, text=True, check=False, env=env)


def test_serve_and_mcp_are_listed():
    out = run("--help").stdout
    assert "serve" in out and "mcp" in out
    assert "--max-concurrent" in run("serve", "--help").stdout
    assert "--transport" in run("mcp", "--help").stdout
    assert "view" in run("trace", "--help").stdout


def test_serve_refuses_an_open_address_without_a_key(serve_index, monkeypatch):
    import os

    env = {k: v for k, v in os.environ.items() if k != "THRESHER_API_KEY"}
    done = run("serve", "--index", str(serve_index), "--host", "0.0.0.0", env=env)
    assert done.returncode == 2
    assert "THRESHER_API_KEY" in done.stderr and "--no-key" in done.stderr


def test_serve_fails_before_listening_when_the_index_is_missing(tmp_path):
    done = run("serve", "--index", str(tmp_path / "nothing"))
    assert done.returncode == 3 and "thresher serve: error:" in done.stderr


def test_the_client_says_what_to_do_when_no_server_listens():
    from index.chroma_server import free_port

    client = ThresherClient(f"http://127.0.0.1:{free_port()}", timeout_s=2)
    with pytest.raises(BackendUnavailableError, match="thresher serve --index"):
        client.search("q")
