"""Crash-safe checkpoints: curriculum.pt is written atomically and checkpoint-N is marked complete last."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from envsched_gym.curriculum import make_scheduler
from envsched_gym.rl import grpo
from envsched_gym.rl.grpo import COMPLETE_MARKER, CURRICULUM_FILE, CurriculumCheckpoint, incomplete_reason, restore_curriculum
from envsched_gym.rl.sampler import CurriculumSampler
from envsched_gym.suite import Suite


def _sampler(suite: Suite, rounds_fed: int = 2) -> CurriculumSampler:
    sampler = CurriculumSampler(make_scheduler("envsched", suite, seed=0), 2, 2, repeat_count=1, num_rounds=6)
    for r in range(rounds_fed):
        sampler.feedback(r, [(t, [1.0, 0.0]) for t in sampler.bind(r)])
    return sampler


def _trainer_files(run: Path, step: int) -> Path:
    """What TRL has written into checkpoint-N when it calls on_save."""
    folder = run / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    (folder / "adapter_model.safetensors").write_bytes(b"weights")
    return folder


def _save(suite: Suite, run: Path, step: int, sampler: CurriculumSampler | None = None) -> CurriculumSampler:
    sampler = sampler or _sampler(suite)
    args, state = SimpleNamespace(output_dir=str(run)), SimpleNamespace(global_step=step, is_world_process_zero=True)
    CurriculumCheckpoint(sampler, SimpleNamespace(round=3)).on_save(args, state, SimpleNamespace())
    return sampler


def test_on_save_writes_the_curriculum_then_marks_the_folder_complete(toy_suite: Suite, tmp_path: Path) -> None:
    folder = _trainer_files(tmp_path, 4)
    sampler = _save(toy_suite, tmp_path, 4)
    assert incomplete_reason(folder) is None
    marker = json.loads((folder / COMPLETE_MARKER).read_text())
    assert marker == {"step": 4, "files": sorted(["adapter_model.safetensors", CURRICULUM_FILE, "trainer_state.json"])}
    assert sorted(p.name for p in folder.iterdir()) == sorted([*marker["files"], COMPLETE_MARKER])  # no temporary file left
    fresh, rollouts = _sampler(toy_suite, rounds_fed=0), SimpleNamespace(round=0)
    assert restore_curriculum(folder, fresh, rollouts) == 3 and fresh.decisions == sampler.decisions


def test_a_crash_before_the_rename_keeps_the_old_file_and_leaves_the_folder_unmarked(
    toy_suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _trainer_files(tmp_path, 4)
    (folder / CURRICULUM_FILE).write_bytes(b"previous")

    def killed(*args: object) -> None:
        raise KeyboardInterrupt  # stands in for the SIGKILL between writing the temporary file and renaming it

    monkeypatch.setattr(grpo.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        _save(toy_suite, tmp_path, 4)
    assert (folder / CURRICULUM_FILE).read_bytes() == b"previous"
    assert not (folder / COMPLETE_MARKER).exists()
    assert COMPLETE_MARKER in incomplete_reason(folder)


def test_a_folder_torn_mid_save_is_incomplete(tmp_path: Path) -> None:
    folder = _trainer_files(tmp_path, 4)
    (folder / f".{CURRICULUM_FILE}.123.tmp").write_bytes(b"half a pick")  # what a SIGKILL mid-write leaves
    assert "save was interrupted" in incomplete_reason(folder)
    (tmp_path / "empty" / "checkpoint-6").mkdir(parents=True)
    assert "save was interrupted" in incomplete_reason(tmp_path / "empty" / "checkpoint-6")


@pytest.mark.parametrize(
    ("marker", "reason"),
    [
        ({"step": 4, "files": ["trainer_state.json", "optimizer.pt"]}, "missing: ['optimizer.pt']"),
        ({"step": 2, "files": []}, "written for step 2"),
        ("{torn", "unreadable"),
    ],
)
def test_a_marker_that_does_not_match_the_folder_is_incomplete(tmp_path: Path, marker: object, reason: str) -> None:
    folder = _trainer_files(tmp_path, 4)
    (folder / COMPLETE_MARKER).write_text(marker if isinstance(marker, str) else json.dumps(marker))
    assert reason in incomplete_reason(folder)


def test_a_stale_marker_is_removed_before_the_trainer_writes_the_folder_again(toy_suite: Suite, tmp_path: Path) -> None:
    folder = _trainer_files(tmp_path, 4)
    _save(toy_suite, tmp_path, 4)
    callback = CurriculumCheckpoint(_sampler(toy_suite), SimpleNamespace(round=3))
    state = SimpleNamespace(global_step=4, is_world_process_zero=True)
    callback.on_step_end(SimpleNamespace(output_dir=str(tmp_path)), state, SimpleNamespace(should_save=False))
    assert incomplete_reason(folder) is None
    callback.on_step_end(SimpleNamespace(output_dir=str(tmp_path)), state, SimpleNamespace(should_save=True))
    assert "save was interrupted" in incomplete_reason(folder)


def test_restore_refuses_a_damaged_curriculum_file_naming_it(toy_suite: Suite, tmp_path: Path) -> None:
    folder = _trainer_files(tmp_path, 4)
    path = folder / CURRICULUM_FILE
    path.write_bytes(b"\x80\x02torn")
    with pytest.raises(ValueError, match=rf"{path} cannot be read.*delete {folder}"):
        restore_curriculum(folder, _sampler(toy_suite, 0), SimpleNamespace(round=0))
    torch.save({"sampler": {}}, path)
    with pytest.raises(ValueError, match=r"must hold \{'sampler': dict, 'round': int >= 0\}, found keys \['sampler'\]"):
        restore_curriculum(folder, _sampler(toy_suite, 0), SimpleNamespace(round=0))


def test_restore_refuses_a_scheduler_state_cut_in_half_naming_the_key(toy_suite: Suite, tmp_path: Path) -> None:
    folder = _trainer_files(tmp_path, 4)
    _save(toy_suite, tmp_path, 4)
    saved = torch.load(folder / CURRICULUM_FILE, weights_only=False)
    stats = saved["sampler"]["scheduler"]["predictor"]["stats"]
    saved["sampler"]["scheduler"]["predictor"]["stats"] = stats[: len(stats) // 2]
    torch.save(saved, folder / CURRICULUM_FILE)
    with pytest.raises(ValueError, match=r"'predictor.stats' has shape \(\d+, 4\), expected"):
        restore_curriculum(folder, _sampler(toy_suite, 0), SimpleNamespace(round=0))
