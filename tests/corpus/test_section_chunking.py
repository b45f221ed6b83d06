"""Markdown and reStructuredText documents are chunked along their sections."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.corpus.chunking import HEADING_PATH, _pack, _pieces, chunk_document
from thresher.corpus.document import Chunk, Document
from thresher.corpus.sections import markup_of, parse_sections
from thresher.tokens import get_counter

COUNTER = get_counter()

_words = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta.", "config", "x=1", "é", "Why?"]),
    min_size=1,
    max_size=40,
).map(" ".join)


def _doc(text: str, source: str, title: str = "T") -> Document:
    return Document(doc_id="d", title=title, text=text, source=source)


def _md_part(draw: st.DrawFn) -> tuple[str, bool]:
    """One Markdown part and whether it is a code block."""
    kind = draw(st.sampled_from(["h1", "h2", "h3", "para", "para", "fence", "indented"]))
    words = draw(_words)
    if kind.startswith("h"):
        return ("#" * int(kind[1]) + " " + words[:30], False)
    if kind == "fence":
        body = "\n\n".join(draw(st.lists(_words, min_size=1, max_size=4)))
        return (f"```python\n{body}\n```", True)
    if kind == "indented":
        lines = draw(st.lists(_words, min_size=1, max_size=4))
        return ("\n\n".join("    " + line for line in lines), True)
    return (words, False)


def _rst_part(draw: st.DrawFn) -> tuple[str, bool]:
    """One reStructuredText part and whether it is a code block."""
    kind = draw(st.sampled_from(["=", "-", "~", "para", "para", "literal", "directive"]))
    words = draw(_words)
    if kind in "=-~":
        title = words[:30]
        return (f"{title}\n{kind * len(title)}", False)
    if kind in ("literal", "directive"):
        lines = draw(st.lists(_words, min_size=1, max_size=4))
        head = "Example::" if kind == "literal" else ".. code-block:: python"
        return (head + "\n\n" + "\n\n".join("    " + line for line in lines), True)
    return (words, False)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """(text, source, code blocks) of a generated Markdown or RST document."""
    source = draw(st.sampled_from(["guide.md", "guide.rst"]))
    part = _md_part if source.endswith(".md") else _rst_part
    parts: list[tuple[str, bool]] = []
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        text, code = part(draw)
        if code and parts and parts[-1][1] and text.startswith(" "):
            text, code = "Then:", False  # two indented blocks in a row are one block
        parts.append((text, code))
    text = "\n\n".join(p for p, _ in parts) + "\n"
    return text, source, [p for p, code in parts if code]


def _check_cover(text: str, chunks: list[Chunk], max_tokens: int) -> None:
    prev_end = 0
    for i, c in enumerate(chunks):
        assert text[c.start : c.end] == c.text
        assert c.text == c.text.strip() and c.text
        assert COUNTER.count(c.text) <= max_tokens
        assert c.position == i
        assert c.start >= prev_end
        assert text[prev_end : c.start].strip() == ""
        prev_end = c.end
    assert text[prev_end:].strip() == ""


@settings(max_examples=60, deadline=None)
@given(doc=_documents(), max_tokens=st.integers(min_value=8, max_value=200))
def test_section_chunks_cover_the_text_within_budget_and_keep_code_whole(
    doc: tuple[str, str, list[str]], max_tokens: int
) -> None:
    text, source, codes = doc
    chunks = chunk_document(_doc(text, source), max_tokens, COUNTER)
    _check_cover(text, chunks, max_tokens)
    pos = 0
    for code in codes:
        start = text.index(code, pos) + len(code) - len(code.lstrip())
        end = start + len(code.strip())
        pos = end
        if COUNTER.count(code) <= max_tokens:
            assert any(c.start <= start and end <= c.end for c in chunks), code
    assert chunk_document(_doc(text, source), max_tokens, COUNTER) == chunks


def _section(title: str, underline: str, n: int) -> str:
    body = "\n\n".join(f"{title} paragraph {i} says something about {title}." for i in range(n))
    return f"{title}\n{underline * len(title)}\n\n{body}"


def test_each_section_that_fits_is_its_own_chunk_with_its_heading_path() -> None:
    text = "\n\n".join(
        [
            "Guide\n=====\n\n" + "Intro to the guide, long enough to stand alone. " * 6,
            _section("Install", "-", 6),
            _section("Configure", "-", 6),
            _section("Options", "~", 6),
        ]
    )
    chunks = chunk_document(_doc(text, "guide.rst", title="Guide"), 200, COUNTER)
    starts = [c.text.split("\n", 1)[0] for c in chunks]
    assert starts == ["Guide", "Install", "Configure"]
    paths = [c.metadata.get(HEADING_PATH) for c in chunks]
    assert paths == [None, "Install", "Configure"]  # Options is inside Configure


def test_large_section_is_cut_at_paragraphs_not_inside_code() -> None:
    code = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(20)) + "\n```"
    paras = [f"Paragraph {i} about settings and their values." for i in range(12)]
    text = (
        "# Page\n\n## Big\n\n" + "\n\n".join(paras[:6] + [code] + paras[6:]) + "\n\n## Next\n\nEnd."
    )
    budget = COUNTER.count(code) + 20
    chunks = chunk_document(_doc(text, "page.md", title="Page"), budget, COUNTER)
    _check_cover(text, chunks, budget)
    assert any(code in c.text for c in chunks)
    for c in chunks:
        if "Paragraph" in c.text:  # the page's tiny heading merges into Big's first part
            assert c.metadata.get(HEADING_PATH) == "Big" or c.text.startswith("# Page\n\n## Big")
    assert chunks[-1].text == "## Next\n\nEnd."  # tiny, but its neighbour is a fragment


def test_code_block_over_the_budget_is_cut() -> None:
    code = "```\n" + "\n".join(f"line_{i} = value_{i}" for i in range(80)) + "\n```"
    text = f"# Page\n\n{code}\n"
    chunks = chunk_document(_doc(text, "page.md"), 40, COUNTER)
    assert len(chunks) > 1
    _check_cover(text, chunks, 40)


def test_tiny_sections_merge_with_their_neighbour() -> None:
    text = "# Page\n\n## A\n\nShort.\n\n## B\n\nAlso short.\n\n## C\n\n" + "Long text. " * 60
    chunks = chunk_document(_doc(text, "page.md", title="Page"), 120, COUNTER)
    assert chunks[0].text.startswith("# Page") and "## B" in chunks[0].text
    assert "heading_path" not in chunks[0].metadata  # spans the page's own sections
    assert any(c.text.startswith("## C") for c in chunks)
    assert all(c.metadata[HEADING_PATH] == "C" for c in chunks[1:])


def test_heading_path_drops_markup_and_the_document_title() -> None:
    text = "# *attrs* Guide\n\n## `define` options { #define }\n\n" + "Body text here. " * 40
    chunks = chunk_document(_doc(text, "g.md", title="attrs Guide"), 60, COUNTER)
    assert chunks[-1].metadata[HEADING_PATH] == "define options"


def test_sphinx_txt_with_rst_titles_is_rst_and_plain_txt_is_not() -> None:
    rst = "Settings\n========\n\nIntro.\n\nCore\n----\n\nText.\n"
    assert markup_of("ref/settings.txt", rst) == "rst"
    assert markup_of("notes.txt", "Just notes.\n\n-----\n\nMore notes.\n") is None
    assert markup_of("pool.jsonl", rst) is None
    assert markup_of("pool.jsonl:3", rst) is None


def test_plain_text_keeps_paragraph_packing_without_heading_path() -> None:
    text = "# Not markdown here\n\nSome text.\n\n## Still not\n\nMore text."
    plain = chunk_document(_doc(text, "notes.txt"), 12, COUNTER)
    spans = _pack(text, _pieces(text, 12, COUNTER), 12, COUNTER)
    assert [c.text for c in plain] == [text[s:e] for s, e in spans]
    assert all(HEADING_PATH not in c.metadata for c in plain)


def test_rst_literal_block_and_directive_are_one_block() -> None:
    text = "Title\n=====\n\nExample::\n\n    a = 1\n\n    b = 2\n\n.. note::\n\n   Mind it.\n\nAfter.\n"
    root = parse_sections(text, "rst")
    (title,) = root.children
    blocks = [text[b.start : b.end] for b in title.blocks]
    assert blocks == [
        "Title\n=====",
        "Example::\n\n    a = 1\n\n    b = 2",
        ".. note::\n\n   Mind it.",
        "After.",
    ]
    assert [b.code for b in title.blocks] == [False, True, True, False]
