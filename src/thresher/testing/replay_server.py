"""A replay server: an OpenAI-compatible HTTP endpoint that plays back a scripted list of replies.

It is not a model. It serves ``POST /v1/chat/completions`` by returning the
next scripted entry, whatever was asked, and ``GET /v1/models`` with one
model name; it records every request it receives (headers and JSON body) to a
JSONL log so tests can check exactly what a client sent. It runs as its own
process (stdlib ``http.server``) on 127.0.0.1 at a free port, so clients talk
to it over real HTTP.

A script is a JSON file ``{"model": "replay", "replies": [entry, ...]}``; each
entry is one of:

* ``{"message": {...}, "finish_reason": "stop", "usage": {...}}``: a chat
  completion around that assistant message (see :func:`reply`);
* ``{"completion": {...}}``: a whole response body, served verbatim;
* ``{"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}``: an HTTP error;
* ``{"raw": "text", "status": 200, "content_type": "text/html"}``: a body
  served as is (not JSON, or JSON that is not a chat completion);
* ``{"drop": true}``: the connection is closed without any response;

and any entry may add ``"delay_s": 2.0`` to answer late (a client timeout),
``"count_prompt": true`` to report ``usage.prompt_tokens`` counted on the request
it answers with a vocabulary unlike the client's (:func:`count_prompt`),
or ``"cut": true`` to send the headers and half the body, then close the
connection (a connection dropped mid-response).
A completion entry may also carry vLLM's token fields, served as given whatever
the request asked: ``"prompt_token_ids"`` (the body's), ``"token_ids"`` and
``"logprobs"`` (the choice's: a list of numbers, served as
``logprobs.content[i].logprob``). A script with ``"tokens": true`` answers as vLLM
does when asked: a request with ``return_token_ids`` gets the prompt's and the
reply's ids, one with ``logprobs`` a log-probability per reply token, computed with
a toy tokenizer and a prefix-preserving chat template (:func:`toy_prompt_ids`,
:func:`toy_completion_ids`: the prompt's ids followed by the reply's are the ids of
the prompt with the reply appended, as with a chat template that renders history
as it was generated).
Once the replies run out, every chat request gets HTTP 410 ``replay script
exhausted``. ``GET /v1/models`` lists the script's model, unless the script
has a ``"models_reply"`` entry, which is then served instead (every time).

This module uses the standard library only, so the server process starts in
milliseconds: ``python replay_server.py --script S --log L`` prints
``READY <port>`` when it listens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import selectors
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "ReplayServer",
    "reply",
    "tool_call",
    "http_error",
    "dropped",
    "garbage",
    "delayed",
    "cut_off",
    "count_prompt",
    "toy_ids",
    "toy_prompt_ids",
    "toy_completion_ids",
    "toy_logprobs",
    "main",
]


# -- script builders (pure) -------------------------------------------------------------
def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "") -> dict[str, Any]:
    """One assistant tool call; ``arguments`` as an object (encoded) or a raw string (sent as is)."""
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": encoded}}
    if call_id:
        call["id"] = call_id
    return call


def reply(
    *calls: dict[str, Any],
    content: str | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    prompt_token_ids: list[int] | None = None,
    token_ids: list[int] | None = None,
    logprobs: list[float] | None = None,
) -> dict[str, Any]:
    """A scripted chat completion: tool calls and/or content (ids ``call_<n>`` filled in),
    with vLLM's token fields when given (served whatever the request asked)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": c.get("id") or f"call_{i}", **{k: v for k, v in c.items() if k != "id"}}
            for i, c in enumerate(calls)
        ]
    entry: dict[str, Any] = {
        "message": message,
        "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
    }
    if usage is not None:
        entry["usage"] = usage
    tokens = {"prompt_token_ids": prompt_token_ids, "token_ids": token_ids, "logprobs": logprobs}
    entry.update({k: v for k, v in tokens.items() if v is not None})
    return entry


def http_error(
    status: int, *, retry_after: str | None = None, message: str = "scripted error"
) -> dict[str, Any]:
    """A scripted HTTP error with an OpenAI-style error body."""
    entry: dict[str, Any] = {"status": status, "body": {"error": {"message": message}}}
    if retry_after is not None:
        entry["headers"] = {"Retry-After": retry_after}
    return entry


def dropped() -> dict[str, Any]:
    """A request whose connection is closed without a response."""
    return {"drop": True}


def garbage(
    text: str = "<html>bad gateway</html>", *, content_type: str = "text/plain"
) -> dict[str, Any]:
    """A 200 response whose body is ``text`` as is (by default not JSON)."""
    return {"raw": text, "status": 200, "content_type": content_type}


def delayed(entry: dict[str, Any], seconds: float) -> dict[str, Any]:
    """``entry`` answered after ``seconds`` (past a client's timeout, it is a timeout)."""
    return {**entry, "delay_s": seconds}


def cut_off(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with its connection closed halfway through the body."""
    return {**entry, "cut": True}


#: a toy vocabulary: each run of up to 6 letters, each digit, each other visible character
_TOY_TOKEN = re.compile(r"[A-Za-z]{1,6}|[^\sA-Za-z]")


def count_prompt(body: Any) -> int:
    """Prompt tokens of a chat request as a server with another vocabulary and a
    ChatML-like template would count them: 5 per message, 13 per tool call, 57 for
    the tools preamble, 3 for the generation prompt, and the texts by
    :data:`_TOY_TOKEN` (digits one by one, punctuation one by one: unlike OpenAI's
    vocabularies, by a ratio that differs between prose, ids and JSON)."""
    if not isinstance(body, dict):
        return 0

    def toks(text: Any) -> int:
        return len(_TOY_TOKEN.findall(text if isinstance(text, str) else json.dumps(text)))

    n = 3
    for m in body.get("messages") or []:
        n += 5 + toks(m.get("content") or "")
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            n += 13 + toks(fn.get("name") or "") + toks(fn.get("arguments") or "")
    if body.get("tools"):
        n += 57 + toks(json.dumps(body["tools"]))
    return n


#: the toy chat template's special tokens (a toy text token's id is at least 100)
_START, _END, _CALL, _TOOLS = 1, 2, 3, 4
_ROLES = {"system": 10, "user": 11, "assistant": 12, "tool": 13}


def toy_ids(text: Any) -> list[int]:
    """``text`` (a string, or anything as JSON) in the toy vocabulary of
    :func:`count_prompt`: one id per toy token, from its CRC-32."""
    words = _TOY_TOKEN.findall(text if isinstance(text, str) else json.dumps(text))
    return [100 + zlib.crc32(w.encode("utf-8")) % 50_000 for w in words]


def _call_ids(call: Any) -> list[int]:
    fn = call.get("function") if isinstance(call, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    arguments = str(fn.get("arguments") or "")
    # the arguments as the JSON they decode to, however they were spaced (not JSON: as sent)
    with contextlib.suppress(TypeError, ValueError, RecursionError):
        arguments = json.dumps(json.loads(arguments), sort_keys=True)
    return [_CALL, *toy_ids(fn.get("name") or ""), *toy_ids(arguments)]


def _message_body_ids(message: Any) -> list[int]:
    """A message's text and tool calls, then the end token (its ids after its role)."""
    if not isinstance(message, dict):
        return [*toy_ids(message), _END]
    ids = toy_ids(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        ids += _call_ids(call)
    return [*ids, _END]


def toy_prompt_ids(request: Any) -> list[int]:
    """The prompt ids of a chat request under the toy template: the tools' preamble, each
    message as start, role, text and calls, end; then the generation prompt (start,
    ``assistant``)."""
    body = request if isinstance(request, dict) else {}
    ids: list[int] = []
    if body.get("tools"):
        ids += [_TOOLS, *toy_ids(json.dumps(body["tools"], sort_keys=True)), _END]
    for message in body.get("messages") or []:
        role = message.get("role") if isinstance(message, dict) else "user"
        ids += [_START, _ROLES.get(str(role), 14), *_message_body_ids(message)]
    return [*ids, _START, _ROLES["assistant"]]


def toy_completion_ids(message: Any) -> list[int]:
    """The ids of a generated reply under the toy template: what follows the generation
    prompt when the reply is rendered as history (its text, calls and end)."""
    return _message_body_ids(message)


def toy_logprobs(ids: Sequence[int]) -> list[float]:
    """A log-probability per id, fixed by the id and its position."""
    return [-round(((t * 7 + i) % 50) / 10 + 0.01, 4) for i, t in enumerate(ids)]


def _with_tokens(body: dict[str, Any], entry: dict[str, Any], request: Any, toy: bool) -> None:
    """Put vLLM's token fields into the completion ``body``: the entry's own, else (a
    ``tokens`` script) the toy ones the request asked for."""
    asked = request if isinstance(request, dict) else {}
    ask_ids, ask_logprobs = toy and asked.get("return_token_ids"), toy and asked.get("logprobs")
    choice = body["choices"][0]
    generated = toy_completion_ids(choice["message"]) if ask_ids or ask_logprobs else []
    prompt = entry.get("prompt_token_ids", toy_prompt_ids(request) if ask_ids else None)
    ids = entry.get("token_ids", generated if ask_ids else None)
    logprobs = entry.get("logprobs", toy_logprobs(generated) if ask_logprobs else None)
    if prompt is not None:
        body["prompt_token_ids"] = prompt
    if ids is not None:
        choice["token_ids"] = ids
    if logprobs is not None:
        tokens = ids if ids is not None and len(ids) == len(logprobs) else [0] * len(logprobs)
        choice["logprobs"] = {
            "content": [
                {"token": f"token_id:{t}", "logprob": lp, "bytes": None, "top_logprobs": []}
                for t, lp in zip(tokens, logprobs, strict=True)
            ]
        }


# -- the server process -----------------------------------------------------------------
def _completion(
    entry: dict[str, Any], n: int, model: str, request: Any = None, toy: bool = False
) -> Any:
    """The JSON served for a completion entry: verbatim, or built around its message (with
    its token fields, or the toy ones a ``tokens`` script serves)."""
    if "completion" in entry:
        if entry.get("count_prompt") and isinstance(entry["completion"], dict):
            verbatim = entry["completion"]
            usage = {**(verbatim.get("usage") or {}), "prompt_tokens": count_prompt(request)}
            return {**verbatim, "usage": usage}
        return entry["completion"]
    body: dict[str, Any] = {
        "id": f"replay-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": entry["message"],
                "finish_reason": entry.get("finish_reason", "stop"),
            }
        ],
    }
    if "usage" in entry:
        body["usage"] = entry["usage"]
    if entry.get("count_prompt"):
        body["usage"] = {**(body.get("usage") or {}), "prompt_tokens": count_prompt(request)}
    _with_tokens(body, entry, request, toy)
    return body


def _make_handler(script: dict[str, Any], log_path: Path) -> type[BaseHTTPRequestHandler]:
    replies: list[dict[str, Any]] = list(script.get("replies") or [])
    model = str(script.get("model") or "replay")
    models_reply: dict[str, Any] | None = script.get("models_reply")
    toy = bool(script.get("tokens"))
    lock = threading.Lock()
    counter = {"next": 0, "seen": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            return

        def _record(self, body: Any, entry_index: int | None) -> None:
            with lock:
                record = {
                    "n": counter["seen"],
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                    "entry": entry_index,
                }
                counter["seen"] += 1
                with log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")

        def _send(
            self,
            status: int,
            body: bytes,
            ctype: str,
            headers: dict[str, str],
            *,
            cut: bool = False,
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if cut else body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                self.close_connection = True
            if cut:
                self.close_connection = True

        def _json(
            self,
            status: int,
            data: Any,
            headers: dict[str, str] | None = None,
            *,
            cut: bool = False,
        ) -> None:
            body = json.dumps(data).encode()
            self._send(status, body, "application/json", headers or {}, cut=cut)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            self._record(None, None)
            if not self.path.rstrip("/").endswith("/models"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
            elif models_reply is not None:
                self._serve(models_reply, -1)
            else:
                data = [{"id": model, "object": "model", "owned_by": "replay-server"}]
                self._json(200, {"object": "list", "data": data})

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("Content-Length") or 0)
            text = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body: Any = json.loads(text)
            except ValueError:
                body = text
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._record(body, None)
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            with lock:
                index = counter["next"]
                counter["next"] += 1
            self._record(body, index if index < len(replies) else None)
            if index >= len(replies):
                message = f"replay script exhausted after {len(replies)} replies"
                self._json(410, {"error": {"message": message, "type": "replay_exhausted"}})
                return
            self._serve(replies[index], index, body)

        def _serve(self, entry: dict[str, Any], index: int, request: Any = None) -> None:
            """Answer with one scripted entry (see the module docstring)."""
            if entry.get("delay_s"):
                time.sleep(float(entry["delay_s"]))
            if entry.get("drop"):
                self.close_connection = True
                return
            headers = {str(k): str(v) for k, v in (entry.get("headers") or {}).items()}
            status = int(entry.get("status", 200))
            cut = bool(entry.get("cut"))
            if "raw" in entry:
                ctype = str(entry.get("content_type") or "text/plain")
                self._send(status, str(entry["raw"]).encode(), ctype, headers, cut=cut)
            elif status != 200:
                error = entry.get("body") or {"error": {"message": "error"}}
                self._json(status, error, headers, cut=cut)
            else:
                completion = _completion(entry, index, model, request, toy)
                self._json(200, completion, headers, cut=cut)

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """Run the replay server until killed; prints ``READY <port>`` once listening."""
    parser = argparse.ArgumentParser(description="replay scripted chat completions over HTTP")
    parser.add_argument("--script", required=True, help="the script JSON file")
    parser.add_argument("--log", required=True, help="append received requests here (JSONL)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    args = parser.parse_args(argv)
    script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    server = ThreadingHTTPServer((args.host, args.port), _make_handler(script, Path(args.log)))
    server.daemon_threads = True
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


# -- the parent side --------------------------------------------------------------------
class ReplayServer:
    """Start a replay server process and read what it received.

    Args:
        replies: the scripted entries, in order (see the module docstring).
        workdir: where the script and request log are written.
        model: the model name ``/v1/models`` lists.
        models_reply: an entry served for ``GET /v1/models`` instead of the listing.
        tokens: answer as vLLM does when asked for token ids and log-probabilities
            (toy ids: see the module docstring).

    Use as a context manager; ``base_url`` is ``http://127.0.0.1:<port>/v1``.
    """

    def __init__(
        self,
        replies: Sequence[dict[str, Any]],
        workdir: str | Path,
        *,
        model: str = "replay",
        models_reply: dict[str, Any] | None = None,
        tokens: bool = False,
    ) -> None:
        self.workdir = Path(workdir)
        self.script_path = self.workdir / "replay-script.json"
        self.log_path = self.workdir / "replay-requests.jsonl"
        self.replies = [dict(r) for r in replies]
        self.model = model
        self.models_reply = models_reply
        self.tokens = tokens
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 20.0) -> ReplayServer:
        """Spawn the process and wait until it listens. Raises ``RuntimeError`` if it does not."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        script: dict[str, Any] = {"model": self.model, "replies": self.replies}
        if self.models_reply is not None:
            script["models_reply"] = self.models_reply
        if self.tokens:
            script["tokens"] = True
        self.script_path.write_text(json.dumps(script), encoding="utf-8")
        self.log_path.write_text("", encoding="utf-8")
        cmd = [sys.executable, os.path.abspath(__file__)]
        cmd += ["--script", str(self.script_path), "--log", str(self.log_path)]
        self._proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self._proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            line = self._proc.stdout.readline() if sel.select(timeout_s) else ""
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"replay server did not start (got {line!r}); see {self.workdir}")
        self.port = int(line.split()[1])
        return self

    def requests(self) -> list[dict[str, Any]]:
        """Every request received so far, in arrival order."""
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def chat_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat completion requests, in arrival order."""
        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and r["path"].rstrip("/").endswith("/chat/completions")
        ]

    def stop(self) -> None:
        """Terminate the server process (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> ReplayServer:
        return self.start() if self._proc is None else self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


if __name__ == "__main__":
    sys.exit(main())
