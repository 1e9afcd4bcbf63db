"""One short line per GRPO step on the console, instead of the Trainer's raw log dictionaries.

``transformers`` prints every log as a Python dict of some 25 keys (TRL's GRPO metrics), which
buries the progress bar. :class:`StepLine` keeps the bar and writes the few numbers a person
watches: the rollout reward, how many groups carried no signal, the loss, the gradient norm and
the step's time. Nothing is lost: the Trainer still records every key in ``log_history``
(``checkpoint-*/trainer_state.json``) and the curriculum's own metrics go to ``metrics.jsonl``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from transformers import PrinterCallback, ProgressCallback, Trainer, TrainerCallback

#: (log key, label, format): the order of the line's fields.
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("reward", "reward", "{:.3f}"),
    ("reward_std", "sd", "{:.3f}"),
    ("frac_reward_zero_std", "groups without signal", "{:.0%}"),
    ("malformed", "malformed", "{:.0%}"),
    ("loss", "loss", "{:.4g}"),
    ("sft_replay_loss", "replay loss", "{:.3g}"),
    ("grad_norm", "grad norm", "{:.3g}"),
    ("completions/mean_length", "tokens", "{:.0f}"),
    ("step_time", "time", "{:.1f} s"),
)


def step_line(logs: Mapping[str, Any], step: int, max_steps: int) -> str:
    """The console line of one Trainer log: a training step's fields, or the run's total time.

    A log without any of :data:`FIELDS` (e.g. a callback's own metrics) is shown by its keys, so
    that a new metric is visible rather than dropped.
    """
    if "train_runtime" in logs:
        return f"trained {step} steps in {float(logs['train_runtime']):.1f} s"
    parts = [label + " " + fmt.format(float(logs[key])) for key, label, fmt in FIELDS if key in logs]
    if not parts:
        return f"step {step}/{max_steps}: " + ", ".join(f"{k} {_short(v)}" for k, v in logs.items() if k != "total_flos")
    return f"step {step}/{max_steps} | " + " | ".join(parts)


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)[:60]


class StepLine(ProgressCallback):
    """The Trainer's progress bar, with :func:`step_line` written above it at each log."""

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and logs and self.training_bar is not None:
            self.training_bar.write(step_line(logs, state.global_step, state.max_steps))


class StepPrinter(TrainerCallback):
    """:func:`step_line` printed at each log, with no progress bar (``disable_tqdm``)."""

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and logs:
            print(step_line(logs, state.global_step, state.max_steps), flush=True)


def use_step_lines(trainer: Trainer) -> None:
    """Replace the Trainer's dict printer (``ProgressCallback``, or ``PrinterCallback`` under ``disable_tqdm``) by its one-line form."""
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(StepPrinter() if trainer.args.disable_tqdm else StepLine())
