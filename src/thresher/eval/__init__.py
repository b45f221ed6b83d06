"""Evaluation: tasks, metrics, the paired protocol, attribution and reports.

- ``tasks`` / ``task_formats`` / ``browsecomp`` / ``synth_tasks``: dataset files to :class:`Task`;
- ``corpus``: the pooled-corpus index (cached) and the per-question restriction;
- ``metrics`` / ``episode_metrics`` / ``stats`` / ``trec``: scores, CIs, paired tests, TREC I/O;
- ``attribution``: why an episode failed, from its trace (DESIGN §5);
- ``protocol`` / ``rollouts``: A against B on the same tasks, K rollouts fused by RRF;
- ``report`` / ``report_html``: JSONL, TREC runs, markdown and the HTML report.
"""
