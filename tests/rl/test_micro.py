"""The micro Qwen3: built locally, saved, and loaded back through from_pretrained like a hub checkpoint."""

from __future__ import annotations

import torch
from toy import TINY
from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen3ForCausalLM

from envsched_gym.rl.micro import MARKUP_TOKENS, build_model, train_tokenizer
from envsched_gym.rl.sft import sft_warm_start
from envsched_gym.rl.trajectories import gold_conversations


def test_from_pretrained_round_trip(micro_dir):
    model = AutoModelForCausalLM.from_pretrained(micro_dir)
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    assert isinstance(model, Qwen3ForCausalLM)
    assert model.config.model_type == "qwen3" and model.config.vocab_size == len(tokenizer)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.chat_template and "<tool_call>" in tokenizer.chat_template
    again = AutoModelForCausalLM.from_pretrained(micro_dir)
    ids = torch.tensor([tokenizer("Set fig to 3.")["input_ids"]])
    assert torch.equal(model(ids).logits, again(ids).logits)


def test_tokenizer_is_lossless_and_keeps_the_markup_whole(micro_dir):
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    text = 'Zürich 🚀 <tool_call>\n{"name": "x"}\n</tool_call> never-seen-word'
    assert tokenizer.decode(tokenizer(text)["input_ids"]) == text
    for tag in MARKUP_TOKENS:
        assert len(tokenizer(tag, add_special_tokens=False)["input_ids"]) == 1
        assert tokenizer.decode(tokenizer(tag)["input_ids"], skip_special_tokens=True) == tag


def test_sft_lowers_the_loss_on_gold_conversations(toy_suite):
    conversations = list(gold_conversations(toy_suite))
    tokenizer = train_tokenizer(conversations, TINY.vocab_size)
    model = build_model(tokenizer, TINY, seed=0)
    losses = sft_warm_start(model, tokenizer, conversations, steps=30, batch_size=4, seed=0)
    assert sum(losses[-5:]) < 0.8 * sum(losses[:5])
