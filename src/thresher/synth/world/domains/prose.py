"""Filler prose: sentences of each domain that carry no clue.

Banks (``banks_web``, ``banks_docs``) are lists of templates; :func:`fill` picks some, in random order, and fills
their slots. Slots the caller does not give (``{num}``, ``{year}``, ``{month}``,
``{crop}``...) are drawn from the generator. Filler names at most the document's
own subject, never another entity, so it adds text to retrieve against without
adding links between entities.
"""

from __future__ import annotations

import random
from typing import Any

from thresher.synth.world.domains.banks_docs import DOC_BANKS
from thresher.synth.world.domains.banks_web import WEB_BANKS
from thresher.synth.world.lexicon import Industry

__all__ = ["fill", "industry_slots", "BANKS", "MONTHS"]

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip

_GENERIC: dict[str, Any] = {
    "month": MONTHS,
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"),
    "crop": ("barley", "rapeseed", "flax", "potatoes", "orchard fruit", "hops", "sugar beet"),
    "hobby": ("long-distance cycling", "choral singing", "restoring old clocks", "sailing",
              "chess", "growing vegetables", "amateur astronomy"),
    "craft": ("rope-making", "pottery", "tanning", "clock-making", "weaving", "glass-blowing"),
    "music": ("brass band music", "folk song", "chamber music", "organ music", "jazz"),
    "material": ("limestone", "red brick", "timber", "granite", "sandstone"),
}  # fmt: skip


class _Slots(dict[str, Any]):
    def __init__(self, rng: random.Random, given: dict[str, Any]) -> None:
        super().__init__(given)
        self._rng = rng

    def __missing__(self, key: str) -> Any:
        rng = self._rng
        if key in _GENERIC:
            value: Any = rng.choice(_GENERIC[key])
        elif key.startswith("num"):
            value = rng.randint(3, 60)
        elif key == "big":
            value = f"{rng.randint(2, 90) * 100:,}"
        elif key == "pct":
            value = rng.randint(2, 35)
        elif key == "year":
            value = rng.randint(1890, 2022)
        elif key == "decade":
            value = rng.randint(195, 201) * 10
        elif key == "century":
            value = rng.choice(
                ("fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth")
            )
        else:
            raise KeyError(f"filler slot {{{key}}} has no value")
        return value  # not cached: each occurrence draws afresh


def fill(rng: random.Random, bank: str, k: int, **slots: Any) -> list[str]:
    """``k`` distinct sentences from ``BANKS[bank]`` (fewer if the bank is smaller), filled.

    Args:
        rng: the generator (template choice and generic slots).
        bank: the bank's name.
        k: how many sentences.
        slots: slot values; generic ones are drawn when absent.

    Returns:
        The sentences, in the order drawn.
    """
    templates = rng.sample(BANKS[bank], min(k, len(BANKS[bank])))
    values = _Slots(rng, slots)
    return [t.format_map(values) for t in templates]


def industry_slots(ind: Industry, rng: random.Random) -> dict[str, Any]:
    """The slots of filler about an industry: ``{industry}`` and two of its terms
    (``{term}``, ``{term2}``, drawn in that order, possibly the same)."""
    return {"industry": ind.label, "term": rng.choice(ind.terms), "term2": rng.choice(ind.terms)}


BANKS: dict[str, list[str]] = {**WEB_BANKS, **DOC_BANKS}
