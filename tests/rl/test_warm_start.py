"""The supervised warm start: LoRA SFT merged into a from_pretrained folder, reused when already there."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForCausalLM

from envsched_gym.rl.precision import device_name
from envsched_gym.rl.trajectories import gold_conversations
from envsched_gym.rl.warm_start import WARM_START_FILE, WarmStart, warm_start


def test_warm_start_changes_the_weights_and_lowers_the_loss(micro_dir, toy_suite, tmp_path):
    conversations = list(gold_conversations(toy_suite))
    out = warm_start(micro_dir, conversations, tmp_path / "ws", WarmStart(steps=12, lr=3e-2, batch_size=4, bf16=False))
    record = json.loads((out / WARM_START_FILE).read_text())
    assert record["steps"] == 12 and record["conversations"] == len(conversations)
    assert sum(record["losses"][-3:]) < sum(record["losses"][:3])
    before, after = AutoModelForCausalLM.from_pretrained(micro_dir), AutoModelForCausalLM.from_pretrained(out)
    assert "lora" not in "".join(after.state_dict())  # merged: a plain model
    changed = [k for k, v in after.state_dict().items() if not torch.equal(v, before.state_dict()[k])]
    assert changed


def test_the_record_names_the_thread_count_that_decides_the_bytes(micro_dir, toy_suite, tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = warm_start(micro_dir, list(gold_conversations(toy_suite)), tmp_path / "ws", WarmStart(steps=1, bf16=False))
    finally:
        torch.set_num_threads(threads)
    record = json.loads((out / WARM_START_FILE).read_text())
    assert record["torch_threads"] == 1
    assert record["torch"] == torch.__version__ and record["device"] == device_name()


def test_an_existing_warm_start_is_reused(micro_dir, toy_suite, tmp_path):
    out = warm_start(micro_dir, list(gold_conversations(toy_suite)), tmp_path / "ws", WarmStart(steps=1, bf16=False))
    stamp = (out / WARM_START_FILE).stat().st_mtime_ns
    assert warm_start(micro_dir, [], tmp_path / "ws", WarmStart(steps=1)) == out
    assert (out / WARM_START_FILE).stat().st_mtime_ns == stamp


def test_a_warm_start_made_with_other_settings_is_not_reused(micro_dir, toy_suite, tmp_path):
    warm_start(micro_dir, list(gold_conversations(toy_suite)), tmp_path / "ws", WarmStart(steps=1, bf16=False))
    with pytest.raises(ValueError, match=r"steps 1 there, 6 asked.*delete that folder"):
        warm_start(micro_dir, [], tmp_path / "ws", WarmStart(steps=6))
    with pytest.raises(ValueError, match=r"seed 0 there, 1 asked"):
        warm_start(micro_dir, [], tmp_path / "ws", WarmStart(steps=1), seed=1)
    with pytest.raises(ValueError, match=r"from .* there, other-model asked"):
        warm_start("other-model", [], tmp_path / "ws", WarmStart(steps=1))


def test_gradient_checkpointing_recomputes_the_layers_and_learns_the_same(micro_dir, toy_suite, tmp_path, monkeypatch):
    """Checkpointing runs each decoder layer again in backward; the losses are the same numbers."""
    from transformers.models.qwen3.modeling_qwen3 import Qwen3MLP

    conversations = list(gold_conversations(toy_suite))
    calls = []
    original = Qwen3MLP.forward  # inside the checkpointed layer (patching the layer itself would unwrap its checkpointing)
    monkeypatch.setattr(Qwen3MLP, "forward", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    records = {}
    for on in (False, True):
        calls.clear()
        settings = WarmStart(steps=3, lr=3e-2, batch_size=2, bf16=False, gradient_checkpointing=on)
        records[on] = (json.loads((warm_start(micro_dir, conversations, tmp_path / f"ws{on}", settings) / WARM_START_FILE).read_text()), len(calls))
    (plain, plain_calls), (checkpointed, checkpointed_calls) = records[False], records[True]
    assert checkpointed["gradient_checkpointing"] and not plain["gradient_checkpointing"]
    assert checkpointed_calls == 2 * plain_calls > 0
    assert checkpointed["losses"] == pytest.approx(plain["losses"], rel=1e-5)
