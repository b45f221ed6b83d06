"""Worlds shared by the world-generator tests (each generated once per session)."""

from __future__ import annotations

import pytest
from _world_fixtures import WrittenWorld, write_world


@pytest.fixture(scope="session")
def small_world(tmp_path_factory: pytest.TempPathFactory) -> WrittenWorld:
    return write_world(tmp_path_factory.mktemp("small") / "world", 0, "small")


@pytest.fixture(scope="session")
def medium_world(tmp_path_factory: pytest.TempPathFactory) -> WrittenWorld:
    return write_world(tmp_path_factory.mktemp("medium") / "world", 3, "medium")
