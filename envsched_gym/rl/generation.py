"""Token-level generation backends for rollouts: a local Hugging Face model, or TRL's vLLM engine.

A backend continues a batch of token contexts by one assistant message each. Rollouts call it
once per agent step with every still-running episode, so a whole GRPO batch advances together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase


@dataclass
class Generated:
    """One continuation: its token ids (ending with the stop token unless cut) and their logprobs."""

    ids: list[int]
    logprobs: list[float] | None = None


@dataclass
class SamplingConfig:
    """How one assistant message is sampled.

    Attributes:
        max_new_tokens: Longest assistant message in tokens.
        temperature: Sampling temperature; 0 decodes greedily.
        top_p: Nucleus sampling mass.
    """

    max_new_tokens: int = 96
    temperature: float = 1.0
    top_p: float = 1.0


class TokenGenerator(Protocol):
    """Continues token contexts by one assistant message each."""

    def generate(self, contexts: list[list[int]]) -> list[Generated]:
        """One continuation per context, in order."""
        ...


class HFGenerator:
    """Batched ``model.generate`` on left-padded contexts (the CPU and small-GPU path).

    Args:
        model: A causal LM (a PEFT model included); it is switched to eval mode while generating.
        tokenizer: Its tokenizer; ``eos_token`` (``<|im_end|>`` for Qwen3) ends a message.
        sampling: Sampling settings.
        batch_size: Most contexts per ``generate`` call.
    """

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, sampling: SamplingConfig, batch_size: int = 64) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.sampling = sampling
        self.batch_size = batch_size
        self.stop_id = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def generate(self, contexts: list[list[int]]) -> list[Generated]:
        out: list[Generated] = []
        for start in range(0, len(contexts), self.batch_size):
            out.extend(self._generate_batch(contexts[start : start + self.batch_size]))
        return out

    def _generate_batch(self, contexts: list[list[int]]) -> list[Generated]:
        width = max(len(c) for c in contexts)
        ids = torch.full((len(contexts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, ctx in enumerate(contexts):
            ids[row, width - len(ctx) :] = torch.tensor(ctx)
            mask[row, width - len(ctx) :] = 1
        device = next(self.model.parameters()).device
        was_training = self.model.training
        self.model.eval()
        with torch.no_grad():
            seqs = self.model.generate(
                input_ids=ids.to(device), attention_mask=mask.to(device), eos_token_id=self.stop_id, pad_token_id=self.pad_id,
                **self._sampling_kwargs(),
            )  # fmt: skip
        self.model.train(was_training)
        return [Generated(self._cut(row.tolist())) for row in seqs[:, width:]]

    def _sampling_kwargs(self) -> dict[str, Any]:
        s = self.sampling
        if s.temperature <= 0:
            return {"max_new_tokens": s.max_new_tokens, "do_sample": False}
        return {"max_new_tokens": s.max_new_tokens, "do_sample": True, "temperature": s.temperature, "top_p": s.top_p, "top_k": 0}

    def _cut(self, ids: list[int]) -> list[int]:
        """Keep tokens up to and including the first stop token (drop the padding after it)."""
        if self.stop_id in ids:
            return ids[: ids.index(self.stop_id) + 1]
        return ids


class VLLMGenerator:
    """TRL's vLLM engine of a ``GRPOTrainer`` (``use_vllm=True``: colocate or server mode).

    TRL's ``VLLMGeneration.generate`` is collective across processes, so rollouts call it the
    same number of times on every process (see :func:`envsched_gym.rl.rollout.run_rollouts`).
    """

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer

    def generate(self, contexts: list[list[int]]) -> list[Generated]:
        _, completion_ids, logprobs, _ = self.trainer.vllm_generation.generate(contexts, None, 1)
        return [Generated(list(ids), [float(lp[0]) if lp and lp[0] is not None else 0.0 for lp in lps]) for ids, lps in zip(completion_ids, logprobs, strict=True)]
