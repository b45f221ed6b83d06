"""``thresher trace show FILE [--turn N]`` and ``thresher trace replay FILE --turn N``.

``show`` prints an episode turn by turn (usage, proposals, tool results,
prunes, refusals, the final answer); ``replay`` rebuilds the state at a turn
from the trace alone and prints it (``--messages``: the exact transcript the
policy was sent).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from thresher.cli._common import print_json, shorten

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


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def format_event(event: Any) -> list[str]:
    """Human lines for one trace event (empty for events not worth a line)."""
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
            return [f"   proposal refused: {shorten(event.raw, 200)}"]
        p = event.proposal or {}
        lines = [f"   text: {shorten(p['text'], 200)}"] if p.get("text") else []
        for c in p.get("tool_calls") or []:
            lines.append(f"   → {c['name']}({_args(c['arguments'])})  [{c['call_id']}]")
        if p.get("final") is not None:
            lines.append(f"   → final answer: {len(p['final']['documents'])} document(s)")
        return lines
    if kind == "tool_result":
        mark = {"ok": "✓", "error": "!", "refused": "✗"}.get(event.status, "?")
        text = shorten(" ".join(p for p in (event.header, event.footer) if p), 220)
        line = f"   {mark} {event.tool} [{event.call_id}] {text} · {event.tokens} tok"
        if event.elapsed_s:
            line += f" · {event.elapsed_s * 1000:.0f} ms"
        return [line]
    if kind == "refusal":
        return [f"   ✗ refusal {event.code}: {shorten(event.message, 200)}"]
    if kind == "usage":
        return [
            f"   endpoint usage: prompt {event.prompt_tokens} (counted {event.counted}),"
            f" completion {event.completion_tokens}, correction {event.correction}"
        ]
    if kind == "final":
        lines = [f"   final: {len(event.documents)} document(s)"]
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
    from thresher.harness.replay import replay

    state = replay(events, args.turn)
    data = _state_dict(state)
    if args.messages:
        data["messages"] = render_messages(state)
    if args.json:
        print_json(data)
        return 0
    where = f"turn {data['turn']}" if args.turn is not None else "the end"
    print(f"state at {where}: [Token usage: {data['used']}/{data['budget']}]")
    print(f"current query: {data['current_query']}")
    print(f"cache: {len(data['cache'])} chunk(s) · exit: {data['exit_reason'] or '-'}")
    for label in ("active", "pruned"):
        print(f"{label} ({len(data[label])}):")
        for c in data[label]:
            lin = c["lineage"] or {}
            print(
                f"  {c['chunk_id']}  {shorten(c['title'], 50)}  ← {lin.get('tool', '?')}"
                f"({shorten(str(lin.get('query', '')), 60)}) turn {lin.get('turn')} "
                f"rank {lin.get('rank')}"
            )
    if args.messages:
        for m in data["messages"]:
            print(f"--- {m['role']}" + (f" [{m['tool_call_id']}]" if "tool_call_id" in m else ""))
            if m.get("content"):
                print(m["content"])
            for c in m.get("tool_calls") or []:
                print(f"→ {c['function']['name']}({c['function']['arguments']}) [{c['id']}]")
    return 0


def run(args: argparse.Namespace) -> int:
    from thresher.harness.trace import read_jsonl

    events = read_jsonl(args.file)
    if args.action == "show":
        return _show(args, events)
    return _replay(args, events)
