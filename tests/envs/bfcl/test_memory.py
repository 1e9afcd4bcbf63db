"""Memory stays flat over 10,000 multi-turn episodes (slow: about two minutes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_rss_is_flat_over_ten_thousand_episodes(bfcl):
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bfcl_memory

    rows = bfcl_memory.run(bfcl_memory.Config(episodes=10_000, interval=1_000, data_dir=str(bfcl.data_dir)))
    assert bfcl_memory.growth_after_warmup(rows, bfcl_memory.n_tasks(str(bfcl.data_dir))) < 8.0
