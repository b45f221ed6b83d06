"""Policy tests run episodes on the harness tests' small real index."""

from __future__ import annotations

from harness.conftest import config, index_dir, store  # noqa: F401  (fixtures, re-exported)
