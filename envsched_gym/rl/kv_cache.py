"""Key/value caches that live across the agent steps of a batch of episodes.

An agent episode is a sequence of generate calls whose contexts only grow: the next context is
the previous one plus the sampled message plus the environment's answer. Prefilling the whole
context again at every agent step costs most of a rollout's compute on a CPU. A
:class:`CachedBatch` keeps the keys and values of every row and, for each row, the tokens they
were computed from; a new context that extends a row's tokens only needs its new suffix run
through the model. The G rollouts of a GRPO group start from the same prompt, and tasks of one
environment share their system message and tool list, so every shared prefix is prefilled once
and its cache rows copied (:func:`prefill_shared`).

Rows are left-padded and may carry padding in the middle (a row whose suffix is shorter than the
longest one in the step, or a row that stopped while others kept decoding); ``mask`` marks real
tokens with 1, and positions are counted over real tokens only, so every row sees exactly the
positions and attention pattern it would see alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache, PreTrainedModel
from transformers.cache_utils import DynamicLayer

from envsched_gym.rl.growing_cache import GrowingLayer, growing_cache


@dataclass
class CachedBatch:
    """A batch's KV cache, its attention mask and the real tokens behind each row.

    Attributes:
        cache: The model's cache (every row has the same width, padding included).
        mask: ``(rows, width)``; 1 where the cache holds a real token.
        tokens: Per row, the real tokens whose keys and values the cache holds, in order.
    """

    cache: DynamicCache
    mask: torch.Tensor
    tokens: list[list[int]]

    def select(self, rows: list[int]) -> CachedBatch:
        """Keep the given rows, in that order (repeats copy a row); changes this batch and returns it."""
        index = torch.tensor(rows, dtype=torch.long, device=self.mask.device)
        self.cache.batch_select_indices(index)
        self.mask = self.mask[index]
        self.tokens = [list(self.tokens[r]) for r in rows]
        return self


@dataclass
class ParkedRows:
    """Rows taken out of a batch while the others keep decoding (see :func:`park`).

    Attributes:
        keys: Per layer, ``(rows, kv heads, width, head dim)`` at the time they were parked.
        values: Same shape as ``keys``.
        mask: ``(rows, width)``.
        tokens: Per row, its real tokens.
    """

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    mask: torch.Tensor
    tokens: list[list[int]]


def can_park(batch: CachedBatch) -> bool:
    """Whether the cache is made of plain full-attention layers, whose rows can be parked."""
    return all(type(layer) in (DynamicLayer, GrowingLayer) and layer.is_initialized for layer in batch.cache.layers)


def park(batch: CachedBatch, rows: list[int]) -> ParkedRows:
    """Take ``rows`` out of ``batch`` (which keeps the other rows, in order) and return them.

    A row that has stopped decoding still needs its keys and values for the next agent step of
    its episode; parking keeps them aside so the decoding steps of the other rows don't run it.
    """
    taken = torch.tensor(rows, dtype=torch.long, device=batch.mask.device)
    kept = [r for r in range(len(batch.tokens)) if r not in set(rows)]
    out = ParkedRows(
        [layer.keys[taken] for layer in batch.cache.layers], [layer.values[taken] for layer in batch.cache.layers],
        batch.mask[taken], [batch.tokens[r] for r in rows],
    )  # fmt: skip
    batch.select(kept)
    return out


def unpark(batch: CachedBatch, parked: list[ParkedRows], order: list[int]) -> None:
    """Put parked rows back after ``batch``'s rows, then reorder all rows by ``order``.

    Parked rows are padded on the right to the batch's width with masked zeros: positions count
    real tokens only, so a parked row sees the same positions as if it had been fed padding.
    """
    width = batch.mask.shape[1]
    for part in parked:
        grow = width - part.mask.shape[1]
        for layer, keys, values in zip(batch.cache.layers, part.keys, part.values, strict=True):
            layer.keys = torch.cat([layer.keys, torch.nn.functional.pad(keys, (0, 0, 0, grow))], dim=0)
            layer.values = torch.cat([layer.values, torch.nn.functional.pad(values, (0, 0, 0, grow))], dim=0)
        batch.mask = torch.cat([batch.mask, torch.nn.functional.pad(part.mask, (0, grow))], dim=0)
        batch.tokens += part.tokens
    batch.select(order)


def left_pad(rows: list[list[int]], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, mask)`` of ``rows`` left-padded to the longest (an empty row is all padding)."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row) :] = torch.tensor(row)
            mask[i, width - len(row) :] = 1
    return ids.to(device), mask.to(device)


def forward_chunk(model: PreTrainedModel, batch: CachedBatch, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Run ``ids`` (with their ``mask``) after the cached tokens; returns the last position's logits.

    The cache, the mask and each row's tokens are extended in place (padding is cached too, but
    masked, so it is never attended to).
    """
    full = torch.cat([batch.mask, mask], dim=1)
    positions = (full.cumsum(-1) - 1).clamp(min=0)[:, -ids.shape[1] :]
    out = model(input_ids=ids, attention_mask=full, position_ids=positions, cache=batch.cache, use_cache=True, logits_to_keep=1)
    batch.mask = full
    for row, (tok, m) in enumerate(zip(ids.tolist(), mask.tolist(), strict=True)):
        batch.tokens[row].extend(t for t, keep in zip(tok, m, strict=True) if keep)
    return out.logits[:, -1, :]


def prefill_shared(
    model: PreTrainedModel, contexts: list[list[int]], pad_id: int, min_shared: int = 32, cache_dtype: torch.dtype | None = None
) -> tuple[CachedBatch, torch.Tensor]:  # fmt: skip
    """Prefill ``contexts`` computing every shared prefix once; returns the batch and the last logits.

    Identical contexts (a GRPO group) become one row, and contexts that begin with the same
    ``min_shared`` tokens (tasks of one environment: the same system message and tool list) share
    the prefill of their longest common prefix, whose cache rows are then copied and extended by
    each context's own suffix. The last token of each context is run on its own, so the returned
    logits (one row per context) come from that step. The cache's full-attention layers grow in
    place (:mod:`envsched_gym.rl.growing_cache`) and store keys and values in ``cache_dtype``
    (``torch.bfloat16`` under CPU bf16 autocast, whose SDPA casts them to it anyway).
    """
    unique: dict[tuple[int, ...], int] = {}
    order = [unique.setdefault(tuple(c), len(unique)) for c in contexts]
    heads = [list(c[:-1]) for c in unique]
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, head in enumerate(heads):
        groups.setdefault(tuple(head[:min_shared]) if len(head) >= min_shared else (i, *head), []).append(i)
    shared = [_common_prefix([heads[i] for i in members]) for members in groups.values()]
    group_of = {i: g for g, members in enumerate(groups.values()) for i in members}
    device = next(model.parameters()).device
    batch = CachedBatch(growing_cache(model.config, cache_dtype), torch.zeros((len(shared), 0), dtype=torch.long, device=device), [[] for _ in shared])
    if any(shared):
        forward_chunk(model, batch, *left_pad(shared, pad_id, device))
    batch.select([group_of[i] for i in range(len(heads))])
    suffixes = [h[len(t) :] for h, t in zip(heads, batch.tokens, strict=True)]
    if any(suffixes):
        forward_chunk(model, batch, *left_pad(suffixes, pad_id, device))
    if order != list(range(len(unique))):
        batch.select(order)
    last = torch.tensor([[c[-1]] for c in contexts], dtype=torch.long, device=device)
    logits = forward_chunk(model, batch, last, torch.ones_like(last))
    return batch, logits


def _common_prefix(rows: list[list[int]]) -> list[int]:
    first, last = min(rows), max(rows)  # the common prefix of a set is that of its lexicographic extremes
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def extend(model: PreTrainedModel, batch: CachedBatch, contexts: list[list[int]], pad_id: int) -> torch.Tensor:
    """Run each context's tokens beyond its row's cached ones (``contexts[i]`` extends row ``i``)."""
    suffixes = [c[len(t) :] for c, t in zip(contexts, batch.tokens, strict=True)]
    if any(not s for s in suffixes):
        raise ValueError("a context must add at least one token to its cached row")
    ids, mask = left_pad(suffixes, pad_id, batch.mask.device)
    return forward_chunk(model, batch, ids, mask)


def match_rows(contexts: list[list[int]], batches: list[CachedBatch]) -> list[tuple[int, int] | None]:
    """For each context, a ``(batch, row)`` whose cached tokens are a strict prefix of it, each used once.

    Rows are tried in order from just after the previous match, so episodes that keep their order
    (as running episodes do when finished ones drop out) match in one pass.
    """
    free = [(b, r) for b, batch in enumerate(batches) for r in range(len(batch.tokens))]
    used: set[tuple[int, int]] = set()
    out: list[tuple[int, int] | None] = []
    start = 0
    for ctx in contexts:
        found = None
        for k in list(range(start, len(free))) + list(range(start)):
            b, r = free[k]
            tokens = batches[b].tokens[r]
            if (b, r) not in used and len(tokens) < len(ctx) and ctx[: len(tokens)] == tokens:
                found, start = (b, r), k + 1
                break
        if found is not None:
            used.add(found)
        out.append(found)
    return out
