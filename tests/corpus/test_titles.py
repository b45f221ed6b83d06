"""Titles of text files: one rule set for .txt and .md, and what the loader makes of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.corpus.loaders import iter_documents
from thresher.corpus.titles import MAX_TITLE_CHARS, markdown_title, shorten_title, text_title

EMAIL = (
    "From: Ada Marsh <ada@example.org>\nTo: Ivo Brandt <ivo@example.org>\n"
    "Subject: Site visit in Tarrow\n\nHi Ivo,\n\nSee you on Monday.\n"
)
REGISTRY = (
    "KESSEL PATENT REGISTRY (invented)\nPatent number: KS-2020-000001\n"
    "Title: Method for drying kelp\nInventors: Orla Venn\n\nABSTRACT\n\nA method.\n"
)


@pytest.mark.parametrize(
    ("text", "markdown", "title"),
    [
        (EMAIL, False, "Site visit in Tarrow"),  # a header field
        (REGISTRY, False, "Method for drying kelp"),  # a field in the first block
        ("Harbour notes\nThe pier was built in 1881.\n", False, "Harbour notes"),
        ("\n\n  Harbour notes  \n\nThe pier.\n", False, "Harbour notes"),
        ("# Harbour notes\n\nThe pier.\n", False, "Harbour notes"),
        ("---\n\nHarbour notes\nThe pier.\n", False, "Harbour notes"),  # no word on line 1
        ("One paragraph without a line break after it.", False, None),
        ("One paragraph.\n\n", False, None),
        ("", False, None),
        ("Body text.\n\nLater: Title: not a field, it is after the first block.", False,
         "Body text."),
        ("intro line\n\n## Second level ##\nmore", True, "Second level"),  # heading wins in .md
        ("intro line\n\n## Second level ##\nmore", False, "intro line"),  # first line in .txt
        ('---\ntitle: "Front matter"\ndate: 2020\n---\n# Heading\nx', True, "Front matter"),
        ("---\ndate: 2020\n---\nFirst line\nmore\n", True, "First line"),
        ("```\ncode\n```\nAfter the fence\nmore", True, "After the fence"),
    ],
)  # fmt: skip
def test_text_title_rules(text: str, markdown: bool, title: str | None) -> None:
    assert text_title(text, markdown=markdown) == title


def test_an_identifier_stem_the_text_states_is_the_title() -> None:
    # a patent file is cited by its number, so its number stays its title
    assert text_title(REGISTRY, stem="KS-2020-000001") == "KS-2020-000001"
    assert text_title(REGISTRY, stem="ks-2020-000001") == "ks-2020-000001"  # any case
    assert text_title(REGISTRY, stem="KS-2020") == "Method for drying kelp"  # not a whole id
    assert text_title(EMAIL, stem="thread-00001") == "Site visit in Tarrow"  # never stated
    assert text_title("Notes\nabout notes\n", stem="notes") == "Notes"  # no digit: no id
    late = "Kelp report\n\nSee KS-2020-000001.\n"
    assert text_title(late, stem="KS-2020-000001") == "Kelp report"  # after the first block


def test_long_first_lines_are_cut_at_a_word() -> None:
    line = "word " * 60
    title = text_title(f"{line}\n\nmore")
    assert title is not None and len(title) <= MAX_TITLE_CHARS and title.endswith("word…")
    assert shorten_title("x" * 300).endswith("…") and len(shorten_title("x" * 300)) == 120
    assert shorten_title("  a \n b  ") == "a b"


def test_markdown_title_rules() -> None:
    assert markdown_title("intro\n\n## Second level ##\n# Later") == "Later"  # the first H1
    assert markdown_title("## Only sections\n\ntext") is None
    assert markdown_title("```\n# not a heading\n```\nSetext\n======\n") == "Setext"
    assert markdown_title("no heading here") is None


def test_loader_titles_of_text_files(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "thread-00001.txt").write_text(EMAIL, encoding="utf-8")
    (root / "KS-2020-000001.txt").write_text(REGISTRY, encoding="utf-8")
    (root / "note.txt").write_text("Harbour notes\nThe pier.\n", encoding="utf-8")
    (root / "blob.txt").write_text("One long paragraph and nothing else.", encoding="utf-8")
    (root / "plain.md").write_text("Tide tables\n\nHigh water at noon.\n", encoding="utf-8")
    (root / "head.md").write_text("intro\n\n# Real heading\n", encoding="utf-8")
    titles = {d.doc_id: d.title for d in iter_documents([root])}
    assert titles == {
        "KS-2020-000001.txt": "KS-2020-000001",
        "blob.txt": "blob",
        "head.md": "Real heading",
        "note.txt": "Harbour notes",
        "plain.md": "Tide tables",
        "thread-00001.txt": "Site visit in Tarrow",
    }


DEP5 = (
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    "Upstream-Name: kelpdry\nSource: https://example.org/kelpdry\n\n"
    "Files: *\nCopyright: 2020 Orla Venn\nLicense: GPL-2+\n"
)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("https://example.org/harbour\n\nHarbour notes\nThe pier.\n", "Harbour notes"),
        ("<https://example.org/x>\nHarbour notes\nThe pier.\n", "Harbour notes"),
        ("Copyright (C) 2007 Kelp Society, Inc.\nAll rights reserved.\n\nKelp guide\nx\n",
         "Kelp guide"),
        ("# SPDX-License-Identifier: MIT\n# Kelp drying tool\nx = 1\n", "Kelp drying tool"),
        ("#!/bin/sh\n# -*- coding: utf-8 -*-\n# Dry the kelp\nrun\n", "Dry the kelp"),
        ("Format: 1.0\nHarbour log\nentries\n", "Harbour log"),
        ("This file is part of kelpdry, a tool for\ndrying kelp.\n\nKelp changes\nx\n",
         "Kelp changes"),  # a license notice paragraph
        ("# This program is free software; you can\n# redistribute it.\n\n# Racks\nx = 1\n",
         "Racks"),
        ("Copyright notice of the harbour\nbody\n", "Copyright notice of the harbour"),
        (DEP5, "kelpdry"),  # a DEP-5 copyright file is named by its upstream
        (DEP5.replace("Upstream-Name: kelpdry\n", ""), None),  # else the caller's path
    ],
)  # fmt: skip
def test_boilerplate_first_lines_are_never_titles(text: str, title: str | None) -> None:
    assert text_title(text) == title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Kelp\n====\n\nbody\n", "Kelp"),
        ("=======\n Kelp  \n=======\n\nSub\n---\n", "Kelp"),  # overline and underline
        (".. _top:\n.. note:: not this\n   nor this\n\nDrying kelp\n~~~~~~~~~~~\nx\n",
         "Drying kelp"),
        ("Intro text\n\nSection\n-------\nbody\n", "Section"),  # a section wins in .rst
    ],
)  # fmt: skip
def test_rst_section_titles(text: str, title: str) -> None:
    assert text_title(text, rst=True) == title


# -- Markdown sites (MkDocs and the like): what the rendered page is called ----------------
@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("# Install { #install }", "Install"),
        ("# Install {#install}", "Install"),
        ("# Install {: #install .lead }", "Install"),
        ('# Install { #install data-level="one two" }', "Install"),
        ("# Install { .lead } #", "Install"),
        ("### Install ### {: #install }", "Install"),  # after the closing hashes
        ("# C# notes", "C# notes"),
        ("# Using {placeholder} values", "Using {placeholder} values"),  # no attribute
        ("# Set {x}", "Set {x}"),
        ("Install { #install }\n=======", "Install"),  # setext
    ],
)
def test_markdown_headings_lose_their_attribute_list(heading: str, title: str) -> None:
    assert text_title(f"{heading}\n\nHow to install it.\n", markdown=True) == title


def test_a_clean_h1_wins_over_a_stem_with_a_digit() -> None:
    page = "# OAuth2 scopes { #oauth2-scopes }\n\nScopes limit what a token may do.\n"
    assert text_title(page, markdown=True, stem="oauth2-scopes") == "OAuth2 scopes"
    # a level-1 heading anywhere before the first section counts, past an intro
    later = "Some intro.\n\n# Python 3 types\n\n## Details\n"
    assert text_title(later, markdown=True, stem="python3-types") == "Python 3 types"
    # with no heading, a stem the first block states is still the title (as in .txt)
    assert text_title("Ticket T-1042: the lens\nmore\n", markdown=True, stem="T-1042") == "T-1042"


def test_a_page_without_h1_is_called_by_its_file_name() -> None:
    page = "Intro line.\n\n## Before you start\n\nText.\n\n## Steps\n"
    assert text_title(page, markdown=True, stem="first-steps") == "First steps"
    assert text_title(page, markdown=True, stem="bigger_applications") == "Bigger applications"
    # a name that says nothing (a folder's index page): its first heading
    assert text_title(page, markdown=True, stem="index") == "Before you start"
    assert text_title(page, markdown=True, stem="README") == "Before you start"
    # front matter still comes first; a page with no heading keeps its first line
    front = '---\ntitle: "Getting started"\n---\n## Steps\n'
    assert text_title(front, markdown=True, stem="first-steps") == "Getting started"
    assert text_title("Plain notes.\nMore.\n", markdown=True, stem="notes-1") == "Plain notes."


def test_loader_titles_of_a_small_markdown_site(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "guide").mkdir(parents=True)
    pages = {
        "index.md": "# Lens works { #lens-works }\n\nWelcome.\n",
        "guide/step-2-polish.md": "# Polishing a lens { #step-2-polish }\n\nStep 2.\n",
        "guide/release-notes.md": "## 1.2.0 { #v120 }\n\nFixes.\n\n## 1.1.0\n\nMore.\n",
        "guide/index.md": "## Overview {: .lead }\n\nThe guide.\n",
    }
    for name, text in pages.items():
        (site / name).write_text(text, encoding="utf-8")
    titles = {d.doc_id: d.title for d in iter_documents([site])}
    assert titles == {
        "index.md": "Lens works",
        "guide/step-2-polish.md": "Polishing a lens",
        "guide/release-notes.md": "Release notes",
        "guide/index.md": "Overview",
    }
