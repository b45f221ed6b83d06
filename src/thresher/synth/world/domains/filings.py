"""Annual filings (``filings/<company>-annual-report-<year>.md``), one per company.

Laid out like a securities filing: business, risk factors, properties, market
for the shares, management's discussion with a small table, and officers. The
headquarters, chief executive, founder, parent company, officers and products are
stated in plain sentences; everything else is domain filler.
"""

from __future__ import annotations

import random

from thresher.synth.world.domains.base import FactWriter, RenderedDoc, text_document
from thresher.synth.world.domains.prose import fill, industry_slots
from thresher.synth.world.entities import Company, World
from thresher.synth.world.lexicon import ROLES
from thresher.synth.world.names import slugify

__all__ = ["render_filings"]


def _filing(w: World, c: Company, fw: FactWriter, rng: random.Random) -> str:
    ind = w.industry(c.industry)
    fy = c.fiscal_year
    slots = industry_slots(ind, rng)
    founder = fw.fact("founder", c.id, c.founder, year=c.founded)
    fw.also("company_founded", c.id, str(c.founded), founder)
    business = [
        f"{c.name} designs and manufactures products for {ind.label}.",
        founder,
        *fill(rng, "filing_business", rng.randint(3, 5), **slots),
    ]
    products = [fw.fact("maker", p.id, c.id) for p in w.products if p.maker == c.id]
    lines = [
        f"# {c.name} Annual Report {fy}",
        "",
        f"Annual report for the fiscal year ended 31 December {fy}, filed with the "
        f"{w.country} Securities Commission. The company and all names in this report are fictional.",
        "",
        "## Part I",
        "",
        "### Item 1. Business",
        "",
        " ".join(business),
        "",
    ]
    if products:
        lines += [
            " ".join(products + ["Product sales made up most of our revenue in the year."]),
            "",
        ]
    human = [f"At year end we had {c.employees:,} employees."] + fill(
        rng, "filing_human", rng.randint(2, 3)
    )
    lines += ["#### Human capital", "", " ".join(human), ""]
    lines += ["### Item 1A. Risk Factors", ""]
    for risk in fill(rng, "filing_risk", rng.randint(4, 6), **slots):
        lines += [f"- {risk}"]
    lines += [""]
    sites = rng.randint(1, 6)
    hq = fw.fact("hq", c.id, c.hq)
    lines += [
        "### Item 2. Properties",
        "",
        f"{hq} We operate {sites} production site{'s' if sites > 1 else ''} and lease warehouse space near our main customers.",
        "",
        "### Item 3. Legal Proceedings",
        "",
        " ".join(fill(rng, "filing_legal", rng.randint(1, 2))),
        "",
        "### Item 5. Market for Our Shares",
        "",
    ]
    if c.parent:
        parent = fw.fact("parent", c.id, c.parent)
        lines += [f"{parent} Accordingly, there is no public trading market for our shares.", ""]
    else:
        ticker = c.stem[:3].upper() + c.name.split()[-1][0]
        lines += [
            f"Our ordinary shares trade on the {w.country} Exchange under the symbol {ticker}.",
            "",
        ]
    prior = max(1, round(c.revenue_m * rng.uniform(0.8, 1.15)))
    direction = "up" if c.revenue_m >= prior else "down"
    pct = round(abs(c.revenue_m - prior) * 100 / prior)
    mdna = fill(
        rng, "filing_mdna", rng.randint(5, 7), rev=c.revenue_m, dir=direction, pct=pct, **slots
    )
    lines += [
        "## Part II",
        "",
        "### Item 7. Management's Discussion and Analysis",
        "",
        " ".join(mdna[:3]),
        "",
        " ".join(mdna[3:]),
        "",
        f"| Item | {fy} | {fy - 1} |",
        "|---|---|---|",
        f"| Revenue (millions) | {c.revenue_m:,} | {prior:,} |",
        f"| Employees at year end | {c.employees:,} | {max(10, c.employees - rng.randint(-200, 300)):,} |",
        "",
        "### Item 8. Notes to the Financial Statements",
        "",
        " ".join(fill(rng, "filing_notes", rng.randint(3, 4))),
        "",
        "## Part III",
        "",
        "### Item 10. Directors and Executive Officers",
        "",
    ]
    officers = [fw.fact("ceo", c.id, c.ceo, since=c.ceo_since)]
    for p in w.people:
        if p.employer == c.id and p.role in ROLES:
            officers.append(fw.fact("employer", p.id, c.id, role=f"the {p.role}"))
    lines += [
        " ".join(officers),
        "",
        "Our officers serve at the discretion of the board of directors.",
        "",
    ]
    return "\n".join(lines)


def render_filings(world: World, rng: random.Random) -> list[RenderedDoc]:
    """One annual report per company.

    Args:
        world: the world.
        rng: the generator for prose choices.

    Returns:
        The filings, in company order.
    """
    docs = []
    for c in world.companies:
        path = f"filings/{slugify(c.name)}-annual-report-{c.fiscal_year}.md"
        fw = FactWriter(world, path, "filing", rng)
        content = _filing(world, c, fw, rng)
        title = f"{c.name} Annual Report {c.fiscal_year}"
        groups = (f"industry:{c.industry}", f"town:{c.hq}")
        docs.append(text_document(fw, "filings", "annual_report", c.id, title, content, groups))
    return docs
