"""A hand-made corpus with known chains, as Chunk objects (no index needed).

Chain: patent QX-1891-004 -> Orvel Kestrin -> Marrowick -> Tessaly Province.
Around it: look-alike documents that share words but not the bridges.
"""

from __future__ import annotations

from thresher.corpus.document import Chunk
from thresher.corpus.ids import content_hash

DOCS: dict[str, tuple[str, str]] = {
    "patents/QX-1891-004.txt": (
        "QX-1891-004",
        "Patent QX-1891-004 covers a pressed glass lens for lighthouses. "
        "Patent QX-1891-004 was granted to Orvel Kestrin after a long dispute.",
    ),
    "web/orvel-kestrin.html": (
        "Orvel Kestrin",
        "Orvel Kestrin was a glassblower and inventor. "
        "Orvel Kestrin was born in the river town of Marrowick in 1850.",
    ),
    "web/marrowick.html": (
        "Marrowick",
        "Marrowick is a small market town that lies in Tessaly Province. "
        "Its salt market is the oldest in the region.",
    ),
    "web/tessaly-province.html": (
        "Tessaly Province",
        "Tessaly Province is governed from the walled city of Vennor Keep. "
        "It is known for its orchards and its river festivals.",
    ),
    "web/vennor-keep.html": (
        "Vennor Keep",
        "Vennor Keep was built by the Ashcombe family in the early modern period.",
    ),
    "patents/QX-1902-117.txt": (
        "QX-1902-117",
        "Patent QX-1902-117 covers a moulded glass prism for harbour lights. "
        "Patent QX-1902-117 was granted to Pella Dunmore after a short review.",
    ),
    "web/pella-dunmore.html": (
        "Pella Dunmore",
        "Pella Dunmore was a glass engraver. Pella Dunmore was born in the town of Caddow Ferry.",
    ),
    "web/caddow-ferry.html": (
        "Caddow Ferry",
        "Caddow Ferry is a small market town known for its rope trade and its bridges.",
    ),
}


def chunks() -> list[Chunk]:
    out = []
    for doc_id, (title, text) in DOCS.items():
        out.append(
            Chunk(f"{doc_id}#0", doc_id, 0, title, text, 0, len(text), content_hash(text), doc_id)
        )
    return out
