"""The instruction-count benchmark runs every side under callgrind (slow; needs valgrind)."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.env_instructions import SIDES, main


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_env_instructions_counts_every_side(capsys) -> None:
    per_episode = main(tasks=20)
    assert set(per_episode) == set(SIDES)
    # The env does the direct side's work and more; the loop sits in between.
    assert per_episode["env"] > per_episode["loop"] > per_episode["direct"] > 10_000
    assert "env over direct" in capsys.readouterr().out
