"""``bench/docfolders``: the question files are well formed, the loader keeps only questions
proved by a folder, documentation is extracted from an sdist-shaped archive, and a
cached sdist is checked against its pinned sha256. No network: the real folder is
built only when every pinned sdist is already in the cache (else skipped)."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from benchload import BENCH
from benchload import load_bench_module as _load

build = _load("bench_docfolders_build", BENCH / "docfolders" / "build.py")
PROJECTS = {s.project for s in build.SDISTS}


def test_question_files_are_multi_hop_split_and_point_into_the_folder() -> None:
    questions = build.load_questions()
    assert len(questions) >= 120
    by_file = Counter(q.source for q in questions)
    assert by_file["questions-pallets.jsonl"] >= 60
    assert by_file["questions-django.jsonl"] >= 60
    for q in questions:
        assert len(q.hops) >= 2, q.qid
        assert q.split in ("tune", "test"), q.qid
        assert len(set(q.gold)) == len(q.gold), f"{q.qid}: one document answers two hops"
        for hop in q.hops:
            assert hop, q.qid
            for doc, line in hop:
                assert doc.split("/", 1)[0] in PROJECTS, (q.qid, doc)
                assert build.normalize(line), (q.qid, doc)  # a whole line (Markdown: a paragraph)
    for source, n in by_file.items():
        tune = sum(q.split == "tune" for q in questions if q.source == source)
        assert 0.3 <= tune / n <= 0.5, f"{source}: {tune} of {n} questions in the tune split"
    pallets = [q for q in questions if q.source == "questions-pallets.jsonl"]
    assert sum(len(q.hops) == 3 for q in pallets) >= 15


def _write(folder: Path, rel: str, text: str) -> None:
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(text, encoding="utf-8")


def test_loader_keeps_questions_whose_lines_are_there_whitespace_collapsed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    _write(
        folder, "flask/docs/a.rst", "Title\n=====\n\n    The setting   ``X`` names\tthe page B.\n"
    )
    _write(folder, "werkzeug/docs/b.rst", "- B does this.\n")
    hop_a = [{"doc": "flask/docs/a.rst", "line": "The setting ``X`` names the page B."}]
    hop_b = [
        {"doc": "werkzeug/docs/gone.rst", "line": "- B does this."},
        {"doc": "werkzeug/docs/b.rst", "line": "-   B does this."},
    ]
    records = [
        {"id": "ok", "question": "?", "hops": [hop_a, hop_b], "split": "tune", "kind": "see-also"},
        {
            "id": "stale",
            "question": "?",
            "hops": [hop_a, [{"doc": "werkzeug/docs/b.rst", "line": "B does that."}]],
        },
    ]
    path = tmp_path / "questions-x.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    asked = build.load_questions([path, tmp_path / "absent.jsonl"])
    assert [(q.qid, q.split, q.kind, q.source) for q in asked] == [
        ("ok", "tune", "see-also", "questions-x.jsonl"),
        ("stale", "test", "", "questions-x.jsonl"),
    ]
    kept, dropped = build.usable_questions(asked, folder)
    assert dropped == ["stale"]
    assert kept[0].hops[1] == (("werkzeug/docs/b.rst", "-   B does this."),)  # the absent one left
    assert kept[0].split == "tune"


def test_loader_rejects_a_bad_split_and_a_repeated_id(tmp_path: Path) -> None:
    rec = {"id": "q", "question": "?", "hops": [[{"doc": "a", "line": "b"}]], "split": "train"}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="split must be tune or test"):
        build.load_questions([path])
    rec["split"] = "test"
    path.write_text((json.dumps(rec) + "\n") * 2, encoding="utf-8")
    with pytest.raises(ValueError, match="seen twice"):
        build.load_questions([path])


def _sdist(path: Path, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"demo-1.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_only_the_documentation_of_an_sdist_is_extracted(tmp_path: Path) -> None:
    archive = tmp_path / "demo-1.0.tar.gz"
    _sdist(
        archive,
        {
            "README.md": "# demo",
            "PKG-INFO": "Name: demo",
            "src/demo/__init__.py": "x = 1",
            "tests/test_demo.py": "def test(): pass",
            "docs/index.rst": "Demo",
            "docs/guide/usage.md": "Usage",
            "docs/ref/settings.txt": "Settings",
            "docs/conf.py": "project = 'demo'",
            "docs/requirements.txt": "sphinx",
            "docs/_static/style.txt": "body {}",
            "docs/_ext/helper.py": "pass",
            "docs/logo.png": "png",
        },
    )
    written = build.extract_docs(archive, tmp_path / "out" / "demo")
    assert written == [
        "README.md",
        "docs/guide/usage.md",
        "docs/index.rst",
        "docs/ref/settings.txt",
    ]
    assert (tmp_path / "out" / "demo" / "docs" / "ref" / "settings.txt").read_text() == "Settings"


def test_a_cached_sdist_with_another_sha256_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "demo-1.0.tar.gz"
    _sdist(archive, {"README.md": "# demo"})
    good = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert build.fetch_sdist(build.Sdist("demo", "demo", "1.0", good), tmp_path) == archive
    with pytest.raises(build.SdistError, match="delete it"):
        build.fetch_sdist(build.Sdist("demo", "demo", "1.0", "0" * 64), tmp_path)


@pytest.mark.slow
def test_every_gold_line_is_in_the_built_folder(tmp_path: Path) -> None:
    cache = build.default_cache()
    if len(build.cached_sdists(cache)) < len(build.SDISTS):
        pytest.skip(f"the pinned sdists are not all in {cache} (the test never downloads)")
    built = build.build_folder(tmp_path / "docs", cache)
    assert set(built) == PROJECTS
    assert len(built["django"]) > 500
    asked = build.load_questions()
    kept, dropped = build.usable_questions(asked, tmp_path / "docs")
    assert dropped == []
    assert len(kept) == len(asked)


def test_later_hop_overlap_names_the_words_a_question_gives_away() -> None:
    hops = (
        (
            (
                "flask/docs/debugging.rst",
                "The built-in Werkzeug development server provides a debugger",
            ),
        ),
        (
            (
                "werkzeug/docs/debug.rst",
                "the environment variable ``WERKZEUG_DEBUG_PIN``. This can be",
            ),
            ("flask/docs/x.rst", "Set the PIN through the environment."),
        ),
    )
    leaky = build.Question("a", "Which environment variable sets the debugger's PIN?", hops)
    strict = build.Question(
        "b", "How is the code asked by Flask's debugger fixed in advance?", hops
    )
    assert build.later_hop_overlap(leaky) == {"environment", "variable", "pin"}  # debugger: hop 1
    assert build.later_hop_overlap(strict) == set()


def test_the_table_scores_rows_and_hops_and_names_the_best_single_retriever(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the bench imports bench_policies and docfolders.build
    bench = _load("bench_docfolders_script", BENCH / "bench_docfolders.py")
    hop = (("a/x.rst", "line"),)
    two = build.TaggedQuestion("q1", "?", (hop, (("a/y.rst", "l"),)), "test", "", "f.jsonl")
    three = build.TaggedQuestion("q2", "?", (hop, (("a/z.rst", "l"),), (("a/w.rst", "l"),)))

    def answer(qid: str, found: list[bool]) -> object:
        return bench.Answer(qid, [], sum(found) / len(found), float(all(found)), found, 1.0)

    runs = {
        "bm25": [answer("q1", [True, True]), answer("q2", [True, False, False])],
        "dense": [answer("q1", [True, False]), answer("q2", [False, False, False])],
        "local": [answer("q1", [True, True]), answer("q2", [True, True, False])],
    }
    records = {r["row"]: r for r in bench.table("test", [two, three], runs)}
    assert records["all"]["recall"] == pytest.approx(
        {"bm25": 100 * (1 + 1 / 3) / 2, "dense": 25.0, "local": 100 * (1 + 2 / 3) / 2}
    )
    assert records["3-hop"]["n"] == 1 and records["3-hop"]["best_single"] == "bm25"
    assert records["first hop"]["recall"]["dense"] == 50.0
    assert records["later hops"]["n"] == 3  # q1's second hop, q2's second and third
    assert records["later hops"]["recall"]["local"] == pytest.approx(200 / 3)
    assert records["all"]["local_minus_best"] == pytest.approx(100 / 6)
    assert "best single" in capsys.readouterr().out


def test_where_lost_sorts_each_missed_hop_by_how_far_the_episode_got() -> None:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    bench = _load("bench_docfolders_script", BENCH / "bench_docfolders.py")
    hops = ((("a/x.rst", "l"),), (("a/y.rst", "l"),), (("a/z.rst", "l"), ("b/z.rst", "l")))
    q = build.TaggedQuestion("q1", "?", hops, "tune", "", "f.jsonl")
    found = [False, False, False]
    local = [bench.Answer("q1", [], 0.0, 0.0, found, 1.0)]
    single = [bench.Answer("q1", [], 1 / 3, 0.0, [True, False, False], 1.0)]
    # x shown then ranked out; y listed, never shown; neither z listed
    seen = [bench.Seen({"a/x.rst", "a/y.rst"}, {"a/x.rst"})]
    counts = bench.where_lost([q], local, seen, single)
    assert counts == {
        ("first hop", "shown, ranked out"): 1,
        ("first hop", "lost"): 1,
        ("first hop", "in single-shot's 5"): 1,
        ("later hops", "listed, not shown"): 1,
        ("later hops", "not listed"): 1,
        ("later hops", "lost"): 2,
    }
