"""The one JSONL / JSON record reader: line numbers, locations and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.corpus.jsonl import iter_json_records, iter_jsonl
from thresher.errors import InputError


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_iter_jsonl_numbers_lines_skips_blanks_and_drops_a_bom(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", b'\xef\xbb\xbf{"a": 1}\n\n   \n[2]\n"x"\n')
    assert list(iter_jsonl(f)) == [(1, {"a": 1}), (4, [2]), (5, "x")]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b'{"a": 1}\n{bad\n', r"r\.jsonl:2: not valid JSON \(Expecting property name"),
        (b'{"a": 1}\n{"b": "caf\xe9"}\n', r"r\.jsonl:2: invalid UTF-8 at byte offset 19"),
        (b'{"a": 1}\n{"b": "\x00"}\n', r"r\.jsonl:2: binary content \(NUL byte at byte offset 16"),
    ],
)
def test_iter_jsonl_errors_name_file_and_line(tmp_path: Path, content: bytes, match: str) -> None:
    f = write(tmp_path / "r.jsonl", content)
    with pytest.raises(InputError, match=match) as info:
        list(iter_jsonl(f))
    assert "\n" not in str(info.value)


def test_iter_jsonl_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot read .*nope\.jsonl"):
        list(iter_jsonl(tmp_path / "nope.jsonl"))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('[{"a": 1}, {"b": 2}]', [("[0]", {"a": 1}), ("[1]", {"b": 2})]),
        ('[\n  {"a": 1}\n]\n', [("[0]", {"a": 1})]),
        ('{\n  "a": 1\n}\n', [("", {"a": 1})]),
        ('{"a": 1}\n\n{"b": 2}\n', [(":1", {"a": 1}), (":3", {"b": 2})]),
        ('{"a": 1}\n', [(":1", {"a": 1})]),
        ("[1]\n[2]\n", [(":1", [1]), (":2", [2])]),
        ("  \n", []),
    ],
)
def test_iter_json_records_reads_arrays_objects_and_lines(
    tmp_path: Path, content: str, expected: list[tuple[str, object]]
) -> None:
    assert list(iter_json_records(write(tmp_path / "x.json", content))) == expected


def test_iter_json_records_errors_name_the_line(tmp_path: Path) -> None:
    f = write(tmp_path / "x.json", '[{"id": 1,\n "text": }]')
    with pytest.raises(InputError, match=r"x\.json:2: not valid JSON"):
        list(iter_json_records(f))
    g = write(tmp_path / "y.json", json.dumps({"a": 1}) + "\n{bad\n")
    with pytest.raises(InputError, match=r"y\.json:2: not valid JSON"):
        list(iter_json_records(g))


def test_a_line_over_the_bound_is_given_as_its_length_and_the_next_read(tmp_path) -> None:
    from thresher.corpus.jsonl import LongLine

    path = tmp_path / "r.jsonl"
    long = '{"text": "' + "x" * 3_000_000 + '"}\n'  # longer than one step of 1 MiB
    path.write_text('{"a": 1}\n' + long + '{"b": 2}\n' + long.rstrip("\n"), encoding="utf-8")
    got = list(iter_jsonl(path, max_line_bytes=100))
    size = len(long)
    assert got == [(1, {"a": 1}), (2, LongLine(size)), (3, {"b": 2}), (4, LongLine(size - 1))]
    with path.open("rb") as fh:
        assert list(iter_jsonl(path, fh=fh, max_line_bytes=100)) == got


@pytest.mark.parametrize("cap", [5, 100, 2_999_999, 3_000_010, 3_000_011, 3_000_012, 10**7])
def test_lines_around_the_bound_are_kept_or_measured_exactly(tmp_path, cap) -> None:
    from thresher.corpus.jsonl import LongLine

    lines = ['{"a": 1}\n', '{"t": "' + "x" * 3_000_000 + '"}\n', '{"b": 2}']
    path = tmp_path / "r.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    expected = [
        (n, LongLine(len(line)) if len(line.rstrip("\n")) > cap else json.loads(line))
        for n, line in enumerate(lines, start=1)
    ]
    assert list(iter_jsonl(path, max_line_bytes=cap)) == expected
