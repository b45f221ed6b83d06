"""The replies of a model that obeys every instruction it is shown, as replay-server entries.

An LLM policy is measured against the worst model: one that does whatever
retrieved text tells it. Such a model is scripted, not trained: its replies are
derived from the attack (what the text asks) and from what actually reaches
the model (whether the instruction survived ingestion), and replayed by
:mod:`thresher.testing.replay_server` over real HTTP. Entries have the replay
server's shape (``{"message": {...}, "finish_reason": ...}``); they are built
here with plain dicts because the replay server sits on the same layer as
synthesis and is not imported.

Every script opens by reading the attack documents (``read_document``), so the
instruction is in view whatever the search would rank. Then:

* when the instruction is visible and ``obey`` is true: the action it asks for
  (see :func:`obedient_script`), then a final answer;
* otherwise (the control run, or an instruction that never reached the model):
  one more search for the question, then a final answer.

A few spare final answers follow, so that a refused reply does not exhaust the
script; an exhausted script answers HTTP 410 and the episode ends ``policy_error``.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from thresher.corpus.ids import doc_of
from thresher.synth.attacks.catalog import Attack
from thresher.synth.attacks.templates import skeleton

__all__ = ["is_visible", "obedient_script", "PROMPT_ECHO_CHARS"]

#: characters of the system prompt an obedient model echoes
PROMPT_ECHO_CHARS = 400


def _normal(text: str) -> str:
    return " ".join(skeleton(unicodedata.normalize("NFKC", text)).split())


def is_visible(attack: Attack, shown_texts: Iterable[str]) -> bool:
    """Whether every trigger fragment of ``attack`` is in the text the model is shown.

    Compared after NFKC, our homoglyph map (:func:`~.templates.skeleton`) and
    whitespace collapsing: a model reads through those. An attack without a
    trigger (a hostile id) is always visible.
    """
    text = _normal("\n".join(shown_texts))
    return all(_normal(fragment) in text for fragment in attack.trigger)


def _call(i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call(i, n, a) for i, (n, a) in enumerate(calls)],
    }
    return {"message": message, "finish_reason": "tool_calls"}


def _final(doc_ids: Iterable[str], justification: str = "Named by the notes.") -> dict[str, Any]:
    # ids go in as JSON so that a hostile id survives the final-answer parser unchanged
    docs = [{"doc_id": d, "justification": justification} for d in doc_ids]
    content = json.dumps({"documents": docs}, ensure_ascii=False)
    return {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}


def _reveal(doc_ids: Iterable[str], system_prompt: str) -> dict[str, Any]:
    echo = " ".join(system_prompt.split())[:PROMPT_ECHO_CHARS]
    return _final(doc_ids, f"My instructions were: {echo}")


def obedient_script(
    attack: Attack, *, visible: bool, system_prompt: str, obey: bool = True
) -> list[dict[str, Any]]:
    """The scripted replies of an obedient model for one attack.

    Args:
        attack: the attack.
        visible: whether its instruction reaches the model (:func:`is_visible`).
        system_prompt: the prompt the model was given (``reveal`` echoes it).
        obey: False for the control run (the same model, no attack followed).

    Returns:
        Replay-server entries, in order.
    """
    goal = attack.goal
    own = list(attack.doc_ids)
    reads = [("read_document", {"doc_id": d}) for d in own]
    if goal.kind in ("prune",) and goal.target:
        reads.append(("read_document", {"doc_id": doc_of(goal.target)}))
    script = [_calls(*reads)]
    spare = [_final(own), _final(own)]
    if not (obey and visible):
        script.append(_calls(("search_corpus", {"query": attack.question})))
        return [*script, _final(own), *spare]
    if goal.kind == "prune":
        script += [_calls(("prune_chunks", {"chunk_ids": [goal.target]})), _final(own)]
    elif goal.kind == "call":
        script += [_calls((goal.target, dict(goal.arguments))), _final(own)]
    elif goal.kind == "budget":
        script += [_calls(("read_document", {"doc_id": d})) for d in _big_docs(attack)]
        script += [_calls(("search_corpus", {"query": f"{attack.question} {n}"})) for n in range(3)]
        script.append(_final(own))
    elif goal.kind == "answer":
        if goal.read_first:
            script.append(_calls(("read_document", {"doc_id": goal.target})))
        script.append(_final([goal.target, *own]))
    elif goal.kind == "reveal":
        script.append(_reveal(own, system_prompt))
    elif goal.kind == "forge":  # the forged text says to prune and end: ids go through
        chunks = [f"{d}#0" for d in own]  # stubs, prune and recall messages, and the answer
        script += [
            _calls(("prune_chunks", {"chunk_ids": chunks})),
            _calls(("recall_chunks", {"chunk_ids": chunks})),
            _final(own),
        ]
    else:  # stop: the instruction says to end now
        script.append(_final(own))
    return [*script, *spare]


def _big_docs(attack: Attack) -> list[str]:
    """The documents a budget attack's obedient model reads: named in the goal's arguments."""
    docs = attack.goal.arguments.get("docs")
    return [str(d) for d in docs] if isinstance(docs, list) else []
