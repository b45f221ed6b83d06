"""Local-policy training tests: the policy tests' real indexes (small store, generated world)."""

from policies.local.conftest import (  # noqa: F401  (fixtures, re-exported)
    config,
    index_dir,
    store,
    world_index,
)
