"""Markdown and reStructuredText as a reader sees them (thresher.corpus.markup)."""

from __future__ import annotations

from pathlib import Path

from thresher.corpus.chunking import chunk_document
from thresher.corpus.files import file_document
from thresher.corpus.markup import code_ranges, is_changelog, markup_kind, prose, reader_text
from thresher.tokens import get_counter

MKDOCS = """\
[:octicons-file-code-24:][_tilde]{: .source-link }

# Settings { #settings }

Configure the theme palette.
{ .annotate }

!!! note "Colour scheme"
    Pick a scheme before the fonts.

=== "Dark"

    The slate scheme.

/// danger | Breaking change
Options were renamed.
///

/// html | div.result
Rendered output
///

--8<-- "links.md"

<div class="termy" style="color: #D3D7CF">
<span>Run the server</span>
</div>

> [!tip] Faster builds
> Cache the fonts.

See the [palette guide](../palette.md) and [fonts][fonts-ref].

[fonts-ref]: https://example.com/fonts

Example:

    indented = "code"

```yaml title="mkdocs.yml" { #not-an-attribute }
theme:
  palette: slate
```
"""


def test_mkdocs_markup_is_removed_and_titles_kept():
    text = reader_text(MKDOCS, "markdown")
    for markup in ("{", "}", "!!!", "===", "///", "--8<--", "<div", "termy", "D3D7CF", "source-link",
                   "octicons", "[!tip]", "fonts-ref", "../palette.md", "div.result"):  # fmt: skip
        assert markup not in text.replace("{ #not-an-attribute }", ""), markup
    for shown in ("# Settings\n", "Colour scheme", "Pick a scheme", "Dark", "Breaking change",
                  "Options were renamed.", "Run the server", "> Faster builds",
                  "See the palette guide and fonts."):  # fmt: skip
        assert shown in text, shown
    assert "Rendered output" in text  # the html block's body is shown, its selector is not


def test_code_is_kept_byte_for_byte_and_found():
    text = reader_text(MKDOCS, "markdown")
    fence = '```yaml title="mkdocs.yml" { #not-an-attribute }\ntheme:\n  palette: slate\n```'
    assert fence in text
    found = [text[a:b] for a, b in code_ranges(text, "markdown")]
    assert found == ['    indented = "code"', fence]
    # an admonition's or a tab's indented body is prose: dedented, never code
    assert "\nPick a scheme before the fonts." in text
    assert "\nThe slate scheme." in text


def test_myst_roles_and_directive_fences_are_prose():
    text = reader_text(
        "```{note}\n:class: dropdown\nUse {func}`attrs.define` or {ref}`the guide <guide>`.\n```\n",
        "markdown",
    )
    assert text.strip() == "Use attrs.define or the guide."
    assert code_ranges(text, "markdown") == []


RST = """\
.. _fixtures:

Fixtures
========

.. note::
   :class: tip

   See :ref:`the fixture guide <fixture-guide>` and :func:`~pytest.fixture`.
   Read `the Python docs <https://docs.python.org>`_ and `PEP 8`_, keep ``x`` as is.

.. autofunction:: pytest.fixture
   :no-index:

.. toctree::
   :maxdepth: 2

   how-to/index

.. a comment
   on two lines

:param timeout: Seconds to wait.

Example::

    def test_x():
        assert 1

.. code-block:: python

    import pytest
"""


def test_sphinx_roles_directives_and_fields_read_as_rendered():
    text = reader_text(RST, "rst")
    for markup in (".. _fixtures", ":ref:", ":func:", "fixture-guide", ":class:", ":no-index:",
                   "toctree", "maxdepth", "how-to/index", "a comment", ":param"):  # fmt: skip
        assert markup not in text, markup
    for shown in ("Fixtures\n========", "See the fixture guide and fixture.", "pytest.fixture",
                  "Read the Python docs and PEP 8, keep ``x`` as is.",
                  "timeout: Seconds to wait."):  # fmt: skip
        assert shown in text, shown
    found = [text[a:b] for a, b in code_ranges(text, "rst")]
    assert found == [
        "    def test_x():\n        assert 1",
        ".. code-block:: python\n\n    import pytest",
    ]


def test_other_kinds_are_unchanged():
    raw = "<b>bold</b> { #x } `code`"
    assert reader_text(raw, "text") == raw
    assert code_ranges(raw, "text") == []


def test_changelogs_are_told_by_path_or_title():
    assert is_changelog("doc/en/changelog.rst")
    assert is_changelog("CHANGELOG.md")
    assert is_changelog("docs/about/releases/9.0.md", "9.0 Migration Notes")
    assert is_changelog("changelog.d/123.bugfix.md")
    assert is_changelog("docs/whatsnew.md")
    assert is_changelog("docs/page.md", "Release Notes")
    assert is_changelog("docs/page.md", "What's new in 2.0")
    assert not is_changelog("docs/page.md", "History of the project")
    assert not is_changelog("docs/news-feed-widget.md", "Widgets")
    # a record or dataset passage is never one, whatever its title (a song)
    assert not is_changelog("p-1a2b3c4d5e6f", "Changes")


def test_prose_hides_code_markup_and_colours():
    text = "Set `navigation.tabs` in Foo Bar.\n```py\nimport Baz\n```\nColour #D3D7CF or #100."
    read = prose(text, markup=True)
    assert "navigation.tabs" not in read and "Baz" not in read and "D3D7CF" not in read
    assert "Foo Bar" in read and "#100" in read
    # inline code the question states is read; code ranges are masked whatever the kind
    assert "navigation.tabs" in prose(text, markup=True, named="what does navigation.tabs do")
    assert prose("a b c d", ((2, 3),)) == "a \n c d"
    plain = "A plain sentence about Foo Bar."
    assert prose(plain) is plain


def test_ingested_chunks_carry_their_code(tmp_path: Path):
    path = tmp_path / "guide.md"
    path.write_text(MKDOCS, encoding="utf-8")
    doc = file_document(path, "guide.md", "markdown")
    assert doc.title == "Settings"
    # indexed as written (section chunking reads the source); read as prose by a policy
    assert doc.text == MKDOCS and "termy" not in prose(doc.text, doc.code, markup=True)
    chunks = chunk_document(doc, 40, get_counter())
    code = [
        c.text[a:b] for c in chunks for a, b in c.metadata.get("code", []) if c.metadata.get("code")
    ]
    assert any("palette: slate" in part for part in code)
    assert all(len(c.text) >= b for c in chunks for _, b in c.metadata.get("code", []))


def test_a_text_file_written_in_restructuredtext_is_titled_and_read_as_one(tmp_path: Path):
    path = tmp_path / "settings.txt"
    path.write_text(
        ".. _settings:\n\nSettings\n========\n\n.. setting:: DEBUG\n\n"
        "See :setting:`ALLOWED_HOSTS <allowed-hosts>` first.\n",
        encoding="utf-8",
    )
    doc = file_document(path, "settings.txt", "text")
    assert doc.title == "Settings"
    assert ".. setting:: DEBUG" in doc.text  # indexed as written
    read = reader_text(doc.text, markup_kind(doc.text, "text"))
    assert ".. " not in read and ":setting:" not in read
    assert "DEBUG" in read and "See ALLOWED_HOSTS first." in read
    plain = tmp_path / "notes.txt"
    plain.write_text("Notes\n\nTwo dots .. and :colons: stay.\n", encoding="utf-8")
    assert (
        file_document(plain, "notes.txt", "text").text
        == "Notes\n\nTwo dots .. and :colons: stay.\n"
    )
