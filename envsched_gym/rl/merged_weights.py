"""Decoding weights for rollouts: LoRA merged into its base layers, the LM head in the compute dtype.

A PEFT LoRA layer runs its base matmul and then three more small operations per call (the ``A``
and ``B`` projections and the scaled add). While decoding one token per row these small
operations cost nearly as much as the base matmul: a py-spy profile of smol-cpu rollouts put
17 % of their time in the LoRA branches against 25 % in the base matmuls, and another 6 % in
autocast casting the fp32 LM head (tied to the embeddings, so it cannot be stored in bf16 like
the other frozen weights, ``envsched_gym/rl/frozen_bf16.py``) at every decoding step.

:class:`DecodingWeights` builds, once per set of weights, a plain ``nn.Linear`` per LoRA layer
holding ``W + scaling * B @ A`` (summed in fp32, stored in the base weight's dtype or in
``compute_dtype``), and optionally a copy of the LM head in ``compute_dtype``. Within
:meth:`DecodingWeights.swapped` those modules stand in for the LoRA layers and the head; on exit
the model's own modules are back, untouched (``tests/rl/test_merged_weights.py``). This is what a
vLLM engine does with LoRA weights synced into it: sampling sees the same function up to
rounding, and the trainer scores the sampled tokens with its own unmerged modules.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from peft.tuners.lora import Linear as LoraLinear
from peft.tuners.lora import LoraLayer


class DecodingWeights:
    """Merged stand-ins for the LoRA layers (and the LM head) of one model at its current weights.

    Args:
        model: The policy; a model without LoRA layers gets no merged layers.
        compute_dtype: Dtype of the stand-ins. Give ``torch.bfloat16`` when every forward runs
            under CPU bf16 autocast: autocast would cast the weights to it at each matmul, so the
            LM head copy then gives the same logits bit for bit. ``None`` keeps each base weight's
            dtype and leaves the head alone.
        merge_lora: Merge the LoRA layers (``False``: only the head copy, if any).

    Raises:
        ValueError: A LoRA layer is not a plain ``nn.Linear`` LoRA (a DoRA or other variant, a
            convolution or embedding LoRA): its merge is not a weight sum. Decode without merging
            (``HFGenerator(..., merge_lora=False)``).
    """

    def __init__(self, model: torch.nn.Module, compute_dtype: torch.dtype | None = None, merge_lora: bool = True) -> None:
        self.model = model
        self._stand_ins: dict[str, torch.nn.Module] = {}
        with torch.no_grad():
            for name, module in model.named_modules():
                if merge_lora and isinstance(module, LoraLayer):
                    self._stand_ins[name] = merged_linear(name, module, compute_dtype)
            head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
            if compute_dtype is not None and isinstance(head, torch.nn.Linear) and head.weight.dtype != compute_dtype:
                self._stand_ins[_name_of(model, head)] = _linear(head.weight.to(compute_dtype), head.bias, compute_dtype)
        self._versions = _versions(model)

    @contextmanager
    def swapped(self) -> Iterator[None]:
        """Run the model with the stand-ins in place of its LoRA layers and head; restored on exit.

        Raises:
            RuntimeError: The model's parameters changed in place since these weights were built
                (an optimizer step): make new ``DecodingWeights`` (a new ``HFGenerator``).
        """
        if _versions(self.model) != self._versions:
            raise RuntimeError("the model's weights changed after its merged decoding weights were built; make a new HFGenerator for the new weights")
        originals = {name: _swap(self.model, name, stand_in) for name, stand_in in self._stand_ins.items()}
        try:
            yield
        finally:
            for name, module in originals.items():
                _swap(self.model, name, module)


def merged_linear(name: str, layer: LoraLayer, compute_dtype: torch.dtype | None) -> torch.nn.Linear:
    """``nn.Linear`` computing ``layer``'s output with its active adapters added into the weight."""
    base = layer.get_base_layer()
    if not isinstance(layer, LoraLinear) or not isinstance(base, torch.nn.Linear):
        raise ValueError(f"LoRA layer {name} ({type(layer).__name__} over {type(base).__name__}) cannot be merged into an nn.Linear; use HFGenerator(..., merge_lora=False) (train_grpo.py: --decode-merged false)")
    weight = base.weight.float()
    for adapter in layer.active_adapters:
        if adapter not in layer.lora_A:
            continue
        if adapter in layer.lora_variant:
            raise ValueError(f"LoRA layer {name} uses the {type(layer.lora_variant[adapter]).__name__} variant, whose merge is not a weight sum; use HFGenerator(..., merge_lora=False) (train_grpo.py: --decode-merged false)")
        weight = weight + layer.get_delta_weight(adapter).float()
    dtype = compute_dtype or base.weight.dtype
    return _linear(weight.to(dtype), base.bias, dtype)


def _linear(weight: torch.Tensor, bias: torch.Tensor | None, dtype: torch.dtype) -> torch.nn.Linear:
    # skip_init: no random initialisation, which would draw from (and so shift) the sampling RNG
    out = torch.nn.utils.skip_init(torch.nn.Linear, weight.shape[1], weight.shape[0], bias=bias is not None, device=weight.device, dtype=dtype)
    out.weight = torch.nn.Parameter(weight.detach(), requires_grad=False)
    if bias is not None:
        out.bias = torch.nn.Parameter(bias.detach().to(dtype), requires_grad=False)
    return out.eval()


def _name_of(model: torch.nn.Module, target: torch.nn.Module) -> str:
    return next(name for name, module in model.named_modules() if module is target)


def _swap(model: torch.nn.Module, name: str, module: torch.nn.Module) -> torch.nn.Module:
    """Put ``module`` at ``name`` (a dotted path under ``model``); returns the module it replaced."""
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    old = getattr(parent, child)
    setattr(parent, child, module)
    return old


def _versions(model: torch.nn.Module) -> list[int]:
    return [p._version for p in model.parameters()]
