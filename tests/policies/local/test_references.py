"""Following documentation cross-references: which references a hop greps, and an episode
over a real index finding a setting's definition through the page that refers to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document
from thresher.policies.local.references import RefAnchor, reference_leads
from thresher.policies.local.text import content_words

GUIDE = (
    "The set_language view stores the visitor's language choice in a cookie named by the "
    ":setting:`BABEL_JAR` setting. Templates may use :ttag:`get_current_language`."
    " The Locale Middleware reads that cookie on each request."
    "\n\nUnrelated markup: see :ref:`release-process` and :setting:`SECRET_KEY`."
)


def _q(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def test_references_of_sentences_holding_question_words_are_followed_best_first() -> None:
    q = _q("Which cookie keeps the visitor's language choice?")
    leads = reference_leads(q, [RefAnchor("guide#0", GUIDE, 0.8)], [GUIDE], limit=5)
    assert [lead.target for lead in leads] == ["BABEL_JAR", "get_current_language"]
    assert leads[0].source == "guide#0" and leads[0].name == "BABEL_JAR"
    assert leads[0].score > leads[1].score
    assert reference_leads(q, [RefAnchor("guide#0", GUIDE, 0.8)], [GUIDE], limit=0) == []


def test_a_reference_followed_or_defined_in_view_is_not_followed_again() -> None:
    q = _q("Which cookie keeps the visitor's language choice?")
    anchor = RefAnchor("guide#0", GUIDE, 0.8)
    first = reference_leads(q, [anchor], [GUIDE], limit=1)[0]
    again = reference_leads(q, [anchor], [GUIDE], followed={first.pattern}, limit=1)
    assert [lead.target for lead in again] == ["get_current_language"]
    defined = ".. setting:: BABEL_JAR\n\nDefault: ``'django_language'``"
    held = reference_leads(q, [anchor], [GUIDE, defined], limit=1)
    assert [lead.target for lead in held] == ["get_current_language"]


def test_text_without_roles_gives_no_reference() -> None:
    text = "Marrowick lies in the province of Tessaly. Its salt market is the oldest."
    assert (
        reference_leads(_q("Where is Marrowick?"), [RefAnchor("m", text, 1.0)], [text], limit=3)
        == []
    )


def _docs() -> list[Document]:
    settings = [
        f".. setting:: {name}\n\n{name}\n{'-' * len(name)}\n\nDefault: ``{default}``\n\n{what} "
        "It is read once at startup; changing it later has no effect on a running "
        "server, and tests may override it for the duration of one test case."
        for name, default, what in [
            ("SESSION_COOKIE_AGE", "1209600", "The age of session cookies, in seconds."),
            ("SECRET_KEY", "''", "A secret key for a particular installation."),
            ("TIME_ZONE", "'America/Chicago'", "A string representing the time zone."),
        ]
        + [(f"OPTION_{i:02d}", str(i), f"Option {i} of the startup sequence.") for i in range(30)]
        + [("BABEL_JAR", "'django_language'", "Any string your project prefers.")]
    ]
    filler = [
        Document(
            f"docs/topics/page{i}.rst",
            f"Topic {i}",
            f"Topic {i}\n========\n\nA view keeps what the visitor chose, language or "
            f"theme, in a cookie or the session; part {i} of the framework says what it is called.",
            "test",
        )
        for i in range(24)
    ]
    return [
        Document(
            "docs/topics/i18n.rst",
            "Internationalization",
            "Internationalization\n====================\n\n" + GUIDE,
            "test",
        ),
        Document(
            "docs/ref/settings.rst",
            "Settings",
            "Settings\n========\n\n" + "\n\n".join(settings),
            "test",
        ),
        *filler,
    ]


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from thresher.index.backends import ingest

    path = tmp_path_factory.mktemp("refs-index")
    ingest(_docs(), path, Config().override({"chunking.max_tokens": 64}), progress=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("refs", [0, 2])
def test_an_episode_greps_the_definition_of_a_reference_its_anchor_makes(
    docs_index: Path, refs: int, tmp_path: Path
) -> None:
    import json

    import thresher

    trace = tmp_path / "trace.jsonl"
    thresher.search(
        "The set_language view keeps the visitor's language choice in a cookie: what is "
        "that cookie called by default?",
        index=str(docs_index),
        policy="local",
        config=Config().override({"chunking.max_tokens": 64}),
        k=5,
        policy_options={"refs_per_hop": refs, "stop_at": 1.0},
        trace=str(trace),
    )
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    greps = [
        e
        for e in events
        if e.get("type") == "tool_result"
        and e.get("tool") == "grep_corpus"
        and "BABEL_JAR" in e["arguments"]["pattern"]
    ]
    if refs == 0:
        assert greps == []
        return
    assert greps, "the reference to BABEL_JAR was not followed"
    found = [rec for e in greps for rec in e.get("lineage", [])]
    # the definition found, its lineage the anchor that made the reference
    assert any(rec["doc_id"] == "docs/ref/settings.rst" for rec in found)
    assert all(rec["parents"] == ["docs/topics/i18n.rst#0"] for rec in found)


def test_refs_per_hop_is_a_control_the_weights_may_tune_and_an_option_overrides() -> None:
    from dataclasses import replace

    from thresher.policies.local.constants import DEFAULT_CONTROLS
    from thresher.policies.local.models import load_weights
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import LocalPolicy

    assert LocalPolicy().refs_per_hop == DEFAULT_CONTROLS["refs_per_hop"]
    tuned = replace(load_weights(None), controls={"refs_per_hop": 3})
    assert LocalPolicy(LocalOptions(weights=tuned)).refs_per_hop == 3
    assert LocalPolicy(LocalOptions(weights=tuned, refs_per_hop=0)).refs_per_hop == 0
    assert LocalPolicy(LocalOptions(refs_per_hop=0)).start("q").planner.refs_per_hop == 0
