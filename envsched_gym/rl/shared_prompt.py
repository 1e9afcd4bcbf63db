"""Score a GRPO group's completions with their shared prompt run once: one packed row per prompt.

The G rollouts of a group start from the same prompt (the system message with the tool list and
the task), and on ToolWorld the prompt is 290-370 tokens against completions of 40-280. TRL's loss
runs every row's prompt through the model again: a micro-batch of one group computes the prompt
G times, forward and backward. :func:`pack_by_prompt` lays the rows of each distinct prompt out as
one sequence instead:

    [p_0 .. p_{m-2}] [p_{m-1} c^1_0 .. c^1_{n1-1}] [p_{m-1} c^2_0 .. ] ...

The shared prefix (all but the prompt's last token) is causal among itself; each completion block
repeats the prompt's last token (whose hidden state predicts the completion's first token) and
attends to the prefix and causally to its own block only, at the positions it has in its own row.
The attention mask is a 4D boolean ``(rows, 1, S, S)`` tensor that transformers passes to SDPA as
is. Every completion token therefore sees exactly the context it sees in TRL's padded row, so the
log-probabilities and the LoRA gradients are those of the unpacked rows up to float rounding
(``tests/rl/test_shared_prompt.py``), and the prefix's gradient is the sum over the group, as in
the unpacked batch. Completions keep their own lengths: no right padding inside a packed row.

The mask is dense, ``S x S`` with ``S = m + sum(n_k + 1)``: on a CPU at ToolWorld lengths that is
about as much attention work as G separate rows, and far less MLP work. With 8k-token completions
on GPUs the dense mask would cost more than it saves, which is why the Qwen3 presets leave
``share_prompt`` off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

MASKABLE_ATTENTION = ("sdpa", "eager")


@dataclass
class PackedRows:
    """Rows packed by prompt, and where each original row's completion tokens went.

    Attributes:
        input_ids: ``(packed rows, S)``.
        attention_mask: ``(packed rows, 1, S, S)``: boolean for SDPA, additive float32 for eager.
        position_ids: ``(packed rows, S)``: each token's position in its own unpacked row.
        labels: ``(packed rows, S)``: the completion tokens, ``-100`` elsewhere.
        rows: Per original row, ``(packed row, packed positions, completion columns)`` of its
            real completion tokens.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    labels: torch.Tensor
    rows: list[tuple[int, torch.Tensor, torch.Tensor]]

    def unpack(self, values: torch.Tensor, width: int) -> torch.Tensor:
        """Per-token ``values`` of the packed rows (``(packed rows, S - 1)``, position ``t`` scoring
        token ``t + 1``, as TRL's fused head returns them) in TRL's ``(rows, width)`` completion layout."""
        out = values.new_zeros((len(self.rows), width))
        for r, (packed, positions, columns) in enumerate(self.rows):
            out[r, columns] = values[packed, positions - 1]
        return out


def require_maskable(attention: str) -> None:
    """Refuse an attention implementation that cannot take the packed rows' 4D mask."""
    if attention not in MASKABLE_ATTENTION:
        raise ValueError(
            f"share_prompt packs each group into one row with a 4D attention mask, which attention implementation "
            f"'{attention}' does not take; load the model with attn_implementation='sdpa' (or 'eager'), or turn share_prompt off"
        )


def pack_by_prompt(input_ids: torch.Tensor, attention_mask: torch.Tensor, completion_width: int, attention: str) -> PackedRows:
    """Pack TRL's rows (left-padded prompt, then ``completion_width`` right-padded completion
    positions) into one row per distinct prompt.

    Args:
        input_ids: ``(rows, prompt width + completion_width)``.
        attention_mask: Same shape; 1 on real tokens.
        completion_width: TRL's ``logits_to_keep``.
        attention: The model's attention implementation (``sdpa``, or ``eager``, which gets an
            additive float32 mask).
    """
    require_maskable(attention)
    split = input_ids.shape[1] - completion_width
    groups: dict[tuple[int, ...], list[int]] = {}
    for r in range(input_ids.shape[0]):
        prompt = input_ids[r, :split][attention_mask[r, :split].bool()]
        if prompt.numel() == 0:
            raise ValueError(f"row {r} has an empty prompt: a completion's first token needs a prompt token to be scored from")
        groups.setdefault(tuple(prompt.tolist()), []).append(r)
    sequences: list[_Sequence] = []
    rows: list[tuple[int, torch.Tensor, torch.Tensor]] = [None] * input_ids.shape[0]  # type: ignore[list-item]
    for packed, (prompt, members) in enumerate(groups.items()):
        seq = _pack_group(list(prompt), [_completion(input_ids[r, split:], attention_mask[r, split:]) for r in members])
        for r, (positions, columns) in zip(members, seq.rows, strict=True):
            rows[r] = (packed, positions, columns)
        sequences.append(seq)
    width = max(len(s.ids) for s in sequences)
    ids = torch.zeros((len(sequences), width), dtype=input_ids.dtype)
    labels = torch.full((len(sequences), width), -100, dtype=input_ids.dtype)
    positions = torch.zeros((len(sequences), width), dtype=torch.long)
    allowed = torch.eye(width, dtype=torch.bool).repeat(len(sequences), 1, 1)  # padding attends to itself only: no NaN rows
    for i, s in enumerate(sequences):
        n = len(s.ids)
        ids[i, :n], labels[i, :n], positions[i, :n] = torch.tensor(s.ids), torch.tensor(s.labels), torch.tensor(s.positions)
        allowed[i, :n, :n] = s.allowed
    mask = allowed.unsqueeze(1)
    if attention == "eager":
        mask = torch.zeros(mask.shape).masked_fill(~mask, torch.finfo(torch.float32).min)
    device = input_ids.device
    placed = [(p, q.to(device), c.to(device)) for p, q, c in rows]
    return PackedRows(ids.to(device), mask.to(device), positions.to(device), labels.to(device), placed)


def _completion(ids: torch.Tensor, mask: torch.Tensor) -> tuple[list[int], list[int]]:
    """A row's real completion tokens and their columns (TRL right-pads, but masks are honoured anywhere)."""
    columns = torch.nonzero(mask.bool()).flatten()
    return ids[columns].tolist(), columns.tolist()


@dataclass
class _Sequence:
    """One packed row before padding; ``rows`` holds each member's (packed positions, completion columns)."""

    ids: list[int]
    labels: list[int]
    positions: list[int]
    allowed: torch.Tensor
    rows: list[tuple[torch.Tensor, torch.Tensor]]


def _pack_group(prompt: list[int], completions: list[tuple[list[int], list[int]]]) -> _Sequence:
    """One packed sequence: the prompt but its last token, then one block per completion."""
    head, last = prompt[:-1], prompt[-1]
    ids, labels, positions = list(head), [-100] * len(head), list(range(len(head)))
    spans, placed = [], []
    for tokens, columns in completions:
        start = len(ids)
        ids += [last, *tokens]
        labels += [-100, *tokens]
        positions += list(range(len(head), len(head) + len(tokens) + 1))
        spans.append((start, len(ids)))
        placed.append((torch.arange(start + 1, len(ids)), torch.tensor(columns, dtype=torch.long)))
    n = len(ids)
    allowed = torch.tril(torch.ones((n, n), dtype=torch.bool))
    for start, end in spans:  # a block sees the prefix and itself, not the blocks before it
        allowed[start:end, len(head) : start] = False
    return _Sequence(ids, labels, positions, allowed, placed)


def shuffle_groups(batch: dict[str, Any]) -> dict[str, Any]:
    """TRL's ``shuffle_sequence_dict`` for a generation batch, moving whole groups: the rows that
    share a prompt stay together (in order), so a micro-batch of ``k x G`` rows holds ``k`` whole
    groups and :func:`pack_by_prompt` runs each prompt once. The groups' order is random."""
    members: dict[tuple[int, ...], list[int]] = {}
    for r, (ids, mask) in enumerate(zip(batch["prompt_ids"], batch["prompt_mask"], strict=True)):
        members.setdefault(tuple(ids[mask.bool()].tolist()), []).append(r)
    groups = list(members.values())
    permutation = [r for g in torch.randperm(len(groups)).tolist() for r in groups[g]]
    index = torch.tensor(permutation, dtype=torch.long)

    def permute(value: Any) -> Any:
        if value is None or (isinstance(value, torch.Tensor) and value.ndim == 0):
            return value
        if isinstance(value, torch.Tensor):
            return value[index.to(value.device)]
        return [value[i] for i in permutation]

    return {key: permute(value) for key, value in batch.items()}
