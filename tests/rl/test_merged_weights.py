"""Decoding with LoRA merged into its base layers: the same function as PEFT's layers, and the model left untouched."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from peft.tuners.lora import LoraLayer
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.frozen_bf16 import store_frozen_in_bf16
from envsched_gym.rl.generation import HFGenerator, SamplingConfig
from envsched_gym.rl.merged_weights import DecodingWeights


def _lora(micro_dir, **lora):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(micro_dir, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", **lora))
    for name, param in model.named_parameters():  # LoRA's B starts at zero; make the adapters matter
        if "lora_B" in name:
            param.data.normal_(0, 0.2)
    return model.eval()


def _ids():
    return torch.randint(3, 500, (3, 24), generator=torch.Generator().manual_seed(1))


def test_merged_layers_compute_what_the_lora_layers_compute(micro_dir):
    model = _lora(micro_dir)
    with torch.no_grad():
        lora = model(input_ids=_ids()).logits
        with model.disable_adapter():
            base = model(input_ids=_ids()).logits
        with DecodingWeights(model).swapped():
            assert not any(isinstance(m, LoraLayer) for m in model.modules())
            merged = model(input_ids=_ids()).logits
    assert (lora - base).abs().max() > 1e-2  # the adapters matter
    assert (merged - lora).abs().max() < 1e-4  # fp32: one weight sum instead of two more matmuls, rounding only


def test_the_model_is_restored_bit_for_bit_and_keeps_training_state(micro_dir):
    model = _lora(micro_dir)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    trainable = {n: p.requires_grad for n, p in model.named_parameters()}
    modules = dict(model.named_modules())
    weights = DecodingWeights(model, torch.bfloat16)
    with torch.no_grad(), weights.swapped(), torch.autocast("cpu", dtype=torch.bfloat16):
        model(input_ids=_ids())
    assert dict(model.named_modules()).keys() == modules.keys()
    assert all(module is modules[name] for name, module in model.named_modules())
    after = dict(model.named_parameters())
    assert all(torch.equal(before[n], after[n]) and after[n].dtype == before[n].dtype for n in before)
    assert {n: p.requires_grad for n, p in after.items()} == trainable
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight  # still tied


def test_the_head_copy_under_autocast_gives_the_same_logits(micro_dir):
    model = _lora(micro_dir)
    store_frozen_in_bf16(model)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        cast_each_time = model(input_ids=_ids()).logits
        head_only = DecodingWeights(model, torch.bfloat16, merge_lora=False)
        with head_only.swapped():
            assert model.get_output_embeddings().weight.dtype == torch.bfloat16
            stored = model(input_ids=_ids()).logits
    assert torch.equal(cast_each_time, stored)


def test_greedy_decoding_merged_or_not_picks_the_same_tokens(micro_dir):
    model = _lora(micro_dir)
    tok = AutoTokenizer.from_pretrained(micro_dir)
    prompts = [tok("set apple to 3", add_special_tokens=False)["input_ids"], tok("copy pear into fig please", add_special_tokens=False)["input_ids"]]
    greedy = SamplingConfig(max_new_tokens=12, temperature=0.0)
    lora = HFGenerator(model, tok, greedy, merge_lora=False).generate(prompts)
    merged = HFGenerator(model, tok, greedy).generate(prompts)
    assert [g.ids for g in lora] == [g.ids for g in merged] and all(len(g.ids) > 1 for g in merged)
    for a, b in zip(lora, merged, strict=True):
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-4


def test_weights_changed_after_merging_are_an_error(micro_dir):
    model = _lora(micro_dir)
    weights = DecodingWeights(model)
    with torch.no_grad():
        next(p for n, p in model.named_parameters() if "lora_B" in n).add_(1.0)  # an optimizer step, in place
    with pytest.raises(RuntimeError, match="make a new HFGenerator"), weights.swapped():
        pass


def test_a_lora_variant_is_refused_with_the_way_out(micro_dir):
    model = _lora(micro_dir, use_dora=True)
    with pytest.raises(ValueError, match=r"merge_lora=False"):
        DecodingWeights(model)
    DecodingWeights(model, merge_lora=False)  # the way out works


def test_building_the_decoding_weights_leaves_the_sampling_rng_alone(micro_dir):
    model = _lora(micro_dir)
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    DecodingWeights(model, torch.bfloat16)
    assert torch.equal(torch.rand(3), expected)  # nn.Linear's own initialisation would have drawn from it
