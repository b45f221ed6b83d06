"""Fitting and tuning the local policy (inference lives in :mod:`thresher.policies.local`).

- ``data``: task files and their indexes for training;
- ``trainer``: feature rows collected from real episodes, fitted into weights
  (``thresher train-policy``);
- ``fit``: the numpy fitters (logistic, small MLP);
- ``tune``: the policy's controls tuned by episode reward.
"""
