"""Choosing bf16 autocast by the machine: native bf16 or fp32, and an explicit choice kept."""

from __future__ import annotations

import json

import pytest
import torch

from envsched_gym.rl import precision
from envsched_gym.rl.trajectories import gold_conversations
from envsched_gym.rl.warm_start import WARM_START_FILE, WarmStart, warm_start
from training.train_grpo import parse_config


@pytest.mark.parametrize("native", [True, False])
def test_auto_follows_whether_bf16_is_native(native, monkeypatch):
    monkeypatch.setattr(precision, "native_bf16", lambda: native)
    assert precision.resolve_bf16(None) is native
    assert parse_config(["--preset", "smol-cpu"]).bf16 is native


def test_an_explicit_choice_is_kept_and_a_slow_one_is_warned_about(monkeypatch):
    monkeypatch.setattr(precision, "native_bf16", lambda: False)
    with pytest.warns(UserWarning, match="no native bf16 matmul"):
        assert parse_config(["--preset", "smol-cpu", "--bf16", "true"]).bf16 is True
    assert parse_config(["--preset", "smol-cpu", "--bf16", "false"]).bf16 is False
    monkeypatch.setattr(precision, "native_bf16", lambda: True)
    assert parse_config(["--preset", "smol-cpu", "--bf16", "false"]).bf16 is False  # never overridden by the machine
    assert parse_config([]).bf16 is False  # tiny-cpu stays fp32


def test_native_bf16_on_a_cpu_is_onednns_check():
    if torch.cuda.is_available():
        pytest.skip("a GPU machine answers with torch.cuda.is_bf16_supported()")
    assert precision.native_bf16() is torch.ops.mkldnn._is_mkldnn_bf16_supported()


@pytest.mark.parametrize("native", [True, False])
def test_the_warm_start_records_the_precision_it_chose(native, micro_dir, toy_suite, tmp_path, monkeypatch):
    monkeypatch.setattr(precision, "native_bf16", lambda: native)
    monkeypatch.setattr("envsched_gym.rl.warm_start.native_bf16", lambda: native)
    out = warm_start(micro_dir, list(gold_conversations(toy_suite)), tmp_path / "ws", WarmStart(steps=1, batch_size=2))
    assert json.loads((out / WARM_START_FILE).read_text())["bf16"] is native


def test_an_explicit_slow_choice_is_warned_about_once_not_again_by_the_warm_start(micro_dir, toy_suite, tmp_path, monkeypatch, recwarn):
    monkeypatch.setattr(precision, "native_bf16", lambda: False)
    monkeypatch.setattr("envsched_gym.rl.warm_start.native_bf16", lambda: False)
    config = parse_config(["--preset", "smol-cpu", "--bf16", "true"])
    out = warm_start(micro_dir, list(gold_conversations(toy_suite)), tmp_path / "ws", WarmStart(steps=1, batch_size=2, bf16=config.bf16))
    assert json.loads((out / WARM_START_FILE).read_text())["bf16"] is True
    assert len([w for w in recwarn if "no native bf16 matmul" in str(w.message)]) == 1
