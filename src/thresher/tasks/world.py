"""A generated world's planted chains as evaluation tasks (format ``world_chains``).

The records are the lines of ``DIR/.world/chains.jsonl`` (see
:mod:`thresher.synth.world.generate`): ``id``, ``question``, ``answer``,
``answer_aliases``, ``gold_docs`` (one per hop) and ``hops[].doc``. Gold ids are
the documents' paths relative to the world folder, i.e. the doc ids
``thresher index DIR`` gives them. Each hop is one document; the answer document
is the last hop's. Other documents stating a hop's fact (``alt_docs``) are kept
in ``metadata["alt_docs"]`` (per hop).

The synthesis pipeline's tasks (``thresher.synth-task/1``) are another format,
read by :mod:`thresher.tasks.synthetic`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thresher.errors import InputError
from thresher.tasks.task import Task

__all__ = ["WORLD_DATASET", "is_world_chain", "world_chain_task", "world_root"]

WORLD_DATASET = "thresher-world"


def is_world_chain(record: Any) -> bool:
    """Whether a parsed record is a line of a world's ``chains.jsonl``."""
    return (
        isinstance(record, dict)
        and {"question", "answer", "gold_docs", "hops"} <= record.keys()
        and isinstance(record.get("hops"), list)
        and all(isinstance(h, dict) and "doc" in h for h in record["hops"])
    )


def world_chain_task(record: dict[str, Any], where: str) -> Task:
    """A Task from one planted chain.

    Raises:
        InputError: missing or mistyped fields, naming ``where``.
    """
    for key in ("id", "question", "answer"):
        if not isinstance(record.get(key), str):
            raise InputError(f"{where}: chain field '{key}' must be a string")
    hops = record["hops"]
    docs = [h.get("doc") for h in hops]
    if not docs or not all(isinstance(d, str) and d for d in docs):
        raise InputError(f"{where}: every hop needs a 'doc' path")
    gold = record.get("gold_docs")
    if not isinstance(gold, list) or not all(isinstance(d, str) for d in gold):
        raise InputError(f"{where}: 'gold_docs' must be a list of paths")
    aliases = record.get("answer_aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise InputError(f"{where}: 'answer_aliases' must be a list of strings")
    meta = {
        "n_hops": len(hops),
        "anchor": record.get("anchor", ""),
        "bridges": [h.get("bridge") for h in hops],
        "alt_docs": [list(h.get("alt_docs") or []) for h in hops],
        "distractors": list(record.get("distractors") or []),
    }
    return Task(
        task_id=record["id"],
        question=record["question"],
        answer=record["answer"],
        answer_aliases=list(aliases),
        gold_doc_ids=list(dict.fromkeys(list(gold) + docs)),
        hops=[[d] for d in docs],
        final_doc_ids=[docs[-1]],
        dataset=WORLD_DATASET,
        metadata=meta,
    )


def world_root(chains_path: str | Path) -> Path:
    """The world folder of a ``DIR/.world/chains.jsonl`` file (what to index).

    Raises:
        InputError: the file is not inside a ``.world`` folder.
    """
    p = Path(chains_path).resolve()
    if p.parent.name != ".world":
        raise InputError(
            f"{chains_path}: world chains live at DIR/.world/chains.jsonl; "
            "pass --index for chains kept elsewhere"
        )
    return p.parent.parent
