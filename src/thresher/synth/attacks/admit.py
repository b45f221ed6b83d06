"""Which attack documents an ingest admits: hostile ids are refused at ingestion.

An ingest refuses the whole input when one document's id could name another
document (chunk form ``doc#N``, an escaped-id twin): that is the right answer
for a user's folder, where the file must be renamed. The attack suite instead
indexes a world with every attack planted in it, so it sets the refused
documents aside, indexes the rest, and counts an attack whose documents were
refused as blocked at ingestion (never visible to a policy, so never a success).
"""

from __future__ import annotations

from collections.abc import Sequence

from thresher.corpus.document import Document
from thresher.errors import IdRefusedError
from thresher.index.ingest.roots import check_ids

__all__ = ["admitted"]


def admitted(docs: Sequence[Document]) -> tuple[list[Document], dict[str, str]]:
    """Split ``docs`` into what an ingest into a new index admits and what it refuses.

    Returns:
        the admitted documents, in order, and the refused ones as doc id -> the
        ingest's reason. The admitted ones ingest without an ``IdRefusedError``.
    """
    plan = {d.doc_id: (d, "") for d in docs}
    refused: dict[str, str] = {}
    while True:
        try:
            check_ids(plan, {})
        except IdRefusedError as exc:
            refused[exc.doc_id] = str(exc)
            del plan[exc.doc_id]
            continue
        break
    return [d for d in docs if d.doc_id not in refused], refused
