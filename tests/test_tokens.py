"""Token counts of newline segments add up to the count of the whole text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.tokens import SegmentedCounter, get_counter, newline_segments

# characters that decide where the BPE pre-tokenizers cut: newlines and other
# whitespace, punctuation that absorbs the newlines after it, '/', apostrophes of
# contractions, digits, cased and uncased letters, combining marks, emoji
_ALPHABET = list("\n\n\n\r\t  /<>]['’sStT.:-_&;#0123456789aZéÉ\u0301漢ßİ\u00a0\u2028\x1c") + ["👍"]
TEXTS = st.text(alphabet=st.sampled_from(_ALPHABET), max_size=120)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_segment_counts_add_up(encoding: str, text: str) -> None:
    counter = get_counter(encoding)
    parts = newline_segments(text)
    assert "".join(parts) == text
    assert sum(counter.count(p) for p in parts) == counter.count(text)


def test_a_tool_message_is_cut_between_its_lines() -> None:
    text = 'header: 2 results\n<chunk id="a">x &gt;\n y</chunk>\n[3 chunks pruned]\n/path\n'
    assert newline_segments(text) == [
        "header: 2 results\n",
        '<chunk id="a">x &gt;\n y</chunk>\n',
        "[3 chunks pruned]\n/path\n",
    ]
    assert isinstance(get_counter(), SegmentedCounter)


def test_threads_asking_for_one_vocabulary_share_one_load(monkeypatch) -> None:
    """A thread asking while another loads the counter waits for that load (the CLI loads
    it ahead on a warm-up thread) instead of loading it a second time."""
    import threading
    import time

    from thresher import tokens

    loads: list[str] = []
    real = tokens.BpeTokenCounter.__init__

    def slow(self, encoding: str = "o200k_base") -> None:
        loads.append(encoding)
        time.sleep(0.2)
        real(self, encoding)

    monkeypatch.setattr(tokens.BpeTokenCounter, "__init__", slow)
    tokens._counter.cache_clear()
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(get_counter())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tokens._counter.cache_clear()  # drop the counter built under the patch
    assert loads == ["o200k_base"] and len({id(c) for c in got}) == 1
