"""The evaluation task record: a question, its answer, and the documents that support it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Task"]

_LIST_FIELDS = ("answer_aliases", "gold_doc_ids", "final_doc_ids")


@dataclass(slots=True)
class Task:
    """One evaluation question with its gold documents.

    Attributes:
        task_id: the dataset's question id (unique within a file).
        question: the question text.
        answer: the reference answer; empty when the dataset has none (BEIR): answer
            metrics are then undefined for the task, not zero.
        answer_aliases: other accepted answers.
        gold_doc_ids: the supporting documents, in hop order where the dataset gives
            one (ids as the index stores them: ``paragraph_doc_id`` for dataset paragraphs).
        hops: the doc ids needed at each hop, in order; empty when unknown.
        final_doc_ids: the document(s) holding the answer; empty when unknown.
        dataset: ``hotpotqa``, ``musique``, ``2wikimultihopqa``, ``beir/<name>`` or the
            record's own name.
        metadata: JSON-safe extras (question type, level, facts, ...).
    """

    task_id: str
    question: str
    answer: str
    answer_aliases: list[str] = field(default_factory=list)
    gold_doc_ids: list[str] = field(default_factory=list)
    hops: list[list[str]] = field(default_factory=list)
    final_doc_ids: list[str] = field(default_factory=list)
    dataset: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def bridge_doc_ids(self) -> list[str]:
        """Gold documents that lead to the answer but do not hold it.

        The docs of every hop but the last when hops are known; otherwise the gold
        docs outside ``final_doc_ids`` (empty when the answer documents are unknown).
        """
        final = set(self.final_doc_ids)
        if self.hops:
            earlier = [d for hop in self.hops[:-1] for d in hop]
            return [d for d in dict.fromkeys(earlier) if d not in final]
        if not final:
            return []
        return [d for d in self.gold_doc_ids if d not in final]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; :meth:`from_dict` reads it back."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        """A Task from :meth:`to_dict` output.

        Raises:
            ValueError: a missing required field or a field of the wrong type.
        """
        for key in ("task_id", "question", "answer"):
            if not isinstance(data.get(key), str):
                raise ValueError(f"field '{key}' must be a string")
        for key in _LIST_FIELDS:
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise ValueError(f"field '{key}' must be a list of strings")
        hops = data.get("hops", [])
        if not isinstance(hops, list) or not all(
            isinstance(h, list) and all(isinstance(x, str) for x in h) for h in hops
        ):
            raise ValueError("field 'hops' must be a list of lists of strings")
        metadata = data.get("metadata", {})
        if not isinstance(metadata, dict):
            raise ValueError("field 'metadata' must be an object")
        return cls(
            task_id=data["task_id"],
            question=data["question"],
            answer=data["answer"],
            answer_aliases=list(data.get("answer_aliases", [])),
            gold_doc_ids=list(data.get("gold_doc_ids", [])),
            hops=[list(h) for h in hops],
            final_doc_ids=list(data.get("final_doc_ids", [])),
            dataset=str(data.get("dataset", "")),
            metadata=dict(metadata),
        )
