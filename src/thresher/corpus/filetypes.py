"""Which files are read, and as what: one table from a file's name to its kind.

A folder walk reads a file when :func:`file_kind` gives it a kind, and the
loader reads it by that kind (:mod:`thresher.corpus.files`). Kinds:

- ``text`` (``.txt``, ``.text``), ``markdown`` (``.md``, ``.markdown``), ``rst``
  (``.rst``), ``html`` (``.html``, ``.htm``): prose, titled from the text;
- ``code``: source code and configuration in common languages
  (:data:`CODE_LANGUAGES`: ``.py``, ``.c``, ``.js``, ``.sh``, ``.yaml``, ...), read
  as is and titled by its path;
- ``table``: ``.csv`` and ``.tsv`` (:mod:`thresher.corpus.tables`);
- ``records``: ``.jsonl`` and ``.json`` (document records, a QA dataset, or a
  single JSON document: :mod:`thresher.corpus.jsondoc`);
- ``pdf`` (:mod:`thresher.corpus.pdf`), ``docx`` (:mod:`thresher.corpus.word`);
- ``sniffed``: a file without an extension (``README``, ``NEWS``, ``copyright``,
  ``Makefile``) or whose name starts with a word such files are called
  (:data:`DOC_NAMES`: ``README.Debian``, ``LICENSE.MIT``, ``NEWS.old``): read
  when its bytes are text (a NUL byte or many control characters: ``binary``).

A gzip-compressed file (``.gz``) is read as the file it compresses, when that
is text of one of the kinds above (``changelog.Debian.gz``, ``README.gz``,
``guide.txt.gz``, ``data.csv.gz``; not a ``.tar.gz``, a PDF or a record file):
package documentation is shipped compressed.

Every other file is ``unsupported`` (images, archives, office formats
other than ``.docx``, unknown extensions): reading an unknown extension on the
chance it is text would index build outputs and caches of every kind.
"""

from __future__ import annotations

from pathlib import PurePath

__all__ = [
    "CODE_LANGUAGES",
    "DOC_NAMES",
    "KINDS",
    "file_kind",
    "is_gzip",
    "plain_name",
    "supported_hint",
]

#: suffix (lowercase) -> kind, for every kind but ``code`` and ``sniffed``
KINDS: dict[str, str] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".csv": "table",
    ".tsv": "table",
    ".jsonl": "records",
    ".json": "records",
    ".pdf": "pdf",
    ".docx": "docx",
}

#: suffix (lowercase) -> language, kept on each chunk as ``metadata["language"]``
CODE_LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".cs": "csharp", ".java": "java",
    ".kt": "kotlin", ".scala": "scala", ".go": "go", ".rs": "rust", ".swift": "swift",
    ".m": "objective-c", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript", ".rb": "ruby",
    ".php": "php", ".pl": "perl", ".pm": "perl", ".lua": "lua", ".r": "r", ".jl": "julia",
    ".hs": "haskell", ".ml": "ocaml", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang",
    ".clj": "clojure", ".el": "elisp", ".lisp": "lisp", ".scm": "scheme", ".dart": "dart",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell",
    ".sql": "sql", ".css": "css", ".scss": "css", ".xml": "xml", ".tex": "tex",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini", ".cfg": "ini",
    ".conf": "config", ".properties": "properties", ".cmake": "cmake", ".mk": "make",
    ".proto": "protobuf", ".graphql": "graphql", ".vue": "vue", ".svelte": "svelte",
}  # fmt: skip

#: names (before the first dot, lowercase) of the text files found in every project
#: and package, with or without an extension of their own: ``README.Debian``
DOC_NAMES = frozenset(
    {
        "readme", "news", "changelog", "changes", "history", "todo", "authors", "thanks",
        "copying", "copyright", "license", "licence", "notice", "install", "bugs",
        "contributors", "credits", "maintainers", "faq", "hacking", "releasenotes",
    }
)  # fmt: skip


def file_kind(name: str) -> str | None:
    """The kind a file called ``name`` is read as (see the module docstring), or None
    when it is not read (``unsupported``)."""
    if is_gzip(name):
        inner = plain_name(name)
        kind = None if is_gzip(inner) else file_kind(inner)
        return kind if kind in _GZIP_KINDS else None
    suffix = PurePath(name).suffix.lower()
    kind = KINDS.get(suffix)
    if kind is not None:
        return kind
    if suffix in CODE_LANGUAGES:
        return "code"
    if not suffix or name.split(".", 1)[0].lower() in DOC_NAMES:
        return None if suffix in _NEVER_TEXT else "sniffed"
    return None


#: extensions that are never text, even after a documentation name (``README.pdf``
#: has its own kind; ``NEWS.xz`` is compressed)
_NEVER_TEXT = frozenset({".gz", ".bz2", ".xz", ".zst", ".zip", ".tar", ".tgz", ".7z", ".z"})
#: the kinds a ``.gz`` file may compress
_GZIP_KINDS = frozenset({"text", "markdown", "rst", "html", "code", "table", "sniffed"})


def is_gzip(name: str) -> bool:
    """Whether ``name`` is a gzip-compressed file's (ends with ``.gz``, any case)."""
    return name.lower().endswith(".gz")


def plain_name(name: str) -> str:
    """``name`` without a ``.gz`` ending (``changelog.Debian.gz`` -> ``changelog.Debian``)."""
    return name[:-3] if is_gzip(name) else name


def supported_hint() -> str:
    """A short list of what is read, for messages."""
    return (
        ".txt .md .rst .html .csv .tsv .json .jsonl .pdf .docx, source code, "
        "README-like files (also gzip-compressed)"
    )
