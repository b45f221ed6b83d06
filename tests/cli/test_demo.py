"""``thresher demo``: the planted chain is found, and the output shows how."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.cli.main import main


def test_demo_finds_the_planted_chain_and_shows_each_hop(
    demo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--dir", str(demo_dir), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "planted evidence found: 3/3" in out
    found = [line.strip() for line in out.splitlines() if line.strip().startswith("found: ")]
    assert found[0].startswith("found: hop 0: search_corpus")
    # the e-mail naming the inventor's employer was reached through the patent
    assert any(
        line.startswith("found: hop 1: search_corpus 'Grabra Krepym")
        and line.endswith("via patents/CH-2019-699317.txt")
        for line in found
    )
