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
    # The env does the by-hand sides' work and more. Since the verifier reads the transcript
    # (session 40), direct keeps it too, and the loop adds only the step caps to direct's work.
    assert per_episode["env"] > max(per_episode["loop"], per_episode["direct"]) and per_episode["direct"] > 10_000
    assert abs(per_episode["loop"] / per_episode["direct"] - 1) < 0.02
    assert "env over direct" in capsys.readouterr().out
