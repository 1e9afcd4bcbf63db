"""Packing a group's rows behind one copy of their prompt gives TRL's log-probabilities and gradients."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM
from trl.trainer.utils import add_fused_lm_head

from envsched_gym.rl import cpu_scoring
from envsched_gym.rl.shared_prompt import pack_by_prompt, shuffle_groups

PAD = 0


def _policy(micro_dir, attention: str):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(micro_dir, attn_implementation=attention)
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear"))
    for name, p in model.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.05)  # a trained-looking adapter, so LoRA A gets gradients too
    return model


def _trl_rows() -> tuple[torch.Tensor, torch.Tensor, int]:
    """TRL's layout: 5 rows, left-padded prompts (two distinct ones, the second shorter), right-padded completions."""
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, 400, (11,), generator=g), torch.randint(3, 400, (7,), generator=g)]
    rows = [(0, 6), (0, 9), (1, 4), (0, 3), (1, 9)]  # (prompt, completion length); rows of one prompt are not adjacent
    completion_width = max(n for _, n in rows)
    ids = torch.full((len(rows), 11 + completion_width), PAD)
    mask = torch.zeros_like(ids)
    for r, (p, n) in enumerate(rows):
        ids[r, 11 - len(prompts[p]) : 11], mask[r, 11 - len(prompts[p]) : 11] = prompts[p], 1
        ids[r, 11 : 11 + n], mask[r, 11 : 11 + n] = torch.randint(3, 400, (n,), generator=g), 1
    return ids, mask, completion_width


def _unpacked(model, ids, mask, width):
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :-width] = -100
    out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    return out.log_probs[:, -width:], out.entropy[:, -width:]


def _packed(model, ids, mask, width, attention):
    packed = pack_by_prompt(ids, mask, width, attention)
    out = model(input_ids=packed.input_ids, attention_mask=packed.attention_mask, position_ids=packed.position_ids, labels=packed.labels, fused_lm_head=True)
    return packed.unpack(out.log_probs, width), packed.unpack(out.entropy, width), packed


def _lora_grads(model) -> dict[str, torch.Tensor]:
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    return grads


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_packed_rows_score_and_train_like_trl_rows(micro_dir, attention, monkeypatch):
    monkeypatch.setattr(cpu_scoring.trl_utils, "_use_triton", cpu_scoring._compact_on_cpu)
    model = _policy(micro_dir, attention)
    ids, mask, width = _trl_rows()
    completion_mask = mask[:, -width:].float()
    weights = torch.linspace(0.5, 2.0, ids.shape[0])[:, None]  # per-row advantages, so rows weigh differently

    ref_logps, ref_entropy = _unpacked(model, ids, mask, width)
    (ref_logps * completion_mask * weights).sum().backward()
    ref_grads = _lora_grads(model)
    logps, entropy, packed = _packed(model, ids, mask, width, attention)
    (logps * completion_mask * weights).sum().backward()
    grads = _lora_grads(model)

    assert packed.input_ids.shape[0] == 2  # one row per distinct prompt
    assert packed.input_ids.numel() < int(mask.sum())  # the 3 + 2 prompt copies became 2
    torch.testing.assert_close(logps * completion_mask, ref_logps * completion_mask, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(entropy * completion_mask, ref_entropy * completion_mask, atol=2e-5, rtol=1e-4)
    assert torch.count_nonzero(logps * (1 - completion_mask)) == 0
    assert ref_grads.keys() == grads.keys() and any("lora_A" in n for n in grads)
    for name, grad in ref_grads.items():
        torch.testing.assert_close(grads[name], grad, atol=1e-5, rtol=1e-3, msg=name)


def test_a_block_never_sees_another_completion(micro_dir, monkeypatch):
    monkeypatch.setattr(cpu_scoring.trl_utils, "_use_triton", cpu_scoring._compact_on_cpu)
    model = _policy(micro_dir, "sdpa")
    ids, mask, width = _trl_rows()
    with torch.no_grad():
        before, _, _ = _packed(model, ids, mask, width, "sdpa")
        ids[0, -width:-width + 6] = torch.randint(3, 400, (6,))  # row 0's completion changes
        after, _, _ = _packed(model, ids, mask, width, "sdpa")
    torch.testing.assert_close(after[1:], before[1:])  # rows 1 and 3 share its prompt and block
    assert not torch.allclose(after[0], before[0])


def test_packing_refuses_attention_without_4d_masks_and_empty_prompts():
    ids, mask, width = _trl_rows()
    with pytest.raises(ValueError, match=r"flash_attention_2.*attn_implementation='sdpa'"):
        pack_by_prompt(ids, mask, width, "flash_attention_2")
    mask[2, :-width] = 0
    with pytest.raises(ValueError, match="row 2 has an empty prompt"):
        pack_by_prompt(ids, mask, width, "sdpa")


def test_the_shuffle_moves_whole_groups():
    prompts = torch.tensor([[0, 5, 6], [0, 5, 6], [7, 8, 9], [7, 8, 9], [0, 1, 2], [0, 1, 2]])
    batch = {"prompt_ids": prompts, "prompt_mask": (prompts > 0).long(), "advantages": torch.arange(6.0), "ids": list("abcdef"), "n": torch.tensor(6), "none": None}
    orders = set()
    for seed in range(12):
        torch.manual_seed(seed)
        out = shuffle_groups(batch)
        order = out["advantages"].long().tolist()
        assert [order[i] // 2 for i in range(0, 6, 2)] == [order[i + 1] // 2 for i in range(0, 6, 2)]  # pairs stay adjacent
        assert out["ids"] == [batch["ids"][i] for i in order] and torch.equal(out["prompt_ids"], prompts[order])
        assert out["n"].item() == 6 and out["none"] is None
        orders.add(tuple(order))
    assert len(orders) > 1  # the groups' order is shuffled
