"""Generate a whole fictional world: entities, documents in four domains, clue chains.

:func:`build_world_docs` is the pure core (seed in, documents and chains out);
:func:`generate_world` writes them to a folder::

    DIR/web/<slug>.html                encyclopedia pages (some with hidden injections)
    DIR/filings/<company>-annual-report-<year>.md
    DIR/patents/<number>.txt
    DIR/email/thread-NNNNN.txt
    DIR/.world/world.json              entities, facts, documents (not ingested: hidden dir)
    DIR/.world/chains.jsonl            the planted chains, one JSON object per line
    DIR/.world/README.txt              what this is (fictional; how it was made)

Document paths are relative POSIX paths, i.e. the doc ids ``thresher index DIR``
gives them (the loader skips ``.world/``, so only the documents are ingested). Equal seed and size give byte-identical files.

``chains.jsonl`` records: ``id``, ``question``, ``answer``, ``answer_aliases``,
``n_hops`` (2-4), ``anchor`` (the entity the question names), ``gold_docs`` (one
per hop, distinct), ``distractors`` (near-miss document paths) and ``hops``: per
hop ``doc``, ``fact`` (the sentence, verbatim in the document's visible text),
``bridge`` (the entity named in this and the next hop's document; None on the
last hop), ``relation``, ``subject``/``object`` (names), ``subject_id``/``object_id``
and ``alt_docs`` (other documents stating the same fact). ``world.json`` holds
``entities`` (by kind), ``documents`` (path, domain, kind, about, title, groups,
hidden text) and ``facts`` (relation, subject id, object id or year, doc, sentence).
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.errors import InputError
from thresher.synth.world.chains import Chain, MentionIndex, find_chains, select_chains
from thresher.synth.world.distractors import attach_distractors
from thresher.synth.world.domains.base import RenderedDoc
from thresher.synth.world.domains.email import render_email
from thresher.synth.world.domains.filings import render_filings
from thresher.synth.world.domains.patents import render_patents
from thresher.synth.world.domains.web import render_web
from thresher.synth.world.entities import World, build_world

__all__ = [
    "SIZES",
    "WORLD_FORMAT",
    "META_DIR",
    "WorldManifest",
    "BuiltWorld",
    "build_world_docs",
    "generate_world",
    "demo_question",
    "resolve_size",
]

#: Named sizes -> (companies, planted chains to select, fewest documents, most documents).
SIZES: dict[str, tuple[int, int, int, int]] = {
    "small": (7, 20, 60, 100),
    "medium": (60, 200, 500, 700),
    "large": (190, 700, 1750, 2400),
}
#: Documents a world renders per company (8.9-11.1 for 7, 20 and 60 companies, seeds 0-1:
#: ``docs/synth-tasks.md``); turns a document count into a number of companies.
DOCS_PER_COMPANY = 10.0
#: How many variants of a world are drawn, at most, to land in the size's document range.
MAX_VARIANTS = 25
WORLD_FORMAT = 1
META_DIR = ".world"
#: what a regeneration replaces (a root README.txt is from the first layout)
_OUTPUTS = ("web", "filings", "patents", "email", META_DIR, "README.txt")


@dataclass(slots=True)
class BuiltWorld:
    """Everything generated for one seed and size, in memory."""

    seed: int
    size: str
    world: World
    docs: list[RenderedDoc]
    chains: list[Chain]


@dataclass(slots=True)
class WorldManifest:
    """What :func:`generate_world` wrote.

    Attributes:
        seed, size: the inputs (``size`` is a name or ``"<N> documents"``).
        out_dir: the folder.
        documents: relative paths of the documents, sorted.
        counts: documents per domain, and entities per kind.
        chains: the planted chains (``chains[0]`` is the demo question).
    """

    seed: int
    size: str
    out_dir: Path
    documents: list[str]
    counts: dict[str, int]
    chains: list[Chain] = field(default_factory=list)


def resolve_size(size: str | int) -> tuple[str, int, int, tuple[int, int]]:
    """``(label, companies, chain target, (fewest, most documents))`` for a size.

    Args:
        size: ``small``, ``medium``, ``large`` or a document count (at least 20).

    Raises:
        InputError: an unknown name or a count below 20.
    """
    if isinstance(size, str) and size in SIZES:
        companies, chains, lo, hi = SIZES[size]
        return size, companies, chains, (lo, hi)
    try:
        n = int(size)
    except ValueError:
        raise InputError(
            f"unknown world size {size!r}; use small, medium, large or a document count"
        ) from None
    if n < 20:
        raise InputError(f"a world needs at least 20 documents, got {n}; ask for more")
    companies = max(3, round(n / DOCS_PER_COMPANY))
    return f"{n} documents", companies, max(10, n // 3), (int(n * 0.8), int(n * 1.2))


def _render(seed: int, companies: int, variant: int) -> tuple[World, list[RenderedDoc]]:
    world = build_world(seed, companies, variant)
    key = f"thresher-world:{seed}:{companies}:{variant}"
    docs = render_web(world, random.Random(f"{key}:web"))
    docs += render_filings(world, random.Random(f"{key}:filings"))
    docs += render_patents(world, random.Random(f"{key}:patents"))
    docs += render_email(world, random.Random(f"{key}:email"))
    docs.sort(key=lambda d: d.path)
    return world, docs


def build_world_docs(seed: int, size: str | int = "small") -> BuiltWorld:
    """Generate a world in memory: entities, rendered documents, verified chains.

    Args:
        seed: any integer; equal seeds (and sizes) give equal worlds.
        size: ``small``, ``medium``, ``large`` or an approximate document count.

    Returns:
        The :class:`BuiltWorld`.

    Raises:
        InputError: an unknown size.
    """
    label, companies, target, (lo, hi) = resolve_size(size)
    best: tuple[int, World, list[RenderedDoc]] | None = None
    for variant in range(MAX_VARIANTS):  # the first variant whose size is in range
        world, docs = _render(seed, companies, variant)
        miss = max(lo - len(docs), len(docs) - hi, 0)
        if best is None or miss < best[0]:
            best = (miss, world, docs)
        if miss == 0:
            break
    _, world, docs = best  # type: ignore[misc]
    facts = [f for d in docs for f in d.facts]
    index = MentionIndex(world, docs)
    paths = find_chains(world, facts, index)
    rng = random.Random(f"thresher-world:{seed}:{companies}:chains")
    chains = select_chains(world, paths, target, rng)
    attach_distractors(world, chains, docs, index, rng)
    return BuiltWorld(seed, label, world, docs, chains)


def _readme(built: BuiltWorld) -> str:
    counts = _domain_counts(built.docs)
    return "\n".join(
        [
            "A FICTIONAL WORLD",
            "",
            f"Everything in this folder was generated by thresher (seed {built.seed}, size {built.size}).",
            f"The country {built.world.country}, its towns, people, companies, products, patents and",
            "events are invented; any resemblance to real ones is accidental. No language model can",
            "answer questions about them from memory: the answers are only in these files.",
            "",
            "Documents (the ingester reads them; their paths relative to this folder are their doc ids):",
            f"  web/      {counts['web']:>5} encyclopedia pages (.html; some hide injection text to test sanitization)",
            f"  filings/  {counts['filings']:>5} annual reports (.md)",
            f"  patents/  {counts['patents']:>5} patent filings (.txt)",
            f"  email/    {counts['email']:>5} email threads (.txt)",
            "",
            "Metadata (in a hidden folder, so `thresher index` skips it):",
            "  .world/world.json     every entity, every fact sentence and the document it is in",
            "  .world/chains.jsonl   planted multi-hop questions: question, answer, and per hop the",
            "                        document, the verbatim fact sentence and the bridge entity",
            "",
            "Regenerate with: thresher synth world --seed "
            f"{built.seed} --out <DIR> {_size_flag(built.size)}",
            "",
        ]
    )


def _size_flag(label: str) -> str:
    return f"--size {label}" if label in SIZES else f"--documents {label.split()[0]}"


def _domain_counts(docs: list[RenderedDoc]) -> dict[str, int]:
    counts = {"web": 0, "filings": 0, "patents": 0, "email": 0}
    for d in docs:
        counts[d.domain] += 1
    return counts


def _world_json(built: BuiltWorld) -> dict[str, Any]:
    return {
        "format": WORLD_FORMAT,
        "generator": "thresher.synth.world",
        "seed": built.seed,
        "size": built.size,
        "entities": built.world.to_dict(),
        "documents": [
            {
                "path": d.path,
                "domain": d.domain,
                "kind": d.kind,
                "about": d.about,
                "title": d.title,
                "groups": list(d.groups),
                "hidden": d.hidden,
            }
            for d in built.docs
        ],
        "facts": [
            {
                "relation": f.relation,
                "subject": f.subject,
                "object": f.object,
                "doc": f.doc,
                "sentence": f.sentence,
            }
            for d in built.docs
            for f in d.facts
        ],
    }


def _prepare(out: Path) -> None:
    """Make ``out`` ready: create it, or clear a previously generated world in it."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is a file; give a folder for the world")
    if out.is_dir() and any(out.iterdir()):
        if not (out / META_DIR / "world.json").is_file():
            raise InputError(
                f"{out} is not empty and holds no generated world; choose an empty or new folder"
            )
        for name in _OUTPUTS:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def generate_world(seed: int, size: str | int, out_dir: str | Path) -> WorldManifest:
    """Generate a world and write it to ``out_dir`` (layout in the module docstring).

    Args:
        seed: any integer.
        size: ``small`` (~80 documents), ``medium`` (~600), ``large`` (~2,200 documents,
            over 2,000 chunks of 512 tokens) or an approximate document count.
        out_dir: a new or empty folder, or one holding a previously generated world
            (whose generated files are replaced; other files are kept).

    Returns:
        The :class:`WorldManifest`, chains included.

    Raises:
        InputError: unknown size, or ``out_dir`` is a file or a non-empty folder that
            holds no generated world.
    """
    built = build_world_docs(seed, size)
    out = Path(out_dir)
    _prepare(out)
    for d in built.docs:
        _write(out / d.path, d.content)
    _write(out / META_DIR / "README.txt", _readme(built))
    _write(out / META_DIR / "world.json", json.dumps(_world_json(built), indent=1) + "\n")
    lines = [json.dumps(c.to_dict()) for c in built.chains]
    _write(out / META_DIR / "chains.jsonl", "".join(line + "\n" for line in lines))
    counts = _domain_counts(built.docs)
    counts["documents"] = len(built.docs)
    counts["chains"] = len(built.chains)
    return WorldManifest(
        seed, built.size, out, sorted(d.path for d in built.docs), counts, built.chains
    )


def demo_question(out_dir: str | Path) -> str:
    """The first planted chain's question of the world in ``out_dir`` (the README demo's).

    Raises:
        InputError: ``out_dir`` holds no generated world or no chain.
    """
    path = Path(out_dir) / META_DIR / "chains.jsonl"
    if not path.is_file():
        raise InputError(
            f"no generated world in {out_dir}; run: thresher synth world --seed 0 --out {out_dir}"
        )
    with path.open(encoding="utf-8") as fh:
        first = fh.readline()
    if not first.strip():
        raise InputError(f"{path} holds no chain; regenerate the world with a larger size")
    return str(json.loads(first)["question"])
