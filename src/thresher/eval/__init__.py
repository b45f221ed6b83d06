"""Evaluation: metrics, the paired protocol, attribution and reports.

Task files, their pooled corpora and TREC I/O live in :mod:`thresher.tasks`.

- ``metrics`` / ``episode_metrics`` / ``stats``: scores, CIs and paired tests;
- ``attribution``: why an episode failed, from its trace (table in ``docs/eval.md``);
- ``protocol`` / ``rollouts``: A against B on the same tasks, K rollouts fused by RRF;
- ``task_job`` / ``records``: one task as a batch job; the records both share;
- ``cost``: tokens, wall time and USD per episode and per resolved question;
- ``report`` / ``report_html``: JSONL, TREC runs, markdown and the HTML report.
"""
