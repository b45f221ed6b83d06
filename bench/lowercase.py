"""Lowercased copies of dataset files, for the lowercase-robustness rows of bench_policies.

Every string value of every record is lowercased (questions, titles, passages,
supporting-fact titles, answers), keys are kept, so the gold references still
match their paragraphs; the copy keeps the file's name and layout (a JSON array
stays an array, JSONL stays JSONL). Two titles that differ only by case become
one document: :func:`lowercased_copies` returns how many such merges each file
has so the bench can print them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["lower_values", "lowercased_copies"]


def lower_values(value: Any) -> Any:
    """``value`` with every string inside it lowercased (dict keys kept)."""
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, list):
        return [lower_values(v) for v in value]
    if isinstance(value, dict):
        return {k: lower_values(v) for k, v in value.items()}
    return value


def _lower_file(src: Path, dst: Path) -> None:
    text = src.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        dst.write_text(json.dumps(lower_values(json.loads(text)), ensure_ascii=False), "utf-8")
        return
    lines = (
        json.dumps(lower_values(json.loads(ln)), ensure_ascii=False)
        for ln in text.splitlines()
        if ln.strip()
    )
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")


def lowercased_copies(files: Sequence[Path], out_dir: Path) -> list[Path]:
    """Lowercased copies of ``files`` in ``out_dir`` (same names), written once.

    A copy is rewritten when it is older than its source.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for src in files:
        dst = out_dir / src.name
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            tmp = dst.with_suffix(dst.suffix + ".tmp")
            _lower_file(src, tmp)
            tmp.replace(dst)
        out.append(dst)
    return out


class ReusedVectors:
    """An embedder that answers from the vectors of a cased index when it can.

    The default embedder (MiniLM) lowercases its input in its tokenizer, so a
    lowercased chunk has exactly its cased twin's vector; reading those back
    from the cased index saves re-embedding a whole pool on a shared 2-core
    machine. Texts it has no vector for are embedded by ``inner``. Before
    trusting the reuse, :func:`lowercase_index` checks it on a sample
    (:meth:`agrees`).
    """

    def __init__(self, inner: Any, cased_index: Path) -> None:
        from thresher.index.embedded import layout
        from thresher.index.embedded.records_file import RECORDS, RecordsFile
        from thresher.index.embedded.vectors import Vectors

        self._inner = inner
        self.name: str = inner.name
        self.reused = 0
        self.computed = 0
        generation = (
            cased_index
            if (cased_index / RECORDS).is_file()
            else (layout.current_generation(cased_index))
        )
        ids = layout.read_manifest(generation).chunk_ids()
        records = RecordsFile.open(generation / RECORDS, len(ids))
        assert records is not None, f"{generation}: no chunk records"
        matrix = Vectors(generation).matrix
        row = {c: i for i, c in enumerate(ids)}
        self._vectors: dict[str, Any] = {}
        for cid, _doc_id, doc, meta in records.rows(ids):
            title = str(json.loads(meta).get("title") or "")
            text = f"{title}\n{doc}" if title else doc
            self._vectors[text.lower()] = matrix[row[cid]]

    @property
    def dimension(self) -> int:
        return int(self._inner.dimension)

    def agrees(self, sample: int = 16) -> bool:
        """Whether ``inner`` gives the stored vector for a few stored texts, lowercased."""
        import numpy as np

        texts = list(self._vectors)[:: max(1, len(self._vectors) // sample)][:sample]
        if not texts:
            return False
        fresh = self._inner.embed(texts)
        stored = np.asarray([self._vectors[t] for t in texts], dtype=np.float32)
        return bool(np.abs(fresh - stored).max() < 1e-4)

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t.lower() not in self._vectors]
        for i, t in enumerate(texts):
            if t.lower() in self._vectors:
                out[i] = self._vectors[t.lower()]
        if missing:
            out[missing] = self._inner.embed([texts[i] for i in missing])
        self.computed += len(missing)
        self.reused += len(texts) - len(missing)
        return out


def lowercase_index(files: Sequence[Path], cased_index: Path, cache: Path, config: Any) -> Path:
    """The pooled index of lowercased ``files`` under ``cache`` (as
    :func:`thresher.tasks.corpus.pooled_index` builds it), its vectors reused from
    ``cased_index`` (the cased twin's index folder) when the embedder lowercases."""
    from thresher.errors import IndexNotFoundError
    from thresher.index.backends import ingest
    from thresher.index.embed.embedder import get_embedder
    from thresher.index.embedded.layout import current_generation
    from thresher.tasks.corpus import corpus_key, pooled_index, task_documents

    target = cache / corpus_key(files, config)
    try:
        current_generation(target)
        return target
    except IndexNotFoundError:  # not built yet: build it below
        pass
    inner = get_embedder(config.retrieval.embedder)
    reuse = ReusedVectors(inner, current_generation(cased_index))
    if not reuse.agrees():
        return pooled_index(files, cache, config, progress=False)
    ingest(task_documents(files), target, config, embedder=reuse, progress=False)
    print(f"  lowercase index: {reuse.reused} vectors reused, {reuse.computed} embedded")
    return target
