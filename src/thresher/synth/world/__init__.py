"""A seeded generator of fictional corpora with planted multi-hop clue chains.

``generate_world(seed, size, out_dir)`` writes encyclopedia pages, annual filings,
patent filings and email threads about invented entities, plus ``.world/`` metadata
(entities, facts, chains). See :mod:`thresher.synth.world.generate`.
"""

from __future__ import annotations

from thresher.synth.world.generate import (
    SIZES,
    BuiltWorld,
    WorldManifest,
    build_world_docs,
    demo_question,
    generate_world,
)

__all__ = [
    "SIZES",
    "BuiltWorld",
    "WorldManifest",
    "build_world_docs",
    "demo_question",
    "generate_world",
]
