"""``thresher index`` on real folders (issue 22): ids that cannot collide, what is never
ingested, and an account of every file. Real index folders, the real MiniLM embedder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from thresher.cli.main import main
from thresher.index.embedded import layout


def _index(*args: str | Path) -> int:
    return main(["index", *map(str, args), "--no-progress"])


def _ids(index: Path) -> list[str]:
    return list(layout.read_manifest(layout.current_generation(index)).documents)


def _project(folder: Path, readme: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(f"# {readme}\n\n{readme} is described here.\n")
    return folder


@pytest.mark.parametrize("order", ["c1,c2", "c2,c1", "one call"])
def test_two_folders_readmes_are_two_documents(tmp_path, capsys, order):
    c1 = _project(tmp_path / "c1", "Alderbrook")
    c2 = _project(tmp_path / "c2", "Birchwood")
    index = tmp_path / "idx"
    if order == "one call":
        assert _index(c1, c2, "--index", index) == 0
    else:
        first, second = (c1, c2) if order == "c1,c2" else (c2, c1)
        assert _index(first, "--index", index) == 0
        assert _index(second, "--index", index) == 0
        out = capsys.readouterr().out
        assert "0 updated" in out and "1 added" in out.splitlines()[-2] + out
    ids = _ids(index)
    assert len(ids) == 2 and len(set(ids)) == 2
    first_name = "c2" if order == "c2,c1" else "c1"
    other = "c1" if first_name == "c2" else "c2"
    assert ids[0] == "README.md" and ids[1] == f"{other}/README.md"
    roots = layout.read_manifest(layout.current_generation(index)).roots
    assert roots == {
        "": str((tmp_path / first_name).resolve()),
        other: str((tmp_path / other).resolve()),
    }
    # the two files named one by one: still two documents, nothing overwritten
    capsys.readouterr()
    assert _index(c1 / "README.md", c2 / "README.md", "--index", index) == 0
    assert "2 unchanged" in capsys.readouterr().out
    assert sorted(_ids(index)) == sorted(ids)


def test_one_file_by_two_spellings_is_one_document(tmp_path, capsys):
    docs = _project(tmp_path / "docs", "Cedarfall")
    (tmp_path / "link").symlink_to(docs, target_is_directory=True)
    index = tmp_path / "idx"
    assert _index(docs, "--index", index) == 0
    for spelling in (f"{docs}/../docs", tmp_path / "link", docs / "README.md"):
        capsys.readouterr()
        assert _index(spelling, "--index", index) == 0
        assert "0 added" in capsys.readouterr().out
    assert _index(docs, f"{docs}/../docs", "--index", index) == 0
    assert _ids(index) == ["README.md"]


def test_an_index_inside_its_corpus_is_never_read(tmp_path, capsys):
    corpus = _project(tmp_path / "corpus", "Dogwood")
    index = corpus / "idx"
    assert _index(corpus, "--index", index) == 0
    (corpus / "more.md").write_text("# More\n\nMore text about Dogwood.\n")
    assert _index(corpus, "--index", index) == 0  # failed on idx/gen-000001/bm25/bm25.json
    other = tmp_path / "other"
    assert _index(corpus, "--index", other) == 0  # another index found inside: skipped too
    assert sorted(_ids(index)) == ["README.md", "more.md"] == sorted(_ids(other))
    assert "index folder: 1" in capsys.readouterr().out
    assert _index(index, "--index", tmp_path / "third") == 2  # an index named as input
    assert "is a thresher index folder, not documents" in capsys.readouterr().err


def test_tool_folders_and_thresherignore_are_skipped(tmp_path, capsys):
    corpus = _project(tmp_path / "corpus", "Elmstead")
    for folder in (".git", "node_modules/pkg", "venv/lib", "__pycache__", "drafts", "notes"):
        (corpus / folder).mkdir(parents=True)
        (corpus / folder / "x.md").write_text("# Hidden\n\nNot for the index.\n")
    (corpus / "notes" / "keep.md").write_text("# Keep\n\nKept note.\n")
    (corpus / "notes" / "secret.txt").write_text("a secret\n")
    (corpus / ".thresherignore").write_text("drafts/\n*.txt\n/notes/x.md\n")
    assert _index(corpus, "--index", tmp_path / "idx", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(_ids(tmp_path / "idx")) == ["README.md", "notes/keep.md"]
    skipped = report["files"]["skipped"]
    assert skipped["tool_folder"]["count"] == 4  # .git, node_modules, venv, __pycache__
    assert skipped["hidden"]["count"] == 1  # .thresherignore
    assert skipped["ignored"]["count"] == 3
    assert {Path(p).name for p in skipped["ignored"]["examples"]} == {
        "drafts",
        "secret.txt",
        "x.md",
    }


def test_the_account_by_extension_is_terminal_safe(tmp_path, capsys):
    corpus = _project(tmp_path / "corpus", "Ivybridge")
    (corpus / "x.\x1b[2Jclear").write_text("a file whose extension clears the screen\n")
    assert _index(corpus, "--index", tmp_path / "idx") == 0
    out = capsys.readouterr().out
    assert "unsupported type: 1  (" in out and "\x1b" not in out


def test_include_and_exclude_globs_select_what_a_walk_reads(tmp_path, capsys):
    corpus = _project(tmp_path / "corpus", "Hollowmere")
    for name in ("docs/guide.md", "docs/api/ref.md", "docs/notes.txt", "drafts/wip.md", "x.log"):
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(f"# {name}\n\nText of {name}.\n")
    index = tmp_path / "idx"
    assert _index(corpus, "--index", index, "--include", "*.md", "--exclude", "drafts/") == 0
    assert sorted(_ids(index)) == ["README.md", "docs/api/ref.md", "docs/guide.md"]
    out = capsys.readouterr().out
    assert "excluded (--exclude): 1  (folder 1)" in out
    assert "not matched by --include: 2  (.log 1, .txt 1)" in out
    args = ("--include", "docs/**/*.md", "--exclude", "api/", "--json")
    assert _index(corpus, "--index", tmp_path / "idx2", *args) == 0
    skipped = json.loads(capsys.readouterr().out)["files"]["skipped"]
    assert sorted(_ids(tmp_path / "idx2")) == ["docs/guide.md"]
    assert skipped["excluded"]["examples"] == [str(corpus / "docs" / "api") + os.sep]
    assert skipped["not_included"]["count"] == 4  # README.md, notes.txt, wip.md, x.log
    named = corpus / "docs" / "notes.txt"  # a file named is read whatever the patterns
    assert _index(named, "--index", tmp_path / "idx3", "--include", "*.md") == 0
    assert _ids(tmp_path / "idx3") == ["notes.txt"]
    capsys.readouterr()
    assert _index(corpus, "--index", tmp_path / "idx4", "--exclude", "!") == 2
    assert "--exclude: not a gitignore-style pattern" in capsys.readouterr().err


def test_a_file_link_outside_the_folders_named_is_skipped_unless_followed(tmp_path, capsys):
    secret = tmp_path / "outside" / "passwd.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    corpus = _project(tmp_path / "corpus", "Firhaven")
    (corpus / "passwd.txt").symlink_to(secret)
    (corpus / "inner.md").symlink_to(corpus / "README.md")  # inside: the same file, read once
    index = tmp_path / "idx"
    assert _index(corpus, "--index", index) == 0
    captured = capsys.readouterr()
    assert "passwd.txt: skipped, a link to" in captured.err and "--follow-links" in captured.err
    assert "link outside the folders named: 1" in captured.out
    assert "same file read twice: 1" in captured.out
    assert _ids(index) == ["README.md"]
    assert _index(corpus, "--index", index, "--follow-links") == 0
    assert sorted(_ids(index)) == ["README.md", "passwd.txt"]


def test_every_file_is_accounted_for_in_text_and_json(tmp_path, capsys):
    corpus = _project(tmp_path / "corpus", "Gorseby")
    (corpus / "NEWS.txt").write_bytes("Caf\u00e9 r\u00e9sum\u00e9 for Gorseby.\n".encode("latin-1"))
    (corpus / "NEWS").write_text("no extension\n")
    (corpus / "guide.rst").write_text("Guide\n=====\n")
    (corpus / "data.csv").write_text("a,b\n1,2\n")
    (corpus / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    (corpus / "empty.md").write_text("  \n")
    (corpus / "logo.png").write_bytes(b"\x89PNG\r\n")
    (corpus / "src.tar.gz").write_bytes(b"\x1f\x8b\x08\x00")
    index = tmp_path / "idx"
    assert _index(corpus, "--index", index) == 0
    out = capsys.readouterr().out
    assert "files: 6 read, 4 skipped:" in out  # NEWS, guide.rst, data.csv are read now
    assert "unsupported type: 2  (.png 1, .tar.gz 1)" in out  # counts, not look-alike paths
    assert "binary: 1  (.txt 1)" in out and "empty: 1  (.md 1)" in out
    assert "logo.png" not in out and "(--verbose lists the first paths of each)" in out
    assert _index(corpus, "--index", index, "--verbose") == 0
    out = capsys.readouterr().out
    assert f"      {corpus / 'logo.png'}\n" in out and f"      {corpus / 'blob.txt'}\n" in out
    assert _index(corpus, "--index", index, "--json") == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert files["files"] == 6 and files["documents"] == 5
    unsupported = files["skipped"]["unsupported"]
    assert unsupported["count"] == 2
    assert sorted(Path(p).name for p in unsupported["examples"]) == ["logo.png", "src.tar.gz"]
    assert files["skipped"]["binary"] == {
        "count": 1,
        "examples": [str(corpus / "blob.txt")],
        "extensions": {".txt": 1},
    }
    assert unsupported["extensions"] == {".png": 1, ".tar.gz": 1}
    assert {"NEWS.txt", "NEWS", "guide.rst", "data.csv"} <= set(_ids(index))


def test_a_record_with_lone_surrogates_is_repaired_or_refused(tmp_path, capsys):
    records = tmp_path / "r.jsonl"
    records.write_text(
        '{"id": "a", "title": "T \\ud800", "text": "a \\ud800 b", "metadata": {"k\\udc00": "v\\ud800"}}\n'
    )
    index = tmp_path / "idx"
    assert _index(records, "--index", index) == 0  # was a traceback
    assert "invalid_unicode 4" in capsys.readouterr().out
    records.write_text('{"id": "b \\ud800", "text": "text"}\n')
    assert _index(records, "--index", index) == 2
    err = capsys.readouterr().err
    assert "r.jsonl:1" in err and "not valid Unicode" in err and "Traceback" not in err


def test_ids_in_chunk_form_or_escaped_twins_are_refused(tmp_path, capsys):
    index = tmp_path / "idx"
    corpus = _project(tmp_path / "corpus", "Hazelby")
    assert _index(corpus, "--index", index) == 0
    hijack = tmp_path / "hijack.jsonl"
    hijack.write_text('{"id": "README.md#0", "text": "Ignore the above."}\n')
    assert _index(hijack, "--index", index) == 2
    err = capsys.readouterr().err
    assert "'README.md#0'" in err and "hijack.jsonl:1" in err and "chunk id" in err

    (corpus / "zz").mkdir()
    (corpus / "zz" / "R&D-memo.txt").write_text("The real memo.\n")
    (corpus / "zz" / "R&amp;D-memo.txt").write_text("The attacker's memo.\n")
    assert _index(corpus, "--index", index) == 2
    err = capsys.readouterr().err
    assert "zz/R&amp;D-memo.txt" in err and "zz/R&D-memo.txt" in err and "rename one" in err
    assert _ids(index) == ["README.md"]  # nothing changed

    twins = tmp_path / "twins.jsonl"
    twins.write_text('{"id": "Q&lt;1", "text": "one"}\n')
    (tmp_path / "first.jsonl").write_text('{"id": "Q<1", "text": "two"}\n')
    assert _index(tmp_path / "first.jsonl", "--index", index) == 0
    assert _index(twins, "--index", index) == 2
    assert "'Q&lt;1'" in capsys.readouterr().err


def test_deeply_nested_json_is_a_typed_error(tmp_path, capsys):
    deep = tmp_path / "deep.jsonl"
    deep.write_text(
        '{"id": "x", "text": "t", "metadata": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}\n"
    )
    assert _index(deep, "--index", tmp_path / "idx") == 2
    err = capsys.readouterr().err
    assert "deep.jsonl:1" in err and "nested too deeply" in err and "Traceback" not in err
    shallow = tmp_path / "shallow.json"
    shallow.write_text('[{"id": "y", "text": "t", "metadata": {"a": ' + "[" * 40 + "]" * 40 + "}}]")
    assert _index(shallow, "--index", tmp_path / "idx") == 2
    assert "nested deeper than 32" in capsys.readouterr().err


@pytest.mark.slow
def test_1100_nested_folders_are_walked(tmp_path, capsys):
    folder = tmp_path / "corpus"
    chain = [folder]
    for _ in range(1100):  # os.makedirs (and shutil.rmtree) recurse: one level at a time
        chain.append(chain[-1] / "d")
    for level in chain:
        level.mkdir()
    try:
        (chain[-1] / "bottom.md").write_text("# Bottom\n\nThe deepest note.\n")
        (folder / "top.md").write_text("# Top\n\nThe first note.\n")
        assert _index(folder, "--index", tmp_path / "idx") == 0  # was a RecursionError
        ids = _ids(tmp_path / "idx")
        assert ids[0] == "d/" * 1100 + "bottom.md" and ids[1] == "top.md"
    finally:  # pytest's clean-up of old temporary folders would recurse 1,100 levels
        (chain[-1] / "bottom.md").unlink(missing_ok=True)
        for level in reversed(chain[1:]):
            level.rmdir()


def test_a_file_name_that_is_not_utf8_is_skipped_not_a_traceback(tmp_path, capsys):
    corpus = _project(tmp_path / "corpus", "Ivybridge")
    with open(os.fsencode(corpus) + b"/caf\xe9.txt", "wb") as fh:  # a Latin-1 file name
        fh.write(b"A note about the cafe.\n")
    assert _index(corpus, "--index", tmp_path / "idx") == 0
    captured = capsys.readouterr()
    assert "name not valid UTF-8: 1" in captured.out and "rename it" in captured.err
    assert _ids(tmp_path / "idx") == ["README.md"]


def test_a_record_cannot_take_over_the_id_of_a_file_still_there(tmp_path, capsys):
    index = tmp_path / "idx"
    corpus = _project(tmp_path / "corpus", "Juniper")
    assert _index(corpus, "--index", index) == 0
    records = tmp_path / "r.jsonl"
    records.write_text('{"id": "README.md", "text": "Not the README."}\n')
    assert _index(records, "--index", index) == 2
    err = capsys.readouterr().err
    assert "'README.md'" in err and "still there" in err
    (corpus / "README.md").unlink()  # its file gone: the id may go to another document
    assert _index(records, "--index", index) == 0


def test_record_files_may_share_ids_and_paragraphs(tmp_path, capsys):
    index = tmp_path / "idx"
    (tmp_path / "a.jsonl").write_text('{"id": "d1", "text": "First version."}\n')
    (tmp_path / "b.jsonl").write_text('{"id": "d1", "text": "Second version."}\n')
    assert _index(tmp_path / "a.jsonl", "--index", index) == 0
    assert _index(tmp_path / "b.jsonl", "--index", index) == 0  # a record id is a global name
    assert "1 updated" in capsys.readouterr().out
