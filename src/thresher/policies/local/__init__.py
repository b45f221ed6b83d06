"""The local policy: offline multi-hop search with a small learned scorer (no LLM).

See :mod:`thresher.policies.local.policy` for the episode it runs,
:mod:`~thresher.policies.local.options` for its options (its ``[policy]`` settings),
:mod:`~thresher.policies.local.factory` for how a name builds it,
:mod:`~thresher.policies.local.features` and :mod:`~thresher.policies.local.scorer`
for the learned chunk utility, :mod:`~thresher.policies.local.bridges` for
follow-up queries, :mod:`~thresher.policies.local.stop` for the sufficiency
signal and :mod:`~thresher.train.local.trainer` for how the shipped weights
are reproduced (``thresher train-policy``).
"""

from __future__ import annotations

from thresher.policies.local.options import LocalOptions
from thresher.policies.local.policy import LocalPolicy
from thresher.policies.local.scorer import DEFAULT_WEIGHTS, LocalWeights, load_weights

__all__ = ["LocalPolicy", "LocalOptions", "LocalWeights", "load_weights", "DEFAULT_WEIGHTS"]
