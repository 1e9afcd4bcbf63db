"""Frozen LoRA base weights stored in bf16 for bf16 autocast on a CPU: cast once, not at every forward.

Under ``torch.autocast("cpu", dtype=torch.bfloat16)`` every ``F.linear`` casts its fp32 weight
to bf16 before the matmul. Autocast caches such casts only for leaf tensors that require a
gradient, and LoRA freezes the base weights, so each forward re-reads every fp32 base weight
(4 bytes a parameter) and writes its bf16 copy (2 bytes) before the matmul reads that (2 more):
for SmolLM2-135M about 0.8 GB of memory traffic per forward, the decoding step of a whole batch
included. A py-spy profile of a smol-cpu held-out evaluation put a quarter of its time in these
casts (``cached_cast``), more than in the matmuls. Removing them made the rollouts of a
smol-cpu step 1.09x faster and a whole step take 0.90x the time (docs/training.md): the decode
steps stay bound by the rest of each forward.

Storing the frozen base weights in bf16 once gives every autocast region the values its cast
would have produced (the same round-to-nearest conversion), so logits, log-probabilities and
LoRA gradients are unchanged bit for bit (``tests/rl/test_frozen_bf16.py``); the trainable LoRA
weights, embeddings and norms stay fp32. A forward *outside* autocast with fp32 inputs then stops
with torch's dtype-mismatch error instead of running; in this project every training and
rollout forward runs inside the trainer's autocast (accelerate wraps the model's forward).
"""

from __future__ import annotations

import torch
from peft.tuners.lora import LoraLayer


def store_frozen_in_bf16(model: torch.nn.Module) -> int:
    """Convert the frozen ``nn.Linear`` base layers under ``model``'s LoRA layers to bf16, in place.

    Returns:
        The number of parameters converted.

    Raises:
        ValueError: ``model`` has no LoRA layer with a frozen fp32 ``nn.Linear`` base: nothing
            would be converted (apply it after PEFT wraps the model, to a model trained in fp32).
    """
    converted = 0
    for module in model.modules():
        base = module.get_base_layer() if isinstance(module, LoraLayer) else None
        if isinstance(base, torch.nn.Linear) and base.weight.dtype == torch.float32 and not base.weight.requires_grad:
            for param in base.parameters(recurse=False):  # the bias too: autocast casts it with the weight
                param.data = param.data.to(torch.bfloat16)
                converted += param.numel()
    if not converted:
        raise ValueError(
            "store_frozen_in_bf16 found no LoRA layer with a frozen fp32 nn.Linear base; call it on the PEFT-wrapped fp32 model"
            " (a model loaded in bf16 already stores its weights in bf16)"
        )
    return converted
