"""Fitting and tuning the local policy (inference lives in :mod:`thresher.policies.local`).

- ``data``: task files and their indexes for training;
- ``trainer``: feature rows collected from real episodes, fitted into weights
  (``thresher train-policy``);
- ``fit``: the fitters (logistic and a small MLP in numpy, LambdaRank in LightGBM);
- ``tune``: the policy's controls tuned by episode reward; ``tune_constants``: its
  constants by a coordinate search; ``tune_runs``: the episodes both searches run.
"""
