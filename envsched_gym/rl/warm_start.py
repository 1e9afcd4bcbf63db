"""A short supervised warm start of a pretrained model, merged and saved for ``from_pretrained``.

Small instruct models (SmolLM2-135M) have never seen this project's tool-call format: untrained,
they answer in prose or write code, and nearly every GRPO group scores all zeros. A few dozen LoRA
SFT steps on gold conversations of the *training* split teach the format without solving the
tasks, which leaves GRPO something to learn. The adapter is merged into the weights and the result
written with ``save_pretrained`` (with its tokenizer and the converted model's source record), so
GRPO then adds its own fresh LoRA adapter on top, exactly as it would on ``Qwen/Qwen3-8B``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.precision import device_name, native_bf16
from envsched_gym.rl.pretrained import SOURCE_FILE, base_model_name
from envsched_gym.rl.sft import sft_warm_start
from envsched_gym.rl.trajectories import Conversation

WARM_START_FILE = "warm_start.json"
"""Written into a warm-started folder: the SFT settings, the losses and the numerics it ran with."""


@dataclass
class WarmStart:
    """How the warm start trains.

    Attributes:
        steps: AdamW steps (0: no warm start).
        lr: Learning rate of the LoRA adapter.
        batch_size: Conversations per step.
        lora_r: Rank of the temporary adapter.
        bf16: bfloat16 autocast for the forward and backward passes (``None``: where bf16 is
            native, see :mod:`envsched_gym.rl.precision`).
        gradient_checkpointing: Recompute each layer's activations in backward instead of keeping
            them (SmolLM2 in fp32, 4 conversations of about 500 tokens: a peak of 3.5 GB instead of 7.1).
    """

    steps: int = 30
    lr: float = 1e-3
    batch_size: int = 8
    lora_r: int = 16
    bf16: bool | None = None
    gradient_checkpointing: bool = False


def warm_start(base: str | Path, conversations: list[Conversation], out: str | Path, settings: WarmStart, seed: int = 0) -> Path:
    """LoRA-SFT ``base`` on ``conversations``, merge, and save to ``out`` (reused when already there).

    Raises:
        ValueError: No conversations to train on, or ``out`` holds a warm start made with other
            settings (base model, seed, steps, learning rate, batch size or rank).
    """
    out = Path(out)
    if (out / WARM_START_FILE).exists():
        _check_reuse(out, settings, str(base), seed)
        return out
    if not conversations:
        raise ValueError("no gold conversations for the warm start; choose training families whose tasks have gold solutions")
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, attn_implementation="sdpa", dtype=torch.float32)
    torch.manual_seed(seed)
    peft = get_peft_model(model, LoraConfig(r=settings.lora_r, lora_alpha=2 * settings.lora_r, target_modules="all-linear"))
    if settings.gradient_checkpointing:  # non-reentrant: the frozen embeddings' outputs need no requires_grad
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    bf16 = native_bf16() if settings.bf16 is None else settings.bf16  # an explicit choice was checked (and warned about) where it was made
    losses = sft_warm_start(peft, tokenizer, conversations, settings.steps, lr=settings.lr, batch_size=settings.batch_size, seed=seed, bf16=bf16)
    merged = peft.merge_and_unload()
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    merged.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    if (Path(base) / SOURCE_FILE).exists():
        shutil.copy(Path(base) / SOURCE_FILE, partial / SOURCE_FILE)
    record = {"base_model": base_model_name(base), "from": str(base), "seed": seed, "steps": settings.steps, "lr": settings.lr,
              "batch_size": settings.batch_size, "lora_r": settings.lora_r, "bf16": bf16, "gradient_checkpointing": settings.gradient_checkpointing, "conversations": len(conversations), "losses": losses,
              **numerics()}  # fmt: skip
    (partial / WARM_START_FILE).write_text(json.dumps(record, indent=2))
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    return out


def numerics() -> dict[str, str | int]:
    """What besides the settings decides the warm start's bytes: torch's version, the device and torch's CPU thread count.

    A CPU reduction splits its sums by thread, so the same seed and settings built with
    ``OMP_NUM_THREADS=2`` instead of 1 give other weights (seed 18 of docs/training.md: 0.38
    held-out at step 0 against the archived 0.41). To rebuild a start that pairs with archived runs,
    use the numbers recorded here.
    """
    return {"torch": torch.__version__, "device": device_name(), "torch_threads": torch.get_num_threads()}


def _check_reuse(out: Path, settings: WarmStart, base: str, seed: int) -> None:
    """Reusing ``out`` is only right when it was trained from ``base`` with ``settings``: a changed flag must not be ignored.

    The seed is compared where the record has one (folders written before it was recorded lack it)."""
    record = json.loads((out / WARM_START_FILE).read_text())
    wanted = {"from": base, "steps": settings.steps, "lr": settings.lr, "batch_size": settings.batch_size, "lora_r": settings.lora_r}
    if "seed" in record:
        wanted["seed"] = seed
    changed = {k: (record.get(k), v) for k, v in wanted.items() if record.get(k) != v}
    if changed:
        described = ", ".join(f"{k} {old} there, {new} asked" for k, (old, new) in changed.items())
        raise ValueError(f"{out} holds a warm start made with other settings ({described}); delete that folder or choose another output directory")
