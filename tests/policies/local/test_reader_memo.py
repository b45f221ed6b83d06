"""The index generation's reader memo under the local policy.

* the harness hands a session the store's :class:`ReaderMemo`; an episode leaves
  what it derived from chunk text there, and the next episode reads it back;
* an episode decides exactly the same with a warm memo, a cold one, or none (a
  store that keeps no memo: every derivation stays the session's own);
* a full memo starts again empty (it never grows without bound).
"""

from __future__ import annotations

from typing import Any

from thresher.harness.episode import run_episode
from thresher.harness.policy import BasePolicy
from thresher.harness.result import ExitReason
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import KeepsReaderMemo
from thresher.policies.local import LocalPolicy

from .test_policy import QUESTION
from .test_session import _outcome


class _NoMemo:
    """The store without its reader memo (every other attribute passed through)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name in ("reader_memo", "pinned"):  # (a pinned view would keep its memo)
            raise AttributeError(name)
        return getattr(self._store, name)


def test_episodes_share_the_generations_memo_and_decide_as_without_it(store, config) -> None:
    assert isinstance(store, KeepsReaderMemo)
    assert not isinstance(_NoMemo(store), KeepsReaderMemo)
    policy = LocalPolicy(config=config)
    assert type(policy.start(QUESTION)).use_reader_memo is not BasePolicy.use_reader_memo
    memo = store.reader_memo()
    assert memo is store.reader_memo(), "one memo per live generation"
    alone = _outcome(run_episode(QUESTION, _NoMemo(store), policy, config))
    assert alone[0] is ExitReason.ANSWERED
    cold = _outcome(run_episode(QUESTION, store, policy, config))
    filled = len(memo)
    assert filled > 0, "the episode kept what it derived from chunk text"
    warm = _outcome(run_episode(QUESTION, store, policy, config))
    assert len(memo) == filled, "the second episode found every derivation kept"
    assert alone == cold == warm


def test_a_full_memo_starts_again_empty() -> None:
    memo = ReaderMemo(max_entries=3)
    for i in range(3):
        memo.put(("k", i), i)
    assert len(memo) == 3 and memo.get(("k", 2)) == 2 and memo.get(("k", 9)) is None
    memo.put(("k", 3), 3)
    assert len(memo) == 1 and memo.get(("k", 0)) is None and memo.get(("k", 3)) == 3
