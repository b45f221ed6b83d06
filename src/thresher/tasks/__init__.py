"""Tasks: the Task record and the dataset files it is read from.

- ``task``: :class:`~thresher.tasks.task.Task` (question, answer, gold documents, hops);
- ``readers``: :func:`~thresher.tasks.readers.load_tasks` (format detected from
  content), ``write_tasks``, qrels;
- ``formats`` / ``browsecomp`` / ``beir`` / ``world`` / ``synthetic``: one module per
  dataset family (HotpotQA, MuSiQue, 2Wiki, query records; BrowseComp-Plus; BEIR;
  a generated world's chains; the synthesis pipeline's ``thresher.synth-task/1``);
- ``trec``: TREC qrels and run files;
- ``answers``: answer normalization and matching (SQuAD rules);
- ``sampling``: a sample of a task file spread across hop counts;
- ``corpus``: the pooled index of task files (cached by content) and per-question corpora;
- ``generate``: synthesizing multi-hop tasks from any indexed corpus.

Below the policies: evaluation, training and synthesis all import it.
"""
