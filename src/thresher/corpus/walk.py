"""Which files of a folder are read: an iterative walk with the rules of what is never ingested.

A folder is walked in sorted order without recursion (any depth), and these
are skipped, each counted by reason (see :class:`Skips`):

- ``tool_folder``: folders of version control and tools (:data:`TOOL_FOLDERS`:
  ``.git``, ``node_modules``, ``venv``, ``__pycache__``, ...), never documents;
- ``hidden``: other entries whose name starts with ``.`` (``.env``, ...);
- ``index``: a thresher index folder (the one being written, or any folder
  holding an index's ``CURRENT`` pointer and generations);
- ``ignored``: paths matched by a ``.thresherignore`` file (gitignore syntax,
  read with :mod:`pathspec`) in the folder or one above it, up to the root named;
- ``excluded``: paths matched by an exclude pattern the caller gave
  (``thresher index --exclude``: gitignore syntax, relative to the root named;
  a folder matched is not walked);
- ``not_included``: files matched by none of the include patterns the caller
  gave, when it gave some (``--include``; folders are always walked, so
  ``docs/**/*.md`` and ``*.md`` both work);
- ``folder_link``: links to folders (never followed: cycles);
- ``outside_link``: links to files that resolve outside every root named, unless
  ``follow_links`` (a link to ``/etc/passwd`` must not become searchable);
- ``unsupported``: files of a type thresher does not read
  (:func:`thresher.corpus.filetypes.file_kind`; their paths are shown);
- ``bad_name``: names that are not valid UTF-8 (ids must be text), with a warning;
- ``beir_queries``: the queries file and the ``qrels/`` judgments folder of a BEIR
  dataset folder (tasks, not documents);
- ``unreadable_folder``: a folder below the one named that cannot be listed
  (permissions), with everything under it;
- ``path_too_long``: an entry whose path is longer than the system allows
  (``ENAMETOOLONG``: hundreds of nested folders), with everything under it.

A folder named that cannot be listed is an error; below it, one folder that
cannot be walked never stops the others.

Pure listing: nothing is read here but folder entries and ``.thresherignore``
files.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from thresher.corpus.beir import QRELS_DIR, QUERIES_FILE, is_beir_folder
from thresher.corpus.bounded import identity, open_checked
from thresher.corpus.decode import UnreadableFileError, read_capped
from thresher.corpus.filetypes import file_kind
from thresher.errors import InputError

__all__ = [
    "TOOL_FOLDERS",
    "IGNORE_FILE",
    "Skips",
    "glob_spec",
    "WalkRules",
    "walk_files",
    "is_index_folder",
    "valid_name",
]

#: Folders of version control systems and tools: never walked.
TOOL_FOLDERS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "CVS", ".venv", "venv", "node_modules",
        "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        ".ipynb_checkpoints", ".eggs", "site-packages", ".idea", ".vscode",
    }
)  # fmt: skip
#: The file of gitignore patterns a folder may hold.
IGNORE_FILE = ".thresherignore"
#: The most bytes an ignore file may hold (patterns, not data).
MAX_IGNORE_BYTES = 1 << 20
_log = logging.getLogger("thresher.corpus.loaders")

Skips = Callable[[str, str], None]
"""Called as ``skip(reason, path)`` for every entry left out (a folder's path ends
with a separator)."""
_Specs = tuple[tuple[Path, pathspec.PathSpec], ...]


def valid_name(name: str) -> bool:
    """Whether a file name is valid Unicode (not bytes Python kept as lone surrogates):
    a document id must be text."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_index_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a thresher index (its ``CURRENT`` pointer and a generation)."""
    try:
        return (folder / "CURRENT").is_file() and any(
            p.name.startswith("gen-") for p in folder.iterdir()
        )
    except OSError:
        return False


def glob_spec(patterns: tuple[str, ...], option: str) -> pathspec.PathSpec | None:
    """The gitignore-style patterns ``patterns`` as one spec (None when there are none).

    Raises:
        InputError: a pattern is not valid gitignore syntax (naming ``option``).
    """
    if not patterns:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except (ValueError, TypeError) as exc:  # GitWildMatchPatternError is a ValueError
        raise InputError(
            f"{option}: not a gitignore-style pattern ({exc}); write e.g. '*.md' or 'drafts/'"
        ) from exc


@dataclass(frozen=True, slots=True)
class WalkRules:
    """What a walk leaves out beyond the fixed rules.

    Attributes:
        roots: real paths of every root named (a file link resolving under one is inside).
        exclude: real paths of folders never walked (the index being written).
        follow_links: read file links that resolve outside every root.
        include_spec: when given, only files it matches (relative to the root) are read.
        exclude_spec: paths it matches (relative to the root) are left out.
    """

    roots: tuple[str, ...]
    exclude: tuple[str, ...]
    follow_links: bool
    include_spec: pathspec.PathSpec | None = None
    exclude_spec: pathspec.PathSpec | None = None

    def excluded(self, folder: Path) -> bool:
        """Whether ``folder`` is one of :attr:`exclude` (compared by device and inode:
        a real path costs a lookup per level, too slow a thousand levels down)."""
        if not self.exclude:
            return False
        try:
            st = folder.stat()
        except OSError:
            return False
        return any(_same(st, other) for other in self.exclude)

    def inside(self, real: str) -> bool:
        """Whether the real path ``real`` lies under one of the roots."""
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)


def _same(st: os.stat_result, path: str) -> bool:
    try:
        other = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (other.st_dev, other.st_ino)


def _ignore_spec(folder: Path) -> pathspec.PathSpec | None:
    """The patterns of ``folder``'s ignore file, if it has one: read as any file is
    (:func:`~thresher.corpus.bounded.open_checked`), at most :data:`MAX_IGNORE_BYTES`.

    Raises:
        InputError: it cannot be read, changed kind, or is larger (never skipped:
            what it leaves out may be secrets).
    """
    path = folder / IGNORE_FILE
    if not path.is_file():
        return None
    try:
        fh, _size = open_checked(path, identity(path))
        with fh:
            data = read_capped(fh, MAX_IGNORE_BYTES, path)
    except UnreadableFileError as exc:
        if exc.reason == "too_large":
            raise InputError(
                f"{path}: over {MAX_IGNORE_BYTES:,} bytes, too large for a file of patterns; "
                "fix or remove it"
            ) from exc
        raise InputError(str(exc)) from exc
    lines = data.decode("utf-8", errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: _Specs, path: Path, is_dir: bool) -> bool:
    for base, spec in specs:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False


def _matches(spec: pathspec.PathSpec | None, root: Path, path: Path, is_dir: bool) -> bool:
    if spec is None:
        return False
    return spec.match_file(path.relative_to(root).as_posix() + ("/" if is_dir else ""))


def walk_files(root: Path, rules: WalkRules, skip: Skips) -> Iterator[Path]:
    """The files to read under the folder ``root``, in sorted order (depth first).

    Iterative (a stack of folder listings), so any depth of folders is walked.

    Args:
        root: the folder named.
        rules: what else to leave out (see :class:`WalkRules`).
        skip: told of every entry left out, with its reason.

    Raises:
        InputError: ``root`` cannot be listed (a folder below it is skipped).
    """
    try:
        first = _listing(root, ())
    except OSError as exc:
        raise InputError(
            f"cannot list folder {root}: {exc.strerror}; check its permissions"
        ) from exc
    stack: list[tuple[Iterator[Path], _Specs, bool]] = [first]
    while stack:
        entries, specs, beir = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if beir and entry.name in (QUERIES_FILE, QRELS_DIR):
            skip("beir_queries", _shown(entry))  # queries and judgments are tasks (tasks.beir)
            continue
        try:
            kind = _classify(entry, rules, specs, root)
            if kind == "folder":
                stack.append(_listing(entry, specs))
        except OSError as exc:
            kind = _unwalkable(entry, exc)
        if kind == "file":
            yield entry
        elif kind != "folder":
            skip(kind, _shown(entry))


def _shown(entry: Path) -> str:
    """The path of a skipped entry, ending with a separator when it is a folder."""
    return str(entry) + os.sep if _is_dir(entry) else str(entry)


def _unwalkable(entry: Path, exc: OSError) -> str:
    """The reason an entry that raised ``exc`` is skipped, with a warning."""
    if exc.errno == errno.ENAMETOOLONG:
        _log.warning(
            "%s: skipped with everything under it, its path is longer than the system "
            "allows; move it nearer the folder named to index it",
            entry,
        )
        return "path_too_long"
    _log.warning("%s: skipped, it cannot be read (%s); check its permissions", entry, exc.strerror)
    return "unreadable_folder" if not entry.is_symlink() and _is_dir(entry) else "unreadable"


def _is_dir(entry: Path) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _listing(folder: Path, specs: _Specs) -> tuple[Iterator[Path], _Specs, bool]:
    """The sorted entries of ``folder``, the ignore specs in force inside it, and whether
    it is a BEIR dataset folder (whose queries file is no document).

    Raises:
        OSError: the folder cannot be listed.
    """
    entries = sorted(folder.iterdir(), key=lambda p: p.name)
    spec = _ignore_spec(folder)
    specs = specs if spec is None else (*specs, (folder, spec))
    return iter(entries), specs, is_beir_folder(folder)


def _classify(entry: Path, rules: WalkRules, specs: _Specs, root: Path) -> str:
    """``file``, ``folder`` or the reason ``entry`` (under ``root``) is skipped."""
    name = entry.name
    if not valid_name(name):
        _log.warning("%s: skipped, its name is not valid UTF-8; rename it to index it", entry)
        return "bad_name"
    if name in TOOL_FOLDERS and entry.is_dir():
        return "tool_folder"
    if name.startswith("."):
        return "hidden"
    link = entry.is_symlink()
    if entry.is_dir():
        if link:
            return "folder_link"
        if rules.excluded(entry) or is_index_folder(entry):
            return "index"
        if _ignored(specs, entry, True):
            return "ignored"
        return "excluded" if _matches(rules.exclude_spec, root, entry, True) else "folder"
    if _ignored(specs, entry, False):
        return "ignored"
    if _matches(rules.exclude_spec, root, entry, False):
        return "excluded"
    if rules.include_spec is not None and not _matches(rules.include_spec, root, entry, False):
        return "not_included"
    if not entry.is_file():
        return "unsupported"  # a socket, a fifo, a dangling link
    if link and not rules.follow_links and not rules.inside(os.path.realpath(entry)):
        _log.warning(
            "%s: skipped, a link to %s outside the folders named (--follow-links reads it)",
            entry,
            os.path.realpath(entry),
        )
        return "outside_link"
    if file_kind(name) is None:
        return "unsupported"
    return "file"
