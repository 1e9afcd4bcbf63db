"""HFGenerator: the KV cache kept across agent steps gives exactly what decoding from scratch gives."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.generation import HFGenerator, SamplingConfig
from envsched_gym.rl.kv_cache import match_rows


@pytest.fixture(scope="module")
def model_and_tokenizer(micro_dir):
    return AutoModelForCausalLM.from_pretrained(micro_dir).eval(), AutoTokenizer.from_pretrained(micro_dir)


def _episodes(generator, tokenizer, prompts, steps=3):
    """Grow contexts as episodes do (message + the environment's answer); one episode drops out after step 1."""
    contexts, messages = [list(p) for p in prompts], []
    answer = tokenizer("\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    for step in range(steps):
        out = generator.generate(contexts)
        messages.append([g.ids for g in out])
        contexts = [c + g.ids + answer[: 5 + i] for i, (c, g) in enumerate(zip(contexts, out, strict=True))]
        if step == 0:
            contexts = contexts[1:]
    return messages


def test_cached_decoding_equals_decoding_from_scratch(model_and_tokenizer):
    model, tok = model_and_tokenizer
    a = tok.apply_chat_template([{"role": "user", "content": "set apple to 3"}], add_generation_prompt=True, tokenize=True, return_dict=False)
    b = tok.apply_chat_template([{"role": "user", "content": "copy pear into fig please"}], add_generation_prompt=True, tokenize=True, return_dict=False)
    prompts = [a, a, a, b]  # a group's shared prompt, and a longer one (left padding)
    sampling = SamplingConfig(max_new_tokens=12, temperature=0.0)
    cached = _episodes(HFGenerator(model, tok, sampling), tok, prompts)
    scratch = _episodes(HFGenerator(model, tok, sampling, reuse_cache=False), tok, prompts)
    assert cached == scratch
    assert all(len(ids) > 0 for step in cached for ids in step)


def test_sampled_logprobs_match_the_model(model_and_tokenizer):
    model, tok = model_and_tokenizer
    prompt = tok.apply_chat_template([{"role": "user", "content": "set apple to 3"}], add_generation_prompt=True, tokenize=True, return_dict=False)
    torch.manual_seed(0)
    (g,) = HFGenerator(model, tok, SamplingConfig(max_new_tokens=6, temperature=1.0)).generate([list(prompt)])
    with torch.no_grad():
        logits = model(torch.tensor([list(prompt) + g.ids])).logits[0, len(prompt) - 1 : -1]
    expected = torch.log_softmax(logits, -1).gather(-1, torch.tensor(g.ids)[:, None]).squeeze(1)
    torch.testing.assert_close(torch.tensor(g.logprobs), expected, atol=1e-4, rtol=1e-4)


def test_rows_match_the_episode_they_extend():
    class Batch:
        def __init__(self, tokens):
            self.tokens = tokens

    batches = [Batch([[1, 2], [1, 2], [7, 8]])]
    assert match_rows([[1, 2, 3], [1, 2, 4], [7, 8, 9], [5]], batches) == [(0, 0), (0, 1), (0, 2), None]
    assert match_rows([[1, 2]], batches) == [None]  # an equal context adds nothing: a fresh prefill
