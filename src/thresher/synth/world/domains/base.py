"""What every domain renderer returns, and a helper that records facts as it writes.

A renderer turns entities into :class:`RenderedDoc` records: the file content
as written to disk, the *visible* text a reader (and the ingester) sees, and the
:class:`~thresher.synth.world.relations.Fact` sentences the text states. Fact
sentences are always whole sentences inside one paragraph, never split by markup.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from thresher.synth.world.entities import Event, Patent, Product, World
from thresher.synth.world.relations import Fact, say

__all__ = ["RenderedDoc", "FactWriter", "display", "text_document"]


@dataclass(slots=True)
class RenderedDoc:
    """One generated document.

    Attributes:
        path: relative POSIX path under the output folder (the ingester's doc id).
        domain: ``web``, ``filings``, ``patents`` or ``email``.
        kind: what the document is (``town``, ``person``, ``annual_report``, ``patent``, ``thread``...).
        about: the id of the entity the document is about (None for email threads).
        title: the document's title.
        content: the file content.
        visible: the text a reader sees (for HTML: without scripts, styles, hidden elements).
        facts: the fact sentences the visible text states.
        groups: topic keys shared by look-alike documents (``industry:battery``,
            ``town:<id>``, ``process:<...>``, ``region:<id>``...).
        hidden: text present in the file but hidden from readers (HTML only).
    """

    path: str
    domain: str
    kind: str
    about: str | None
    title: str
    content: str
    visible: str
    facts: list[Fact] = field(default_factory=list)
    groups: tuple[str, ...] = ()
    hidden: list[str] = field(default_factory=list)


def display(world: World, entity_id: str) -> str:
    """How prose names an entity: ``patent XX-...``, ``the <product>``, ``the <event>``, or its name."""
    entity = world.by_id[entity_id]
    if isinstance(entity, Patent):
        return f"patent {entity.number}"
    if isinstance(entity, Product | Event):
        return f"the {entity.name}"
    return entity.name


class FactWriter:
    """Writes fact sentences for one document and remembers them.

    Args:
        world: the world (for display names).
        path: the document's path.
        register: the sentence register (``web``, ``filing``, ``patent``, ``email``).
        rng: picks template variants.
    """

    def __init__(self, world: World, path: str, register: str, rng: random.Random) -> None:
        self.world, self.path, self.register, self.rng = world, path, register, rng
        self.facts: list[Fact] = []

    def fact(self, relation: str, subject: str, obj: str, **slots: object) -> str:
        """The sentence stating ``relation(subject, obj)``; ``obj`` is an id or a year."""
        o = display(self.world, obj) if obj in self.world.by_id else obj
        sentence = say(relation, self.register, self.rng, display(self.world, subject), o, **slots)
        self.facts.append(Fact(relation, subject, obj, self.path, sentence))
        return sentence

    def also(self, relation: str, subject: str, obj: str, sentence: str) -> None:
        """Record that an already written ``sentence`` also states ``relation(subject, obj)``."""
        self.facts.append(Fact(relation, subject, obj, self.path, sentence))


def text_document(
    fw: FactWriter,
    domain: str,
    kind: str,
    about: str | None,
    title: str,
    content: str,
    groups: tuple[str, ...],
) -> RenderedDoc:
    """A plain-text document at ``fw.path``: readers see the file content as it is, and
    it states the facts ``fw`` wrote (see :class:`RenderedDoc` for the fields)."""
    return RenderedDoc(fw.path, domain, kind, about, title, content, content, fw.facts, groups)
