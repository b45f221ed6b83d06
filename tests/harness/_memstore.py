"""TEMPORARY in-memory Store for development until index/embedded.py lands. Delete after."""

from __future__ import annotations

import re

from thresher.corpus.chunking import chunk_document
from thresher.errors import InputError, UnknownIdError
from thresher.index.fusion import rrf
from thresher.index.grep import check_pattern
from thresher.index.store import Hit
from thresher.tokens import get_counter


def _terms(text):
    return re.findall(r"\w+", text.lower())


class MemoryStore:
    def __init__(self, docs, config):
        self.config = config
        self.chunks = []
        for d in docs:
            self.chunks += chunk_document(d, config.chunking.max_tokens, get_counter())
        self.by_id = {c.chunk_id: c for c in self.chunks}

    def _scores(self, query, chunks):
        q = set(_terms(query))
        out = []
        for c in chunks:
            t = _terms(c.text + " " + c.title)
            bm = float(sum(1 for w in t if w in q))

            def tri(s):
                return {s[i : i + 3] for i in range(len(s) - 2)}

            a, b = tri(query.lower()), tri(c.text.lower())
            out.append((bm, len(a & b) / max(1, len(a | b))))
        return out

    def hybrid_search(self, query, k=50, exclude=()):
        if not query.strip():
            raise InputError("empty query")
        cands = [c for c in self.chunks if c.chunk_id not in exclude]
        sc = self._scores(query, cands)
        bm = [
            c.chunk_id
            for c, s in sorted(
                zip(cands, sc, strict=False), key=lambda x: (-x[1][0], x[0].chunk_id)
            )
            if s[0] > 0
        ]
        de = [
            c.chunk_id
            for c, s in sorted(
                zip(cands, sc, strict=False), key=lambda x: (-x[1][1], x[0].chunk_id)
            )
        ]
        fused = rrf([bm, de])[:k]
        return [Hit(self.by_id[i], s, "hybrid") for i, s in fused]

    def grep(self, pattern, limit=5, exclude=()):
        check_pattern(pattern, self.config.grep)
        rx = re.compile(pattern)
        return [
            Hit(c, 1.0, "grep")
            for c in self.chunks
            if c.chunk_id not in exclude and rx.search(c.text)
        ][:limit]

    def get(self, ids):
        missing = [i for i in ids if i not in self.by_id]
        if missing:
            raise UnknownIdError("unknown", missing)
        return [self.by_id[i] for i in ids]

    def read_document(self, doc_id):
        out = [c for c in self.chunks if c.doc_id == doc_id]
        if not out:
            raise UnknownIdError(f"unknown document id '{doc_id}'", [doc_id])
        return out

    def similarity(self, query, ids):
        return self._scores(query, [self.by_id[i] for i in ids])

    def stats(self):
        raise NotImplementedError

    def close(self):
        pass
