"""The supervised warm start: LoRA SFT merged into a from_pretrained folder, reused when already there."""

from __future__ import annotations

import json

import torch
from transformers import AutoModelForCausalLM

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


def test_an_existing_warm_start_is_reused(micro_dir, toy_suite, tmp_path):
    out = warm_start(micro_dir, list(gold_conversations(toy_suite)), tmp_path / "ws", WarmStart(steps=1, bf16=False))
    stamp = (out / WARM_START_FILE).stat().st_mtime_ns
    assert warm_start(micro_dir, [], tmp_path / "ws", WarmStart(steps=1)) == out
    assert (out / WARM_START_FILE).stat().st_mtime_ns == stamp
