"""Score only the completion tokens on a CPU, as TRL already does on GPUs.

TRL's fused LM head (``trl.trainer.utils.add_fused_lm_head``) projects only the positions whose
label is not ``-100`` when Triton runs on the device, but *every* position elsewhere, because on
accelerators such as Neuron a changing number of positions recompiles the tile shapes. A CPU
compiles nothing, so scoring every position only wastes work: here the prompt (the system message
with the tool list, a few hundred tokens) is most of each row, and the 49k-vocabulary projection
of it, forward and again in backward, cost more time than the rest of a SmolLM2 layer stack
(``benchmarks/train_throughput.py``). :func:`score_completions_only_on_cpu` makes TRL take its
compacting path on CPU tensors; the per-token log-probabilities are the same numbers
(``tests/rl/test_cpu_scoring.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import trl.trainer.utils as trl_utils

_ORIGINAL: Callable[[torch.device], bool] = trl_utils._use_triton


def _compact_on_cpu(device: torch.device) -> bool:
    return device.type == "cpu" or _ORIGINAL(device)


def score_completions_only_on_cpu() -> None:
    """Make TRL's fused LM head score only labelled positions on CPU tensors too (idempotent).

    Only the choice to compact changes: the kernel module keeps its own check, so CPU tiles are
    still folded with torch ops.
    """
    trl_utils._use_triton = _compact_on_cpu  # type: ignore[assignment]
