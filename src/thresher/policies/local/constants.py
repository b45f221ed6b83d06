"""The local policy's constants: the weights file's ``constants`` section, typed.

Every number the policy's parts use that is neither structural (0, 1, 2 for a
pair or a half, an index) nor learned by a model lives here: how a bridge
phrase is scored, how a clue chain picks its documents, how many anchors a hop
reads, the stop rule without a model, and the defaults of the policy's
settings. :func:`~thresher.policies.local.models.load_weights` reads the
section into a frozen :class:`Constants` that the policy hands to its parts
(:class:`~thresher.policies.local.planner.Planner`,
:class:`~thresher.policies.local.scoring.CandidateScorer`,
:class:`~thresher.policies.local.stop.StopModel`,
:class:`~thresher.policies.local.answer.AnswerRanker` and the functions of
:mod:`.bridges`, :mod:`.chain` and :mod:`.clues` they call). ``thresher train-policy
--tune-constants`` sets the tunable ones by a coordinate search
(:mod:`thresher.train.local.tune_constants`) and names its tuning data in the
section's ``tuned_on``.

In the file the section reads::

    "constants": {
      "tuned_on": "hand-set (...)",
      "values": {"cue_bonus": {"value": 1.2, "meaning": "..."}, ...}
    }

A value the section lacks takes the default below (today's values: a weights
file written before the section existed behaves as it always did); an unknown
name is an error. This module and :mod:`.models` are the weights loader: the
only modules of the package that may spell such a number
(``tests/policies/local/test_no_magic_numbers.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from thresher.errors import ConfigError

__all__ = [
    "Constants",
    "DEFAULT_CONSTANTS",
    "DEFAULT_CONTROLS",
    "OPTION_DEFAULTS",
    "constants_from_section",
]


def _c(value: float, meaning: str) -> Any:
    """A constant's field: its default (today's value) and its one-line meaning."""
    return field(default=value, metadata={"meaning": meaning})


@dataclass(frozen=True, slots=True)
class Constants:
    """The local policy's constants (see the module docstring); ``meaning`` of each in
    its field's metadata, written beside its value in the weights file."""

    # -- bridges: how a follow-up's bridge phrase is scored (bridges.bridge_queries) ----
    question_word_gain: float = _c(
        0.1, "per question word a sentence holds, added to every name in that sentence"
    )
    solved_word_gain: float = _c(
        0.4, "per word of the clue the anchor resolved that a sentence holds, added to its names"
    )
    beside_via_gain: float = _c(
        0.5, "a sentence holding the phrase that led to the anchor, shared among its other names"
    )
    cue_bonus: float = _c(1.2, "a name a relation word of the question introduces")
    cue_before: int = _c(4, "words a relation word may stand before the name it introduces")
    cue_after: int = _c(1, "words a relation word may stand after the name it introduces")
    title_head_gain: float = _c(0.3, "a name that opens a known document's title")
    repeat_gain: float = _c(0.05, "per repetition of a name in its anchor's text")
    repeat_cap: int = _c(4, "repetitions of a name counted at most")
    name_word_gain: float = _c(0.05, "per content word of a bridge phrase")
    name_word_cap: int = _c(4, "content words of a bridge phrase counted at most")
    residual_words: int = _c(6, "question words a follow-up adds to its bridge phrase, at most")
    run_max_words: int = _c(
        4, "content words a candidate name of a text without capitals holds, at most"
    )
    grep_patterns: int = _c(2, "grep patterns made from the question's quoted names and codes")
    grep_min_chars: int = _c(4, "shortest quoted name or code grepped")
    name_common_share: float = _c(
        0.5,
        "a one-word file name is a document's name only if at most this share of the "
        "documents an episode has seen hold the word",
    )
    # -- planner: where each hop reads its bridges (planner.Planner) --------------------
    hop_anchors: int = _c(3, "best retained chunks each hop reads bridges from")
    edge_bridges: int = _c(2, "bridges read from each chain edge (the best new one is taken)")
    changelog_weight: float = _c(
        0.5,
        "share of its weight a chunk of release notes (a changelog) lends the bridges "
        "read from it: its lines name every part of a project in passing",
    )
    # -- candidate scorer (scoring.CandidateScorer) ---------------------------------------
    retriever_head: int = _c(
        3, "a follow-up's hit within either retriever's best this many is ranked"
    )
    first_anchors: int = _c(3, "anchors of a search made before any hop (by base utility)")
    cache_anchors: int = _c(4, "anchors the cache is ranked against between turns")
    unlisted_rank: int = _c(5, "the fused rank given to a grep hit or a read chunk")
    # -- do no harm (guards): what the retrievers agree on in the question's search ------
    agree_fused: int = _c(1, "a hit of the question's search within this fused rank is agreed on")
    agree_head: int = _c(
        2,
        "a hit of the question's search within both BM25's and dense's best this many is agreed on",
    )
    agree_keep: int = _c(
        1, "agreed documents the answer keeps among its best unless clearly beaten"
    )
    agree_margin: float = _c(
        0.25,
        "an agreed document leaves the answer's best only for documents whose evidence "
        "probability is this much above its own",
    )
    # -- clue chains (clues.clue_docs, chain.Chain) ---------------------------------------
    chain_depth: int = _c(4, "chain links followed back from one chunk, at most")
    refound_rank: int = _c(3, "a follow-up's rank within which a document is linked again")
    clue_words_weight: float = _c(
        2.0, "weight of a sentence's share of a clue's words against the link bonuses"
    )
    clue_pool_factor: int = _c(3, "a clue's candidates: this many times keep_docs best documents")
    clue_min_score: float = _c(0.5, "a clue's pick needs this share of words plus link bonus")
    clue_state_share: float = _c(
        0.5, "share of a clue's words a sentence needs to state it (with the stated name: more)"
    )
    link_stated: float = _c(1.5, "bonus: the document holds the name the previous pick states")
    link_parent: float = _c(1.0, "bonus: the document was found through the previous pick")
    link_shared: float = _c(0.5, "bonus: the document shares a name with the previous pick")
    link_about: float = _c(0.5, "bonus: the stated name is in the document's title")
    # -- stop rule without a model (stop.sufficiency) ---------------------------------------
    rule_stop_p: float = _c(
        0.5, "without a stop model: both best documents above this utility, and linked"
    )
    # -- answer (answer.AnswerRanker) -------------------------------------------------------
    justification_sentences: int = _c(2, "sentences justifying each answered document")
    fallback_chars: int = _c(300, "characters of the first-sentence justification, at most")
    fallback_min_chars: int = _c(20, "a first sentence ends at a stop past this many characters")
    answer_floor: float = _c(
        0.01,
        "an answered document scored below this is left out (not found), the first "
        "answer_min_docs and the agreed ones aside",
    )
    answer_min_docs: int = _c(1, "documents the answer keeps whatever their scores")
    #: where the values came from (a tuning run's data, or "hand-set")
    tuned_on: str = "hand-set (the values the policy was developed with; not tuned)"

    def meaning(self, name: str) -> str:
        """The one-line meaning of constant ``name``."""
        return str(_FIELDS[name].metadata["meaning"])

    def values(self) -> dict[str, float | int]:
        """Every constant by name (``tuned_on`` aside)."""
        return {name: getattr(self, name) for name in _FIELDS}

    def to_section(self) -> dict[str, Any]:
        """The weights file's ``constants`` section: each value with its meaning."""
        return {
            "tuned_on": self.tuned_on,
            "values": {
                name: {"value": value, "meaning": self.meaning(name)}
                for name, value in self.values().items()
            },
        }


#: the constants' fields by name (``tuned_on`` aside)
_FIELDS = {f.name: f for f in dataclasses.fields(Constants) if f.name != "tuned_on"}

#: today's constants (a weights file without the section)
DEFAULT_CONSTANTS = Constants()

#: settings a weights file's ``controls`` may tune (see :mod:`thresher.train.local.tune`),
#: and their defaults
DEFAULT_CONTROLS: dict[str, float | int] = {
    "max_hops": 2,
    "hop_k": 3,
    "bridges_per_hop": 3,
    "stop_at": 0.9,
    "rerank_depth": 30,
    "refs_per_hop": 2,
    "links_per_hop": 2,
}


@dataclass(frozen=True, slots=True)
class OptionDefaults:
    """Defaults of the :class:`~thresher.policies.local.options.LocalOptions` a user sets
    (see there for each one's meaning)."""

    first_k: int = 8
    keep_docs: int = 5
    prune_below: float = 0.5
    final_k: int = 10
    question_scores: int = 20
    frontier_k: int = 2


#: the defaults of the user's settings (``[policy]``)
OPTION_DEFAULTS = OptionDefaults()


def constants_from_section(section: object, source: str) -> Constants:
    """The :class:`Constants` of a weights file's ``constants`` section (None: the defaults).

    Raises:
        ConfigError: the section is not a mapping, names an unknown constant, or gives
            a value that is not a number (``source`` names the file).
    """
    if section is None:
        return DEFAULT_CONSTANTS
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: 'constants' must be an object with 'values'")
    values = section.get("values") or {}
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: 'constants.values' must be an object")
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown constants {', '.join(unknown)}; known: {', '.join(_FIELDS)}"
        )
    given: dict[str, Any] = {}
    for name, entry in values.items():
        value = entry.get("value") if isinstance(entry, dict) else entry
        given[name] = _typed(name, value, source)
    tuned_on = section.get("tuned_on")
    if tuned_on is not None:
        given["tuned_on"] = str(tuned_on)
    return dataclasses.replace(DEFAULT_CONSTANTS, **given)


def _typed(name: str, value: object, source: str) -> float | int:
    """``value`` as the type of constant ``name``'s default."""
    kind = type(getattr(DEFAULT_CONSTANTS, name))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{source}: constant {name} must be a number, got {value!r}")
    if kind is int and value != int(value):
        raise ConfigError(f"{source}: constant {name} must be a whole number, got {value!r}")
    return kind(value)
