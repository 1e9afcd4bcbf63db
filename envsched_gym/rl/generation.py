"""Token-level generation backends for rollouts: a local Hugging Face model, or TRL's vLLM engine.

A backend continues a batch of token contexts by one assistant message each. Rollouts call it
once per agent step with every still-running episode, so a whole GRPO batch advances together.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from envsched_gym.rl.kv_cache import CachedBatch, ParkedRows, can_park, extend, forward_chunk, match_rows, park, prefill_shared, unpark
from envsched_gym.rl.merged_weights import DecodingWeights


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
    """Batched sampling with a local Hugging Face model, its KV cache kept across agent steps.

    Each call continues every context by one message. Contexts that extend a context of the
    previous call (the same episode one agent step later) reuse that row's cached keys and
    values, so only the new tokens (the last message and the environment's answer) are run;
    new contexts prefill each shared prefix once (a GRPO group's prompt, an environment's
    system message and tool list). The result is the
    same as decoding every context from scratch (``tests/rl/test_generation.py``). Make a new
    generator when the weights change: cached keys and values belong to the weights that made
    them (``EnvironmentRollouts`` makes one per round).

    Args:
        model: A causal LM (a PEFT model included); it is switched to eval mode while generating.
        tokenizer: Its tokenizer; ``eos_token`` (``<|im_end|>`` for Qwen3) ends a message.
        sampling: Sampling settings.
        batch_size: Most contexts decoded together.
        reuse_cache: Keep the KV cache across calls (``False``: prefill every context every call,
            the baseline of ``benchmarks/train_throughput.py``).
        merge_lora: Decode with each LoRA layer merged into one ``nn.Linear`` (built at the first
            call, ``envsched_gym/rl/merged_weights.py``): the same function up to float rounding,
            without the LoRA branch's extra operations per layer and token.
        compute_dtype: ``torch.bfloat16`` when every forward runs under CPU bf16 autocast (the
            trainer's ``--bf16``): the merged layers and a copy of the LM head are stored in it,
            and so are the cached keys and values, so autocast need not cast them at each decoding
            step. ``None``: keep the weights' and the cache's dtypes.
    """

    def __init__(
        self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, sampling: SamplingConfig, batch_size: int = 64, reuse_cache: bool = True,
        merge_lora: bool = True, compute_dtype: torch.dtype | None = None,
    ) -> None:  # fmt: skip
        self.model = model
        self.sampling = sampling
        self.batch_size = batch_size
        self.reuse_cache = reuse_cache
        self.stop_id = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self._batches: list[CachedBatch] = []
        self.merge_lora, self.compute_dtype = merge_lora, compute_dtype
        self._weights: DecodingWeights | None = None

    def generate(self, contexts: list[list[int]]) -> list[Generated]:
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                if self._weights is None:
                    self._weights = DecodingWeights(self.model, self.compute_dtype, self.merge_lora)
                with self._weights.swapped():
                    return self._generate(contexts)
        finally:
            self.model.train(was_training)

    def _generate(self, contexts: list[list[int]]) -> list[Generated]:
        matches = match_rows(contexts, self._batches) if self.reuse_cache else [None] * len(contexts)
        jobs: list[tuple[list[int], CachedBatch | None, list[int]]] = []  # (context indices, cached batch to extend, its rows)
        for b, batch in enumerate(self._batches):
            mine = [i for i, m in enumerate(matches) if m is not None and m[0] == b]
            for start in range(0, len(mine), self.batch_size):
                part = mine[start : start + self.batch_size]
                rows = [matches[i][1] for i in part]  # type: ignore[index]
                jobs.append((part, batch if start + self.batch_size >= len(mine) else _copy(batch), rows))
        fresh = [i for i, m in enumerate(matches) if m is None]
        jobs += [(fresh[s : s + self.batch_size], None, []) for s in range(0, len(fresh), self.batch_size)]
        out: list[Generated | None] = [None] * len(contexts)
        kept: list[CachedBatch] = []
        for indices, batch, rows in jobs:
            chunk = [contexts[i] for i in indices]
            if batch is None:
                batch, logits = prefill_shared(self.model, chunk, self.pad_id, cache_dtype=self.compute_dtype)
            else:
                logits = extend(self.model, batch.select(rows), chunk, self.pad_id)
            for i, gen in zip(indices, self._decode(batch, logits), strict=True):
                out[i] = gen
            kept.append(batch)
        self._batches = kept if self.reuse_cache else []
        return out  # type: ignore[return-value]

    def _decode(self, batch: CachedBatch, logits: torch.Tensor) -> list[Generated]:
        """Sample one message per row, feeding each token back through the cache.

        Rows that have stopped (their stop token fed) are parked once they are a quarter of the
        rows still decoding, so later steps run only the rows that continue; parked rows rejoin
        the batch at the end with masked padding, the layout they would have had if fed padding.
        """
        rows = logits.shape[0]
        ids: list[list[int]] = [[] for _ in range(rows)]
        logprobs: list[list[float]] = [[] for _ in range(rows)]
        live = list(range(rows))  # original row of each row of ``batch``, in order
        parked: list[ParkedRows] = []
        parked_rows: list[int] = []
        done = torch.zeros(rows, dtype=torch.bool, device=logits.device)
        parkable = self.reuse_cache and can_park(batch)
        for step in range(self.sampling.max_new_tokens):
            token, logprob = self._sample(logits)
            for r in torch.nonzero(~done).flatten().tolist():
                ids[live[r]].append(int(token[r]))
                logprobs[live[r]].append(float(logprob[r]))
            was_done = done.clone()
            done |= token == self.stop_id
            if bool(done.all()) or step + 1 == self.sampling.max_new_tokens:
                break
            stopped = torch.nonzero(was_done).flatten().tolist()
            if parkable and stopped and 4 * len(stopped) >= len(live):
                keep = torch.nonzero(~was_done).flatten()
                parked.append(park(batch, stopped))
                parked_rows += [live[r] for r in stopped]
                live = [live[r] for r in keep.tolist()]
                token, done, was_done = token[keep], done[keep], was_done[keep]
            feed = torch.where(was_done, torch.full_like(token, self.pad_id), token).unsqueeze(1)
            logits = forward_chunk(self.model, batch, feed, (~was_done).long().unsqueeze(1))
        if parked:
            position = {row: i for i, row in enumerate(live + parked_rows)}
            unpark(batch, parked, [position[r] for r in range(rows)])
        return [Generated(i, lp) for i, lp in zip(ids, logprobs, strict=True)]

    def _sample(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Next token per row and its logprob under the sampling distribution (greedy: the model's)."""
        s = self.sampling
        logits = logits.float()
        if s.temperature <= 0:
            token = logits.argmax(-1)
            return token, torch.log_softmax(logits, -1).gather(-1, token[:, None]).squeeze(1)
        logp = torch.log_softmax(logits / s.temperature, -1)
        if s.top_p < 1.0:
            logp = _nucleus(logp, s.top_p)
        token = torch.multinomial(logp.exp(), 1).squeeze(1)
        return token, logp.gather(-1, token[:, None]).squeeze(1)


def _nucleus(logp: torch.Tensor, top_p: float) -> torch.Tensor:
    """Renormalised logprobs of the smallest set of tokens whose mass reaches ``top_p``."""
    sorted_logp, order = logp.sort(-1, descending=True)
    outside = sorted_logp.exp().cumsum(-1) - sorted_logp.exp() >= top_p
    sorted_logp = sorted_logp.masked_fill(outside, float("-inf"))
    kept = torch.full_like(logp, float("-inf")).scatter(-1, order, sorted_logp)
    return torch.log_softmax(kept, -1)


def _copy(batch: CachedBatch) -> CachedBatch:
    """An independent copy (for a cached batch split over several decoding chunks)."""
    return CachedBatch(copy.deepcopy(batch.cache), batch.mask.clone(), [list(t) for t in batch.tokens])


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
