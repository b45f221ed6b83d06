"""Bridge candidate sources: identifier-shaped spans and documents' file names, whatever
their case, and an episode on a lowercase folder that can only hop through them."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local import LocalPolicy
from thresher.policies.local.bridges import Anchor, bridge_queries
from thresher.policies.local.entities import entity_spans
from thresher.policies.local.planner import DEFAULT_SPANS
from thresher.policies.local.sources import (
    CapitalSpans,
    DocumentNames,
    IdentifierSpans,
    NamedSpans,
    NameSource,
    SpanSource,
    SpanUnion,
    document_names,
    identifier_spans,
)


def test_identifier_spans_find_lowercase_names_by_shape() -> None:
    text = (
        "chsh accepts shells listed in /etc/shells; see deluser.conf(5), pam_deny and "
        "login.defs, e.g. version 3.2.1 or v1.2, mail root@example.org, "
        "https://example.org/x, a world-writable file, the --home-dir option."
    )
    assert identifier_spans(text) == ["/etc/shells", "deluser.conf", "pam_deny", "login.defs"]


def test_span_union_reads_each_source_once_per_phrase() -> None:
    both = SpanUnion((CapitalSpans(), IdentifierSpans()))
    assert isinstance(both, SpanSource)
    sentence = "Written by Erik Troan, pam_shells reads /etc/shells."
    assert both.spans(sentence) == [*entity_spans(sentence), "pam_shells", "/etc/shells"]


@pytest.mark.parametrize(
    ("doc_id", "names"),
    [
        ("man/deluser.conf.5.txt", ["deluser.conf"]),
        ("man/nologin.8.txt", ["nologin"]),
        ("notes/kubernetes-setup.md", ["kubernetes-setup"]),
        ("notes.txt", ["notes"]),
        ("doc/passwd/copyright", ["passwd"]),  # every package has one: its folder names it
        ("doc/adduser/README.Debian", ["adduser"]),
        ("README.md", []),
        ("p-0123456789ab", []),  # a dataset paragraph's id is no file name
        ("x/2024.txt", []),
    ],
)
def test_document_names_from_file_names(doc_id: str, names: list[str]) -> None:
    assert document_names(doc_id) == names


def test_document_names_keep_titles_and_add_file_names() -> None:
    source = DocumentNames()
    assert isinstance(source, NameSource)
    titles = {"DELUSER(8) System Manager's Manual DELUSER(8)": "man/deluser.8.txt"}
    assert source.names(titles) == {**titles, "deluser": "man/deluser.8.txt"}


def test_a_one_word_file_name_common_among_the_documents_seen_is_no_name() -> None:
    titles = {"LOGIN(1)": "man/login.1.txt", "DELUSER(8)": "man/deluser.8.txt"}
    words = {
        "man/login.1.txt": {"login", "user"},
        "man/deluser.8.txt": {"deluser", "login"},
        "man/su.1.txt": {"login", "shell"},
        "man/chsh.1.txt": {"shell"},
    }
    names = DocumentNames(common_share=0.5).names(titles, lambda: words)
    assert "deluser" in names and "login" not in names  # 3 of 4 documents say "login"
    assert "login" in DocumentNames(common_share=0.8).names(titles, lambda: words)


def test_named_spans_find_known_names_in_any_case() -> None:
    named = NamedSpans(("deluser", "login.defs", "shells"))
    assert named.spans("Use DELUSER(8) instead; see /etc/login.defs.") == ["deluser", "login.defs"]
    assert named.spans("the pam_shells module") == ["shells"]  # "_" is a word boundary


def test_a_lowercase_tool_name_becomes_a_bridge() -> None:
    """Only through the file-name source: the sentence has no capital but its first."""
    question = (
        "userdel's manual points debian administrators to another tool: what does it back up?"
    )
    anchor = Anchor(
        "man/userdel.8.txt#0",
        "man/userdel.8.txt",
        "USERDEL(8) System Management Commands USERDEL(8)",
        "Userdel is a low level utility. Debian administrators should usually use "
        "deluser(8) instead.",
    )
    titles = {"DELUSER(8) System Manager's Manual DELUSER(8)": "man/deluser.8.txt"}
    before = bridge_queries(question, [anchor], titles)
    after = bridge_queries(question, [anchor], DocumentNames().names(titles), spans=DEFAULT_SPANS)
    assert all(b.phrase != "deluser" for b in before)
    assert after and after[0].phrase == "deluser" and after[0].kind == "title"


#: tools whose pages read alike: the one userdel's page points to is told apart only by
#: its name, which no capital marks
_TOOLS = [
    "frobctl",
    "quuxd",
    "wibblectl",
    "zapmon",
    "blorpsync",
    "grommet",
    "plinkd",
    "snorkel",
    "vexil",
    "yarrow",
    "dunlin",
    "tansy",
    "corvid",
    "ferrule",
    "gimlet",
    "hasp",
    "jalousie",
    "kestrel",
    "lanyard",
    "mattock",
    "nacelle",
    "oriel",
    "pintle",
    "quoin",
    "rowel",
    "sprocket",
    "tholepin",
]
_FOLDER = {
    "tools/userdel.txt": (
        "userdel - delete a user account and related files.\n"
        "userdel is a low level utility for removing users. on debian, administrators "
        "should usually use ossuary instead.\n"
    ),
    **{
        f"tools/{name}.txt": (
            f"{name} - a tool for administrators.\n"
            f"{name} reads /etc/{name}.conf first; administrators edit that file.\n"
        )
        for name in ["ossuary", *_TOOLS]
    },
}


@pytest.fixture(scope="module")
def lowercase_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from thresher.corpus.loaders import iter_documents
    from thresher.index.backends import ingest

    root = tmp_path_factory.mktemp("lowercase")
    for rel, text in _FOLDER.items():
        (root / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / rel).write_text(text, encoding="utf-8")
    ingest(iter_documents([root / "docs"]), root / "index", Config(), progress=False)
    return root / "index"


def test_an_episode_hops_through_a_lowercase_name(lowercase_index: Path) -> None:
    config = Config()
    question = (
        "userdel's page points debian administrators to another program. "
        "which file does that program read first?"
    )
    with EmbeddedStore(lowercase_index, config) as store:
        result = run_episode(question, store, LocalPolicy(None, config=config), config)
    proposals = [e.to_dict().get("proposal") or {} for e in result.trace if e.type == "proposal"]
    asked = [c["arguments"].get("query", "") for p in proposals for c in p.get("tool_calls") or ()]
    assert any(q.startswith("ossuary") for q in asked), asked
    assert {"tools/userdel.txt", "tools/ossuary.txt"} <= set(result.doc_ids[:5])
