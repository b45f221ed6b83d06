"""Cross-references of documentation markup and the grep patterns of their definition sites."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.config import GrepConfig
from thresher.corpus.docrefs import DocMention, cross_references
from thresher.corpus.refsites import MAX_PATTERN_CHARS, definition_pattern, site_name
from thresher.index.grep.guard import check_pattern


def _ident(name: str, role: str = "func") -> DocMention:
    return DocMention(name, "ident", 0, role)


def _label(name: str) -> DocMention:
    return DocMention(name, "ref", 0, "ref")


def _defines(ref: DocMention, text: str) -> bool:
    pattern = definition_pattern(ref)
    assert pattern is not None
    return re.search(pattern, text) is not None


def test_cross_references_are_object_roles_and_labels_not_formatting_or_pages() -> None:
    text = (
        "Raise :exc:`~werkzeug.exceptions.BadRequest` (see :ref:`The guide <Loop-Controls>`), "
        "set :setting:`CSRF_FAILURE_VIEW`, call :py:func:`flask.url_for()`, press :kbd:`Ctrl`, "
        "open :file:`conf.py`, read :doc:`tutorial/index` and ``plain_literal``."
    )
    found = [(m.text, m.kind, m.role) for m in cross_references(text)]
    assert found == [
        ("werkzeug.exceptions.BadRequest", "ident", "exc"),
        ("Loop-Controls", "ref", "ref"),
        ("CSRF_FAILURE_VIEW", "ident", "setting"),
        ("flask.url_for", "ident", "func"),
    ]
    assert cross_references("Plain prose with no markup: a.b and snake_case.") == []


def test_a_label_is_defined_by_a_rest_or_myst_target_in_any_case() -> None:
    ref = _label("loopcontrols-extension")
    assert _defines(ref, "intro\n\n.. _loopcontrols-extension:\n\nLoop Controls\n---")
    assert _defines(ref, "  .. _LoopControls-Extension:")
    assert _defines(ref, "(loopcontrols-extension)=\n# Loop controls")
    assert not _defines(ref, ".. _loopcontrols-extension-old:")
    assert not _defines(ref, "See :ref:`loopcontrols-extension` for more.")


def test_an_object_is_defined_by_a_directive_naming_it_with_or_without_its_qualifier() -> None:
    bad = _ident("werkzeug.exceptions.BadRequest", "exc")
    assert site_name(bad) == "BadRequest"
    assert _defines(bad, ".. module:: werkzeug.exceptions\n\n.. autoexception:: BadRequest\n")
    assert _defines(bad, ".. py:class:: werkzeug.exceptions.BadRequest(description=None)")
    assert _defines(bad, "```{autoexception} BadRequest\n```")
    assert not _defines(bad, ".. autoexception:: BadRequestKeyError")
    assert not _defines(bad, "Raise :exc:`~werkzeug.exceptions.BadRequest` on bad input.")
    setting = _ident("CSRF_FAILURE_VIEW", "setting")
    assert _defines(setting, ".. setting:: CSRF_FAILURE_VIEW\n\n``CSRF_FAILURE_VIEW``\n---")
    route = _ident("Flask.route", "meth")
    assert _defines(route, "   .. automethod:: route")
    assert _defines(route, ".. method:: Flask.route(rule, **options)")
    assert not _defines(route, ".. method:: Blueprint.route(rule, **options)")


def test_what_has_no_definition_site_gives_no_pattern() -> None:
    assert definition_pattern(_ident("get", "meth")) is None  # too short to single out
    assert definition_pattern(DocMention("usage/setup", "doc", 0, "doc")) is None
    assert definition_pattern(_label("x" * 300)) is None  # longer than grep takes


#: a dotted name whose last part is long enough to follow
_NAMES = st.from_regex(
    r"([A-Za-z_][A-Za-z0-9_]{0,12}\.){0,3}[A-Za-z_][A-Za-z0-9_]{3,20}", fullmatch=True
)
_LABELS = st.from_regex(r"[a-z0-9][a-z0-9_ .:-]{2,40}[a-z0-9]", fullmatch=True)


@settings(deadline=None, max_examples=60)
@given(_NAMES)
def test_every_object_pattern_is_a_pattern_grep_takes_and_finds_its_directive(name: str) -> None:
    ref = _ident(name)
    pattern = definition_pattern(ref)
    assert pattern is not None and len(pattern) <= MAX_PATTERN_CHARS
    check_pattern(pattern, GrepConfig())
    last = name.rsplit(".", 1)[-1]
    assert re.search(pattern, f"text\n.. autofunction:: {name}\n") is not None
    assert re.search(pattern, f".. py:function:: {last}(a, b)") is not None
    assert re.search(pattern, f".. function:: {last}x") is None
    assert re.search(pattern, f"uses :func:`{name}` here") is None


@settings(deadline=None, max_examples=60)
@given(_LABELS)
def test_every_label_pattern_is_a_pattern_grep_takes_and_finds_its_target(label: str) -> None:
    pattern = definition_pattern(_label(label))
    assert pattern is not None
    check_pattern(pattern, GrepConfig())
    assert re.search(pattern, f"para\n\n.. _{label.upper()}:\n\nTitle") is not None
    assert re.search(pattern, f"({label})=") is not None
    assert re.search(pattern, f".. _{label}x:") is None
