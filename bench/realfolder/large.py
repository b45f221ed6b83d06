"""The real folder at its machine's size: the 77 documents among every one of their kinds.

:func:`~realfolder.build.build_folder` writes a small topical folder (the
account and login documentation the questions were written from). A user's
documentation folder is bigger and less topical, so :func:`build_large_folder`
writes the same documents, rendered the same way and under the same paths,
among every other document of the same kinds this machine holds:

- every manual page of sections 1, 5, 7 and 8 under ``/usr/share/man``
  (``man1/``, ``man5/``, ... and their suffixed sections such as ``1ssl``),
  rendered by groff as the small folder's pages are, written to
  ``man/NAME.SECTION.txt``; a link to another page (a symbolic link, or a
  page whose source is one ``.so`` line) is that page under another name and
  is skipped, as is a page groff cannot render;
- every README (any file whose name starts with ``README``, any case) and
  every ``copyright`` file under ``/usr/share/doc`` (any depth; a package
  folder that is a link to another package's is skipped), decompressed,
  written to ``doc/PACKAGE/...``.

Size ``large`` leaves out one family of generated pages (:data:`GENERATED`):
the Google Cloud SDK ships one reference page per ``gcloud`` subcommand
(16,631 pages, 64 MB of text on the machine this was written on, 87% of the
pages and more than half the text), which would make the folder a
``gcloud`` reference with some documentation beside it, and takes the shared
two-core bench machine hours to embed; size ``all`` keeps them.

The questions and their gold stay those of ``questions.jsonl``, whose paths
are the small folder's (``usable_questions`` checks each proving line as
before); ``questions-large.jsonl`` adds questions written by reading
documents of the larger folder. Nothing is copied into the repository: the
folder is rendered from the machine's files each time (a few minutes on two
cores; the counts are printed).
"""

from __future__ import annotations

import fnmatch
import gzip
import re
import subprocess
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from realfolder.build import DOC_ROOT, build_folder, tools_missing

__all__ = [
    "MAN_ROOT",
    "SECTIONS",
    "GENERATED",
    "LargeFolder",
    "build_large_folder",
    "QUESTIONS_LARGE",
]

MAN_ROOT = Path("/usr/share/man")
#: the manual sections the folder takes (user commands, file formats, overviews, admin)
SECTIONS = ("1", "5", "7", "8")
QUESTIONS_LARGE = Path(__file__).with_name("questions-large.jsonl")
#: page name globs of generated reference families size ``large`` leaves out
GENERATED = ("gcloud*",)

#: a page's file name: NAME.SECTION[SUFFIX][.gz] ("ls.1.gz", "openssl-req.1ssl.gz")
_PAGE = re.compile(r"^(?P<name>.+)\.(?P<section>[0-9][a-z0-9]*)(?:\.gz)?$")
#: groff's render of one page may take this long (seconds) before it is skipped
_RENDER_TIMEOUT = 60
#: concurrent groff processes (the bench machine has two cores)
_WORKERS = 2


@dataclass
class LargeFolder:
    """What :func:`build_large_folder` wrote: paths in the folder, and what it skipped."""

    written: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  #: of the small folder's sources
    man_pages: int = 0  #: manual pages written (the small folder's among them)
    doc_files: int = 0  #: README and copyright files written (the small folder's among them)
    links: int = 0  #: pages that are another page under another name (skipped)
    failed: int = 0  #: pages groff could not render, or files that are not text (skipped)
    generated: int = 0  #: pages of the generated families left out
    by_section: dict[str, int] = field(default_factory=dict)


def _man_sources() -> Iterator[tuple[Path, str]]:
    """(source file, path in the folder) of every page of :data:`SECTIONS`, sorted."""
    for section in SECTIONS:
        folder = MAN_ROOT / f"man{section}"
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            m = _PAGE.match(path.name)
            if m is None or not m.group("section").startswith(section):
                continue
            yield path, f"man/{m.group('name')}.{m.group('section')}.txt"


def _read_source(path: Path) -> bytes | None:
    """A page's troff source (decompressed), or None when it links to another page."""
    if path.is_symlink():
        return None
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    lines = [ln for ln in raw.splitlines() if ln.strip() and not ln.startswith(b'.\\"')]
    if len(lines) == 1 and lines[0].startswith(b".so "):
        return None
    return raw


def _render(raw: bytes) -> str | None:
    """A page's troff source as plain text, rendered as the small folder's pages are."""
    try:
        out = subprocess.run(
            ["groff", "-t", "-mandoc", "-Tutf8", "-rHY=0", "-rLL=78n"],
            input=raw,
            capture_output=True,
            check=False,
            timeout=_RENDER_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    plain = subprocess.run(["col", "-bx"], input=out.stdout, capture_output=True, check=False)
    text = plain.stdout.decode("utf-8", errors="replace") if plain.returncode == 0 else ""
    return text if text.strip() else None


def _doc_sources() -> Iterator[tuple[Path, str]]:
    """(source file, path in the folder) of every README and copyright file, sorted."""
    if not DOC_ROOT.is_dir():
        return
    for package in sorted(DOC_ROOT.iterdir()):
        if package.is_symlink() or not package.is_dir():
            continue  # another package's documentation under this package's name
        for path in sorted(package.rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            name = path.name
            if not (name.lower().startswith("readme") or name == "copyright"):
                continue
            rel = path.relative_to(DOC_ROOT).as_posix()
            yield path, "doc/" + (rel[:-3] if rel.endswith(".gz") else rel)


def _text_bytes(path: Path) -> bytes | None:
    """A documentation file's bytes (decompressed), or None when it is not text."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            return None
    if not raw.strip() or b"\x00" in raw:
        return None
    return raw


def build_large_folder(dest: Path, skip: Sequence[str] = GENERATED) -> LargeFolder:
    """Write the large folder under ``dest`` (replacing it); see the module docstring.

    ``skip``: globs of page names left out (default the generated families of
    :data:`GENERATED`; none for size ``all``).

    The small folder's documents are written first, by
    :func:`~realfolder.build.build_folder`, so their text and paths are exactly
    the small folder's; a page or file of the same path found again is not
    written twice.
    """
    written, missing = build_folder(dest)
    out = LargeFolder(written=list(written), missing=missing)
    taken = set(written)
    out.man_pages = sum(1 for w in written if w.startswith("man/"))
    out.doc_files = len(written) - out.man_pages
    if not tools_missing():
        todo: list[tuple[str, bytes]] = []
        for path, rel in _man_sources():
            if rel in taken:
                continue
            if any(fnmatch.fnmatch(path.name, glob) for glob in skip):
                out.generated += 1
                continue
            raw = _read_source(path)
            if raw is None:
                out.links += 1
                continue
            taken.add(rel)
            todo.append((rel, raw))
        with ThreadPoolExecutor(_WORKERS) as pool:
            texts = pool.map(lambda item: _render(item[1]), todo)
            for (rel, _), text in zip(todo, texts, strict=True):
                if text is None:
                    out.failed += 1
                    continue
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_text(text, encoding="utf-8")
                out.written.append(rel)
                out.man_pages += 1
    for path, rel in _doc_sources():
        if rel in taken:
            continue
        taken.add(rel)
        raw = _text_bytes(path)
        if raw is None:
            out.failed += 1
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(raw)
        out.written.append(rel)
        out.doc_files += 1
    for rel in out.written:
        if rel.startswith("man/"):
            section = rel.rsplit(".", 2)[-2]
            out.by_section[section] = out.by_section.get(section, 0) + 1
    return out
