"""The one-line console form of the Trainer's logs."""

from __future__ import annotations

import torch
from transformers import PrinterCallback, ProgressCallback, Trainer, TrainerState, TrainingArguments

from envsched_gym.rl.console import StepLine, StepPrinter, step_line, use_step_lines

#: A GRPO step's log as TRL 1.16 hands it to the callbacks (trimmed of the clip-ratio keys).
GRPO_LOG = {
    "loss": 0.065, "grad_norm": 0.1122, "learning_rate": 0.0002, "num_tokens": 12970.0,
    "completions/mean_length": 77.5, "completions/clipped_ratio": 0.1875, "rewards/env_reward/mean": 0.1875,
    "reward": 0.1875, "reward_std": 0.4031, "frac_reward_zero_std": 0.5, "entropy": 0.5156,
    "clip_ratio/low_mean": 0.0, "step_time": 29.44, "epoch": 0.25,
}  # fmt: skip


def test_a_grpo_log_becomes_one_short_line_of_the_watched_fields():
    line = step_line(GRPO_LOG, 2, 8)
    assert line == "step 2/8 | reward 0.188 | sd 0.403 | groups without signal 50% | loss 0.065 | grad norm 0.112 | tokens 78 | time 29.4 s"
    assert "\n" not in line and "clip_ratio" not in line and "learning_rate" not in line


def test_a_replayed_run_shows_its_replay_loss_next_to_the_grpo_loss():
    line = step_line({**GRPO_LOG, "sft_replay_loss": 0.8123}, 2, 8)
    assert "| loss 0.065 | replay loss 0.812 | grad norm 0.112 |" in line


def test_the_final_log_reports_the_run_time():
    assert step_line({"train_runtime": 287.53, "train_loss": 0.02, "epoch": 1.0}, 8, 8) == "trained 8 steps in 287.5 s"


def test_a_log_without_known_fields_is_shown_by_its_keys_not_dropped():
    line = step_line({"heldout/success": 0.4, "total_flos": 1e9, "stage": "grpo"}, 4, 8)
    assert line == "step 4/8: heldout/success 0.4, stage grpo"


def _trainer(tmp_path, disable_tqdm: bool) -> Trainer:
    args = TrainingArguments(output_dir=str(tmp_path), disable_tqdm=disable_tqdm, report_to="none", use_cpu=True)
    return Trainer(model=torch.nn.Linear(2, 2), args=args)


def _callback_types(trainer: Trainer) -> set[type]:
    return {type(c) for c in trainer.callback_handler.callbacks}


def test_the_progress_bar_keeps_its_bar_and_loses_the_dict(tmp_path):
    trainer = _trainer(tmp_path, disable_tqdm=False)
    assert ProgressCallback in _callback_types(trainer)
    use_step_lines(trainer)
    assert StepLine in _callback_types(trainer) and ProgressCallback not in _callback_types(trainer)


def test_without_tqdm_the_printer_prints_lines_not_dicts(tmp_path, capsys):
    trainer = _trainer(tmp_path, disable_tqdm=True)
    assert PrinterCallback in _callback_types(trainer)
    use_step_lines(trainer)
    assert StepPrinter in _callback_types(trainer) and PrinterCallback not in _callback_types(trainer)
    state = TrainerState(global_step=2, max_steps=8)
    trainer.callback_handler.on_log(trainer.args, state, trainer.control, GRPO_LOG)
    out = capsys.readouterr().out
    assert out.startswith("step 2/8 | reward 0.188") and "{" not in out
