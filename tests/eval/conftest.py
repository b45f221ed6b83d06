"""Shared eval fixtures: a tiny invented HotpotQA file and its pooled index (built once)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# Three invented questions in the Hugging Face HotpotQA schema, four paragraphs each
# (two gold, two distractors); the last paragraph of q2 repeats one of q1's.
_PARAS = {
    "Orla Venn": ["Orla Venn is a glassblower.", " She was born in Tarrow."],
    "Tarrow": ["Tarrow is a harbour town on the Kessel coast.", " Its mayor is Ivo Brandt."],
    "Kessel Pier": ["Kessel Pier was built in 1881 from oak."],
    "Mount Ferra": ["Mount Ferra is a dormant volcano with a snowy crater."],
    "Quill Press": ["Quill Press publishes poetry.", " It was founded by Dana Mohr."],
    "Dana Mohr": ["Dana Mohr studied law in Halbeck before turning to poetry."],
    "Halbeck": ["Halbeck is a university city famous for its rowing club."],
    "Red Lantern": ["The Red Lantern is a tavern serving eel stew."],
    "Sable Lake": ["Sable Lake freezes every winter.", " Skaters gather at Fenwick Dock."],
    "Fenwick Dock": ["Fenwick Dock was restored by the Lund family in 1990."],
}
_QUESTIONS = [
    ("q1", "Who is the mayor of the town where Orla Venn was born?", "Ivo Brandt",
     ["Orla Venn", "Tarrow"], ["Orla Venn", "Tarrow", "Kessel Pier", "Mount Ferra"]),
    ("q2", "Where did the founder of Quill Press study law?", "Halbeck",
     ["Quill Press", "Dana Mohr"], ["Quill Press", "Dana Mohr", "Red Lantern", "Mount Ferra"]),
    ("q3", "Which family restored the dock where Sable Lake skaters gather?", "Lund",
     ["Sable Lake", "Fenwick Dock"], ["Sable Lake", "Fenwick Dock", "Halbeck", "Kessel Pier"]),
]  # fmt: skip


def write_tiny_hotpot(path: Path) -> Path:
    """Write the invented HotpotQA file (HF schema) to ``path``."""
    lines = []
    for qid, question, answer, gold, context in _QUESTIONS:
        lines.append(
            {
                "id": qid, "question": question, "answer": answer, "type": "bridge",
                "level": "easy",
                "supporting_facts": {"title": gold, "sent_id": [0] * len(gold)},
                "context": {"title": context, "sentences": [_PARAS[t] for t in context]},
            }
        )  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_hotpot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(task file, cache dir, pooled index folder) of the invented HotpotQA file."""
    from thresher.tasks.corpus import pooled_index

    root = tmp_path_factory.mktemp("tiny-hotpot")
    tasks = write_tiny_hotpot(root / "tiny_hotpot.jsonl")
    cache = root / "cache"
    return tasks, cache, pooled_index([tasks], cache)


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
