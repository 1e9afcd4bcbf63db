"""The model card of a run's LoRA adapter: the real base model, how it was trained, and on what.

PEFT's own card names ``base_model_name_or_path``, which for a converted or warm-started model
is a local folder (or, for a GGUF conversion, nothing useful). This card names the upstream model
instead, and keeps the local path in ``adapter_config.json`` where loading needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_model_card(adapter_dir: str | Path, base_model: str, config: Any, warm_started: bool) -> Path:
    """Write ``README.md`` into ``adapter_dir``; returns its path.

    Args:
        adapter_dir: Where the adapter was saved.
        base_model: The upstream model name (``HuggingFaceTB/SmolLM2-135M-Instruct``) or path.
        config: The run's ``TrainConfig``.
        warm_started: Whether a supervised warm start preceded GRPO (its weights are merged into the base).
    """
    path = Path(adapter_dir) / "README.md"
    stages = (f"a {config.warm_start_steps}-step LoRA SFT warm start on gold conversations (merged), then " if warm_started else "") + "GRPO"
    path.write_text(
        f"---\nbase_model: {base_model}\nlibrary_name: peft\ntags:\n- grpo\n- lora\n- envsched-gym\n- tool-use\n---\n\n"
        f"# LoRA adapter trained with envsched-gym\n\n"
        f"- base model: `{base_model}`\n- training: {stages} ({config.steps} steps, {config.tasks_per_step} tasks x "
        f"{config.num_generations} rollouts per step, scheduler `{config.scheduler}`)\n"
        f"- environments: `{config.families}` (split `{config.train_split}`, difficulty <= {config.max_difficulty or 'any'})\n"
        f"- LoRA r={config.lora_r}, alpha={config.lora_alpha}, learning rate {config.learning_rate}, loss `{config.loss_type}`, beta {config.beta}\n\n"
        "Load it with `peft.AutoPeftModelForCausalLM.from_pretrained(<this folder>)`; the run's `eval.jsonl` holds its held-out scores.\n"
    )
    return path
