"""scheduler_scale.py: one pool size measured in this process, with and without EnvSched options."""

from __future__ import annotations

import pytest

from benchmarks.scheduler_scale import ScaleConfig, measure


def test_one_size_is_measured_with_the_given_options() -> None:
    row = measure(400, ScaleConfig(warmup=1, batches=2, batch=8, options="repeat_discount=0"))
    assert row["nodes"] == 400 and row["select_update_ms"] > 0 and row["edges"] > 0
    with pytest.raises(TypeError, match=r"unknown EnvSched options \['no_such_knob'\]"):
        measure(400, ScaleConfig(warmup=1, batches=2, batch=8, options="no_such_knob=1"))
