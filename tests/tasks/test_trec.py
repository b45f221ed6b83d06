"""TREC run and qrels files: exact lines, round trips, ordering rules, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.errors import InputError
from thresher.tasks.trec import ranked_lists, read_qrels, read_run, write_qrels, write_run


def test_write_run_from_ranked_lists_exact_lines(tmp_path: Path) -> None:
    path = write_run(tmp_path / "sub" / "run.txt", {"q1": ["a", "b", "a", "c"]}, tag="t1")
    assert path.read_text().splitlines() == [
        "q1 Q0 a 1 3.0 t1",
        "q1 Q0 b 2 2.0 t1",
        "q1 Q0 c 3 1.0 t1",
    ]


def test_write_run_from_scores_orders_like_trec_eval(tmp_path: Path) -> None:
    run = {"q": {"a": 0.5, "b": 0.9, "c": 0.5}}
    lines = write_run(tmp_path / "r.txt", run).read_text().splitlines()
    assert [line.split()[2] for line in lines] == ["b", "c", "a"]  # ties: doc id descending
    assert [line.split()[3] for line in lines] == ["1", "2", "3"]
    assert ranked_lists(read_run(tmp_path / "r.txt")) == {"q": ["b", "c", "a"]}


def test_run_round_trip_keeps_scores_exactly(tmp_path: Path) -> None:
    run = {"q1": {"d1": 0.123456789012345, "d2": -3.5}, "q2": {"x": 1e-9}}
    write_run(tmp_path / "r.txt", run)
    assert read_run(tmp_path / "r.txt") == run


def test_qrels_round_trip(tmp_path: Path) -> None:
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"x": 1}}
    path = write_qrels(tmp_path / "q.txt", qrels)
    assert path.read_text().splitlines()[0] == "q1 0 d1 1"
    assert read_qrels(path) == qrels
    write_qrels(tmp_path / "q2.txt", {"q": ["a", "b"]})
    assert read_qrels(tmp_path / "q2.txt") == {"q": {"a": 1, "b": 1}}


def test_readers_skip_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("\nq1 0 d1 1\n\n  \nq1 0 d2 0\n")
    assert read_qrels(tmp_path / "q.txt") == {"q1": {"d1": 1, "d2": 0}}


@pytest.mark.parametrize(
    ("run", "match"),
    [
        ({"q 1": ["a"]}, "whitespace"),
        ({"q": ["a b"]}, "whitespace"),
        ({"q": {"a": float("inf")}}, "not finite"),
        ({"q": "abc"}, "not a string"),
    ],
)
def test_write_run_rejects_bad_input(tmp_path: Path, run: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        write_run(tmp_path / "r.txt", run)


def test_write_rejects_bad_tag_and_grade(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run tag"):
        write_run(tmp_path / "r.txt", {"q": ["a"]}, tag="my run")
    with pytest.raises(InputError, match="not an integer"):
        write_qrels(tmp_path / "q.txt", {"q": {"a": 0.5}})


def test_read_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 t\n")
    with pytest.raises(InputError, match=r"run\.txt:2: expected 6 fields"):
        read_run(bad)
    bad.write_text("q1 Q0 a 1 high t\n")
    with pytest.raises(InputError, match=r"run\.txt:1: score 'high'"):
        read_run(bad)
    bad.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n")
    with pytest.raises(InputError, match=r"run\.txt:2: doc 'a' listed twice"):
        read_run(bad)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a yes\n")
    with pytest.raises(InputError, match=r"qrels\.txt:1: relevance 'yes'"):
        read_qrels(qrels)
    with pytest.raises(InputError, match="no such run file"):
        read_run(tmp_path / "missing.txt")


def test_encoded_ids_round_trip_and_still_match_between_run_and_qrels(tmp_path: Path) -> None:
    from thresher.tasks.trec import decode_id, encode_id

    ids = ["my notes.md", "50%off", "tab\there", "wide\u3000space", "plain", "é é"]
    for value in ids:
        assert decode_id(encode_id(value)) == value and not any(
            c.isspace() for c in encode_id(value)
        )
    run = {"q 1": ids}
    qrels = {"q 1": {"my notes.md": 1, "50%off": 2}}
    with pytest.raises(InputError, match="encode_ids"):
        write_run(tmp_path / "r.txt", run)
    write_run(tmp_path / "r.txt", run, encode_ids=True)
    write_qrels(tmp_path / "q.txt", qrels, encode_ids=True)
    assert all(len(line.split()) == 6 for line in (tmp_path / "r.txt").read_text().splitlines())
    assert list(read_run(tmp_path / "r.txt", decode_ids=True)["q 1"]) == ids
    assert read_qrels(tmp_path / "q.txt", decode_ids=True) == qrels
    raw = read_qrels(tmp_path / "q.txt")  # as trec_eval sees them: same keys in both files
    assert set(raw["q%201"]) <= set(read_run(tmp_path / "r.txt")["q%201"])
