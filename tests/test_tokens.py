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
