"""A store's worker threads never hold the process at exit.

A dense search whose backend never answers (Chroma's HTTP client has no timeout: a
stalled server holds a request for ever) used to sit on a non-daemon executor
thread, which the interpreter joins at exit: the process (pytest once, after a full
run) hung after its last line. Here the embedder holds the call; the child process
closes the store and must end.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from devdata import REPO_ROOT

CHILD = textwrap.dedent(
    """
    import sys, threading
    from thresher.config import Config
    from thresher.index.embedded.store import EmbeddedStore
    from thresher.index.embed.embedder import get_embedder

    class Held:
        \"\"\"The index's embedder, except that a query never comes back.\"\"\"

        def __init__(self, inner):
            self.inner, self.entered = inner, threading.Event()

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def embed(self, texts):
            self.entered.set()
            threading.Event().wait()  # for ever: a backend that never answers

    embedder = Held(get_embedder("minilm-int8"))
    config = Config().override({"retrieval.exact_dense_max_chunks": 0})  # dense on a worker
    store = EmbeddedStore(sys.argv[1], config, embedder=embedder)
    threading.Thread(target=lambda: store.hybrid_search("glass"), daemon=True).start()
    assert embedder.entered.wait(120), "the dense search never started"
    store.close()
    print("closed", flush=True)
    """
)


@pytest.mark.slow  # a child process loading the embedder
def test_a_held_dense_call_does_not_keep_the_process_alive(built_index: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(built_index)],
        capture_output=True,
        text=True,
        timeout=90,  # only reached when the process hangs at exit (the bug)
        cwd=REPO_ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO_ROOT / "src")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "closed"
