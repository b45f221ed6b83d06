import threading

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import run_episode
from thresher.harness.result import ExitReason

Q = "In which province is the town where the Halvard Glassworks was founded?"
_TURNS = (
    Proposal(tool_calls=(call("search_corpus", query="Halvard Glassworks founded"),)),
    answer("glassworks"),
)


class _Minimal:
    name = "minimal"
    system_prompt = "Find the documents that answer the question."

    def __init__(self):
        self.turns = iter(_TURNS)
        self.threads = []

    def tool_schemas(self):
        return []

    def propose(self, observation):
        self.threads.append(threading.get_ident())
        return next(self.turns)


def test_minimal(store, config):
    p = _Minimal()
    r = run_episode(Q, store, p, config)
    assert r.exit_reason is ExitReason.ANSWERED and r.doc_ids == ["glassworks"]
    assert threading.get_ident() not in p.threads
