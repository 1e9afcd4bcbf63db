"""A family from a separate package is trained and evaluated through both CLIs with --import (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from training.train_grpo import parse_config

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "lampworld"


def test_repeated_import_flags_reach_the_config():
    config = parse_config(["--import", "lampworld", "--steps", "3", "--import=other"])
    assert (config.imports, config.steps) == ("lampworld,other", 3)


@pytest.mark.slow
def test_lampworld_trains_two_steps_and_evaluates_through_both_clis(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURE), os.environ.get("PYTHONPATH", "")]), "TRL_EXPERIMENTAL_SILENCE": "1"}
    run = tmp_path / "run"
    train = [sys.executable, str(ROOT / "training" / "train_grpo.py"), "--import", "lampworld", "--families", "LampWorld", "--output-dir", str(run),
             "--steps", "2", "--tasks-per-step", "2", "--num-generations", "2", "--eval-every", "0", "--save-steps", "2",
             "--micro-sft-steps", "20", "--micro-hidden", "64", "--micro-vocab", "800", "--max-new-tokens", "32", "--max-completion-length", "160"]  # fmt: skip
    done = subprocess.run(train, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    rounds = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["round"] for r in rounds] == [0, 1] and all(t.startswith("lamp/") for r in rounds for t in r["tasks"])
    assert json.loads((run / "config.json").read_text())["imports"] == "lampworld"

    evaluate = [sys.executable, str(ROOT / "training" / "evaluate.py"), "--output-dir", str(run), "--max-new-tokens", "24"]
    done = subprocess.run(evaluate, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    summary = json.loads((run / "evaluation" / "summary.json").read_text())
    assert summary["config"]["benchmarks"] == "LampWorld" and summary["episodes"] == 3  # the run's family and held-out split
    assert "lampworld" in summary["config"]["imports"]
