"""Document links: the links a page makes, and the document ids of an index they resolve to."""

from __future__ import annotations

from thresher.corpus.doclinks import DocPaths, document_links, link_definitions

IDS = [
    "site/docs/index.md",
    "site/docs/guide/intro.md",
    "site/docs/guide/config.md",
    "site/docs/api/index.md",
    "site/README.md",
    "django/docs/ref/settings.txt",
    "django/docs/topics/i18n/index.txt",
    "other/docs/ref/settings.txt",
    "flask/docs/config.rst",
    "flask/docs/api.rst",
]
PATHS = DocPaths(IDS)


def test_every_markup_of_a_link_is_read_and_non_pages_are_left_out() -> None:
    text = (
        "See :doc:`the settings </ref/settings>`, {doc}`config`, [intro](guide/intro.md#top), "
        '[the API][api], [api][], [API] and <a class="x" href="deploy.html">deploy</a>. '
        "Not: ![logo](logo.png), [site](https://example.org/a.md), [here](#top), "
        "[mail](mailto:a@b.org), :ref:`label`."
    )
    links = document_links(text, link_definitions("[api]: api/index.md\n"))
    assert [(d.text, d.role) for d in links] == [
        ("/ref/settings", "doc"),
        ("config", "doc"),
        ("guide/intro.md#top", "md"),
        ("api/index.md", "md"),
        ("api/index.md", "md"),
        ("api/index.md", "md"),
        ("deploy.html", "html"),
    ]
    assert document_links("[the API][api]") == []  # no definitions given: not read
    # a definition line, a checkbox and an unknown label are no links
    defs = link_definitions("  [api]:api/index.md")
    assert defs == {"api": "api/index.md"}
    assert document_links("  [api]:api/index.md\n- [x] done, [nothing] here", defs) == []


def test_a_relative_link_resolves_from_the_citing_folder() -> None:
    home = "site/docs/guide/intro.md"
    assert PATHS.resolve("config.md", home) == ("site/docs/guide/config.md",)
    assert PATHS.resolve("./config.md#secrets", home) == ("site/docs/guide/config.md",)
    assert PATHS.resolve("config.html?x=1", home) == ("site/docs/guide/config.md",)
    assert PATHS.resolve("config", home) == ("site/docs/guide/config.md",)
    assert PATHS.resolve("../index.md", home) == ("site/docs/index.md",)
    assert PATHS.resolve("../api/", home) == ("site/docs/api/index.md",)
    assert PATHS.resolve("../../README.md", home) == ("site/README.md",)
    assert PATHS.resolve("api", "flask/docs/config.rst") == ("flask/docs/api.rst",)


def test_a_link_to_no_document_of_the_index_resolves_to_none() -> None:
    home = "site/docs/guide/intro.md"
    assert PATHS.resolve("missing.md", home) == ()
    assert PATHS.resolve("../../../../outside.md", home) == ()
    assert PATHS.resolve("intro.md", home) == ()  # itself
    assert PATHS.resolve("logo.png", home) == ()
    assert PATHS.resolve("#top", home) == ()


def test_a_rooted_link_matches_a_path_suffix_nearest_the_citing_document() -> None:
    home = "django/docs/topics/i18n/index.txt"
    assert PATHS.resolve("/ref/settings", home) == ("django/docs/ref/settings.txt",)
    assert PATHS.resolve("../../ref/settings", home) == ("django/docs/ref/settings.txt",)
    # from a third project both match equally: the caller sees there is no telling
    assert PATHS.resolve("/ref/settings", "flask/docs/api.rst") == (
        "django/docs/ref/settings.txt",
        "other/docs/ref/settings.txt",
    )
    assert PATHS.resolve("/topics/i18n/", "django/docs/ref/settings.txt") == (
        "django/docs/topics/i18n/index.txt",
    )
