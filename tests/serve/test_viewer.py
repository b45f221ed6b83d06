"""The trace viewer opened in headless Chromium (Playwright driving Debian's chromium).

On a real trace (a scripted episode over a real index: two searches, a prune,
a recall, a final answer), the page must show the turns, the pruned chunks
struck through and marked recallable, the usage curve with its soft and hard
lines, lineage, the eval attribution badge, and a chunk containing
``<script>`` as text (no script of the corpus runs). The screenshot is kept in
the test's tmp folder (its path is printed).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from serve.helpers import QUESTION, thresher_cmd
from thresher.config import Config
from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import run_episode
from thresher.harness.trace import write_jsonl
from thresher.serve.viewer import eval_context, render_viewer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _towns(observation, limit=2):
    return [a.chunk_id for a in observation.active if a.chunk.doc_id.startswith("town-")][:limit]


def real_trace(index: Path) -> tuple:
    """A scripted episode: search, search (brings the <script> chunk), prune, recall, answer."""
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.policies.scripted import ScriptedPolicy

    pruned: list[str] = []

    def prune(observation):
        pruned.extend(_towns(observation))
        return Proposal(tool_calls=(call("prune_chunks", chunk_ids=list(pruned)),))

    def recall(observation):
        return Proposal(tool_calls=(call("recall_chunks", chunk_ids=pruned[:1]),))

    script = [
        Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded town"),)),
        Proposal(
            tool_calls=(
                call("search_corpus", query="Marrowick province"),
                call("search_corpus", query="Cape Orrin keeper log 1950"),
            ),
            hop=2,
            parents=("glassworks#0",),
        ),
        prune,
        recall,
        answer(
            ("marrowick", "Marrowick lies in Tessaly."), ("glassworks", "Founded in Marrowick.")
        ),
    ]
    config = Config().override({"chunking.max_tokens": 48})
    with EmbeddedStore(index, config) as store:
        result = run_episode(QUESTION, store, ScriptedPolicy(script), config)
    assert result.exit_reason.value == "answered" and pruned
    return result, pruned


@pytest.fixture(scope="module")
def trace_file(serve_index: Path, tmp_path_factory: pytest.TempPathFactory):
    """The trace inside an eval-report layout, with the task record eval writes."""
    report = tmp_path_factory.mktemp("report")
    result, pruned = real_trace(serve_index)
    path = write_jsonl(result.trace, report / "traces" / "a" / "t1.jsonl")
    record = {
        "query_id": "t1",
        "question": QUESTION,
        "answer": "Tessaly",
        "gold_doc_ids": ["glassworks", "marrowick", "tessaly-history"],
        "hops": [["glassworks"], ["marrowick"], ["tessaly-history"]],
        "a": {
            "traces": ["traces/a/t1.jsonl"],
            "attribution": {
                "failed": True,
                "cause": "retrieval_miss",
                "hop": 2,
                "doc_causes": {"tessaly-history": "retrieval_miss"},
                "evidence": [
                    {
                        "turn": 4,
                        "seq": len(result.trace) - 1,
                        "event": "episode_end",
                        "detail": "tessaly-history never returned",
                    }
                ],
                "recoverable": None,
                "recover_chunk_ids": [],
                "pruned_turn": None,
            },
            "metrics": {"output_recall": 0.67},
        },
    }
    (report / "tasks.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path, result, pruned


def test_eval_context_finds_the_task_record_of_an_eval_trace(trace_file, tmp_path):
    path, _, _ = trace_file
    context = eval_context(path)
    assert context is not None and context["task_id"] == "t1" and context["side"] == "a"
    assert context["attribution"]["cause"] == "retrieval_miss"
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes(path.read_bytes())
    assert eval_context(loose) is None


def test_the_page_cannot_be_broken_out_of_by_trace_text():
    page = render_viewer([{"type": "episode_start", "question": "</script><script>alert(1)"}])
    data = page.html.split('id="trace-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and json.loads(data)["events"][0]["question"].startswith("</script>")
    assert "script-src 'sha256-" in page.csp and "'unsafe-inline'" not in page.csp


def test_trace_view_command_writes_a_self_contained_page(trace_file, tmp_path):
    import subprocess

    path, _, _ = trace_file
    out = tmp_path / "page.html"
    done = subprocess.run(
        thresher_cmd("trace", "view", str(path), "--out", str(out)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    html = out.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and '"retrieval_miss"' in html
    assert "http://" not in html.split("<body>", 1)[1].replace("http://www.w3.org/2000/svg", "")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (Debian's package): `make browser`")
@pytest.mark.browser
def test_viewer_in_headless_chromium_shows_turns_prunes_usage_and_escapes_text(
    trace_file, tmp_path
):
    playwright = pytest.importorskip("playwright.sync_api")
    path, result, pruned = trace_file
    page_file = tmp_path / "viewer.html"
    page_file.write_text(
        render_viewer(
            [e.to_dict() for e in result.trace], source=path.name, context=eval_context(path)
        ).html,
        encoding="utf-8",
    )
    shot = tmp_path / "viewer.png"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-rendered=true]", timeout=15000)

            # the turns: one card per turn, with proposals and refusal-free steps
            assert page.locator("section.turn").count() == result.turns == 5
            assert "search_corpus(query=" in page.locator("section.turn").first.inner_text()
            # the pruned chunks: struck through in the turn that pruned them
            struck = page.locator("section.turn del.pruned").all_inner_texts()
            assert struck == pruned
            # the end-of-episode context: still-pruned chunks struck through and recallable,
            # the recalled one in view with its badge
            rows = page.locator(".context-panel .context-row.is-pruned")
            assert rows.count() == len(pruned) - 1
            assert rows.first.locator("del.pruned").count() == 1
            assert "recallable" in rows.first.inner_text()
            recalled = page.locator(f'.context-row[data-chunk="{pruned[0]}"]')
            assert "recalled at turn 3" in recalled.inner_text()
            # lineage: the call and the bridge that found a chunk
            bridge = page.locator('.context-row[data-chunk="marrowick#0"] .lineage').inner_text()
            assert (
                "search_corpus(Marrowick province)" in bridge
                and "bridge from glassworks#0" in bridge
            )
            # the usage curve, one point per turn, against the soft and hard lines
            assert page.locator("svg.usage-chart polyline.usage").count() == 1
            assert page.locator("svg.usage-chart circle.usage-point").count() == 5
            assert page.locator("svg.usage-chart line.soft").count() == 1
            assert page.locator("svg.usage-chart line.hard").count() == 1
            # the eval attribution badge
            assert (
                "failure: retrieval miss (hop 2)" in page.locator(".attribution-badge").inner_text()
            )
            # the <script> chunk and the HTML title are text: nothing of the corpus ran or parsed
            keeper = page.locator('.context-row[data-chunk="keeper-log#0"]')
            assert "Keeper's log <b>1950</b>" in keeper.inner_text()
            assert keeper.locator("b").count() == 0
            texts = page.locator(".chunk-text").all_text_contents()
            assert any("<script>window.__pwned = 1</script>" in t for t in texts)
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert page.locator("img").count() == 0
            # choosing a turn shows the context at its start
            page.select_option("#turn-select", "3")
            assert page.locator(".context-panel .context-row.is-pruned").count() == len(pruned)
            page.select_option("#turn-select", "end")
            page.screenshot(path=str(shot), full_page=True)
            assert errors == []
        finally:
            browser.close()
    print(f"viewer screenshot: {shot}")
    assert shot.stat().st_size > 10_000


def _hostile_events(result) -> list[dict]:
    """The real trace with the issue-23 tricks: a question holding ``{{SCRIPT}}``, a
    chunk ``toString`` and one whose id holds an RLO, an event of turn ``__proto__``."""
    events = [e.to_dict() for e in result.trace]
    events[0]["question"] = "Where is {{SCRIPT}} and {{DATA}}?"
    first = next(e for e in events if e["type"] == "tool_result" and e["new_chunks"])
    for cid in ("toString", "evil\u202egnp.exe"):
        first["new_chunks"].append({**first["new_chunks"][0], "chunk_id": cid, "doc_id": cid})
        first["shown"].append(cid)
    events.insert(2, {**events[1], "turn": "__proto__"})
    return events


def test_placeholders_in_the_trace_or_its_name_are_never_substituted(trace_file):
    _, result, _ = trace_file
    page = render_viewer(_hostile_events(result), source="{{DATA}}.jsonl")
    assert page.html.count('<script type="application/json"') == 1
    assert "<title>thresher trace · {{DATA}}.jsonl</title>" in page.html
    data = page.html.split('id="trace-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["events"][0]["question"] == "Where is {{SCRIPT}} and {{DATA}}?"


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (Debian's package): `make browser`")
@pytest.mark.browser
def test_hostile_trace_values_render_in_headless_chromium(trace_file, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    _, result, _ = trace_file
    page_file = tmp_path / "hostile.html"
    page_file.write_text(
        render_viewer(_hostile_events(result), source="{{DATA}}.jsonl").html, encoding="utf-8"
    )
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-rendered=true]", timeout=15000)
            body = page.locator("body").inner_text()
            assert "{{SCRIPT}}" in body and page.title().endswith("{{DATA}}.jsonl")
            assert "toString" in body
            assert "evil\u2039U+202E\u203agnp.exe" in body and "\u202e" not in body
            assert errors == []
        finally:
            browser.close()
