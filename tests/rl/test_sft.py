"""The warm start's loss: only the labelled positions go through the LM head, with the model's own loss and gradients."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.sft import assistant_loss, collate, tokenize_conversations
from envsched_gym.rl.trajectories import gold_conversations


@pytest.mark.parametrize("lora", [False, True])
def test_the_compact_loss_equals_the_models_own_loss_and_gradients(micro_dir, toy_suite, lora):
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    examples = tokenize_conversations(tokenizer, list(gold_conversations(toy_suite))[:3], max_length=2048)
    ids, attention, labels = collate(examples, tokenizer.pad_token_id)
    assert 0 < (labels != -100).sum() < labels.numel() // 2  # most positions are not scored
    grads = []
    for compact in (False, True):
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_pretrained(micro_dir, dtype=torch.float32)
        if lora:
            model = get_peft_model(model, LoraConfig(r=4, target_modules="all-linear", init_lora_weights=False))
        loss = assistant_loss(model, ids, attention, labels) if compact else model(input_ids=ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        grads.append((loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}))
    (full, full_grads), (compact, compact_grads) = grads
    assert compact == pytest.approx(full, rel=1e-5)
    assert full_grads.keys() == compact_grads.keys()
    for name, g in full_grads.items():
        torch.testing.assert_close(compact_grads[name], g, rtol=1e-4, atol=1e-6, msg=name)
