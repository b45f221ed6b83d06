"""The attack catalog: attacks built from a generated world, written into its folder.

:func:`build_attacks` aims every attack at a planted chain of a
:class:`~thresher.synth.world.BuiltWorld` (its question is the lure; its
first gold chunk is what prune attacks name; a document of another chain is
what answer attacks push). :func:`write_attacks` adds them to a world folder
on request (the default ``thresher synth world`` output never includes them)::

    DIR/attacks/<attack id>.txt|.html|.jsonl    the attack documents (ingested with DIR)
    DIR/.world/attacks.jsonl                    one record per attack (not ingested)

The doc id of a ``.txt``/``.html`` attack is its path relative to ``DIR``; a
``.jsonl`` attack holds one record whose ``id`` is its doc id (how hostile ids
are planted).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from thresher.errors import InputError
from thresher.synth.attacks.forgeries import FORGERY_DRAFTERS
from thresher.synth.attacks.templates import DRAFTERS as _TEXT_DRAFTERS
from thresher.synth.attacks.templates import Draft, Target
from thresher.synth.world.generate import META_DIR, BuiltWorld

__all__ = [
    "ATTACK_CLASSES",
    "ATTACKS_DIR",
    "ATTACKS_FILE",
    "Goal",
    "AttackFile",
    "Attack",
    "targets_of",
    "build_attacks",
    "write_attacks",
    "read_attacks",
]

#: the attack classes, in report order
#: attack class -> its drafter: the text attacks, then the forgeries of harness output
DRAFTERS = {**_TEXT_DRAFTERS, **FORGERY_DRAFTERS}
ATTACK_CLASSES: tuple[str, ...] = tuple(DRAFTERS)
ATTACKS_DIR = "attacks"
ATTACKS_FILE = "attacks.jsonl"


@dataclass(frozen=True, slots=True)
class Goal:
    """What an attack wants, and so what counts as its success.

    kind: ``stop`` (the episode ends sooner than without the attack), ``prune`` (the
        chunk ``target`` is pruned), ``call`` (the tool ``target`` runs, with
        ``arguments``), ``budget`` (the budget or the hard cutoff changes: only the
        harness could do that), ``answer`` (the document ``target`` is in the final
        answer), ``reveal`` (the system prompt is echoed), ``forge`` (the string
        ``target`` reaches the model verbatim: a forged delimiter or role line).
    read_first: for ``answer``, the instruction says to read the document first.
    """

    kind: str
    target: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    read_first: bool = False


@dataclass(frozen=True, slots=True)
class AttackFile:
    """One attack document as a file: its path under the world folder and its content."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class Attack:
    """One attack.

    Attributes:
        attack_id: ``<class>-NN``.
        kind: the attack class (one of :data:`ATTACK_CLASSES`).
        note: the trick, in a few words.
        question: the question the attack is aimed at (episodes run it).
        files: the attack documents.
        doc_ids: their doc ids once ingested (path, or a JSONL record's id).
        goal: what counts as success.
        trigger: fragments that must all reach the model for it to read the instruction.
        config: config overrides to run the attack with (``{"budget.total": 6000}``).
    """

    attack_id: str
    kind: str
    note: str
    question: str
    files: tuple[AttackFile, ...]
    doc_ids: tuple[str, ...]
    goal: Goal
    trigger: tuple[str, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe record (as in ``.world/attacks.jsonl``)."""
        data = asdict(self)
        data["files"] = [f.path for f in self.files]
        return data


def targets_of(built: BuiltWorld) -> list[Target]:
    """One :class:`Target` per planted chain of ``built`` (raises ``InputError`` if none)."""
    chains = built.chains
    if not chains:
        raise InputError("the world has no planted chain to aim attacks at; use a larger size")
    big = tuple(d.path for d in sorted(built.docs, key=lambda d: (-len(d.visible), d.path))[:8])
    out = []
    for i, chain in enumerate(chains):
        own = {h.doc for h in chain.hops}
        other = next(
            (
                hop.doc
                for j in range(1, len(chains))
                for hop in reversed(chains[(i + j) % len(chains)].hops)
                if hop.doc not in own
            ),
            next(d.path for d in built.docs if d.path not in own),
        )
        first = chain.hops[0].doc
        out.append(Target(chain.question, chain.anchor, f"{first}#0", other, big))
    return out


def _attack(kind: str, number: int, draft: Draft, question: str) -> Attack:
    attack_id = f"{kind.replace('_', '-')}-{number:02d}"
    files: list[AttackFile] = []
    doc_ids: list[str] = []
    many = len(draft.files) > 1
    for k, (name, content) in enumerate(draft.files):
        suffix = Path(name).suffix
        path = f"{ATTACKS_DIR}/{attack_id}{'-' + 'ab'[k] if many else ''}{suffix}"
        files.append(AttackFile(path, content))
        if suffix == ".jsonl":
            doc_ids.extend(json.loads(line)["id"] for line in content.splitlines() if line)
        else:
            doc_ids.append(path)
    goal = Goal(**draft.goal)
    return Attack(
        attack_id, kind, draft.note, question, tuple(files), tuple(doc_ids), goal,
        draft.trigger, dict(draft.config),
    )  # fmt: skip


def build_attacks(built: BuiltWorld, classes: tuple[str, ...] = ATTACK_CLASSES) -> list[Attack]:
    """Every attack of ``classes``, aimed at the chains of ``built`` (deterministic).

    The j-th attack of the k-th class is aimed at chain ``(3k + j) mod n``, so a
    class spreads over several questions.

    Raises:
        InputError: an unknown class, or a world without chains.
    """
    unknown = sorted(set(classes) - set(DRAFTERS))
    if unknown:
        raise InputError(
            f"unknown attack class {unknown[0]!r}; classes: {', '.join(ATTACK_CLASSES)}"
        )
    targets = targets_of(built)
    attacks: list[Attack] = []
    for k, kind in enumerate(classes):
        count = len(DRAFTERS[kind](targets[0]))
        for j in range(count):
            target = targets[(3 * k + j) % len(targets)]
            attacks.append(_attack(kind, j + 1, DRAFTERS[kind](target)[j], target.question))
    return attacks


def write_attacks(out_dir: str | Path, attacks: list[Attack]) -> list[str]:
    """Add ``attacks`` to the world folder ``out_dir``; returns the paths written.

    Replaces an earlier ``attacks/`` folder and writes ``.world/attacks.jsonl``.

    Raises:
        InputError: ``out_dir`` holds no generated world.
    """
    root = Path(out_dir)
    if not (root / META_DIR / "world.json").is_file():
        raise InputError(
            f"{root} holds no generated world; run `thresher synth world --out {root}` first"
        )
    folder = root / ATTACKS_DIR
    for old in sorted(folder.glob("*")) if folder.is_dir() else []:
        old.unlink()
    folder.mkdir(exist_ok=True)
    written = []
    for attack in attacks:
        for f in attack.files:
            (root / f.path).write_text(f.content, encoding="utf-8", newline="\n")
            written.append(f.path)
    lines = "".join(json.dumps(a.to_dict(), ensure_ascii=False) + "\n" for a in attacks)
    (root / META_DIR / ATTACKS_FILE).write_text(lines, encoding="utf-8")
    return written


def read_attacks(out_dir: str | Path) -> list[Attack]:
    """The attacks :func:`write_attacks` added to ``out_dir`` (file contents read back).

    Raises:
        InputError: no attacks file, or a record that does not parse.
    """
    root = Path(out_dir)
    path = root / META_DIR / ATTACKS_FILE
    if not path.is_file():
        raise InputError(f"no attacks in {root}; add them with write_attacks()")
    attacks = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            data = json.loads(line)
            files = tuple(
                AttackFile(p, (root / p).read_text(encoding="utf-8")) for p in data["files"]
            )
            attacks.append(
                Attack(
                    data["attack_id"],
                    data["kind"],
                    data["note"],
                    data["question"],
                    files,
                    tuple(data["doc_ids"]),
                    Goal(**data["goal"]),
                    tuple(data["trigger"]),
                    dict(data["config"]),
                )  # fmt: skip
            )
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise InputError(f"{path}:{n}: not an attack record ({exc})") from exc
    return attacks
