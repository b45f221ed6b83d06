"""A small OpenAI-compatible chat server over a local checkpoint: transformers ``generate``.

``python rl/chat_server.py --model DIR [--port 0] [--device cpu]`` loads a causal LM and its
tokenizer from ``DIR`` (``save_pretrained`` output; nothing from a hub) and answers

- ``GET /v1/models``: the one model, named ``--name`` (default: the folder's name);
- ``POST /v1/chat/completions``: the request's ``messages`` and ``tools`` rendered with the
  tokenizer's chat template (generation prompt added), ``max_tokens`` new tokens sampled at
  ``temperature`` (greedy at 0), the reply parsed back with TRL's ``parse_response`` (the
  tokenizer's ``response_template``) into ``content`` and OpenAI-shaped ``tool_calls``
  (arguments as JSON text, ids ``call_<n>``), with ``finish_reason`` (``tool_calls``, ``stop``
  or ``length``) and ``usage`` (prompt and completion token counts). ``tool_choice`` and
  ``response_format`` are accepted and not enforced: decoding is never constrained.

It is how ``bench/bench_rl.py`` puts a checkpoint behind thresher's LLM policy, so ``thresher
eval`` reaches it over real HTTP. One request generates at a time. It prints
``listening on http://127.0.0.1:PORT`` once ready, and stops on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from tiny import CHAT_TEMPLATE, RESPONSE_TEMPLATE  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from trl.chat_template_utils import parse_response  # noqa: E402


class ChatModel:
    """A checkpoint, its tokenizer, and one chat completion at a time.

    Args:
        path: a folder holding ``save_pretrained`` output of a causal LM and its tokenizer.
        device: ``cpu`` or ``cuda``.
        name: the model name served.
        seed: seeds sampling (each request draws from one generator, in order).
    """

    def __init__(self, path: str, device: str = "cpu", name: str = "", seed: int = 0) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        missing = getattr(self.tokenizer, "response_template", None) is None
        if missing and self.tokenizer.chat_template == CHAT_TEMPLATE:
            self.tokenizer.response_template = RESPONSE_TEMPLATE
        self.model = AutoModelForCausalLM.from_pretrained(path).to(device).eval()
        self.device = device
        self.name = name or Path(path).name
        self.lock = threading.Lock()
        torch.manual_seed(seed)

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One ``/v1/chat/completions`` answer for the request ``body``."""
        messages = body["messages"]
        tools = body.get("tools") or None
        prompt_ids = self.tokenizer.apply_chat_template(
            messages, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        max_new = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
        temperature = float(body.get("temperature", 1.0))
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": temperature, "top_k": 0}
            if temperature > 0
            else {"do_sample": False}
        )
        with self.lock, torch.no_grad():
            out = self.model.generate(
                torch.tensor([prompt_ids], device=self.device),
                attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long, device=self.device),
                max_new_tokens=max_new,
                eos_token_id=self.tokenizer.eos_token_id,
                pad_token_id=self.tokenizer.pad_token_id,
                **sampling,
            )
        ids = out[0, len(prompt_ids) :].tolist()
        ended = bool(ids) and ids[-1] == self.tokenizer.eos_token_id
        parsed = parse_response(self.tokenizer, ids, prefix=list(prompt_ids)) if ids else {}
        calls = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": json.dumps(c["function"].get("arguments") or {}),
                },
            }
            for i, c in enumerate(parsed.get("tool_calls") or [])
        ]
        message: dict[str, Any] = {"role": "assistant", "content": parsed.get("content") or ""}
        if calls:
            message["tool_calls"] = calls
        finish = "length" if not ended else "tool_calls" if calls else "stop"
        return {
            "id": f"chatcmpl-{time.time_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": len(prompt_ids),
                "completion_tokens": len(ids),
                "total_tokens": len(prompt_ids) + len(ids),
            },
        }


def make_handler(chat: ChatModel) -> type[BaseHTTPRequestHandler]:
    """The request handler serving ``chat``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": chat.name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as exc:
                self._send(400, {"error": {"message": f"request body is not JSON: {exc}"}})
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                self._send(200, chat.complete(body))
            except Exception as exc:  # a bad request or a generation failure: say which
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

    return Handler


def _exit(*_: Any) -> None:
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a save_pretrained folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--name", default="", help="the served model name")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    opts = parser.parse_args(argv)
    torch.set_num_threads(opts.threads)
    chat = ChatModel(opts.model, opts.device, opts.name, opts.seed)
    server = ThreadingHTTPServer((opts.host, opts.port), make_handler(chat))
    server.daemon_threads = True  # an open keep-alive connection never holds up the exit
    signal.signal(signal.SIGTERM, _exit)
    print(f"listening on http://{opts.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
