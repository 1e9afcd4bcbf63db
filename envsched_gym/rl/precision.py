"""Whether bf16 autocast pays on this machine, and the choice of a run's precision.

bf16 autocast halves a CPU's matmul time only where the CPU multiplies bf16 natively
(AVX512-BF16 or AMX, which oneDNN uses). Elsewhere PyTorch has no fast bf16 kernel: a bf16
matmul falls back to a scalar loop on one core. Measured on an AMD EPYC with AVX2 only
(``benchmarks/train_throughput.py``'s matmul rows): fp32 103 GFLOP/s, bf16 1.2 GFLOP/s, and a
linear layer under autocast 15 GFLOP/s. The 16-step SmolLM2 warm start that takes about three
minutes on a Xeon with AMX had not finished after ten on that machine. So the CPU presets ask for
``bf16=None`` (auto): bf16 where it is native, fp32 elsewhere; an explicit ``--bf16 true`` is kept,
with a warning where it is slow.
"""

from __future__ import annotations

import warnings

import torch


def native_bf16() -> bool:
    """Whether the device a run trains on multiplies bf16 at full speed (a CUDA GPU that supports it, or a CPU with AVX512-BF16 / AMX)."""
    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def device_name() -> str:
    """The device in words, for messages: the GPU's name, or the CPU's vector capability."""
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return f"a CPU with {torch.backends.cpu.get_cpu_capability()}"


def resolve_bf16(requested: bool | None) -> bool:
    """The bf16 setting a run uses: ``requested``, or for ``None`` (auto) whether bf16 is native here.

    An explicit ``True`` on a device without native bf16 is honoured with a warning: its matmuls
    run on a slow fallback path (see the module docstring).
    """
    if requested is None:
        return native_bf16()
    if requested and not native_bf16():
        warnings.warn(
            f"--bf16 true on {device_name()}, which has no native bf16 matmul: PyTorch falls back to a slow path "
            "(measured 1.2 GFLOP/s against 103 in fp32 on an AVX2 CPU); leave --bf16 out for auto, or pass --bf16 false",
            stacklevel=2,
        )
    return requested
