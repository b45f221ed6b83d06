"""Readers never write: a search leaves the committed generation's files as they were,
and every read command works on an index folder it may not write to."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from thresher.index.backends import ingest
from thresher.index.embedded.store import EmbeddedStore


def _files(root: Path) -> dict[str, tuple[int, int, str]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p.relative_to(root))] = (st.st_mtime_ns, st.st_size, digest)
    return out


@pytest.fixture
def index_dir(tmp_path, documents, minilm, small_config) -> Path:
    where = tmp_path / "index"
    ingest(documents[:10], where, small_config, embedder=minilm, progress=False)
    return where


def test_reading_changes_no_file_of_the_index(index_dir, minilm, small_config, tmp_path):
    before = _files(index_dir)
    with EmbeddedStore(index_dir, small_config, embedder=minilm) as store:
        assert store.hybrid_search("river town", k=3)
        assert store.dense_search("orbital habitats", k=3)
        assert store.bm25_search("sourdough", k=3)
        assert store.grep(r"\d{4}", limit=5).hits
        first = store.read_document("astro-1")
        assert store.get([first[0].chunk_id])
        assert store.similarity("moon", [first[0].chunk_id])
        assert store.stats().documents == 10
        assert store.list_documents()
    assert _files(index_dir) == before  # same files, same bytes, same mtimes


def _read_only_runner(where: Path) -> list[str]:
    """A command prefix under which ``where`` cannot be written.

    As root, file modes do not stop writes, so the folder is bind-mounted
    read-only in a private mount namespace (``unshare -m``); otherwise the
    folder's write bits are removed.
    """
    if os.geteuid() != 0:
        for folder, _dirs, files in os.walk(where):
            for name in files:
                os.chmod(Path(folder) / name, 0o444)
            os.chmod(folder, 0o555)
        return []
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare to mount the index read-only")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    probe = subprocess.run([unshare, "-m", "sh", "-c", script, str(where), "true"],
                           capture_output=True, text=True)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"cannot mount the index read-only here: {probe.stderr.strip()}")
    return [unshare, "-m", "sh", "-c", script, str(where)]


@pytest.mark.slow
def test_every_read_command_works_on_a_read_only_index(tmp_path, documents, minilm, small_config):
    where = tmp_path / "index"
    ingest(documents[:10], where, small_config, embedder=minilm, progress=False)
    prefix = _read_only_runner(where)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    if prefix:  # check the mount really refuses writes
        touch = subprocess.run([*prefix, "touch", str(where / "x")], capture_output=True)
        assert touch.returncode != 0
    before = _files(where)
    commands = [
        ["stats"],
        ["grep", "river"],
        ["read", "astro-1"],
        ["search", "Which agency launched Kepler Station?", "--quiet"],
    ]
    for args in commands:
        argv = [*prefix, sys.executable, "-m", "thresher.cli.main", *args, "--index", str(where)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr and "readonly" not in done.stderr, args
    assert _files(where) == before
    if not prefix:
        for folder, _, _ in os.walk(where):
            os.chmod(folder, 0o755)


_REUSED_SEARCH = """
import sys, thresher
from thresher.index import handles
from thresher.index.embedded import store as embedded
opened = []
real = embedded.open_generation
embedded.open_generation = lambda d: (opened.append(d), real(d))[1]
for _ in range(2):
    result = thresher.search("Which agency launched Kepler Station?", index=sys.argv[1])
    assert result.documents, result
print(len(opened), handles.kept_count())
"""


@pytest.mark.slow
def test_a_kept_open_index_works_on_a_read_only_folder(tmp_path, documents, minilm, small_config):
    where = tmp_path / "index"
    ingest(documents[:10], where, small_config, embedder=minilm, progress=False)
    prefix = _read_only_runner(where)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("THRESHER_REUSE_INDEX", None)
    before = _files(where)
    argv = [*prefix, sys.executable, "-c", _REUSED_SEARCH, str(where)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1"]  # opened once, kept for the second call
    assert _files(where) == before
    if not prefix:
        for folder, _, _ in os.walk(where):
            os.chmod(folder, 0o755)


@pytest.mark.parametrize("name", ["records.sqlite3", "vectors.npy", "grep.sqlite3"])
def test_a_damaged_generation_is_one_clear_error(index_dir, minilm, small_config, name):
    from thresher.errors import IndexDamagedError
    from thresher.index.embedded.layout import current_generation

    target = current_generation(index_dir) / name
    target.write_bytes(b"\x00" * target.stat().st_size)  # same size: past the size check
    with pytest.raises(IndexDamagedError, match=f"{name} is unreadable.*rebuild it"):
        EmbeddedStore(index_dir, small_config, embedder=minilm)
