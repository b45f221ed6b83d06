"""thresher.search(index=PATH) keeps the index open for the next call on it."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import threading
from pathlib import Path

import pytest

import thresher
from thresher.corpus.document import Document
from thresher.harness.actions import Proposal, answer, call
from thresher.index import handles
from thresher.index.backends import ingest
from thresher.index.embedded import store as embedded
from thresher.policies.scripted import ScriptedPolicy

from .small_corpus import corpus, corpus_config


@pytest.fixture
def index(tmp_path, monkeypatch) -> Path:
    """A fresh index of the test corpus."""
    monkeypatch.delenv(handles.REUSE_ENV, raising=False)
    where = tmp_path / "index"
    ingest(corpus(), where, corpus_config(), progress=False)
    yield where
    thresher.close_indexes()


@pytest.fixture
def opens(monkeypatch) -> list[Path]:
    """Every generation the embedded store opens."""
    made: list[Path] = []
    real = embedded.open_generation

    def opening(generation: Path):  # type: ignore[no-untyped-def]
        made.append(generation)
        return real(generation)

    monkeypatch.setattr(embedded, "open_generation", opening)
    return made


def _copies(index: Path) -> list[str]:
    """The generations of ``index`` this process holds open (a hold is a file descriptor
    on the generation's manifest, :mod:`thresher.index.embedded.holds`; a closed store
    holds none), one entry per hold."""
    gc.collect()
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(str(index)) and target.endswith("manifest.json"):
                held.append(Path(target).parent.name)
    return sorted(held)


def _grep(pattern: str) -> ScriptedPolicy:
    """Grep for ``pattern``, then answer with the document of that name (kept only if seen)."""
    found = pattern.lower()
    return ScriptedPolicy(
        [Proposal(tool_calls=(call("grep_corpus", pattern=pattern),)), answer(found)]
    )


def _search(index: Path, pattern: str, **options):
    return thresher.search(
        "q?", index=index, policy=_grep(pattern), config=corpus_config(), **options
    )


def test_a_second_call_reuses_the_open_index(index, opens):
    first = _search(index, "Kestrin")
    copies = _copies(index)
    second = _search(index, "Kestrin")
    assert len(opens) == 1 and len(copies) == 1 and _copies(index) == copies
    assert first.doc_ids == second.doc_ids and "kestrin" in second.doc_ids
    assert handles.kept_count() == 1
    _search(str(index), "Kestrin")  # the same folder named another way
    assert len(opens) == 1


def test_a_new_generation_is_seen_and_the_old_store_closed(index, opens):
    _search(index, "Kestrin")
    old = _copies(index)
    extra = Document("zephyr", "Zephyr Mill", "The Zephyr Mill ground barley in Vennor.", "test")
    ingest([*corpus(), extra], index, corpus_config(), progress=False)
    result = _search(index, "Zephyr")
    assert "zephyr" in result.doc_ids
    assert len(opens) == 2
    now = _copies(index)
    assert len(now) == 1 and not (set(now) & set(old))  # the old store closed: released
    assert handles.kept_count() == 1


def test_a_folder_built_again_is_opened_again(index, opens):
    _search(index, "Kestrin")
    shutil.rmtree(index)  # built again from scratch: gen-000001 once more
    extra = Document("zephyr", "Zephyr Mill", "The Zephyr Mill ground barley in Vennor.", "test")
    ingest([extra], index, corpus_config(), progress=False)
    assert "zephyr" in _search(index, "Zephyr").doc_ids
    assert len(opens) == 2


def test_a_store_in_use_is_closed_when_its_call_ends(index, opens):
    with handles.borrowed(str(index), corpus_config()) as store:
        thresher.close_indexes()
        assert handles.kept_count() == 0
        assert store.bm25_search("Kestrin", k=1)  # still open for the call using it
    assert _copies(index) == []
    _search(index, "Kestrin")
    assert len(opens) == 2


def test_reuse_false_opens_every_time(index, opens, monkeypatch):
    _search(index, "Kestrin", reuse=False)
    _search(index, "Kestrin", reuse=False)
    assert len(opens) == 2 and _copies(index) == [] and handles.kept_count() == 0
    monkeypatch.setenv(handles.REUSE_ENV, "0")
    _search(index, "Kestrin")
    assert len(opens) == 3 and handles.kept_count() == 0


def test_close_indexes_drops_every_kept_store(index, opens):
    _search(index, "Kestrin")
    thresher.close_indexes()
    assert handles.kept_count() == 0 and _copies(index) == []
    _search(index, "Kestrin")
    assert len(opens) == 2


def test_stores_with_other_settings_are_kept_apart(index, opens):
    _search(index, "Kestrin")
    thresher.search("q?", index=index, policy=_grep("Kestrin"),
                    config=corpus_config().override({"retrieval.rrf_k": 7}))  # fmt: skip
    thresher.search("q?", index=index, policy=_grep("Kestrin"), config=corpus_config(),
                    where={"lang": "en"})  # fmt: skip  # a filter does not need its own store
    assert len(opens) == 2 and handles.kept_count() == 2


def test_calls_from_several_threads_share_one_store(index, opens):
    found: list[list[str]] = []

    def one() -> None:
        found.append(_search(index, "Kestrin").doc_ids)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [["kestrin"]] * 4
    assert handles.kept_count() == 1 and len(_copies(index)) == 1  # extra opens closed
    _search(index, "Kestrin")
    assert len(_copies(index)) == 1
