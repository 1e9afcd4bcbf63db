"""A KV cache whose layers grow into spare room instead of being copied at every decoding step.

transformers' ``DynamicLayer`` appends each step's keys and values with ``torch.cat``, which
copies the whole layer: decoding a batch of 16 rows at 500 cached tokens, these copies took a
third of a smol-cpu decoding step (63 of 198 ms). Under CPU bf16 autocast the keys are also kept
in fp32 (rotary embeddings upcast them) and SDPA casts all of them to bf16 again at every step,
another 22 ms. :class:`GrowingLayer` writes new keys and values into a buffer with spare
positions and hands SDPA a view of its filled part; it can store them in ``dtype`` (bf16 under
autocast: the values SDPA's cast would produce, so attention is the same bit for bit,
``tests/rl/test_growing_cache.py``). Together the decoding step went from 198 to about 100 ms.

Code that replaces ``keys``/``values`` (row selection, parking, cropping) keeps working: a layer
whose tensors are no longer views of its buffer moves them into a new buffer at its next update.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache, PretrainedConfig
from transformers.cache_utils import DynamicLayer


class GrowingLayer(DynamicLayer):
    """A full-attention cache layer with spare room: appending writes in place.

    Args:
        dtype: Dtype the keys and values are stored in (``None``: as they come).
        spare: Positions added beyond what is needed when the buffer is (re)allocated; the
            buffer also grows by at least half its filled length, so appends copy the cache
            rarely (amortised constant work per token).
    """

    def __init__(self, dtype: torch.dtype | None = None, spare: int = 256) -> None:
        super().__init__()
        self.dtype, self.spare = dtype, spare
        self._buffers: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        if self.dtype is not None:
            key_states, value_states = key_states.to(self.dtype), value_states.to(self.dtype)
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        filled, new = self.get_seq_length(), key_states.shape[-2]
        if not self._fits(key_states, value_states, filled + new):
            self._reallocate(key_states, value_states, filled, filled + new)
        keys, values = self._buffers  # type: ignore[misc]
        keys[:, :, filled : filled + new] = key_states
        values[:, :, filled : filled + new] = value_states
        self.keys, self.values = keys[:, :, : filled + new], values[:, :, : filled + new]
        return self.keys, self.values

    def _fits(self, key_states: torch.Tensor, value_states: torch.Tensor, needed: int) -> bool:
        """Whether ``keys``/``values`` are still the views of this layer's buffers and ``needed`` positions fit."""
        if self._buffers is None or self.keys.numel() == 0:
            return False
        return all(
            now.data_ptr() == buf.data_ptr() and now.stride() == buf.stride() and now.shape[:2] == new.shape[:2]
            and now.shape[3] == buf.shape[3] and buf.dtype == new.dtype and needed <= buf.shape[2]
            for now, buf, new in ((self.keys, self._buffers[0], key_states), (self.values, self._buffers[1], value_states))
        )  # fmt: skip

    def _reallocate(self, key_states: torch.Tensor, value_states: torch.Tensor, filled: int, needed: int) -> None:
        capacity = max(needed + self.spare, filled + filled // 2)
        buffers = []
        for now, new in ((self.keys, key_states), (self.values, value_states)):
            buf = new.new_empty((new.shape[0], new.shape[1], capacity, new.shape[3]))
            if filled:
                buf[:, :, :filled] = now
            buffers.append(buf)
        self._buffers = (buffers[0], buffers[1])


def growing_cache(config: PretrainedConfig, dtype: torch.dtype | None = None) -> DynamicCache:
    """``DynamicCache(config=config)`` with each full-attention layer a :class:`GrowingLayer`.

    Sliding-window and other layer kinds keep transformers' own classes (their updates drop old
    positions, which a buffer that only grows cannot do).
    """
    cache = DynamicCache(config=config)
    cache.layers = [GrowingLayer(dtype) if type(layer) is DynamicLayer else layer for layer in cache.layers]
    return cache
