"""A generated world written to disk and read back as ``thresher index`` reads it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.corpus.document import Document
from thresher.corpus.loaders import iter_documents
from thresher.synth.world import WorldManifest, generate_world


@dataclass
class WrittenWorld:
    """A world on disk, read back the way ``thresher index`` reads it."""

    manifest: WorldManifest
    root: Path
    docs: dict[str, Document]  # doc_id -> ingested (sanitized, visible) document
    world: dict[str, Any]  # .world/world.json
    chains: list[dict[str, Any]]  # .world/chains.jsonl
    _holders: dict[str, frozenset[str]] = field(default_factory=dict)

    def holders(self, name: str) -> frozenset[str]:
        """Ids of the documents whose ingested text names ``name`` as a whole word."""
        if name not in self._holders:
            self._holders[name] = frozenset(
                doc_id for doc_id, d in self.docs.items() if name in d.text and has(d.text, name)
            )
        return self._holders[name]


def has(text: str, name: str) -> bool:
    """``name`` occurs in ``text`` as a whole (not inside a longer word or code)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def write_world(root: Path, seed: int, size: str | int) -> WrittenWorld:
    manifest = generate_world(seed, size, root)
    docs = {d.doc_id: d for d in iter_documents([root])}
    world = json.loads((root / ".world" / "world.json").read_text(encoding="utf-8"))
    lines = (root / ".world" / "chains.jsonl").read_text(encoding="utf-8").splitlines()
    return WrittenWorld(manifest, root, docs, world, [json.loads(x) for x in lines])
