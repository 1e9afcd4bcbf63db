"""The throughput benchmark runs end to end on a slice of ToolWorld and both sides agree."""

from __future__ import annotations

from benchmarks.env_throughput import ThroughputConfig, main


def test_env_throughput_smoke(capsys) -> None:
    figures = main(ThroughputConfig(tasks=150, repeats=1, cpu=-1))
    assert figures["env_reward"] == figures["loop_reward"] == figures["direct_reward"] == 1.0
    assert figures["env_steps_per_s"] > 0 and figures["direct_steps_per_s"] > 0
    out = capsys.readouterr().out
    assert "ToolUseEnv (gym.make)" in out and "wrapper overhead" in out
