"""Answer matching: SQuAD normalization, exact match, token F1, answer found in a text.

Owned here, below the policies, because task readers (aliases), rewards and
evaluation all match answers the same way.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

from thresher.errors import InputError

__all__ = ["normalize_answer", "exact_match", "f1", "answer_found"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lowercase, drop punctuation, drop a/an/the, collapse spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _candidates(answer: str, aliases: Iterable[str]) -> list[str]:
    if not isinstance(answer, str):
        raise InputError(f"answer must be a string, got {type(answer).__name__}")
    if isinstance(aliases, str):
        raise InputError(f"aliases must be a collection of strings, not the string {aliases!r}")
    return [answer, *aliases]


def exact_match(prediction: str, answer: str, aliases: Iterable[str] = ()) -> float:
    """1.0 if the normalized prediction equals a normalized answer or alias, else 0.0.

    ``EM = max_{a ∈ {answer} ∪ aliases} [norm(prediction) = norm(a)]`` with
    :func:`normalize_answer` (the SQuAD / HotpotQA evaluation script's rule).
    """
    pred = normalize_answer(prediction)
    return max(float(pred == normalize_answer(a)) for a in _candidates(answer, aliases))


_YES_NO = frozenset({"yes", "no", "noanswer"})


def _token_f1(pred: list[str], truth: list[str]) -> float:
    if not pred or not truth:
        return float(pred == truth)
    if pred != truth and (" ".join(pred) in _YES_NO or " ".join(truth) in _YES_NO):
        return 0.0
    same = sum((Counter(pred) & Counter(truth)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(truth)
    return 2 * p * r / (p + r)


def f1(prediction: str, answer: str, aliases: Iterable[str] = ()) -> float:
    """Token-level F1 between the normalized prediction and the best answer or alias.

    ``F1 = max_a 2PR/(P+R)`` with ``P = |common| / |pred tokens|``,
    ``R = |common| / |answer tokens|`` over the bag of tokens of the normalized
    strings (SQuAD's rule; an empty side scores 1 only if both are empty). As in
    the HotpotQA evaluation script, a yes/no answer scores 0 unless matched exactly.
    """
    pred = normalize_answer(prediction).split()
    return max(_token_f1(pred, normalize_answer(a).split()) for a in _candidates(answer, aliases))


def answer_found(text: str, answer: str, aliases: Iterable[str] = ()) -> bool:
    """Whether the answer (or an alias) occurs in ``text`` as whole normalized tokens.

    ``found = ∃a : " " + norm(a) + " " ⊂ " " + norm(text) + " "``. Candidates that
    normalize to the empty string (for example the answer "the") never match.
    """
    hay = f" {normalize_answer(text)} "
    for a in _candidates(answer, aliases):
        needle = normalize_answer(a)
        if needle and f" {needle} " in hay:
            return True
    return False
