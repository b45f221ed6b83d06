"""``thresher eval --prices FILE``: tokens from the trace × a price table, per side.

Side A is the LLM policy against the replay server (a real OpenAI-compatible
process replaying scripted replies that report usage); side B is a policy that
calls no model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_eval_cmd import _RECORDS

from thresher.cli.main import main
from thresher.testing.replay_server import ReplayServer, reply, tool_call

#: what every scripted reply reports
USAGE = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}
PRICES = {"gpt-test": {"prompt": 2.0, "completion": 8.0}}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("THRESHER_LLM_BASE_URL", "THRESHER_LLM_MODEL", "THRESHER_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_RECORDS), encoding="utf-8")
    return path


def _script(tasks: Path) -> list[dict]:
    """Per task, in order: one search, then a final answer naming both gold documents."""
    from thresher.tasks.readers import load_tasks

    replies = []
    for task in load_tasks(tasks):
        replies.append(reply(tool_call("search_corpus", {"query": task.question}), usage=USAGE))
        final = "".join(
            f'<Document id="{d}"><Justification>gold.</Justification></Document>'
            for d in task.gold_doc_ids
        )
        replies.append(reply(content=final, usage=USAGE))
    return replies


@pytest.mark.server
def test_eval_prices_the_llm_side_from_the_trace_tokens(
    tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES), encoding="utf-8")
    out = tmp_path / "out"
    with ReplayServer(_script(tasks), tmp_path / "replay", model="served") as server:
        (tmp_path / "gpt.toml").write_text(
            f'label = "gpt"\n[policy]\nname = "llm"\n'
            f'[llm]\nbase_url = "{server.base_url}"\nmodel = "gpt-test"\n'
        )
        argv = ["eval", "--a", str(tmp_path / "gpt.toml"), "--b", "single-shot", str(tasks),
                "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--resamples", "200",
                "--prices", str(prices)]  # fmt: skip
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert len(server.chat_requests()) == 4  # two turns per task
    summary = json.loads((out / "summary.json").read_text())
    a, b = summary["cost"]["a"], summary["cost"]["b"]
    # 2 tasks x 2 replies, each 1200 prompt + 40 completion tokens at $2 / $8 per 1M
    assert (a["prompt_tokens"], a["completion_tokens"]) == (4 * 1200, 4 * 40)
    assert a["models"] == ["gpt-test"] and a["priced_by"] == "gpt-test"
    assert a["resolved"] == 2 and a["episodes"] == 2
    per_episode = 2 * (1200 * 2.0 + 40 * 8.0) / 1e6
    assert a["total_usd"] == pytest.approx(2 * per_episode)
    assert a["per_episode_usd"] == pytest.approx(per_episode)
    assert a["per_resolved_usd"] == pytest.approx(per_episode)
    assert 0 < a["wall_s"]["p50"] <= a["wall_s"]["p95"]
    # the baseline asked no model: no tokens, $0, its wall time still measured
    assert (b["prompt_tokens"], b["completion_tokens"], b["total_usd"]) == (0, 0, 0.0)
    assert b["note"] == "no model calls" and b["wall_s"]["mean"] > 0
    assert summary["settings"]["prices_file"] == str(prices)
    # the printed summary carries the same figures
    assert "## Cost" in text and "every gold document is in its final top 5" in text
    assert "| prompt tokens | 4,800 | 0 |" in text
    assert "| completion tokens | 160 | 0 |" in text
    assert f"| cost per resolved question | ${per_episode:.4f} | $0.00 |" in text
    assert "gpt-test: $2.00 / $8.00 per 1M prompt / completion tokens" in text
    # the traces record the usage per turn and the model at the end
    trace = [json.loads(x) for x in (out / "traces" / "a" / "h1.jsonl").read_text().splitlines()]
    assert [e["prompt_tokens"] for e in trace if e["type"] == "usage"] == [1200, 1200]
    assert trace[-1]["models"] == ["gpt-test"] and trace[-1]["usage"]["completion_tokens"] == 80
    html = (out / "report.html").read_text()
    assert "<h2>Cost</h2>" in html and f"${per_episode:.4f}" in html


@pytest.mark.server
def test_eval_without_prices_says_n_a_for_model_calls(
    tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ReplayServer(_script(tasks)[:2], tmp_path / "replay") as server:
        (tmp_path / "gpt.toml").write_text(
            f'[policy]\nname = "llm"\n[llm]\nbase_url = "{server.base_url}"\nmodel = "gpt-test"\n'
        )
        argv = ["eval", "--a", str(tmp_path / "gpt.toml"), "--b", "single-shot", str(tasks),
                "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
                "--resamples", "200", "--limit", "1", "--json"]  # fmt: skip
        assert main(argv) == 0
    cost = json.loads(capsys.readouterr().out)["summary"]["cost"]
    assert cost["a"]["prompt_tokens"] == 2400 and cost["a"]["total_usd"] is None
    assert cost["a"]["note"] == "no price table (--prices FILE)"
    assert cost["b"]["total_usd"] == 0.0 and cost["prices_file"] is None


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("prices.json", "{not json", "is not valid JSON"),
        ("prices.toml", '["gpt-4.1"\nprompt = 2', "is not valid TOML"),
        ("prices.json", '{"gpt-4.1": {"promt": 2.0}}', "'gpt-4.1': unknown field 'promt'"),
        ("prices.json", '{"gpt-4.1": {"prompt": -1}}', "'gpt-4.1'.prompt must be a finite"),
        ("prices.json", '{"gpt-4.1": {"prompt": "2$"}}', "must be a number of USD, got '2$'"),
        ("prices.json", '{"gpt-4.1": 2.0}', "'gpt-4.1' must be a table of prompt"),
        ("prices.json", "[]", "a price table maps model names to prices"),
        ("prices.toml", "", "the price table is empty"),
        ("prices.toml", '["gpt-4.1"]\n', "'gpt-4.1' holds no price"),
    ],
)
def test_a_bad_price_file_names_the_file_and_the_problem(
    tasks: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str,
    problem: str,
) -> None:
    prices = tmp_path / name
    prices.write_text(content, encoding="utf-8")
    argv = ["eval", "--a", "single-shot", "--b", "single-shot", str(tasks), "--prices",
            str(prices), "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"price file {prices}" in err and problem in err, err
    assert not (tmp_path / "cache").exists()  # refused before any work


def test_a_missing_price_file_is_named(tasks: Path, tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.toml"
    assert main(["eval", "--a", "single-shot", "--b", "single-shot", str(tasks),
                 "--prices", str(missing)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert f"price file {missing}: cannot read it" in err
