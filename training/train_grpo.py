"""GRPO + LoRA on the suite's tool-use environments, with a curriculum choosing every batch.

    python training/train_grpo.py --output-dir runs/tiny                    # tiny-cpu preset (default)
    python training/train_grpo.py --output-dir runs/tiny --scheduler random
    python training/train_grpo.py --output-dir runs/tiny --resume           # continue from the last checkpoint
    accelerate launch training/train_grpo.py --preset qwen3-8b --output-dir runs/q8b

Read top to bottom: the config, then ``main``: the task pools, the model (the micro Qwen3 built
here, or any ``from_pretrained`` path or hub id), the curriculum sampler, TRL's GRPOTrainer with
our ``rollout_func``, training, the outputs (LoRA adapter, metrics, scheduler state, plots).
See docs/training.md.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from transformers.trainer_utils import get_last_checkpoint
from trl import GRPOConfig

from envsched_gym.curriculum import make_scheduler
from envsched_gym.rl.feedback import RoundLogger
from envsched_gym.rl.generation import SamplingConfig
from envsched_gym.rl.grpo import (
    CurriculumCheckpoint,
    CurriculumGRPOTrainer,
    EnvironmentRollouts,
    HeldoutEval,
    env_reward,
    restore_curriculum,
)
from envsched_gym.rl.micro import MicroSize, build_micro_qwen3
from envsched_gym.rl.plots import plot_run
from envsched_gym.rl.rollout import EnvPool
from envsched_gym.rl.sampler import CurriculumSampler
from envsched_gym.rl.tasks import select_tasks
from envsched_gym.rl.trajectories import gold_conversations
from envsched_gym.suite import Suite


@dataclass
class TrainConfig:
    """Every setting of a run; ``--preset`` fills them, explicit flags override the preset."""

    output_dir: str = field(default="runs/tiny", metadata={"help": "Run directory (checkpoints, adapter, metrics, plots)."})
    preset: str = field(default="tiny-cpu", metadata={"help": "Settings preset: tiny-cpu or qwen3-8b (see PRESETS)."})
    model: str = field(default="micro", metadata={"help": "'micro' (build the micro Qwen3 here), a local path, or a hub id."})
    families: str = field(default="ToolWorld", metadata={"help": "Comma-separated families or gym ids to train on."})
    train_split: str = field(default="train", metadata={"help": "Split the curriculum schedules over."})
    eval_split: str = field(default="heldout", metadata={"help": "Split of the periodic greedy evaluation."})
    max_difficulty: int = field(default=1, metadata={"help": "Keep tasks whose metadata difficulty is at most this (0: all)."})
    max_tasks: int = field(default=0, metadata={"help": "Seeded sample of at most this many training tasks (0: all)."})
    scheduler: str = field(default="envsched", metadata={"help": "Curriculum: envsched, random, dapo, mopps, plr or dump."})
    steps: int = field(default=6, metadata={"help": "Optimizer steps (one generation round each)."})
    tasks_per_step: int = field(default=4, metadata={"help": "GRPO groups (tasks) per step, over all processes."})
    num_generations: int = field(default=4, metadata={"help": "Rollouts per task (G)."})
    learning_rate: float = field(default=2e-3, metadata={"help": "LoRA learning rate."})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA alpha."})
    beta: float = field(default=0.0, metadata={"help": "KL coefficient (0: no reference model)."})
    loss_type: str = field(default="dapo", metadata={"help": "TRL GRPO loss type (grpo, dapo, dr_grpo, bnpo)."})
    temperature: float = field(default=1.0, metadata={"help": "Rollout sampling temperature."})
    max_new_tokens: int = field(default=64, metadata={"help": "Longest assistant message (local generation)."})
    max_completion_length: int = field(default=320, metadata={"help": "Token budget of a multi-turn completion."})
    micro_sft_steps: int = field(default=120, metadata={"help": "SFT warm-start steps of the micro model on gold conversations."})
    micro_hidden: int = field(default=128, metadata={"help": "Micro model width."})
    micro_layers: int = field(default=2, metadata={"help": "Micro model decoder layers."})
    micro_vocab: int = field(default=2048, metadata={"help": "Micro model BPE vocabulary."})
    eval_every: int = field(default=3, metadata={"help": "Greedy evaluation every this many steps (0: never)."})
    eval_tasks: int = field(default=8, metadata={"help": "Seeded sample of evaluation tasks."})
    save_steps: int = field(default=3, metadata={"help": "Checkpoint every this many steps."})
    bf16: bool = field(default=False, metadata={"help": "bf16 training (GPU)."})
    use_vllm: bool = field(default=False, metadata={"help": "Generate with vLLM (TRL colocate mode)."})
    gradient_checkpointing: bool = field(default=False, metadata={"help": "Trade compute for memory (large models)."})
    resume: bool = field(default=False, metadata={"help": "Resume from the last checkpoint in output_dir."})
    seed: int = field(default=0, metadata={"help": "Seed of the model, the task samples, the curriculum and sampling."})


PRESETS: dict[str, dict[str, Any]] = {
    "tiny-cpu": {},
    # Paper-like: Qwen3-8B, BFCL-v3 + tau-bench + ACEBench, 32 tasks x 8 rollouts per step, LoRA r=64,
    # 8k-token multi-turn completions, vLLM colocated generation, bf16, EnvSched reaching in 40 steps
    # what random selection reaches in 120.
    "qwen3-8b": {
        "model": "Qwen/Qwen3-8B", "families": "BFCL,Tau,ACE", "max_difficulty": 0, "steps": 120, "tasks_per_step": 32,
        "num_generations": 8, "learning_rate": 1e-5, "lora_r": 64, "lora_alpha": 128, "temperature": 1.0,
        "max_new_tokens": 1024, "max_completion_length": 8192, "eval_every": 10, "eval_tasks": 256, "save_steps": 10,
        "bf16": True, "use_vllm": True, "gradient_checkpointing": True,
    },
}  # fmt: skip


def parse_config(argv: list[str] | None = None) -> TrainConfig:
    """The config from ``argv``: the preset's values first, then every explicit flag."""
    parser = HfArgumentParser(TrainConfig)
    (first,) = parser.parse_args_into_dataclasses(args=argv)
    if first.preset not in PRESETS:
        raise SystemExit(f"unknown preset '{first.preset}'; choose one of {sorted(PRESETS)}")
    parser.set_defaults(**PRESETS[first.preset])
    (config,) = parser.parse_args_into_dataclasses(args=argv)
    return config


def load_policy(config: TrainConfig, train: Suite, run: Path) -> tuple[Any, Any]:
    """The model and tokenizer through ``from_pretrained`` (the micro model is built first, once per run)."""
    path = config.model
    if config.model == "micro":
        path = str((run / "micro-model").resolve())
        if not (run / "micro-model" / "config.json").exists():
            size = MicroSize(vocab_size=config.micro_vocab, hidden_size=config.micro_hidden, num_hidden_layers=config.micro_layers)
            build_micro_qwen3(list(gold_conversations(train)), path, size, sft_steps=config.micro_sft_steps, seed=config.seed)
    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
    dtype = torch.bfloat16 if config.bf16 else torch.float32
    return AutoModelForCausalLM.from_pretrained(path, dtype=dtype), tokenizer


def grpo_args(config: TrainConfig) -> GRPOConfig:
    """TRL's config: one generation round per optimizer step, no dataloader look-ahead beyond one batch."""
    return GRPOConfig(
        output_dir=config.output_dir, max_steps=config.steps, per_device_train_batch_size=config.tasks_per_step * config.num_generations,
        gradient_accumulation_steps=1, num_generations=config.num_generations, num_iterations=1, learning_rate=config.learning_rate,
        lr_scheduler_type="constant", beta=config.beta, loss_type=config.loss_type, temperature=config.temperature,
        max_completion_length=config.max_completion_length, bf16=config.bf16, use_vllm=config.use_vllm, vllm_mode="colocate",
        gradient_checkpointing=config.gradient_checkpointing, logging_steps=1, save_steps=config.save_steps, save_strategy="steps",
        report_to="none", seed=config.seed, dataloader_num_workers=0, remove_unused_columns=False, use_cpu=not torch.cuda.is_available(),
    )  # fmt: skip


def main(config: TrainConfig) -> Path:
    """Train; returns the run directory."""
    run = Path(config.output_dir)
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps(dataclasses.asdict(config), indent=2))
    torch.manual_seed(config.seed)
    train = select_tasks(config.families, config.train_split, config.max_difficulty, config.max_tasks, config.seed)
    model, tokenizer = load_policy(config, train, run)

    scheduler = make_scheduler(config.scheduler, train, seed=config.seed)
    sampler = CurriculumSampler(scheduler, config.tasks_per_step, config.num_generations, repeat_count=1, num_rounds=config.steps)
    slots = Dataset.from_dict({"prompt": [str(j) for j in range(config.tasks_per_step)]})
    rollouts = EnvironmentRollouts(
        EnvPool(train), tokenizer, SamplingConfig(config.max_new_tokens, config.temperature), config.max_completion_length,
        RoundLogger(sampler, run / "metrics.jsonl"), config.num_generations,
    )  # fmt: skip
    callbacks: list[Any] = [CurriculumCheckpoint(sampler, rollouts)]
    if config.eval_every:
        heldout = select_tasks(config.families, config.eval_split, config.max_difficulty, config.eval_tasks, config.seed)
        callbacks.append(HeldoutEval(EnvPool(heldout), [n.task_id for n in heldout], tokenizer, SamplingConfig(config.max_new_tokens, 0.0),
                                     config.max_completion_length, config.eval_every, run / "eval.jsonl", config.eval_split))  # fmt: skip

    checkpoint = get_last_checkpoint(str(run)) if config.resume else None
    if checkpoint:
        resumed = restore_curriculum(checkpoint, sampler, rollouts)
        _truncate_logs(run, resumed, int(Path(checkpoint).name.split("-")[-1]))
    else:
        for name in ("metrics.jsonl", "eval.jsonl"):
            (run / name).unlink(missing_ok=True)

    trainer = CurriculumGRPOTrainer(
        model=model, reward_funcs=[env_reward], args=grpo_args(config), train_dataset=slots,
        processing_class=tokenizer, peft_config=LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, target_modules="all-linear"),
        rollout_func=rollouts, callbacks=callbacks, curriculum_sampler=sampler,
    )  # fmt: skip
    trainer.train(resume_from_checkpoint=checkpoint)

    trainer.save_model(str(run / "adapter"))
    tokenizer.save_pretrained(run / "adapter")
    torch.save(sampler.state_dict(), run / "scheduler_state.pt")
    plot_run(run)
    return run


def _truncate_logs(run: Path, rounds_done: int, step: int) -> None:
    """Drop log lines written after the checkpoint (those rounds are trained again)."""
    for name, key, limit in (("metrics.jsonl", "round", rounds_done), ("eval.jsonl", "step", step + 1)):
        path = run / name
        if path.exists():
            keep = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line)[key] < limit]
            path.write_text("".join(line + "\n" for line in keep))


if __name__ == "__main__":
    main(parse_config(sys.argv[1:]))
