"""Real multi-process GRPO: ``accelerate launch --multi_gpu --num_processes 2`` on CPU (gloo), two processes.

On a machine without GPUs, ``--multi_gpu`` is what starts the processes (through torchrun) and the
training arguments' ``use_cpu`` makes accelerate pick gloo; ``--cpu`` alone runs one process.

Every rank must bind the same tasks to the round's group slots (each holds its own scheduler and
feeds it every rank's gathered rewards), generate only its own slots, and the curriculum log
must hold every rank's groups. Asserted from both ranks' ``bindings.rank<k>.jsonl``. The main
process alone builds the micro model and evaluates the base (the others wait at a barrier).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO

STEPS, TASKS, G = 3, 2, 2


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_two_processes_bind_the_same_tasks_and_train(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no", str(REPO / "training" / "train_grpo.py"),
        "--preset", "tiny-cpu", "--output-dir", str(run), "--steps", str(STEPS), "--tasks-per-step", str(TASKS),
        "--num-generations", str(G), "--per-device-batch", "2", "--micro-sft-steps", "5", "--eval-steps", f"0,{STEPS}", "--eval-tasks", "2", "--eval-base", "True",
        "--save-steps", "100",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ranks = [_records(run / f"bindings.rank{k}.jsonl") for k in (0, 1)]
    assert [len(r) for r in ranks] == [STEPS, STEPS]
    for round_index, (first, second) in enumerate(zip(*ranks, strict=True)):
        assert first["round"] == second["round"] == round_index
        assert first["tasks"] == second["tasks"] and len(first["tasks"]) == TASKS  # same binding on both ranks
        assert Counter(first["slots"] + second["slots"]) == Counter({slot: G for slot in range(TASKS)})  # each rank its own slots
    metrics = _records(run / "metrics.jsonl")
    assert [m["round"] for m in metrics] == list(range(STEPS))
    for record, binding in zip(metrics, ranks[0], strict=True):
        assert record["tasks"] == binding["tasks"] and [len(g) for g in record["group_rewards"]] == [G] * TASKS  # both ranks' rewards
    evals = _records(run / "eval.jsonl")  # the main process evaluates, once per stage; the micro model was built once
    assert [(e["stage"], e["step"], e["n"]) for e in evals] == [("base", 0, 2), ("grpo", 0, 2), ("grpo", STEPS, 2)]
    assert (run / "adapter").exists() or any(run.glob("checkpoint-*")), sorted(p.name for p in run.iterdir())
