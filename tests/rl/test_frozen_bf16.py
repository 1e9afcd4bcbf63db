"""Frozen LoRA base weights stored in bf16 give, under bf16 autocast, the logits and LoRA gradients of casting them at each forward."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

from envsched_gym.rl.frozen_bf16 import store_frozen_in_bf16


def _lora(micro_dir):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(micro_dir, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear"))
    for name, param in model.named_parameters():  # LoRA's B starts at zero; make the adapters matter
        if "lora_B" in name:
            param.data.normal_(0, 0.05)
    return model


def _forward_backward(model, ids):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(input_ids=ids).logits
    logits.float().logsumexp(-1).sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
    return logits.detach(), grads


def test_logits_and_lora_gradients_equal_the_per_forward_cast(micro_dir):
    ids = torch.randint(3, 500, (2, 20))
    cast_each_time = _lora(micro_dir)
    stored = _lora(micro_dir)
    converted = store_frozen_in_bf16(stored)
    frozen_linear = sum(m.get_base_layer().weight.numel() for m in cast_each_time.modules() if hasattr(m, "lora_A"))
    assert converted == frozen_linear > 0
    logits, grads = _forward_backward(cast_each_time, ids)
    logits_b, grads_b = _forward_backward(stored, ids)
    assert torch.equal(logits, logits_b)
    assert grads.keys() == grads_b.keys() and grads
    for name in grads:
        assert torch.equal(grads[name], grads_b[name]), name


def test_only_frozen_base_weights_change_dtype(micro_dir):
    model = _lora(micro_dir)
    store_frozen_in_bf16(model)
    dtypes = {n: p.dtype for n, p in model.named_parameters()}
    assert all(d == torch.float32 for n, d in dtypes.items() if "lora_" in n)  # the trained weights keep fp32 for the optimizer
    assert all(d == torch.bfloat16 for n, d in dtypes.items() if "base_layer" in n)
    assert dtypes[next(n for n in dtypes if "embed_tokens" in n)] == torch.float32
    assert any("base_layer" in n for n in dtypes)


def test_a_model_without_frozen_lora_bases_is_an_error(micro_dir):
    plain = AutoModelForCausalLM.from_pretrained(micro_dir)
    with pytest.raises(ValueError, match="PEFT-wrapped fp32 model"):
        store_frozen_in_bf16(plain)
    wrapped = _lora(micro_dir)
    store_frozen_in_bf16(wrapped)
    with pytest.raises(ValueError, match="no LoRA layer"):
        store_frozen_in_bf16(wrapped)  # already bf16: a second call converts nothing
