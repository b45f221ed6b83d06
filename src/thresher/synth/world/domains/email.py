"""Email threads (``email/thread-NNNNN.txt``): product launches, technical reviews,
introductions of new colleagues, and site-visit arrangements.

Each thread is a plain-text file of messages with headers, a greeting, a body
and a signature (name, job title, company). Bodies are never line-wrapped, so a
fact sentence stays on one line. Visit threads carry no fact: they are noise that
links people to places the way real mail does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from thresher.synth.world.domains.base import FactWriter, RenderedDoc
from thresher.synth.world.domains.prose import fill
from thresher.synth.world.entities import Person, Product, World
from thresher.synth.world.lexicon import ENGINEER_ROLES
from thresher.synth.world.names import slugify

__all__ = ["render_email"]

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_CLOSINGS = ("Best,", "Thanks,", "Regards,", "Cheers,", "Best regards,", "Many thanks,")


@dataclass(slots=True)
class _Message:
    sender: str
    to: list[str]
    sentences: list[str]


@dataclass(slots=True)
class _Thread:
    """A thread being written; its facts get the document path when it is emitted."""

    subject: str
    kind: str
    group: str  # industry:<key>
    fw: FactWriter
    messages: list[_Message] = field(default_factory=list)


def _title(role: str) -> str:
    return role.removeprefix("a ").title()


def _address(w: World, p: Person) -> str:
    given, surname = p.name.split(" ", 1)
    return f"{given}.{surname}@{slugify(w.by_id[p.employer].name)}.example".lower()


def _stamp(t: datetime) -> str:
    return (
        f"{_DAYS[t.weekday()]}, {t.day} {_MONTHS[t.month - 1]} {t.year} {t.hour:02d}:{t.minute:02d}"
    )


def _write(w: World, th: _Thread, rng: random.Random) -> str:
    t = datetime(
        rng.randint(2020, 2024),
        rng.randint(1, 12),
        rng.randint(1, 28),
        rng.randint(7, 17),
        rng.randint(0, 59),
    )
    lines = [f"Subject: {th.subject}", f"Messages: {len(th.messages)}", ""]
    for i, m in enumerate(th.messages):
        sender = w.by_id[m.sender]
        to = [w.by_id[x] for x in m.to]
        lines += [
            "-" * 40,
            f"From: {sender.name} <{_address(w, sender)}>",
            "To: " + ", ".join(f"{p.name} <{_address(w, p)}>" for p in to),
            f"Date: {_stamp(t)}",
            f"Subject: {'Re: ' if i else ''}{th.subject}",
            "",
            f"Hi {to[0].name.split()[0] if len(to) == 1 else 'all'},",
            "",
            " ".join(m.sentences),
            "",
            rng.choice(_CLOSINGS),
            sender.name,
            f"{_title(sender.role)}, {w.by_id[sender.employer].name}",
            "",
        ]
        t += timedelta(minutes=rng.randint(20, 3000))
    return "\n".join(lines)


def _reply_chain(
    th: _Thread, people: list[str], rng: random.Random, bank: str, slots: dict[str, str]
) -> None:
    """One to three replies, each to the previous sender, never repeating a sentence."""
    said = {s for m in th.messages for s in m.sentences}
    for _ in range(rng.randint(1, 3)):
        last = th.messages[-1]
        sender = rng.choice([p for p in people if p != last.sender])
        body = fill(rng, bank, rng.randint(1, 2), **slots) + fill(
            rng, "email_chatter", rng.randint(0, 2), **slots
        )
        body = [s for s in dict.fromkeys(body) if s not in said]
        if body:
            said.update(body)
            th.messages.append(_Message(sender, [last.sender], body))


def _staff(w: World, company: str) -> list[str]:
    return [p.id for p in w.people if p.employer == company]


def _product_threads(w: World, prod: Product, rng: random.Random) -> list[_Thread]:
    maker = w.by_id[prod.maker]
    ind = w.industry(maker.industry)
    slots = {"term": rng.choice(ind.terms), "term2": rng.choice(ind.terms)}
    staff = _staff(w, maker.id)
    threads: list[_Thread] = []
    if prod.launch_event and rng.random() < 0.8:
        fw = FactWriter(w, "", "email", rng)
        th = _Thread(
            f"Launch plans for the {prod.name}", "launch", f"industry:{maker.industry}", fw
        )
        opening = [fw.fact("launch_event", prod.id, prod.launch_event)]
        if rng.random() < 0.3:
            opening.append(fw.fact("venue", prod.launch_event, w.by_id[prod.launch_event].town))
        sender, *others = rng.sample(staff, min(len(staff), rng.randint(2, 3)))
        th.messages.append(
            _Message(sender, others, opening + fill(rng, "email_launch", 2, **slots))
        )
        _reply_chain(th, [sender, *others], rng, "email_launch", slots)
        threads.append(th)
    if prod.patent and rng.random() < 0.7:
        fw = FactWriter(w, "", "email", rng)
        th = _Thread(f"{prod.name} test results", "tech", f"industry:{maker.industry}", fw)
        people = rng.sample(staff, min(len(staff), 2))
        if rng.random() < 0.3:  # loop in an inventor, wherever they work now
            inventor = w.by_id[prod.patent].inventors[0]
            people = [p for p in people if p != inventor] + [inventor]
        body = fill(rng, "email_tech", 2, **slots) + [
            fw.fact("product_patent", prod.id, prod.patent)
        ]
        th.messages.append(_Message(people[0], people[1:], body))
        _reply_chain(th, people, rng, "email_tech", slots)
        threads.append(th)
    return threads


def _intro_thread(w: World, p: Person, rng: random.Random) -> _Thread:
    company = w.by_id[p.employer]
    ind = w.industry(company.industry)
    slots = {"term": rng.choice(ind.terms), "term2": rng.choice(ind.terms)}
    fw = FactWriter(w, "", "email", rng)
    th = _Thread(f"Welcome {p.name}", "intro", f"industry:{company.industry}", fw)
    sender = p.manager or company.ceo
    team = [x for x in _staff(w, company.id) if x not in (sender, p.id)]
    body = [fw.fact("employer", p.id, company.id, role=p.role)]
    if p.manager:
        body.append(fw.fact("manager", p.id, p.manager))
    body += fill(rng, "email_chatter", 1, **slots)
    th.messages.append(_Message(sender, team[:3] + [p.id], body))
    for colleague in team[: rng.randint(1, 3)]:  # colleagues welcome the newcomer
        th.messages.append(_Message(colleague, [p.id], fill(rng, "email_welcome", 1, **slots)))
    return th


def _visit_thread(w: World, rng: random.Random) -> _Thread:
    a, b = rng.sample(w.people, 2)
    town = w.by_id[w.by_id[b.employer].hq].name
    ind = w.industry(w.by_id[b.employer].industry)
    slots = {"town": town, "term": rng.choice(ind.terms)}
    th = _Thread(
        f"Site visit in {town}", "visit", f"industry:{ind.key}", FactWriter(w, "", "email", rng)
    )
    th.messages.append(_Message(a.id, [b.id], fill(rng, "email_visit", 3, **slots)))
    _reply_chain(th, [a.id, b.id], rng, "email_visit", slots)
    return th


def render_email(world: World, rng: random.Random) -> list[RenderedDoc]:
    """Threads about products (launch, tests), new colleagues, and site visits.

    Args:
        world: the world.
        rng: the generator for participants, dates and prose.

    Returns:
        The threads as documents numbered in creation order.
    """
    threads: list[_Thread] = []
    for prod in world.products:
        threads += _product_threads(world, prod, rng)
    for p in world.people:
        if not p.has_bio and p.role in ENGINEER_ROLES and rng.random() < 0.5:
            threads.append(_intro_thread(world, p, rng))
    threads += [_visit_thread(world, rng) for _ in range(max(2, len(world.companies) // 4))]
    rng.shuffle(threads)
    docs: list[RenderedDoc] = []
    for n, th in enumerate(threads):
        path = f"email/thread-{n:05d}.txt"
        content = _write(world, th, rng)
        facts = [replace(f, doc=path) for f in th.fw.facts]
        docs.append(
            RenderedDoc(
                path, "email", th.kind, None, th.subject, content, content, facts, (th.group,)
            )
        )
    return docs
