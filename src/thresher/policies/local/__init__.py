"""The local policy: offline multi-hop search with a small learned scorer (no LLM).

See :mod:`thresher.policies.local.policy` for the episode it runs,
:mod:`~thresher.policies.local.options` for its options (its ``[policy]`` settings),
:mod:`~thresher.policies.local.factory` for how a name builds it, and
:mod:`~thresher.policies.local.session` for the session each episode gets; its
parts: :mod:`~thresher.policies.local.planner` (follow-ups, from
:mod:`~thresher.policies.local.bridges`), :mod:`~thresher.policies.local.scoring`
(the candidate scorer, over the records of :mod:`~thresher.policies.local.pool`
and :mod:`~thresher.policies.local.candidate`, the features of
:mod:`~thresher.policies.local.features`, and the models of
:mod:`~thresher.policies.local.models`),
:mod:`~thresher.policies.local.stop` (the sufficiency signal) and
:mod:`~thresher.policies.local.answer` (the answer ranker); each episode's state
is :mod:`~thresher.policies.local.memory`, and what it derives from text is made
once through :mod:`~thresher.policies.local.memo`;
:mod:`~thresher.train.local.trainer` reproduces the shipped weights
(``thresher train-policy``).
"""

from __future__ import annotations

from thresher.policies.local.models import DEFAULT_WEIGHTS, LocalWeights, load_weights
from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy

__all__ = ["LocalPolicy", "LocalOptions", "LocalWeights", "load_weights", "DEFAULT_WEIGHTS"]
