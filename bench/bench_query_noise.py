"""The markup/noise share of the local policy's follow-up queries on a real docs folder.

Indexes ``--folder`` (Markdown, reStructuredText, ... as ``thresher index`` reads
them; with ``--index``, the index is built once there and reused), runs the
shipped local policy on each question of ``--questions`` (JSONL:
``{"id", "question", "gold": [doc ids, optional]}``), and reads every follow-up
query from the trace: each ``search_corpus`` call after the episode's first.
Prints the searches per question, top-5 recall over the gold documents when
given, and the share of follow-up queries that are noisy, with examples.

A follow-up query is **noisy** when one of its words (split on whitespace; a word
the question itself holds, in any case, is never counted) is markup or noise by
this fixed definition, which reads the source file of the chunk the query was
read from (the proposal's ``call_parents``) as it is on disk, by rules of its own
that do not depend on the code being measured:

- ``hex``: a hex colour: ``#`` and 3 to 8 hex digits, or 6 or 8 hex digits
  holding both a letter and a digit (``D3D7CF``);
- ``file``: a file name with a common extension (``404.html``, ``extra.css``,
  ``conftest.py``, ``mkdocs.yml``; :data:`FILE_EXTENSIONS`);
- ``syntax``: markup syntax: a character of ``{}<>=`|`` in it, a role
  (``:ref:``), an anchor or class (``#top``, ``.md-button``), a ``--`` joint;
- ``markup-only``: a word of three letters or more that the source file holds,
  but only in code or markup: never in a line of its prose (a line outside
  fenced blocks, reStructuredText literal and code blocks and HTML comments,
  once inline code (in a ``.rst`` or ``.txt`` source: ````literals```` only, a
  ```text <url>`_`` link is its text), HTML tags, ``{...}`` attributes, link targets and role,
  directive and option names are removed; a role's text is prose: the page
  shows it as a link).

Usage (the before/after figures of docs/local-policy.md; run the "before" with
``PYTHONPATH`` on the base commit's ``src``)::

    PYTHONPATH=src .venv/bin/python bench/bench_query_noise.py \\
        --folder DOCS --questions bench/query_noise_dev.jsonl --index /tmp/qn-index

``bench/query_noise_dev.jsonl`` holds quick development questions written for
the documentation trees of the pymdown-extensions 13.1.2 and pytest 9.2.0 sdists
(``docs/src/markdown`` as ``pymdown/``, ``doc/en`` without ``announce/`` and
``proposals/`` as ``pytest/``): dev questions, not a benchmark. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from thresher.config import Config
from thresher.harness.episode import run_episode
from thresher.harness.trace import ProposalEvent, ToolResult
from thresher.index.embedded.store import EmbeddedStore
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy

#: extensions that make a word a file name
FILE_EXTENSIONS = frozenset(
    [
        "html",
        "htm",
        "css",
        "scss",
        "sass",
        "less",
        "js",
        "mjs",
        "ts",
        "json",
        "map",
        "md",
        "markdown",
        "rst",
        "txt",
        "py",
        "pyi",
        "cfg",
        "ini",
        "toml",
        "yml",
        "yaml",
        "xml",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "ico",
        "webp",
        "woff",
        "woff2",
        "ttf",
        "lock",
        "sh",
        "bat",
    ]
)
_HEX = re.compile(r"#[0-9a-f]{3,8}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)(?:[0-9a-f]{8}|[0-9a-f]{6})")
_FILE = re.compile(r"[\w./-]*\w\.([a-z0-9]+)", re.ASCII)
_SYNTAX = re.compile(r"[{}<>=`|]|^:\w[\w:-]*:$|^[#.][a-z]|--")
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_EDGES = "\"'(),;:!?*[]"

# the prose of a source file, by this bench's own rules
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1")
#: reStructuredText: only ````double backticks```` are code; ```text <url>`_`` is a link
_RST_LITERAL = re.compile(r"``(?!`).+?``")
_RST_LINK = re.compile(r"`([^`<\n]+?)\s*(?:<[^<>`\n]*>)?`__?")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ATTRS = re.compile(r"\{[^{}\n]*\}")
_LINK_TARGET = re.compile(r"\]\([^)\n]*\)|\]\[[^\]\n]*\]|^\s*\[[^\]\n]+\]:.*$")
#: a role with its text (Sphinx ``:ref:`text <target>```, MyST ``{ref}`text```): the
#: rendered page shows the text (a link), so it is prose, its target is not
_ROLE = re.compile(r"(?::[\w:-]+:|\{[\w:-]+\})`([^`\n]*?)(?:\s*<[^<>`\n]*>)?`")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::|^\s*\.\.\s+_[^:]*:.*$|^\s*:[\w -]+:")
_BLOCK_MARKER = re.compile(r"^\s*(?:/{3,}|!!!|\?\?\?\+?|-{1,3}8<-{1,3})\s*[\w-]*")


def prose_words(raw: str, rst: bool = False) -> set[str]:
    """The words of ``raw`` (lowercased) in its prose lines, by the rules above
    (``rst``: a reStructuredText source, whose single backticks are no code)."""
    lines = _COMMENT.sub("", raw).split("\n")
    out: set[str] = set()
    fence = ""
    literal_indent = -1  # inside a reStructuredText literal or code block deeper than this
    for line in lines:
        stripped = line.strip()
        f = _FENCE.match(line)
        if fence:
            if f and f.group(1)[0] == fence[0] and not line[f.end() :].strip():
                fence = ""
            continue
        if f:
            fence = f.group(1)
            continue
        indent = len(line) - len(line.lstrip())
        if literal_indent >= 0:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = -1
        directive = re.match(r"\s*\.\.\s+([\w:-]+)::", line)
        if (stripped.endswith("::") and not directive) or (
            directive and directive.group(1) in ("code", "code-block", "sourcecode")
        ):
            literal_indent = indent
        text = _ROLE.sub(lambda m: f" {m.group(1)} ", line)
        if rst:
            text = _RST_LINK.sub(lambda m: f" {m.group(1)} ", _RST_LITERAL.sub(" ", text))
        else:
            text = _INLINE_CODE.sub(" ", text)
        text = _TAG.sub(" ", text)
        text = _ATTRS.sub(" ", text)
        text = _LINK_TARGET.sub(" ", text)
        text = _DIRECTIVE.sub(" ", text)
        text = _BLOCK_MARKER.sub(" ", text)
        out.update(_WORD.findall(text.lower()))
    return out


def word_kind(word: str, source_raw: str, source_prose: set[str]) -> str | None:
    """Why ``word`` of a follow-up query is noise (None: it is not)."""
    w = word.strip(_EDGES).lower()
    if not w:
        return None
    if _HEX.fullmatch(w):
        return "hex"
    m = _FILE.fullmatch(word.strip(_EDGES).rstrip("."))
    if m and m.group(1) in FILE_EXTENSIONS:  # a lowercase extension: "markdown.Markdown" is none
        return "file"
    if _SYNTAX.search(w):
        return "syntax"
    if _WORD.fullmatch(w) and w in source_raw and w not in source_prose:
        return "markup-only"
    return None


@dataclass
class Tally:
    questions: int = 0
    searches: list[int] = field(default_factory=list)
    follow_ups: int = 0
    noisy: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    recalls: list[float] = field(default_factory=list)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folder", required=True, help="the documentation folder")
    ap.add_argument("--questions", required=True, help="JSONL: id, question, gold (optional)")
    ap.add_argument("--index", default=None, help="index folder (built once, then reused)")
    ap.add_argument("--examples", type=int, default=12, help="noisy queries printed")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    config = Config()
    index = Path(args.index) if args.index else Path("/tmp") / f"qn-index-{folder.name}"
    if not (index / "CURRENT").exists() and not any(index.glob("*")):
        from thresher.corpus import iter_documents
        from thresher.index.backends import ingest

        t0 = time.perf_counter()
        ingest(iter_documents([folder]), index, config, progress=False)
        print(f"indexed {folder} into {index} in {time.perf_counter() - t0:.0f}s", flush=True)
    questions = [json.loads(x) for x in Path(args.questions).read_text().splitlines() if x.strip()]
    tally = Tally()
    raws: dict[str, tuple[str, set[str]]] = {}

    def source(doc_id: str) -> tuple[str, set[str]]:
        if doc_id not in raws:
            path = folder / doc_id
            raw = path.read_text(errors="replace") if path.is_file() else ""
            rst = path.suffix in (".rst", ".txt")
            raws[doc_id] = (raw.lower(), prose_words(raw, rst))
        return raws[doc_id]

    with EmbeddedStore(index, config) as store:
        for q in questions:
            result = run_episode(
                q["question"], store, LocalPolicy(LocalOptions(), config=config), config
            )
            tally.questions += 1
            asked = set(re.findall(r"\w+", q["question"].lower()))
            parents: dict[str, str] = {}
            for e in result.trace:
                if isinstance(e, ProposalEvent) and e.proposal:
                    for cid, chunks in (e.proposal.get("call_parents") or {}).items():
                        if chunks:
                            parents[cid] = chunks[0].rsplit("#", 1)[0]
            searches = [
                e for e in result.trace if isinstance(e, ToolResult) and e.tool == "search_corpus"
            ]
            tally.searches.append(len(searches))
            for e in searches[1:]:
                query = str(e.arguments.get("query", ""))
                raw, prose = source(parents.get(e.call_id, ""))
                kinds = {
                    k
                    for word in query.split()
                    if not set(re.findall(r"\w+", word.lower())) <= asked
                    and (k := word_kind(word, raw, prose))
                }
                tally.follow_ups += 1
                if kinds:
                    tally.noisy += 1
                    tally.kinds.update(kinds)
                    if len(tally.examples) < args.examples:
                        tally.examples.append(f"{query!r} ({', '.join(sorted(kinds))})")
            gold = q.get("gold") or []
            if gold:
                got = {d.doc_id for d in result.documents[:5]}
                tally.recalls.append(sum(g in got for g in gold) / len(gold))
    n = max(tally.follow_ups, 1)
    print(f"{folder}: {tally.questions} questions")
    print(
        f"  searches per question: mean {statistics.fmean(tally.searches):.2f}, "
        f"median {statistics.median(tally.searches):.0f}, max {max(tally.searches)}"
    )
    print(
        f"  follow-up queries: {tally.follow_ups}; noisy {tally.noisy} "
        f"({100 * tally.noisy / n:.1f}%); by kind {dict(tally.kinds.most_common())}"
    )
    if tally.recalls:
        print(f"  recall@5 over gold documents: {100 * statistics.fmean(tally.recalls):.1f}")
    for ex in tally.examples:
        print(f"    {ex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
