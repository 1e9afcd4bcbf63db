"""train_grpo.py --family-weights: parsed from the CLI, checked against the families, handed to the curriculum."""

from __future__ import annotations

import pytest

import training.train_grpo as train_grpo
from envsched_gym.curriculum import make_scheduler
from envsched_gym.rl.tasks import select_tasks
from training.train_grpo import parse_config


def test_the_flag_reaches_the_config() -> None:
    assert parse_config(["--family-weights", "ToolWorld=0.7,BugTracker=0.3"]).family_weights == "ToolWorld=0.7,BugTracker=0.3"
    assert parse_config([]).family_weights == ""


def test_main_hands_the_weights_to_the_training_pool(tmp_path, monkeypatch) -> None:
    seen = []

    def stop(*args: object) -> None:
        seen.append(args)
        raise SystemExit("stopped after the first select_tasks")

    monkeypatch.setattr(train_grpo, "select_tasks", stop)
    with pytest.raises(SystemExit, match="stopped"):
        train_grpo.main(parse_config(["--output-dir", str(tmp_path / "run"), "--family-weights", "ToolWorld=1"]))
    assert seen[0][0] == "ToolWorld" and seen[0][-1] == "ToolWorld=1"


def test_weights_become_the_schedulers_target_mix() -> None:
    train = select_tasks("ToolWorld", "train", max_difficulty=1, family_weights="ToolWorld=2")
    assert train.weights == {"ToolWorld": 2.0}
    assert make_scheduler("random", train).mixture.target.tolist() == [1.0]
    assert select_tasks("ToolWorld", "train", max_difficulty=1).weights is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("TooWorld=1", r"'TooWorld', which is not a family of this suite\. Did you mean 'ToolWorld'\? Families: \['ToolWorld'\]"),
        ("ToolWorld0.7", r"'ToolWorld0.7' is not FAMILY=WEIGHT"),
        ("ToolWorld=much", r"'much' is not a number"),
        ("ToolWorld=-1", r"weights must be finite numbers above 0"),
        ("ToolWorld=nan", r"weights must be finite numbers above 0"),
        ("ToolWorld=1,ToolWorld=2", r"'ToolWorld' has two weights"),
    ],
)
def test_bad_weights_stop_the_run_with_the_fix(text: str, message: str) -> None:
    with pytest.raises(SystemExit, match=rf"--family-weights '{text}': .*{message}"):
        select_tasks("ToolWorld", "train", max_difficulty=1, family_weights=text)
