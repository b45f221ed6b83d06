"""The entity graph of a fictional world: who works where, what is headquartered where.

Every relation a question can follow is functional (one answer per subject): a
person has one employer, birthplace and alma mater; a company one headquarters
town, chief executive, founder and at most one parent; a patent one lead
inventor and one assignee; and so on. :func:`build_world` draws the whole graph
from one seeded generator, in a fixed order, so the same seed gives the same world.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from thresher.synth.world.lexicon import (
    ENGINEER_ROLES,
    FIELDS,
    INDUSTRIES,
    LANDMARK_KINDS,
    ROLES,
    Industry,
)
from thresher.synth.world.names import NameFactory

__all__ = [
    "Region",
    "River",
    "Town",
    "University",
    "Company",
    "Person",
    "Patent",
    "Product",
    "Event",
    "World",
    "build_world",
]


@dataclass(slots=True)
class Region:
    id: str
    name: str


@dataclass(slots=True)
class River:
    id: str
    name: str


@dataclass(slots=True)
class Town:
    id: str
    name: str
    region: str
    river: str
    founded: int
    population: int
    landmark: str
    twin: str | None = None


@dataclass(slots=True)
class University:
    id: str
    name: str
    town: str
    founded: int


@dataclass(slots=True)
class Company:
    id: str
    name: str
    stem: str
    industry: str
    hq: str
    founded: int
    founder: str = ""
    ceo: str = ""
    ceo_since: int = 0
    parent: str | None = None
    employees: int = 0
    revenue_m: int = 0
    fiscal_year: int = 0
    lookalike_of: str | None = None


@dataclass(slots=True)
class Person:
    id: str
    name: str
    birthplace: str
    birth_year: int
    alma_mater: str
    field: str
    grad_year: int
    employer: str
    role: str
    since: int
    manager: str | None = None
    has_bio: bool = False


@dataclass(slots=True)
class Patent:
    id: str
    number: str
    title: str
    process: str
    industry: str
    assignee: str
    inventors: list[str]
    filed: int
    granted: int
    cites: str | None = None


@dataclass(slots=True)
class Product:
    id: str
    name: str
    kind: str
    maker: str
    patent: str | None
    launch_year: int
    launch_event: str | None = None


@dataclass(slots=True)
class Event:
    id: str
    name: str
    industry: str
    town: str
    first_year: int


@dataclass(slots=True)
class World:
    """Every entity of one world, by kind, in creation order (ids are ``kind-NNNN``)."""

    country: str
    patent_office_code: str
    regions: list[Region] = field(default_factory=list)
    rivers: list[River] = field(default_factory=list)
    towns: list[Town] = field(default_factory=list)
    universities: list[University] = field(default_factory=list)
    companies: list[Company] = field(default_factory=list)
    people: list[Person] = field(default_factory=list)
    patents: list[Patent] = field(default_factory=list)
    products: list[Product] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    by_id: dict[str, Any] = field(default_factory=dict)

    def add(self, kind: str, entity: Any) -> Any:
        """Append ``entity`` to the list of ``kind`` and index it by id."""
        getattr(self, kind).append(entity)
        self.by_id[entity.id] = entity
        return entity

    def name(self, entity_id: str) -> str:
        """The display name of an entity (a patent's number)."""
        entity = self.by_id[entity_id]
        return entity.number if isinstance(entity, Patent) else entity.name

    def industry(self, key: str) -> Industry:
        """The :class:`Industry` with ``key``."""
        return next(i for i in INDUSTRIES if i.key == key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: country, office code and every entity list."""
        kinds: tuple[str, ...] = ("regions", "rivers", "towns", "universities", "companies")
        kinds += ("people", "patents", "products", "events")
        out: dict[str, Any] = {
            "country": self.country,
            "patent_office_code": self.patent_office_code,
        }
        for kind in kinds:
            out[kind] = [asdict(e) for e in getattr(self, kind)]
        return out


def _eid(kind: str, n: int) -> str:
    return f"{kind}-{n:04d}"


def _person(w: World, names: NameFactory, rng: random.Random, employer: str, role: str) -> Person:
    born = rng.randint(1950, 1992)
    p = Person(
        id=_eid("person", len(w.people)),
        name=names.person(),
        birthplace=rng.choice(w.towns).id,
        birth_year=born,
        alma_mater=rng.choice(w.universities).id,
        field=rng.choice(FIELDS),
        grad_year=born + rng.randint(21, 26),
        employer=employer,
        role=role,
        since=rng.randint(born + 24, 2023),
    )
    return w.add("people", p)


def _company(w: World, names: NameFactory, rng: random.Random, ind: Industry, stem: str) -> Company:
    taken = {c.name for c in w.companies}
    suffixes = [s for s in ind.suffixes if f"{stem} {s}" not in taken]
    c = Company(
        id=_eid("company", len(w.companies)),
        name=names.company(stem, rng.choice(suffixes)),
        stem=stem,
        industry=ind.key,
        hq=rng.choice(w.towns).id,
        founded=rng.randint(1952, 2014),
        employees=rng.randint(40, 9000),
        revenue_m=rng.randint(5, 2400),
        fiscal_year=rng.randint(2019, 2024),
    )
    return w.add("companies", c)


def _places(w: World, names: NameFactory, rng: random.Random, scale: int) -> None:
    for i in range(max(3, min(8, scale // 20))):
        w.add("regions", Region(_eid("region", i), names.region()))
    for i in range(max(3, min(40, scale // 5))):
        w.add("rivers", River(_eid("river", i), names.river()))
    for i in range(max(6, scale // 2)):
        w.add(
            "towns",
            Town(
                id=_eid("town", i),
                name=names.town(),
                region=rng.choice(w.regions).id,
                river=rng.choice(w.rivers).id,
                founded=rng.randint(1104, 1890),
                population=rng.randint(18, 900) * 100 + rng.randint(0, 99),
                landmark=names.landmark(rng.choice(LANDMARK_KINDS)),
            ),
        )
    order = list(w.towns)  # twinning pairs towns; only the first of a pair states it
    rng.shuffle(order)
    for a, b in zip(order[0::2], order[1::2], strict=False):
        if rng.random() < 0.7:
            a.twin = b.id
    for i in range(max(3, scale // 8)):
        town = rng.choice(w.towns).id
        w.add(
            "universities",
            University(_eid("university", i), names.university(), town, rng.randint(1620, 1975)),
        )


def _companies_and_people(w: World, names: NameFactory, rng: random.Random, scale: int) -> None:
    # small worlds use few industries, so every industry has several companies
    pool = rng.sample(INDUSTRIES, max(3, min(len(INDUSTRIES), scale // 4)))
    industries = [pool[i % len(pool)] for i in range(scale)]
    rng.shuffle(industries)
    for ind in industries:
        c = _company(w, names, rng, ind, names.company_stem())
        if rng.random() < 0.12:  # a look-alike: same stem and industry, another town
            twin = _company(w, names, rng, ind, c.stem)
            twin.lookalike_of = c.id
    for c in w.companies:
        ceo = _person(w, names, rng, c.id, "chief executive officer")
        c.ceo, c.ceo_since = ceo.id, rng.randint(max(c.founded, 1990), 2023)
        for role in rng.sample(ROLES, rng.randint(1, 2)):
            _person(w, names, rng, c.id, role)
        for _ in range(rng.randint(2, 3)):
            _person(w, names, rng, c.id, rng.choice(ENGINEER_ROLES)).manager = ceo.id
    for c in w.companies:  # founders: some still at the company, most elsewhere now
        others = [o.id for o in w.companies if o.id != c.id]
        employer = c.id if rng.random() < 0.3 else rng.choice(others)
        c.founder = _person(w, names, rng, employer, "a board adviser").id
        if rng.random() < 0.2:
            candidates = [o.id for o in w.companies if o.id != c.id and o.parent is None]
            if candidates:
                c.parent = rng.choice(candidates)
    for c in w.companies:  # a parent is never itself a subsidiary
        if c.parent and w.by_id[c.parent].parent:
            c.parent = None
    for p in w.people:
        p.has_bio = rng.random() < (0.5 if p.role.startswith(("chief", "a board")) else 0.3)


def _patents_products_events(w: World, names: NameFactory, rng: random.Random) -> None:
    staff: dict[str, list[str]] = {}
    for p in w.people:
        if p.role in ENGINEER_ROLES or p.role == "director of research":
            staff.setdefault(p.employer, []).append(p.id)
    for c in w.companies:
        ind = w.industry(c.industry)
        peers = [o.id for o in w.companies if o.industry == c.industry and o.id != c.id]
        for _ in range(rng.choice((1, 1, 2, 2, 3))):
            inventors = rng.sample(staff[c.id], min(len(staff[c.id]), rng.randint(1, 2)))
            if peers and rng.random() < 0.5:  # the lead inventor has since moved on
                moved = [x for x in staff.get(rng.choice(peers), []) if x not in inventors]
                if moved:
                    inventors.insert(0, rng.choice(moved))
            filed = rng.randint(max(c.founded + 1, 1995), 2022)
            process = rng.choice(ind.processes)
            earlier = [p.id for p in w.patents if p.industry == ind.key and p.filed < filed]
            form = rng.choice(("Method for", "System for", "Apparatus for", "Process for"))
            pat = Patent(
                id=_eid("patent", len(w.patents)),
                number=names.patent_number(w.patent_office_code, filed),
                title=f"{form} {process}",
                process=process,
                industry=ind.key,
                assignee=c.id,
                inventors=inventors,
                filed=filed,
                granted=min(filed + rng.randint(1, 4), 2024),
                cites=rng.choice(earlier) if earlier and rng.random() < 0.5 else None,
            )
            w.add("patents", pat)
    used = sorted({c.industry for c in w.companies})
    for i, key in enumerate(used * max(1, len(w.companies) // (6 * len(used)) + 1)):
        ind = w.industry(key)
        ev = Event(
            _eid("event", i),
            names.event(ind.event_topic),
            key,
            rng.choice(w.towns).id,
            rng.randint(1978, 2016),
        )
        w.add("events", ev)
    for c in w.companies:
        ind = w.industry(c.industry)
        own = [p.id for p in w.patents if p.assignee == c.id]
        events = [e.id for e in w.events if e.industry == c.industry]
        for _ in range(rng.choice((0, 1, 1, 2))):
            prod = Product(
                id=_eid("product", len(w.products)),
                name=names.product(),
                kind=rng.choice(ind.products),
                maker=c.id,
                patent=rng.choice(own) if own else None,
                launch_year=rng.randint(max(c.founded + 1, 2000), 2024),
                launch_event=rng.choice(events) if events and rng.random() < 0.7 else None,
            )
            w.add("products", prod)


def build_world(seed: int, scale: int, variant: int = 0) -> World:
    """Draw a whole world from ``seed``.

    Args:
        seed: the seed; equal seeds and scales give equal worlds.
        scale: the number of (non-look-alike) companies; everything else scales with it.

        variant: draws another world for the same seed and scale (0 is the first).

    Returns:
        The :class:`World`.
    """
    rng = random.Random(f"thresher-world:{seed}:{scale}" + (f":{variant}" if variant else ""))
    names = NameFactory(rng)
    country = names.country()
    w = World(country=country, patent_office_code=country[:2].upper())
    _places(w, names, rng, scale)
    _companies_and_people(w, names, rng, scale)
    _patents_products_events(w, names, rng)
    return w
