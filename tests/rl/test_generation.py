"""HFGenerator: the KV cache kept across agent steps gives exactly what decoding from scratch gives."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.generation import Generated, HFGenerator, SamplingConfig
from envsched_gym.rl.kv_cache import match_rows
from envsched_gym.rl.kv_cache import park as kv_park


@pytest.fixture(scope="module")
def model_and_tokenizer(micro_dir):
    return AutoModelForCausalLM.from_pretrained(micro_dir).eval(), AutoTokenizer.from_pretrained(micro_dir)


def _episodes(generator, tokenizer, prompts, steps=3):
    """Grow contexts as episodes do (message + the environment's answer); one episode drops out after step 1."""
    contexts, messages = [list(p) for p in prompts], []
    answer = tokenizer("\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    for step in range(steps):
        out = generator.generate(contexts)
        messages.append([(g.ids, g.logprobs) for g in out])
        contexts = [c + g.ids + answer[: 5 + i] for i, (c, g) in enumerate(zip(contexts, out, strict=True))]  # answers of different lengths
        if step == 0:
            contexts = contexts[1:]
    return messages


class OneByOne:
    """The reference: each context alone through ``model.generate`` (no batch, no padding, no cache kept)."""

    def __init__(self, model, tok, max_new_tokens, stop_id=None):
        self.model, self.tok, self.max_new_tokens = model, tok, max_new_tokens
        self.stop_id = tok.eos_token_id if stop_id is None else stop_id

    def generate(self, contexts):
        out = []
        for ctx in contexts:
            res = self.model.generate(torch.tensor([ctx]), max_new_tokens=self.max_new_tokens, do_sample=False, output_logits=True,
                                      return_dict_in_generate=True, eos_token_id=self.stop_id, pad_token_id=self.tok.pad_token_id)  # fmt: skip
            seq = res.sequences[0, len(ctx) :].tolist()
            seq = seq[: seq.index(self.stop_id) + 1] if self.stop_id in seq else seq
            logprobs = [float(torch.log_softmax(step[0].float(), -1)[t]) for step, t in zip(res.logits, seq, strict=False)]
            out.append(Generated(seq, logprobs))
        return out


def _prompt(tok, system, user):
    return tok.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                   add_generation_prompt=True, tokenize=True, return_dict=False)  # fmt: skip


def test_cached_and_shared_prefill_decoding_equals_each_context_alone(model_and_tokenizer):
    model, tok = model_and_tokenizer
    system = "You manage counters. " * 8  # a long shared system message, as an environment's tool list is
    a, b, c = _prompt(tok, system, "set apple to 3"), _prompt(tok, system, "copy pear into fig please"), _prompt(tok, "Be brief.", "hi")
    prompts = [a, a, a, b, c]  # a group's shared prompt, a task sharing its system message, an unrelated one
    assert len(a) > 40 and a[:32] == b[:32] and a != b
    sampling = SamplingConfig(max_new_tokens=12, temperature=0.0)
    cached = _episodes(HFGenerator(model, tok, sampling), tok, prompts)
    fresh = _episodes(HFGenerator(model, tok, sampling, reuse_cache=False), tok, prompts)
    alone = _episodes(OneByOne(model, tok, 12), tok, prompts)
    for run in (cached, fresh):
        assert [[ids for ids, _ in step] for step in run] == [[ids for ids, _ in step] for step in alone]
        # Log-probabilities see any difference in positions or attention, even one too small to change a greedy token.
        torch.testing.assert_close([[lp for _, lp in step] for step in run], [[lp for _, lp in step] for step in alone], atol=1e-4, rtol=1e-4)
    assert all(len(ids) > 0 for step in cached for ids, _ in step)


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


def test_rows_that_stop_early_are_parked_and_rejoin_with_the_same_results(model_and_tokenizer, monkeypatch):
    """Rows that stop decoding leave the batch (parked) and rejoin it for the next agent step; the
    messages and log-probabilities are still those of each context alone."""
    import copy

    from envsched_gym.rl import generation

    model, tok = model_and_tokenizer
    model = copy.deepcopy(model)
    torch.manual_seed(1)
    with torch.no_grad():  # larger random weights: greedy messages that differ from row to row
        for weight in (p for p in model.parameters() if p.dim() >= 2):
            weight.normal_(0, 0.3)
    prompts = [_prompt(tok, "You manage counters. " * 8, u) for u in ("set apple to 3", "copy pear into fig", "hi", "read it", "close it")]
    probe = HFGenerator(model, tok, SamplingConfig(max_new_tokens=20, temperature=0.0), reuse_cache=False)
    probe.stop_id = -1
    outputs = [g.ids for g in probe.generate(prompts)]
    stop = next(t for t in sorted({t for ids in outputs for t in ids})
                if len({ids.index(t) for ids in outputs if t in ids[:15]}) >= 3 and any(t not in ids for ids in outputs))  # fmt: skip
    parks = []
    monkeypatch.setattr(generation, "park", lambda batch, rows: parks.append(list(rows)) or kv_park(batch, rows))
    sampling = SamplingConfig(max_new_tokens=20, temperature=0.0)
    cached = HFGenerator(model, tok, sampling)
    cached.stop_id = stop
    got = _episodes(cached, tok, [*prompts, prompts[0]])
    alone = _episodes(OneByOne(model, tok, 20, stop_id=stop), tok, [*prompts, prompts[0]])
    assert parks, "no row was parked: the test lost its point"
    assert [[ids for ids, _ in step] for step in got] == [[ids for ids, _ in step] for step in alone]
    torch.testing.assert_close([[lp for _, lp in step] for step in got], [[lp for _, lp in step] for step in alone], atol=1e-4, rtol=1e-4)
