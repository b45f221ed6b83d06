"""Patent filings (``patents/<number>.txt``), one per patent.

A bibliographic header, abstract, background, summary, detailed description,
record notes (the fact sentences: lead inventor, assignee, cited patent) and
numbered claims. Several patents of one industry claim the same process, so the
surface text of one patent is a near miss for another.
"""

from __future__ import annotations

import random

from thresher.synth.world.domains.base import FactWriter, RenderedDoc, text_document
from thresher.synth.world.domains.prose import BANKS, MONTHS, fill, industry_slots
from thresher.synth.world.entities import Patent, World

__all__ = ["render_patents"]

_CLAIM_TAILS = (
    "wherein the step is controlled by a closed feedback loop.",
    "further comprising measuring the result with a downstream sensor.",
    "wherein the operating temperature is held below 80 degrees Celsius.",
    "wherein the assembly is housed in a sealed enclosure.",
    "further comprising repeating the process in two or more stages.",
    "wherein the controller stores a calibration table.",
)


def _date(rng: random.Random, year: int) -> str:
    """A date in ``year`` written as ``14 March 2015`` (locale-independent)."""
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {year}"


def _drawings(rng: random.Random, term: str) -> list[str]:
    """``FIG. 1 is ...`` lines, numbered in order."""
    templates = rng.sample(BANKS["patent_drawings"], rng.randint(3, 5))
    return [t.format(fig=i, term=term) for i, t in enumerate(templates, start=1)]


def _patent(w: World, pat: Patent, fw: FactWriter, rng: random.Random) -> str:
    ind = w.industry(pat.industry)
    slots = industry_slots(ind, rng)
    inventors = "; ".join(w.by_id[i].name for i in pat.inventors)
    notes = [
        fw.fact("inventor", pat.id, pat.inventors[0]),
        fw.fact("assignee", pat.id, pat.assignee),
    ]
    if pat.cites:
        notes.append(fw.fact("cites", pat.id, pat.cites))
    form = pat.title.split(" for ")[0].lower()
    detail = fill(rng, "patent_detail", rng.randint(10, 13), **slots)  # no sentence twice
    abstract, summary, detail = detail[:2], detail[2:4], detail[4:]
    claims = [f"1. A {form} for {pat.process}, comprising the steps and parts described above."]
    for n, tail in enumerate(rng.sample(_CLAIM_TAILS, rng.randint(2, 4)), start=2):
        claims.append(f"{n}. The {form} of claim {n - 1}, {tail}")
    sections = [
        f"{w.country.upper()} PATENT REGISTRY (fictional)",
        f"Patent number: {pat.number}",
        f"Title: {pat.title}",
        f"Filed: {_date(rng, pat.filed)}",
        f"Granted: {_date(rng, pat.granted)}",
        f"Assignee: {w.by_id[pat.assignee].name}",
        f"Inventors: {inventors}",
        "",
        "ABSTRACT",
        "",
        f"A {form} for {pat.process} is disclosed. " + " ".join(abstract),
        "",
        "BACKGROUND",
        "",
        " ".join(fill(rng, "patent_background", rng.randint(3, 4), **slots)),
        "",
        "SUMMARY",
        "",
        f"The invention provides a simpler way of {pat.process} in {ind.label}. "
        + " ".join(summary),
        "",
        "BRIEF DESCRIPTION OF THE DRAWINGS",
        "",
        *_drawings(rng, slots["term"]),
        "",
        "DETAILED DESCRIPTION",
        "",
        " ".join(detail[:4]),
        "",
        " ".join(detail[4:]),
        "",
        "RECORD NOTES",
        "",
        " ".join(notes),
        "",
        "CLAIMS",
        "",
        *claims,
        "",
    ]
    return "\n".join(sections)


def render_patents(world: World, rng: random.Random) -> list[RenderedDoc]:
    """One filing per patent.

    Args:
        world: the world.
        rng: the generator for dates and prose choices.

    Returns:
        The patent documents, in patent order.
    """
    docs = []
    for pat in world.patents:
        path = f"patents/{pat.number}.txt"
        fw = FactWriter(world, path, "patent", rng)
        content = _patent(world, pat, fw, rng)
        title = f"{pat.number}: {pat.title}"
        groups = (f"process:{pat.process}", f"industry:{pat.industry}")
        docs.append(text_document(fw, "patents", "patent", pat.id, title, content, groups))
    return docs
