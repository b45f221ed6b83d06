"""A tiny invented HotpotQA file (the Hugging Face schema) and its pooled index.

:func:`write_tiny_hotpot` writes the file; the fixture ``tiny_hotpot`` (shared by
the eval and task tests: a plugin named in ``tests/conftest.py``) builds its pooled
index once per session.
"""

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
