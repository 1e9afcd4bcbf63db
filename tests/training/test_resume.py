"""Crash-safe --resume: the latest complete checkpoint is chosen, and torn log lines are handled (fast, no training)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toy import register_toy

from envsched_gym.rl.grpo import mark_complete
from training import train_grpo


def _checkpoint(run: Path, step: int, complete: bool) -> Path:
    folder = run / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if complete:
        (folder / "curriculum.pt").write_bytes(b"state")
        mark_complete(folder, step)
    return folder


def test_resume_skips_a_partial_checkpoint_with_a_warning_naming_it(tmp_path: Path) -> None:
    complete = _checkpoint(tmp_path, 2, complete=True)
    _checkpoint(tmp_path, 4, complete=False)  # SIGKILLed mid-save: TRL's files so far, no curriculum.pt, no marker
    (tmp_path / "checkpoint-6").mkdir()  # killed right after the folder was made
    with pytest.warns(UserWarning, match="--resume skips") as caught:
        assert train_grpo.resume_checkpoint(tmp_path) == complete
    assert [str(w.message).split(":")[0].split("/")[-1] for w in caught] == ["checkpoint-6", "checkpoint-4"]


def test_resume_orders_checkpoints_by_step_not_by_name(tmp_path: Path) -> None:
    _checkpoint(tmp_path, 9, complete=True)
    latest = _checkpoint(tmp_path, 10, complete=True)
    (tmp_path / "checkpoint-final").mkdir()
    assert train_grpo.resume_checkpoint(tmp_path) == latest


def test_resume_without_a_complete_checkpoint_says_how_to_proceed(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no complete checkpoint .*\(no checkpoint-N folders\); run without --resume"):
        train_grpo.resume_checkpoint(tmp_path)
    _checkpoint(tmp_path, 4, complete=False)
    with pytest.warns(UserWarning, match="checkpoint-4"):
        with pytest.raises(
            FileNotFoundError, match=r"only incomplete ones: checkpoint-4: .*run without --resume.*or delete the run directory"
        ):
            train_grpo.resume_checkpoint(tmp_path)


def test_main_with_resume_and_only_a_partial_checkpoint_stops_before_touching_the_logs(tmp_path: Path) -> None:
    register_toy()
    _checkpoint(tmp_path, 4, complete=False)
    (tmp_path / "metrics.jsonl").write_text('{"round": 0}\n')
    config = train_grpo.TrainConfig(
        output_dir=str(tmp_path), model=str(tmp_path / "no-model"), families="Toy", max_difficulty=0, eval_every=0, resume=True
    )
    with pytest.warns(UserWarning, match="checkpoint-4"), pytest.raises(FileNotFoundError, match="no complete checkpoint"):
        train_grpo.main(config)
    assert (tmp_path / "metrics.jsonl").read_text() == '{"round": 0}\n'


@pytest.mark.parametrize(("name", "key"), [("metrics.jsonl", "round"), ("answers.jsonl", "round"), ("eval.jsonl", "step"), ("eval_answers.jsonl", "step")])
def test_a_torn_last_log_line_is_dropped_with_a_warning(tmp_path: Path, name: str, key: str) -> None:
    lines = [json.dumps({key: k, "x": k}) for k in range(3)]
    (tmp_path / name).write_text("\n".join(lines) + '\n{"' + key + '": 3, "x"')  # killed mid-append
    with pytest.warns(UserWarning, match=rf"{name}:4: dropping a torn last line"):
        train_grpo._truncate_logs(tmp_path, rounds_done=2, step=1)
    assert (tmp_path / name).read_text() == "".join(line + "\n" for line in lines[:2])


@pytest.mark.parametrize(("name", "key"), [("metrics.jsonl", "round"), ("answers.jsonl", "round"), ("eval.jsonl", "step"), ("eval_answers.jsonl", "step")])
@pytest.mark.parametrize("bad", ['{"round": 1, "x"', "[1, 2]", '{"other": 1}'], ids=["torn", "not-an-object", "no-key"])
def test_an_unreadable_line_before_the_last_is_corruption(tmp_path: Path, name: str, key: str, bad: str) -> None:
    text = "\n".join([json.dumps({key: 0}), bad.replace("round", key), json.dumps({key: 2})]) + "\n"
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=rf"{name}:2: unreadable log line .*repair or delete line 2"):
        train_grpo._truncate_logs(tmp_path, rounds_done=5, step=5)
    assert (tmp_path / name).read_text() == text
