"""``thresher trace show FILE [--turn N]``, ``trace replay FILE --turn N``, ``trace view FILE``.

``show`` prints an episode turn by turn (usage, proposals, tool results,
prunes, refusals, the final answer); ``replay`` rebuilds the state at a turn
from the trace alone and prints it (``--messages``: the exact transcript the
policy was sent); ``view`` writes the trace viewer page (one self-contained
HTML file) or serves it on loopback (``--serve``), with the failure
attribution when the trace comes from ``thresher eval``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from thresher.cli._common import print_json, shorten, terminal_line, terminal_text

__all__ = ["add_arguments", "run", "format_event"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="print an episode turn by turn")
    show.add_argument("file", metavar="FILE", help="a trace (.jsonl)")
    show.add_argument("--turn", type=int, help="only this turn (0-based)")
    show.add_argument("--json", action="store_true", help="print the events as JSON")
    rep = sub.add_parser("replay", help="rebuild and print the state at a turn")
    rep.add_argument("file", metavar="FILE", help="a trace (.jsonl)")
    rep.add_argument("--turn", type=int, help="0-based turn (default: the end)")
    rep.add_argument("--messages", action="store_true", help="print the transcript sent")
    rep.add_argument("--json", action="store_true", help="print JSON")
    view = sub.add_parser("view", help="write (or serve) the trace viewer page")
    view.add_argument("file", metavar="FILE", help="a trace (.jsonl)")
    view.add_argument("--out", metavar="HTML", help="the page to write (default: FILE.html)")
    view.add_argument(
        "--serve", action="store_true", help="serve the page on 127.0.0.1 instead of writing it"
    )
    view.add_argument("--port", type=int, default=0, help="--serve port (default: any free one)")


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def format_event(event: Any) -> list[str]:
    """Human lines for one trace event (empty for events not worth a line).

    Each line is terminal-safe (:func:`~thresher.cli._common.terminal_line`): ids,
    queries and messages in a trace are corpus or policy text.
    """
    return [terminal_line(line) for line in _event_lines(event)]


def _flagged_line(flagged: list[dict[str, Any]]) -> list[str]:
    """``! after flagged text in view: id (flags); ...`` when a decision followed flagged text."""
    if not flagged:
        return []
    named = "; ".join(f"{f['id']} ({', '.join(f['flags'])})" for f in flagged)
    return [f"     ! after flagged text in view: {shorten(named, 200)}"]


def _proposal_lines(p: dict[str, Any]) -> list[str]:
    """A proposal as what the policy wrote: its text, each call, the final answer's ids."""
    lines = [f"   text: {shorten(p['text'], 200)}"] if p.get("text") else []
    for c in p.get("tool_calls") or []:
        lines.append(f"   → {c['name']}({_args(c['arguments'])})  [{c['call_id']}]")
    final = p.get("final")
    if final is not None:
        ids = ", ".join(str(d.get("doc_id")) for d in final.get("documents") or [])
        lines.append(f"   → final answer: {len(final.get('documents') or [])} document(s): {ids}")
    return lines


def _refused_reply(event: Any) -> str:
    """What the policy wrote in a refused reply, never a Python repr.

    A refused proposal's own fields when the trace has them; else the reply as the
    LLM policy keeps it (``{"message": {...}, "finish_reason": ...}`` JSON): its text,
    or its tool calls; else the raw record as it is.
    """
    p = event.proposal
    if p:
        calls = [f"{c['name']}({_args(c['arguments'])})" for c in p.get("tool_calls") or []]
        final = p.get("final") or {}
        ids = [str(d.get("doc_id")) for d in final.get("documents") or []]
        parts = [p.get("text") or "", *calls, *(["final answer: " + ", ".join(ids)] if ids else [])]
        return " · ".join(x for x in parts if x) or "(empty reply)"
    raw = str(event.raw or "")
    try:
        held = json.loads(raw)
    except ValueError:
        return raw
    message = held.get("message") if isinstance(held, dict) else None
    if not isinstance(message, dict):
        return raw
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    calls = [
        f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
        for c in message.get("tool_calls") or []
        if isinstance(c, dict)
    ]
    return " · ".join(x for x in [text, *calls] if x) or "(empty reply)"


def _event_lines(event: Any) -> list[str]:
    kind = event.type
    if kind == "episode_start":
        budget = event.config.get("budget", {}).get("total", "?")
        return [
            f"question: {event.question}",
            f"policy {event.policy} · budget {budget} · tokenizer {event.tokenizer}",
        ]
    if kind == "query_state":
        flags = " · HARD CUTOFF" if event.hard else (" · over soft limit" if event.soft else "")
        lines = [
            f"── turn {event.turn} ── [Token usage: {event.used}/{event.budget}]"
            f" · active {len(event.active)} · pruned {len(event.pruned)}{flags}"
        ]
        lines += [f"   notice: {n}" for n in event.notices[1:]]
        return lines
    if kind == "proposal":
        if not event.valid:
            return [f"   proposal refused: {shorten(_refused_reply(event), 200)}"]
        return _proposal_lines(event.proposal or {})
    if kind == "tool_result":
        mark = {"ok": "✓", "error": "!", "refused": "✗"}.get(event.status, "?")
        text = shorten(" ".join(p for p in (event.header, event.footer) if p), 220)
        line = f"   {mark} {event.tool} [{event.call_id}] {text} · {event.tokens} tok"
        if event.elapsed_s:
            line += f" · {event.elapsed_s * 1000:.0f} ms"
        return [line, *_flagged_line(event.flagged)]
    if kind == "refusal":
        return [f"   ✗ refusal {event.code}: {shorten(event.message, 200)}"]
    if kind == "usage":
        line = (
            f"   endpoint usage: prompt {event.prompt_tokens} (counted {event.counted}),"
            f" completion {event.completion_tokens}, correction {event.correction}"
        )
        if event.discrepancy:
            line += " · discrepancy: far below our count, not used"
        return [line]
    if kind == "sample":
        scored = "with" if event.logprobs is not None else "without"
        return [
            f"   sample: {len(event.prompt_ids)} prompt + {len(event.completion_ids)} "
            f"completion token ids, {scored} log-probs"
        ]
    if kind == "final":
        lines = [f"   final: {len(event.documents)} document(s)", *_flagged_line(event.flagged)]
        for d in event.documents:
            lines.append(f"     {d['rank']}. {d['doc_id']}  {shorten(d['justification'], 160)}")
        return lines
    if kind == "episode_end":
        calls = ", ".join(f"{k} {v}" for k, v in sorted(event.tool_calls.items())) or "none"
        partial = " (partial)" if event.partial else ""
        msg = f": {event.message}" if event.message else ""
        return [
            f"── end: {event.exit_reason}{partial}{msg}",
            f"   turns {event.turns} · tool calls: {calls} · peak tokens "
            f"{event.usage.get('peak', 0)}/{event.usage.get('budget', 0)} · {event.wall_s:.2f} s",
        ]
    return []


def _show(args: argparse.Namespace, events: list[Any]) -> int:
    chosen = [e for e in events if args.turn is None or e.turn == args.turn or e.seq == 0]
    if args.json:
        print_json([e.to_dict() for e in chosen])
        return 0
    for event in chosen:
        for line in format_event(event):
            print(line)
    return 0


def _state_dict(state: Any) -> dict[str, Any]:
    def lineage(cid: str) -> dict[str, Any] | None:
        rec = state.lineage.origin(cid)
        return rec.to_dict() if rec is not None else None

    def chunk(cid: str) -> dict[str, Any]:
        c = state.cache.get(cid)
        return {
            "chunk_id": cid,
            "doc_id": c.doc_id if c else "",
            "title": c.title if c else "",
            "lineage": lineage(cid),
        }

    return {
        "turn": state.turn,
        "used": state.used,
        "budget": state.budget,
        "current_query": state.current_query,
        "active": [chunk(c) for c in state.context.ids()],
        "pruned": [chunk(c) for c in state.pruned],
        "cache": state.cache.ids(),
        "tool_calls": dict(state.tool_calls),
        "exit_reason": state.exit_reason,
    }


def _replay(args: argparse.Namespace, events: list[Any]) -> int:
    from thresher.harness.render import render_messages
    from thresher.harness.state import replay

    state = replay(events, args.turn)
    data = _state_dict(state)
    if args.messages:
        data["messages"] = render_messages(state)
    if args.json:
        print_json(data)
        return 0
    where = f"turn {data['turn']}" if args.turn is not None else "the end"
    print(f"state at {where}: [Token usage: {data['used']}/{data['budget']}]")
    print(f"current query: {terminal_line(data['current_query'])}")
    print(f"cache: {len(data['cache'])} chunk(s) · exit: {data['exit_reason'] or '-'}")
    for label in ("active", "pruned"):
        print(f"{label} ({len(data[label])}):")
        for c in data[label]:
            lin = c["lineage"] or {}
            print(
                f"  {terminal_line(c['chunk_id'])}  {shorten(c['title'], 50)}  ← {lin.get('tool', '?')}"
                f"({shorten(str(lin.get('query', '')), 60)}) turn {lin.get('turn')} "
                f"rank {lin.get('rank')}"
            )
    if args.messages:
        for m in data["messages"]:
            call_id = f" [{m['tool_call_id']}]" if "tool_call_id" in m else ""
            print(terminal_line(f"--- {m['role']}{call_id}"))
            if m.get("content"):
                print(terminal_text(m["content"]))
            for c in m.get("tool_calls") or []:
                fn = c["function"]
                print(terminal_line(f"→ {fn['name']}({fn['arguments']}) [{c['id']}]"))
    return 0


def _view(args: argparse.Namespace, events: list[Any]) -> int:
    from pathlib import Path

    from thresher.serve.viewer import eval_context, render_viewer

    path = Path(args.file)
    page = render_viewer(
        [e.to_dict() for e in events], source=path.name, context=eval_context(path)
    )
    if args.serve:
        return _serve_page(page.html, page.csp, args.port)
    out = Path(args.out) if args.out else path.with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page.html, encoding="utf-8")
    print(out)
    return 0


def _serve_page(html: str, csp: str, port: int) -> int:
    """Serve one page on 127.0.0.1 until interrupted (stdlib: nothing else is needed)."""
    import sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    body = html.encode("utf-8")

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", csp)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Page)
    print(f"http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C to stop)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


_MALFORMED = (TypeError, AttributeError, KeyError, ValueError, IndexError)


def run(args: argparse.Namespace) -> int:
    from thresher.errors import InputError
    from thresher.harness.trace import read_jsonl

    try:
        events = read_jsonl(args.file)
        if args.action == "view":
            return _view(args, events)
        if args.action == "show":
            return _show(args, events)
        return _replay(args, events)
    except RecursionError as exc:  # JSON nested too deeply to parse or copy
        raise InputError(
            f"{args.file}: a line nests JSON too deeply to read; check that the file is a "
            "trace written by `thresher search --trace`"
        ) from exc
    except _MALFORMED as exc:  # a line that parsed as an event but holds the wrong types
        raise InputError(
            f"{args.file}: an event does not have the shape of a thresher trace event "
            f"({type(exc).__name__}: {exc}); check that the file is a trace written by "
            "`thresher search --trace`"
        ) from exc
