"""``thresher.corpus`` re-exports lazily: taking ``Document`` (as every search does,
through the index) does not load the file loaders; every name still resolves."""

from __future__ import annotations

import subprocess
import sys

import thresher.corpus


def test_documents_do_not_load_the_file_loaders():
    code = (
        "import sys; from thresher.corpus import Chunk, Document; "
        "import thresher.index.embedded.store; print('thresher.corpus.loaders' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_every_exported_name_resolves():
    for name in thresher.corpus.__all__:
        assert getattr(thresher.corpus, name) is not None
    assert set(thresher.corpus.__all__) <= set(dir(thresher.corpus))
