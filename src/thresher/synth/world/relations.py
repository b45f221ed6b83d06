"""The relations a clue chain can follow, and how each is said.

A :class:`Relation` links a subject entity to one object (an entity or a literal
such as a year). It carries the sentences that state it, per register (``web``,
``filing``, ``patent``, ``email``), a noun phrase used when a question nests it
(``the company that employs {x}``) and the question it asks when it is the last
hop. Relations without a noun phrase end chains only (their objects, such as a
province or a year, are too common to be bridges).

Every fact sentence names both ends by their full names, so a document holding a
sentence mentions both entities it links.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Relation", "RELATIONS", "Fact", "say"]


@dataclass(frozen=True, slots=True)
class Relation:
    """One functional relation.

    Attributes:
        name: identifier (``employer``).
        subject, object: entity kinds (``person`` -> ``company``); ``year`` for literals.
        np: noun phrase nesting an inner description ``{x}``; None if final-hop only.
        question: the question asked of ``{x}`` when this relation is the last hop.
        templates: register -> sentence templates over ``{s}``/``{o}`` and extra slots.
    """

    name: str
    subject: str
    object: str
    np: str | None
    question: str
    templates: dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact as stated in one document.

    Attributes:
        relation: the relation's name.
        subject: the subject entity id.
        object: the object entity id, or the literal (a year as a string).
        doc: the document path (relative POSIX) whose visible text holds ``sentence``.
        sentence: the sentence, verbatim.
    """

    relation: str
    subject: str
    object: str
    doc: str
    sentence: str


def _r(
    name: str, subj: str, obj: str, np: str | None, q: str, **templates: tuple[str, ...]
) -> Relation:
    return Relation(name, subj, obj, np, q, dict(templates))


RELATIONS: dict[str, Relation] = {
    r.name: r
    for r in (
        _r("inventor", "patent", "person", "the lead inventor of {x}", "Who is the lead inventor of {x}?",
           patent=("The lead inventor named on {s} is {o}.", "{o} is listed as the first inventor of {s}.",
                   "{s} names {o} as its lead inventor.")),
        _r("assignee", "patent", "company", "the company to which {x} is assigned",
           "To which company is {x} assigned?",
           patent=("{s} is assigned to {o}.", "The registered assignee of {s} is {o}.")),
        _r("cites", "patent", "patent", "the earlier patent cited by {x}", "Which earlier patent does {x} cite?",
           patent=("{s} cites the earlier {o} as prior art.", "Among the prior art, {s} relies on {o}.")),
        _r("employer", "person", "company", "the company that employs {x}", "Which company employs {x}?",
           web=("{s} works at {o} as {role}.", "{s} is currently employed by {o} as {role}.",
                "Since {since}, {s} has worked for {o} as {role}."),
           email=("Please welcome {s}, who has joined {o} as {role}.", "{s} is now at {o}, working as {role}."),
           filing=("{s} serves as {role} of {o}.",)),
        _r("birthplace", "person", "town", "the town where {x} was born", "In which town was {x} born?",
           web=("{s} was born in {o} in {year}.", "{s} was born in {year} in the town of {o}.")),
        _r("alma_mater", "person", "university", "the institution where {x} studied",
           "At which institution did {x} study?",
           web=("{s} studied {field} at {o}.", "{s} graduated from {o} in {grad} with a degree in {field}.")),
        _r("hq", "company", "town", "the town where {x} is headquartered", "In which town is {x} headquartered?",
           filing=("The principal executive offices of {s} are located in {o}.", "{s} is headquartered in {o}.",
                   "{s} maintains its head office in {o}.")),
        _r("ceo", "company", "person", "the chief executive of {x}", "Who is the chief executive officer of {x}?",
           filing=("{o} has served as chief executive officer of {s} since {since}.",
                   "The chief executive officer of {s} is {o}."),
           web=("{o} is the chief executive officer of {s}.", "{o} has led {s} as chief executive since {since}.")),
        _r("founder", "company", "person", "the founder of {x}", "Who founded {x}?",
           filing=("{s} was founded in {year} by {o}.",),
           web=("{o} founded {s} in {year}.", "In {year}, {o} founded {s}.")),
        _r("company_founded", "company", "year", None, "In what year was {x} founded?",
           filing=("{s} was founded in {year} by {o}.",)),
        _r("parent", "company", "company", "the parent company of {x}", "What is the parent company of {x}?",
           filing=("{s} is a wholly owned subsidiary of {o}.", "All outstanding shares of {s} are held by {o}.")),
        _r("region", "town", "region", None, "In which province is {x}?",
           web=("{s} is a town in {o}.", "{s} is a market town in {o}.")),
        _r("river", "town", "river", None, "On which river does {x} stand?",
           web=("{s} stands on the {o}.", "The {o} flows through the centre of {s}.")),
        _r("town_founded", "town", "year", None, "In what year was {x} founded?",
           web=("{s} was founded in {o}.", "Records show that {s} was founded in {o}.")),
        _r("twin", "town", "town", "the twin town of {x}", "What is the twin town of {x}?",
           web=("{s} has been twinned with {o} since {year}.", "{s} is twinned with {o}.")),
        _r("uni_town", "university", "town", "the town where {x} is located", "In which town is {x} located?",
           web=("{s} is located in {o}.", "The main campus of {s} is in {o}.")),
        _r("uni_founded", "university", "year", None, "In what year was {x} established?",
           web=("{s} was established in {o}.",)),
        _r("maker", "product", "company", "the company that makes {x}", "Which company makes {x}?",
           web=("{s} is made by {o}.", "{s} is manufactured by {o}."),
           filing=("{o} manufactures and sells {s}.",)),
        _r("product_patent", "product", "patent", "the patent behind {x}", "Which patent is {x} based on?",
           email=("{s} is built on the method described in {o}.", "{s} uses the process protected by {o}."),
           web=("{s} is based on the process described in {o}.",)),
        _r("launch_event", "product", "event", "the event at which {x} was launched",
           "At which event was {x} launched?",
           email=("We will launch {s} at {o}.", "{s} will be unveiled at {o}.")),
        _r("venue", "event", "town", "the town that hosts {x}", "In which town is {x} held?",
           web=("{s} is held every year in {o}.", "{s} takes place each year in {o}."),
           email=("{s} takes place in {o} again this year.", "This year {s} is in {o}.",
                  "Remember that {s} is held in {o}, so book rooms early.")),
        _r("event_first", "event", "year", None, "In what year was {x} first held?",
           web=("{s} was first held in {o}.",)),
        _r("manager", "person", "person", "the manager of {x}", "To whom does {x} report?",
           email=("{s} reports to {o}.", "{s} is managed by {o}.")),
    )
}  # fmt: skip


def say(relation: str, register: str, rng: random.Random, s: str, o: str, **slots: object) -> str:
    """A sentence stating ``relation`` in ``register``, its first letter capitalized.

    Args:
        relation: a key of :data:`RELATIONS`.
        register: ``web``, ``filing``, ``patent`` or ``email``.
        rng: picks one of the register's templates.
        s, o: the display forms of subject and object (``patent XX-2010-000123``).
        slots: extra template slots (``role``, ``year``, ``since``, ``field``, ``grad``).

    Returns:
        The sentence.

    Raises:
        KeyError: the relation has no template in ``register`` (a generator bug).
    """
    template = rng.choice(RELATIONS[relation].templates[register])
    text = template.format(s=s, o=o, **slots)
    return text[0].upper() + text[1:]
