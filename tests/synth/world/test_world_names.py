from __future__ import annotations

import random
import re

from thresher.synth.world.names import NameFactory, slugify


def test_names_are_unique_ascii_and_never_prefixes_of_words_in_other_names() -> None:
    names = NameFactory(random.Random(7))
    made = [names.person() for _ in range(400)]
    made += [names.town() for _ in range(100)]
    made += [names.company(names.company_stem(), "Materials") for _ in range(100)]
    made += [names.product() for _ in range(100)] + [names.university() for _ in range(20)]
    made += [names.patent_number("QX", 2001) for _ in range(100)]
    assert len(set(made)) == len(made)
    assert all(re.fullmatch(r"[A-Za-z0-9 -]+", n) for n in made)
    surnames = [n.split()[1] for n in made[:400]]
    assert len(set(surnames)) == len(surnames)  # a person's full name is a rare string


def test_same_seed_same_names() -> None:
    a, b = NameFactory(random.Random(3)), NameFactory(random.Random(3))
    assert [a.person() for _ in range(50)] == [b.person() for _ in range(50)]


def test_slugify() -> None:
    assert slugify("Velquor Systems") == "velquor-systems"
    assert slugify("Kestrix KR-40") == "kestrix-kr-40"
