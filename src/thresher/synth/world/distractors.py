"""Near-miss documents for a chain: same surface topic, different entity, no answer.

For each hop document the candidates are documents of the same domain and kind
that share a topic key with it (a patent claiming the same process or in the same
industry, a filing of a company in the same industry or headquartered in the same
town, a page about a town in the same province or on the same river, a biography
of someone in the same industry or born in the same town), those sharing more
keys first. Look-alike companies (same name stem, same industry) come before all. A distractor never names the chain's answer or
any entity of the chain, and is never one of the chain's documents.
"""

from __future__ import annotations

import random

from thresher.synth.world.chains import Chain, MentionIndex
from thresher.synth.world.domains.base import RenderedDoc
from thresher.synth.world.entities import Company, World

__all__ = ["attach_distractors"]


def _lookalike_paths(world: World, docs: list[RenderedDoc]) -> dict[str, set[str]]:
    """doc path -> paths of the filings of look-alike companies."""
    filing = {d.about: d.path for d in docs if d.kind == "annual_report"}
    out: dict[str, set[str]] = {}
    for c in world.companies:
        if isinstance(c, Company) and c.lookalike_of:
            a, b = filing[c.id], filing[c.lookalike_of]
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return out


def attach_distractors(
    world: World,
    chains: list[Chain],
    docs: list[RenderedDoc],
    index: MentionIndex,
    rng: random.Random,
    per_hop: int = 2,
) -> None:
    """Fill ``chain.distractors`` (document paths, sorted) for every chain, in place.

    Args:
        world: the world.
        chains: the selected chains.
        docs: every rendered document.
        index: mentions in those documents.
        rng: picks among equally good candidates.
        per_hop: how many distractors to take per hop document (fewer if none fit).
    """
    by_path = {d.path: d for d in docs}
    by_key: dict[tuple[str, str, str], list[str]] = {}
    for d in docs:
        for g in d.groups:
            by_key.setdefault((d.domain, d.kind, g), []).append(d.path)
    lookalikes = _lookalike_paths(world, docs)
    for chain in chains:
        gold = {h.doc for h in chain.hops}
        last = chain.hops[-1]
        if last.object_id is not None:
            banned = set(index.docs_of.get(last.object_id, set()))
        else:
            banned = index.literal_docs(last.object, index.text)
        for hop in chain.hops:
            for e in (hop.subject_id, hop.object_id):
                if e is not None:
                    banned |= index.docs_of.get(e, set())
        chosen: list[str] = []
        for hop in chain.hops:
            d = by_path[hop.doc]
            first = sorted(lookalikes.get(d.path, set()))
            shared: dict[str, int] = {}
            for g in d.groups:
                for path in by_key.get((d.domain, d.kind, g), []):
                    shared[path] = shared.get(path, 0) + 1
            rest = sorted(shared)
            rng.shuffle(rest)
            rest.sort(key=lambda path: -shared[path])  # most shared topics first (stable)
            taken = 0
            for path in first + rest:
                if taken >= per_hop:
                    break
                if path in gold or path in banned or path in chosen:
                    continue
                chosen.append(path)
                taken += 1
        chain.distractors = sorted(chosen)
