"""The generalization sections of ``bench/bench_policies.py``: the real folder's questions
(well formed; every gold line present when the machine has the documents) and the
lowercased copies of dataset files. Times nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchload import BENCH
from benchload import load_bench_module as _load

build = _load("bench_realfolder_build", BENCH / "realfolder" / "build.py")
lowercase = _load("bench_lowercase", BENCH / "lowercase.py")


def test_questions_are_multi_hop_with_short_proving_lines() -> None:
    questions = build.load_questions()
    assert len(questions) >= 30
    assert len({q.qid for q in questions}) == len(questions)
    layout = {f"man/{n}.{s}.txt" for n, s in build.MAN_PAGES} | {d for _, d in build.DOC_FILES}
    for q in questions:
        assert len(q.hops) >= 2, q.qid
        docs = [alt[0] for alt in q.hops[0]] + [alt[0] for hop in q.hops[1:] for alt in hop]
        assert set(docs) <= layout, q.qid
        assert len(set(q.gold)) == len(q.gold), f"{q.qid}: one document answers two hops"
        for hop in q.hops:
            assert hop, q.qid
            for _, line in hop:
                assert 0 < len(line) <= 100, q.qid


def test_every_gold_line_is_in_the_built_folder(tmp_path: Path) -> None:
    if build.tools_missing():
        pytest.skip(f"no {', '.join(build.tools_missing())} on this machine")
    written, missing = build.build_folder(tmp_path / "docs")
    if missing:
        pytest.skip(f"this machine lacks {len(missing)} of the folder's sources")
    assert len(written) == len(build.MAN_PAGES) + len(build.DOC_FILES)
    kept, dropped = build.usable_questions(build.load_questions(), tmp_path / "docs")
    assert dropped == []
    assert len(kept) == len(build.load_questions())


def test_a_question_whose_line_is_gone_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "man").mkdir(parents=True)
    (folder / "man" / "a.1.txt").write_text("A(1)\n   adduser   reads   /etc/adduser.conf\n")
    (folder / "man" / "b.5.txt").write_text("B(5)\n DSHELL defaults to /bin/bash\n")
    q = build.Question(
        "x",
        "?",
        (
            (("man/a.1.txt", "adduser reads /etc/adduser.conf"),),
            (("man/b.5.txt", "DSHELL defaults to /bin/zsh"), ("man/b.5.txt", "B(5)")),
        ),
    )
    gone = build.Question("y", "?", ((("man/a.1.txt", "A(1)"),), (("man/c.5.txt", "C(5)"),)))
    kept, dropped = build.usable_questions([q, gone], folder)
    assert dropped == ["y"]
    assert kept[0].hops[1] == (("man/b.5.txt", "B(5)"),)  # the stale alternative is dropped


def test_lowercased_copies_keep_keys_and_layout(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    array = src / "a.json"
    array.write_text(json.dumps([{"Title": "Tim Burton", "n": 3, "s": ["Big Eyes"]}]))
    lines = src / "b.jsonl"
    lines.write_text(json.dumps({"question": "Who directed Big Eyes?"}) + "\n")
    out = lowercase.lowercased_copies([array, lines], tmp_path / "out")
    assert [p.name for p in out] == ["a.json", "b.jsonl"]
    assert json.loads(out[0].read_text()) == [{"Title": "tim burton", "n": 3, "s": ["big eyes"]}]
    assert json.loads(out[1].read_text().splitlines()[0]) == {"question": "who directed big eyes?"}


# -- the large folder (bench/realfolder/large.py) -------------------------------------

sys.path.insert(0, str(BENCH))  # large.py imports realfolder.build as the bench does
large = _load("bench_realfolder_large", BENCH / "realfolder" / "large.py")


def test_large_questions_are_new_multi_hop_questions() -> None:
    questions = build.load_questions(large.QUESTIONS_LARGE)
    assert len(questions) >= 10
    ids = {q.qid for q in questions}
    assert len(ids) == len(questions) and not ids & {q.qid for q in build.load_questions()}
    for q in questions:
        assert len(q.hops) >= 2, q.qid
        assert len(set(q.gold)) == len(q.gold), q.qid
        for hop in q.hops:
            for doc, line in hop:
                assert doc.startswith(("man/", "doc/")), q.qid
                assert 0 < len(line) <= 100, q.qid


def _source_text(doc: str) -> str | None:
    """A large-folder document rendered from this machine's file, or None when absent."""
    if doc.startswith("man/"):
        name, section = doc[len("man/") : -len(".txt")].rsplit(".", 1)
        for path in sorted((large.MAN_ROOT / f"man{section[0]}").glob(f"{name}.{section}*")):
            raw = large._read_source(path)
            return large._render(raw) if raw is not None else None
        return None
    path = build.DOC_ROOT / doc[len("doc/") :]
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.is_file():
            raw = large._text_bytes(candidate)
            return raw.decode("utf-8", errors="replace") if raw is not None else None
    return None


def test_large_gold_lines_are_in_this_machines_documents() -> None:
    if build.tools_missing():
        pytest.skip(f"no {', '.join(build.tools_missing())} on this machine")
    questions = build.load_questions(large.QUESTIONS_LARGE)
    texts = {doc: _source_text(doc) for q in questions for hop in q.hops for doc, _ in hop}
    if any(t is None for t in texts.values()):
        pytest.skip("this machine lacks some of the large questions' documents")
    for q in questions:
        for hop in q.hops:
            assert any(
                build.normalize(line)
                in {build.normalize(x) for x in (texts[doc] or "").splitlines()}
                for doc, line in hop
            ), q.qid


def test_a_page_naming_another_is_a_link_and_skipped(tmp_path: Path) -> None:
    page = tmp_path / "foo.1"
    page.write_text('.\\" a comment\n.so man1/bar.1\n')
    assert large._read_source(page) is None
    (tmp_path / "baz.1").symlink_to(page)
    assert large._read_source(tmp_path / "baz.1") is None
    real = tmp_path / "bar.1"
    real.write_text(".TH BAR 1\n.SH NAME\nbar \\- does things\n")
    assert large._read_source(real) is not None
