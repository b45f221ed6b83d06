"""The HTML report renders in headless Chromium without console errors.

Needs Debian's ``chromium`` (the CI installs it: ``apt-get install -y chromium``);
skips when no Chromium binary is found. A capture script is put first in a copy
of the page: it records uncaught errors and ``console.error`` calls into a DOM
attribute, which ``--dump-dom`` then shows.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

_CAPTURE = (
    "<script>(function(){var errs=[];function keep(m){errs.push(String(m));"
    "document.documentElement.setAttribute('data-errors',JSON.stringify(errs));}"
    "document.documentElement.setAttribute('data-errors','[]');"
    "window.addEventListener('error',function(e){keep(e.message||'resource error');},true);"
    "window.addEventListener('unhandledrejection',function(e){keep(e.reason);});"
    "var ce=console.error;console.error=function(){keep(Array.prototype.join.call(arguments,' '));"
    "ce.apply(console,arguments);};"
    "window.addEventListener('load',function(){document.documentElement.setAttribute("
    "'data-loaded','1');});})();</script>"
)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "no Chromium binary; install it with: apt-get update && apt-get install -y chromium"
    )


def _render(html_file: Path, tmp_path: Path) -> tuple[str, str]:
    page = tmp_path / "probe.html"
    text = html_file.read_text(encoding="utf-8")
    page.write_text(text.replace("<head>", "<head>" + _CAPTURE, 1), encoding="utf-8")
    for rel in re.findall(r'href="(traces/[^"]+)"', text):  # links resolve next to the copy
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(html_file.parent / rel, target)
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
        "--v=0", "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def _errors(dom: str) -> list[str]:
    match = re.search(r"data-errors=\"([^\"]*)\"", dom)
    assert match, "capture script did not run"
    return json.loads(match.group(1).replace("&quot;", '"'))


@pytest.mark.browser
def test_report_renders_without_console_errors(world_run, tmp_path: Path) -> None:
    report, _, paths = world_run
    dom, stderr = _render(paths["html"], tmp_path)
    assert 'data-loaded="1"' in dom
    assert _errors(dom) == []
    assert "Uncaught" not in stderr
    assert "Content Security Policy" not in stderr  # its own script and styles are allowed
    assert dom.count("<svg") == 3
    assert len(re.findall(r"<tr><td>chain-", dom)) == len(report.tasks)
    assert "http://" not in paths["html"].read_text().replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )


@pytest.mark.browser
def test_the_probe_sees_a_script_error(tmp_path: Path) -> None:
    broken = tmp_path / "src" / "broken.html"
    broken.parent.mkdir()
    broken.write_text(
        "<!DOCTYPE html><html><head></head><body><p>x</p>"
        "<script>console.error('bad thing');undefinedFunction();</script></body></html>"
    )
    dom, _ = _render(broken, tmp_path)
    errors = _errors(dom)
    assert any("bad thing" in e for e in errors)
    assert any("undefinedFunction" in e for e in errors)


def test_shown_text_has_its_bidi_controls_written_out(world_run) -> None:
    from thresher.eval.report import task_records
    from thresher.eval.report_html import render_html

    report, _, _ = world_run
    records = task_records(report)
    records[0] = {**records[0], "question": "evil\u202egnp.exe\u2066 and\u200b\x1b[31m"}
    records[0]["query_id"] = "chain-\u202e0"
    page = render_html(report, records)
    hidden = [
        c for c in page if c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\x1b"
    ]
    assert hidden == []
    assert "evil[U+202E]gnp.exe[U+2066] and[U+200B][U+001B][31m" in page


def test_the_page_carries_a_policy_that_admits_only_its_own_script(world_run) -> None:
    import base64
    import hashlib

    _, _, paths = world_run
    page = paths["html"].read_text(encoding="utf-8")
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert policy, "no Content-Security-Policy"
    rules = dict(r.strip().split(" ", 1) for r in policy.group(1).split(";"))
    assert rules["default-src"] == "'none'" and "unsafe-inline" not in rules["script-src"]
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert rules["script-src"] == f"'sha256-{digest}'"
    assert page.index("Content-Security-Policy") < page.index("<style>")
