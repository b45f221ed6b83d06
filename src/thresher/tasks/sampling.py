"""Drawing a few tasks from a task file: a sample spread across hop counts.

``thresher eval --sample N --seed S`` runs ``N`` tasks drawn so that each hop
count (2-hop, 3-hop, 4-hop MuSiQue questions...) keeps its share of the file,
instead of the first ``N`` (``--limit``), which follow the file's order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from thresher.errors import ConfigError
from thresher.tasks.task import Task

__all__ = ["hop_count", "sample_by_hops"]


def hop_count(task: Task) -> int:
    """The number of hops of ``task``: its hops when known, else its gold documents."""
    return len(task.hops) if task.hops else len(task.gold_doc_ids)


def sample_by_hops(tasks: Sequence[Task], n: int, seed: int = 0) -> list[Task]:
    """``n`` tasks drawn at random, each hop count getting its share (largest remainder).

    Every hop count present gets at least one task when ``n`` allows. The draw
    depends only on ``tasks``, ``n`` and ``seed``; the result keeps file order.

    Args:
        tasks: the tasks to draw from.
        n: how many to draw (all of them when ``n >= len(tasks)``).
        seed: the random seed.

    Raises:
        ConfigError: ``n < 1``.
    """
    if n < 1:
        raise ConfigError(f"--sample must be >= 1, got {n}")
    if n >= len(tasks):
        return list(tasks)
    groups: dict[int, list[int]] = {}
    for i, task in enumerate(tasks):
        groups.setdefault(hop_count(task), []).append(i)
    shares = {h: n * len(ix) / len(tasks) for h, ix in groups.items()}
    counts = {h: min(len(groups[h]), max(1, int(s))) for h, s in shares.items()}
    by_remainder = sorted(groups, key=lambda h: (-(shares[h] - int(shares[h])), h))
    while sum(counts.values()) > n:  # more hop counts than n: drop the smallest shares
        smallest = min((h for h in counts if counts[h]), key=lambda h: (shares[h], -h))
        counts[smallest] -= 1
    while sum(counts.values()) < n:
        for h in by_remainder:
            if sum(counts.values()) < n and counts[h] < len(groups[h]):
                counts[h] += 1
    rng = random.Random(seed)
    chosen = [i for h in sorted(groups) for i in rng.sample(groups[h], counts[h])]
    return [tasks[i] for i in sorted(chosen)]
