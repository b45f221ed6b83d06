"""Eval fixtures: a paired run on a small generated world (the invented HotpotQA file
and its pooled index are in ``tiny_hotpot.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def world_run(tmp_path_factory: pytest.TempPathFactory):
    """A paired run on a small generated world: (report, out dir, output paths).

    A = ``single-shot``; B = a config file: ``single-shot`` returning 2 documents
    from 3 search results. The index holds the first three chains' gold and
    distractor documents (a real index, kept small so the test stays fast).
    """
    from thresher.corpus.loaders import iter_documents
    from thresher.eval.protocol import compare, load_run_config
    from thresher.eval.report import write_report
    from thresher.index.backends import ingest, open_store
    from thresher.synth.world.generate import generate_world
    from thresher.tasks.readers import load_tasks

    root = tmp_path_factory.mktemp("world-run")
    generate_world(7, "small", root / "world")
    tasks = load_tasks(root / "world" / ".world" / "chains.jsonl")[:3]
    keep = {d for t in tasks for d in t.gold_doc_ids + t.metadata["distractors"]}
    ingest([d for d in iter_documents([root / "world"]) if d.doc_id in keep], root / "index")
    (root / "narrow.toml").write_text(
        'label = "narrow"\n[policy]\nname = "single-shot"\ntop_k = 2\n'
        "[episode]\nsearch_results = 3\n"
    )
    run_a = load_run_config("single-shot")
    run_b = load_run_config(str(root / "narrow.toml"))
    out = root / "out"
    store = open_store(root / "index")
    try:
        report = compare(tasks, store, run_a, run_b, workers=2, out_dir=out, resamples=2000)
    finally:
        store.close()
    return report, out, write_report(report, out)
