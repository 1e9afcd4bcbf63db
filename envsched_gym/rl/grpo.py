"""TRL glue: GRPO over the suite's environments with the curriculum choosing every batch.

The mechanism is TRL's ``rollout_func``: it receives the prompts of a generation batch (here
group slots, G copies of each in a row, whose tasks the curriculum binds when the round starts:
see :mod:`envsched_gym.rl.sampler`), plays each through its environment with
:func:`~envsched_gym.rl.rollout.run_rollouts`, and returns the token sequences with
``env_mask`` (TRL's mask of environment tokens, kept out of the loss) and the verifier's reward
as an extra field that :func:`env_reward` reports. ``rollout_func`` was chosen over
``environment_factory`` because it keeps each GRPO group on one task from our own sampler,
runs our parser and verifier rather than TRL's tool loop, and handles scripted user turns.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from accelerate import PartialState
from accelerate.utils import gather_object
from transformers import PreTrainedTokenizerBase, TrainerCallback
from trl import GRPOTrainer
from trl.trainer import grpo_trainer as trl_grpo

from envsched_gym.parsing import malformed_episode
from envsched_gym.rl.cpu_scoring import score_completions_only_on_cpu
from envsched_gym.rl.feedback import RoundLogger, group_rollouts
from envsched_gym.rl.format_penalty import check_format_penalty, training_rewards
from envsched_gym.rl.frozen_bf16 import store_frozen_in_bf16
from envsched_gym.rl.generation import HFGenerator, SamplingConfig, TokenGenerator, VLLMGenerator
from envsched_gym.rl.rollout import EnvPool, Rollout, run_rollouts
from envsched_gym.rl.sampler import CurriculumSampler
from envsched_gym.rl.sft_replay import SFTReplay
from envsched_gym.rl.shared_prompt import pack_by_prompt, require_maskable, shuffle_groups
from envsched_gym.rl.signal_gate import GATED, skip_steps_without_signal

CURRICULUM_FILE = "curriculum.pt"
COMPLETE_MARKER = "envsched-complete.json"  # written last into checkpoint-N: the folder is whole


def env_reward(prompts: list[Any], completions: list[Any], env_reward: Sequence[float], **kwargs: Any) -> list[float]:
    """TRL reward function: each rollout's training reward, the verifier's outcome reward less any format penalty."""
    return [float(r) for r in env_reward]


def check_pg_weight(weight: float, replay: bool) -> None:
    """Refuse a policy-gradient weight that is negative or not finite, or 0 without a replay (nothing would train)."""
    if not (math.isfinite(weight) and weight >= 0):
        raise ValueError(f"the policy-gradient weight must be a finite number of at least 0 (1: TRL's GRPO loss as is), got {weight}")
    if weight == 0 and not replay:
        raise ValueError("a policy-gradient weight of 0 without a replay trains nothing: give a replay weight (--sft-replay) or a weight above 0")


class CurriculumGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose training batches come from a :class:`CurriculumSampler`.

    With ``share_prompt``, the loss runs each group's prompt once (:mod:`envsched_gym.rl.shared_prompt`):
    micro-batches hold whole groups and each distinct prompt's rows are scored as one packed row.
    With ``frozen_bf16`` (bf16 autocast on a CPU), the frozen LoRA base weights are stored in bf16
    once (:mod:`envsched_gym.rl.frozen_bf16`) instead of cast at every forward.
    With ``skip_empty_steps``, a batch without signal (every gradient exactly zero: every group's
    rewards equal) does not step the optimizer (:mod:`envsched_gym.rl.signal_gate`), and with
    ``signal_groups_per_update = N > 1`` the rounds' gradients are summed until N groups with varied
    rewards (counted by the ``rollout_func``, an :class:`EnvironmentRollouts`) have contributed.
    With ``replay`` (:mod:`envsched_gym.rl.sft_replay`), every micro-batch's loss also gets the
    supervised loss of a few gold conversations, scaled for gradient accumulation like TRL's own
    loss, so that an optimizer step adds ``weight`` x their mean cross-entropy, logged as
    ``sft_replay_loss`` (unweighted). Its gradient is never zero, so the signal gate then steps
    every round. ``pg_weight`` scales TRL's GRPO loss (1: as TRL computes it); 0 with a replay is
    the replay-only control: the same rollouts, rounds and replay draws, and no policy gradient.
    """

    def __init__(
        self, *args: Any, curriculum_sampler: CurriculumSampler, share_prompt: bool = False, frozen_bf16: bool = False,
        skip_empty_steps: bool = True, signal_groups_per_update: int = 1, replay: SFTReplay | None = None, pg_weight: float = 1.0,
        **kwargs: Any,
    ) -> None:  # fmt: skip
        if signal_groups_per_update > 1 and not (skip_empty_steps and isinstance(kwargs.get("rollout_func"), EnvironmentRollouts)):
            raise ValueError("signal_groups_per_update > 1 accumulates through the signal gate and counts groups in EnvironmentRollouts: "
                             "pass skip_empty_steps=True and rollout_func=EnvironmentRollouts(...), or use 1")  # fmt: skip
        self.curriculum_sampler = curriculum_sampler
        self.share_prompt = share_prompt
        self.skip_empty_steps = skip_empty_steps
        self.signal_groups_per_update = signal_groups_per_update
        check_pg_weight(pg_weight, replay is not None)
        self.replay = replay
        self.pg_weight = pg_weight
        self._replay_at = (-1, 0)  # (optimizer step, micro-batches replayed in it)
        score_completions_only_on_cpu()
        super().__init__(*args, **kwargs)
        if frozen_bf16:
            if not self.args.bf16 or self.accelerator.device.type != "cpu":
                raise ValueError("frozen_bf16 is for bf16 autocast on a CPU (GRPOConfig bf16=True, no GPU); on GPUs load the model in bf16 instead")
            store_frozen_in_bf16(self.model)
        self.attention = self.accelerator.unwrap_model(self.model).config._attn_implementation
        if share_prompt:
            require_maskable(self.attention)

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None) -> torch.Tensor:
        loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if self.pg_weight != 1.0:
            loss = loss * self.pg_weight
        if self.replay is None or not model.training:
            return loss
        step, micro = self._replay_at
        micro = micro if step == self.state.global_step else 0
        with self.accelerator.autocast():
            extra = self.replay.loss(self.accelerator.unwrap_model(model), self.state.global_step, micro)
        self._replay_at = (self.state.global_step, micro + 1)
        self._metrics["train"]["sft_replay_loss"].append(extra.item() / self.replay.weight)
        return loss + extra / self.current_gradient_accumulation_steps  # TRL scales its loss for accumulation itself

    def _get_train_sampler(self, dataset: Any = None) -> CurriculumSampler:
        return self.curriculum_sampler

    def create_optimizer(self, model: Any = None) -> torch.optim.Optimizer:
        optimizer = super().create_optimizer(model)
        if self.skip_empty_steps and not getattr(optimizer, GATED, False):
            rollouts = self.rollout_func
            counter = (lambda: rollouts.varied_groups) if isinstance(rollouts, EnvironmentRollouts) else None
            skip_steps_without_signal(optimizer, self.signal_groups_per_update, counter)
        return optimizer

    def _prepare_inputs(self, generation_batch: dict[str, Any]) -> dict[str, Any]:
        if not self.share_prompt:
            return super()._prepare_inputs(generation_batch)
        original = trl_grpo.shuffle_sequence_dict
        trl_grpo.shuffle_sequence_dict = shuffle_groups
        try:
            return super()._prepare_inputs(generation_batch)
        finally:
            trl_grpo.shuffle_sequence_dict = original

    def _get_per_token_logps_and_entropies(
        self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int, batch_size: int | None = None,
        compute_entropy: bool = False, compute_aux_loss: bool = False, **multimodal: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:  # fmt: skip
        if not self.share_prompt:
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy, compute_aux_loss, **multimodal
            )  # fmt: skip
        given = sorted(k for k, v in multimodal.items() if v is not None)
        if given or compute_aux_loss:
            raise ValueError(f"share_prompt packs text rows only; this batch has {given or ['an MoE aux loss']}: turn share_prompt off")
        batch_size = batch_size or input_ids.size(0)
        logps, entropies = [], []
        for start in range(0, input_ids.size(0), batch_size):
            packed = pack_by_prompt(input_ids[start : start + batch_size], attention_mask[start : start + batch_size], logits_to_keep, self.attention)
            with self.accelerator.autocast():
                out = model(input_ids=packed.input_ids, attention_mask=packed.attention_mask, position_ids=packed.position_ids,
                            labels=packed.labels, fused_lm_head=True)  # fmt: skip
            logps.append(packed.unpack(out.log_probs, logits_to_keep))
            if compute_entropy:
                entropies.append(packed.unpack(out.entropy, logits_to_keep))
        return torch.cat(logps), torch.cat(entropies) if compute_entropy else None, None


ANSWERS = "answers.jsonl"
"""The run directory's log of training rollouts (:class:`EnvironmentRollouts`' ``answers_path``)."""
EVAL_ANSWERS = "eval_answers.jsonl"
"""The run directory's log of held-out episodes (:class:`HeldoutEval`'s ``answers_path``)."""
EVAL_SEED = 0
"""The reset seed of every held-out episode (training rounds use the round's index)."""


def final_answer(rollout: Rollout) -> str:
    """The text of the rollout's last assistant message as the model generated it (``""``: none)."""
    for message in reversed(rollout.messages):
        if message.get("role") == "assistant":
            return str(message.get("raw") or message.get("content") or "")
    return ""


def actions(rollout: Rollout) -> list[str]:
    """The texts the model generated, in order: the actions that replay the episode (``training/rescore.py``).

    Only messages carrying ``raw`` count; an assistant message the environment wrote (an opening
    greeting) is part of the reset, not an action.
    """
    return [str(m["raw"]) for m in rollout.messages if m.get("role") == "assistant" and "raw" in m]


def answer_record(rollout: Rollout, seed: int) -> dict[str, Any]:
    """One line of an answer log: the verdict, the final answer, and the reset seed and actions that replay it."""
    return {"task_id": rollout.task_id, "reward": rollout.reward, "success": rollout.success, "termination": rollout.termination,
            "answer": final_answer(rollout), "seed": seed, "actions": actions(rollout)}  # fmt: skip


class EnvironmentRollouts:
    """TRL ``rollout_func``: multi-turn episodes in the environments, fed back to the curriculum.

    Each call is one training round: it binds the round's tasks to the group slots, rolls them
    out, gathers every process's rewards and feeds them back (through ``logger``).

    Args:
        pool: Environments of the training suite.
        tokenizer: The policy's tokenizer (chat template with tools).
        sampling: Per-message sampling settings (local generation; vLLM uses the trainer's).
        max_completion_length: Token budget of a whole multi-turn completion.
        logger: Receives every training round's gathered groups.
        num_generations: G (rollouts per task).
        template_kwargs: Extra chat-template arguments.
        generator: A fixed generation backend (default: the trainer's model, or its vLLM engine).
        merge_lora: Local generation decodes with LoRA merged into the base layers (a second copy
            of those weights while decoding; see :class:`HFGenerator`).
        answers_path: Append every rollout here (JSONL, one line per rollout: round, task,
            reward, success, termination, final answer and the generated actions), so what the
            reward pays for can be read back, and re-scored by a later verifier
            (``training/rescore.py``); ``None``: not written.
        format_penalty: Subtracted from the reward GRPO learns from for an episode with a malformed
            turn (:mod:`envsched_gym.rl.format_penalty`); the curriculum and the logs keep the
            verifier's reward. 0: off.
    """

    def __init__(
        self, pool: EnvPool, tokenizer: PreTrainedTokenizerBase, sampling: SamplingConfig, max_completion_length: int,
        logger: RoundLogger, num_generations: int, template_kwargs: dict[str, Any] | None = None, generator: TokenGenerator | None = None,
        merge_lora: bool = True, answers_path: str | Path | None = None, format_penalty: float = 0.0,
    ) -> None:  # fmt: skip
        check_format_penalty(format_penalty)
        self.pool = pool
        self.tokenizer = tokenizer
        self.sampling = sampling
        self.max_completion_length = max_completion_length
        self.logger = logger
        self.num_generations = num_generations
        self.template_kwargs = template_kwargs or {}
        self.generator = generator
        self.merge_lora = merge_lora
        self.answers_path = Path(answers_path) if answers_path else None
        self.format_penalty = format_penalty
        self.round = 0
        self.varied_groups = 0
        """Groups with varied training rewards in the last round, over all processes (the signal gate's count)."""

    def __call__(self, prompts: list[str], trainer: GRPOTrainer) -> dict[str, Any]:
        if not trainer.model.training:
            raise RuntimeError("train_grpo.py's rollouts are for training rounds; evaluate with training/evaluate.py or HeldoutEval")
        start = time.perf_counter()
        tasks = self.logger.sampler.bind(self.round)
        if trainer.accelerator.num_processes > 1:
            self._log_binding(trainer, tasks, prompts)
        rollouts = run_rollouts(
            [tasks[int(slot)] for slot in prompts], self.pool, self.tokenizer, self._generator(trainer), self.max_completion_length, seed=self.round,
            any_active=self._any_active(trainer), template_kwargs=self.template_kwargs,
        )  # fmt: skip
        local_malformed = [malformed_episode(actions(r)) for r in rollouts]
        rows = gather_object([(r.task_id, r.env_id, r.reward, r.success, answer_record(r, self.round), m) for r, m in zip(rollouts, local_malformed, strict=True)])
        task_ids, env_ids, rewards, successes, records, malformed = (list(col) for col in zip(*rows, strict=True))
        groups = group_rollouts(task_ids, env_ids, rewards, successes, self.num_generations, malformed)
        trainer._metrics["train"]["malformed"].append(sum(malformed) / len(malformed))  # TRL averages it into the step's log
        self.varied_groups = sum(len(set(training_rewards(g.rewards, g.malformed, self.format_penalty))) > 1 for g in groups)
        self.logger.write = trainer.accelerator.is_main_process
        self.logger.observe(self.round, groups, time.perf_counter() - start)
        if self.answers_path is not None and trainer.accelerator.is_main_process:
            append_jsonl(self.answers_path, [{"round": self.round, **record} for record in records])
        self.round += 1
        logprobs = [r.logprobs for r in rollouts]
        return {
            "prompt_ids": [r.prompt_ids for r in rollouts],
            "completion_ids": [r.completion_ids for r in rollouts],
            "logprobs": logprobs if all(lp is not None for lp in logprobs) else None,
            "env_mask": [r.env_mask for r in rollouts],
            "env_reward": training_rewards([r.reward for r in rollouts], local_malformed, self.format_penalty),
            "env_success": [float(r.success) for r in rollouts],
        }

    def _log_binding(self, trainer: GRPOTrainer, tasks: list[str], prompts: list[str]) -> None:
        """Append this process's binding of the round to ``bindings.rank<k>.jsonl`` in the run
        directory: every rank must bind the same tasks (the multi-process test compares them)."""
        rank = trainer.accelerator.process_index
        record = {"round": self.round, "rank": rank, "tasks": tasks, "slots": [int(slot) for slot in prompts]}
        with (Path(trainer.args.output_dir) / f"bindings.rank{rank}.jsonl").open("a") as f:
            f.write(json.dumps(record) + "\n")

    def _generator(self, trainer: GRPOTrainer) -> TokenGenerator:
        if self.generator is not None:
            return self.generator
        if trainer.use_vllm:
            return VLLMGenerator(trainer)
        return HFGenerator(trainer.accelerator.unwrap_model(trainer.model), self.tokenizer, self.sampling, merge_lora=self.merge_lora, compute_dtype=autocast_dtype(trainer.args))

    @staticmethod
    def _any_active(trainer: GRPOTrainer) -> Any:
        if not trainer.use_vllm:
            return None
        device = trainer.accelerator.device
        return lambda local: bool(trainer.accelerator.gather(torch.tensor([int(local)], device=device)).sum().item())


class CurriculumCheckpoint(TrainerCallback):
    """Saves the sampler (decisions, buffered rewards, scheduler) and the round counter with each checkpoint.

    TRL writes ``checkpoint-N`` first and then calls :meth:`on_save`, which writes
    ``curriculum.pt`` atomically and then :data:`COMPLETE_MARKER`, so a process killed
    anywhere in the save leaves a folder that :func:`incomplete_reason` rejects. A stale marker
    is removed before the trainer writes into a folder again.
    """

    def __init__(self, sampler: CurriculumSampler, rollouts: EnvironmentRollouts) -> None:
        self.sampler = sampler
        self.rollouts = rollouts

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if control.should_save and state.is_world_process_zero:
            (Path(args.output_dir) / f"checkpoint-{state.global_step}" / COMPLETE_MARKER).unlink(missing_ok=True)

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        PartialState().wait_for_everyone()  # every process's RNG state is on disk before the folder is marked whole
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            buffer = io.BytesIO()
            torch.save({"sampler": self.sampler.state_dict(), "round": self.rollouts.round}, buffer)
            atomic_write(folder / CURRICULUM_FILE, buffer.getvalue())
            mark_complete(folder, state.global_step)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in its folder, flushed to disk, then renamed over it.

    A crash leaves the previous file (or none) and at worst a hidden ``.*.tmp`` file, never a torn ``path``.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def mark_complete(folder: Path, step: int) -> None:
    """Write :data:`COMPLETE_MARKER` into a fully written ``folder``, listing its files."""
    files = sorted(p.name for p in folder.iterdir() if p.name != COMPLETE_MARKER and not p.name.startswith("."))
    atomic_write(folder / COMPLETE_MARKER, json.dumps({"step": step, "files": files}).encode())
    if os.name == "posix":  # the renames themselves reach the disk
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def incomplete_reason(folder: Path) -> str | None:
    """Why ``folder`` is not a whole checkpoint of this project (``None`` when it is)."""
    marker = folder / COMPLETE_MARKER
    if not marker.is_file():
        return f"it has no {COMPLETE_MARKER}, which train_grpo.py writes last, so its save was interrupted (or predates the marker)"
    try:
        record = json.loads(marker.read_text())
        step, files = int(record["step"]), [str(name) for name in record["files"]]
    except (ValueError, KeyError, TypeError) as exc:
        return f"its {COMPLETE_MARKER} is unreadable ({exc})"
    match = re.fullmatch(r"checkpoint-(\d+)", folder.name)
    if match is None or int(match.group(1)) != step:
        return f"its {COMPLETE_MARKER} was written for step {step}"
    missing = [name for name in files if not (folder / name).exists()]
    return f"files listed in its {COMPLETE_MARKER} are missing: {missing}" if missing else None


def restore_curriculum(checkpoint: str | Path, sampler: CurriculumSampler, rollouts: EnvironmentRollouts) -> int:
    """Load a checkpoint's curriculum state into ``sampler`` and ``rollouts``; returns the round reached."""
    path = Path(checkpoint) / CURRICULUM_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: this checkpoint was not written by train_grpo.py, so the curriculum cannot resume")
    fix = f"delete {path.parent} and run with --resume again to continue from the previous checkpoint"
    try:
        saved = torch.load(path, weights_only=False)
    except Exception as exc:  # torch reports a damaged file as RuntimeError, EOFError or an unpickling error
        raise ValueError(f"{path} cannot be read ({type(exc).__name__}: {exc}); {fix}") from exc
    if not isinstance(saved, dict) or set(saved) != {"sampler", "round"} or not isinstance(saved["round"], int) or saved["round"] < 0:
        found = f"keys {sorted(map(str, saved))}, round {saved.get('round')!r}" if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"{path} must hold {{'sampler': dict, 'round': int >= 0}}, found {found}; {fix}")
    sampler.load_state_dict(saved["sampler"])
    rollouts.round = saved["round"]
    return rollouts.round


def autocast_dtype(args: Any) -> torch.dtype | None:
    """bf16 when the trainer's ``args`` run every forward of the model under bf16 autocast (accelerate
    wraps the model's forward for ``bf16=True``); rollouts then store their decoding weights and KV
    cache in it (:class:`HFGenerator`'s ``compute_dtype``)."""
    return torch.bfloat16 if args.bf16 else None


class HeldoutEval(TrainerCallback):
    """Greedy rollouts of fixed tasks every ``every`` steps (and before training), appended to ``eval.jsonl``.

    Args:
        pool: Environments serving ``task_ids``.
        task_ids: The evaluation tasks (for example a seeded sample of the held-out split).
        tokenizer: The policy's tokenizer.
        sampling: Generation settings (use ``temperature=0`` for greedy decoding).
        max_completion_length: Token budget per episode.
        steps: The optimizer steps to evaluate at (0: before the first step).
        path: The JSONL file.
        split: Name of the split, written into each record.
        start_stage: Stage name of the step-0 record (``warm-start`` after an SFT warm start).
        batch_size: Episodes generated together (bounds the KV cache's memory).
        merge_lora: Decode with LoRA merged into the base layers (see :class:`HFGenerator`).
        answers_path: Append every evaluation episode here (one line per episode: step, stage,
            task, verdict, final answer and actions; see :func:`answer_record`); ``None``: not written.
    """

    def __init__(
        self, pool: EnvPool, task_ids: list[str], tokenizer: PreTrainedTokenizerBase, sampling: SamplingConfig,
        max_completion_length: int, steps: set[int], path: Path, split: str, start_stage: str = "grpo", batch_size: int = 32,
        merge_lora: bool = True, answers_path: str | Path | None = None,
    ) -> None:  # fmt: skip
        self.pool, self.task_ids, self.tokenizer, self.sampling = pool, task_ids, tokenizer, sampling
        self.max_completion_length, self.steps, self.path, self.split = max_completion_length, set(steps), path, split
        self.start_stage, self.batch_size, self.merge_lora = start_stage, batch_size, merge_lora
        self.answers_path = Path(answers_path) if answers_path else None

    def evaluate(
        self, model: Any, step: int, stage: str = "grpo", tokenizer: PreTrainedTokenizerBase | None = None, compute_dtype: torch.dtype | None = None
    ) -> dict[str, Any]:  # fmt: skip
        """Run the evaluation tasks once and append the record (per-task successes included, for intervals).

        Args:
            model: The policy to evaluate.
            step: The optimizer step it has reached.
            stage: ``base`` (before any training), ``warm-start`` (after SFT, before GRPO) or ``grpo``.
            tokenizer: Its tokenizer, when it is not the trainer's.
            compute_dtype: The dtype of the autocast ``model``'s forward runs under, if any (see
                :class:`HFGenerator`).
        """
        tokenizer = tokenizer or self.tokenizer
        generator = HFGenerator(model, tokenizer, self.sampling, batch_size=self.batch_size, merge_lora=self.merge_lora, compute_dtype=compute_dtype)
        rollouts = run_rollouts(self.task_ids, self.pool, tokenizer, generator, self.max_completion_length, seed=EVAL_SEED, progress=f"held-out evaluation ({stage}, step {step})")
        record = {
            "step": step, "stage": stage, "split": self.split, "n": len(rollouts),
            "success": sum(r.success for r in rollouts) / max(len(rollouts), 1),
            "reward": sum(r.reward for r in rollouts) / max(len(rollouts), 1),
            "task_ids": list(self.task_ids), "successes": [float(r.success) for r in rollouts],
        }  # fmt: skip
        append_jsonl(self.path, [record])
        if self.answers_path is not None:
            append_jsonl(self.answers_path, [{"step": step, "stage": stage, **answer_record(r, EVAL_SEED)} for r in rollouts])
        return record

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and state.global_step == 0 and 0 in self.steps:
            self.evaluate(model, 0, self.start_stage, compute_dtype=autocast_dtype(args))

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and state.global_step in self.steps:
            self.evaluate(model, state.global_step, compute_dtype=autocast_dtype(args))


def append_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """Append ``records`` as JSON lines (text the model generated may hold lone surrogates: escaped)."""
    with path.open("a", encoding="utf-8", errors="backslashreplace") as f:
        f.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
