"""GrowingLayer: appends in place into spare room, and decoding through it equals transformers' DynamicCache."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, DynamicCache
from transformers.cache_utils import DynamicLayer

from envsched_gym.rl.frozen_bf16 import store_frozen_in_bf16
from envsched_gym.rl.growing_cache import GrowingLayer, growing_cache


def _kv(rows, new, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(rows, 2, new, 8, generator=g), torch.randn(rows, 2, new, 8, generator=g)


def test_appends_write_in_place_and_match_concatenation():
    growing, reference = GrowingLayer(spare=16), DynamicLayer()
    pointers = set()
    for step, new in enumerate([5, 1, 1, 3, 1, 20, 1]):  # the 20 overflows the spare room: one reallocation
        k, v = _kv(4, new, step)
        keys, values = growing.update(k, v)
        ref_keys, ref_values = reference.update(k, v)
        assert torch.equal(keys, ref_keys) and torch.equal(values, ref_values)
        pointers.add(keys.data_ptr())
    assert len(pointers) == 2  # the first buffer, then the one the overflow needed
    assert growing.get_seq_length() == reference.get_seq_length() == 32


def test_rows_replaced_from_outside_move_into_a_new_buffer():
    growing, reference = GrowingLayer(spare=16), DynamicLayer()
    for layer in (growing, reference):
        layer.update(*_kv(4, 6, 0))
        layer.batch_select_indices(torch.tensor([2, 0, 0]))  # what CachedBatch.select does: rows picked, one repeated
    keys, values = growing.update(*_kv(3, 2, 1))
    ref_keys, ref_values = reference.update(*_kv(3, 2, 1))
    assert torch.equal(keys, ref_keys) and torch.equal(values, ref_values)
    growing.keys = torch.cat([growing.keys, growing.keys[:1]])  # what unpark does: rows appended
    growing.values = torch.cat([growing.values, growing.values[:1]])
    keys, _ = growing.update(*_kv(4, 1, 2))
    assert keys.shape == (4, 2, 9, 8) and torch.equal(keys[3, :, :8], ref_keys[0])


def _decode_logits(model, cache, steps=6):
    ids = torch.randint(3, 500, (3, 17), generator=torch.Generator().manual_seed(0))
    out, logits = model(input_ids=ids, cache=cache, use_cache=True), []
    for _ in range(steps):
        token = out.logits[:, -1:].argmax(-1)
        out = model(input_ids=token, cache=cache, use_cache=True)
        logits.append(out.logits)
    return torch.cat(logits, 1)


def test_bf16_storage_under_autocast_gives_the_logits_of_the_fp32_cache(micro_dir):
    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(micro_dir, dtype=torch.float32), LoraConfig(r=4, target_modules="all-linear")).eval()
    store_frozen_in_bf16(model)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        reference = _decode_logits(model, DynamicCache(config=model.config))
        cache = growing_cache(model.config, torch.bfloat16)
        stored = _decode_logits(model, cache)
    assert all(type(layer) is GrowingLayer and layer.keys.dtype == torch.bfloat16 for layer in cache.layers)
    assert torch.equal(reference, stored)  # autocast's SDPA casts the fp32 keys to these very values


@pytest.mark.parametrize("dtype", [None, torch.float32])
def test_without_autocast_the_cache_keeps_fp32_and_the_same_logits(micro_dir, dtype):
    model = AutoModelForCausalLM.from_pretrained(micro_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        reference = _decode_logits(model, DynamicCache(config=model.config))
        grown = _decode_logits(model, growing_cache(model.config, dtype))
    assert torch.equal(reference, grown)
