"""Shared test helpers: where the development data lives, and skipping without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from devdata import DEV_DATA, REPO_ROOT, dev_file  # noqa: F401  (re-exported)


@pytest.fixture
def dev_data() -> Path:
    """The development data folder; skips when absent."""
    if not DEV_DATA.is_dir():
        pytest.skip(f"development data not present: {DEV_DATA}")
    return DEV_DATA


@pytest.fixture(autouse=True, scope="session")
def _read_copies_in_a_temp_folder(tmp_path_factory: pytest.TempPathFactory):
    """Shared read copies (made at each commit of a large enough index) go to a
    temporary folder, not the user's cache; a test may point them elsewhere."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("THRESHER_READ_COPIES", str(tmp_path_factory.mktemp("read-copies")))
        yield


@pytest.fixture(autouse=True)
def _close_kept_indexes():
    """``thresher.search(index=PATH)`` keeps the index open for the next call in the
    process: each test starts and ends with none kept, so no test sees another's."""
    from thresher.index.handles import close_indexes

    close_indexes()
    yield
    close_indexes()


_EXIT_STATUS = {"code": 0}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT_STATUS["code"] = int(exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Hang guard at interpreter exit: a non-daemon thread left by a library (seen once
    after a full run, cause not yet found) must not hold CI past the summary. After
    60 s, dump every thread's stack to stderr (to find it) and exit with pytest's status."""
    import faulthandler
    import os
    import sys
    import threading

    def guard() -> None:
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        os._exit(_EXIT_STATUS["code"])

    timer = threading.Timer(60.0, guard)
    timer.daemon = True
    timer.start()
