"""Scoring only completion tokens on CPU gives the log-probabilities and gradients of scoring every position."""

from __future__ import annotations

import torch
import trl.trainer.utils as trl_utils
from transformers import AutoModelForCausalLM
from trl.trainer.utils import add_fused_lm_head

from envsched_gym.rl import cpu_scoring


def _logprobs(micro_dir, compact: bool, monkeypatch):
    monkeypatch.setattr(trl_utils, "_use_triton", cpu_scoring._compact_on_cpu if compact else cpu_scoring._ORIGINAL)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(micro_dir)
    add_fused_lm_head(model)
    ids = torch.randint(3, 500, (2, 24))
    labels = ids.clone()
    labels[:, :16] = -100  # the prompt
    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
    out.log_probs.sum().backward()
    grad = model.get_output_embeddings().weight.grad.clone()
    return out.log_probs.detach(), grad


def test_compact_scoring_equals_scoring_every_position(micro_dir, monkeypatch):
    full, full_grad = _logprobs(micro_dir, False, monkeypatch)
    compact, compact_grad = _logprobs(micro_dir, True, monkeypatch)
    torch.testing.assert_close(compact, full, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(compact_grad, full_grad, atol=1e-5, rtol=1e-4)
    assert torch.count_nonzero(full[:, :15]) == 0  # only completion positions carry log-probabilities


def test_the_switch_compacts_cpu_tensors_only():
    assert cpu_scoring._compact_on_cpu(torch.device("cpu"))
    cpu_scoring.score_completions_only_on_cpu()
    assert trl_utils._use_triton is cpu_scoring._compact_on_cpu
