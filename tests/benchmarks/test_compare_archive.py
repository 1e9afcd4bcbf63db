"""compare_archive.py: a finished comparison's logs kept, and read back by the report like live runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.compare_archive import archive
from benchmarks.compare_report import load_folders, load_runs, report
from tests.benchmarks.test_compare_report import _row, _write_run


def _comparison(folder: Path, seeds: dict[int, tuple[list[int], list[int]]], t: int = 2, train_args: str | None = None) -> None:
    """A finished two-scheduler comparison: per seed, envsched's and random's successes at 3T."""
    for seed, (env_after, rnd_after) in seeds.items():
        _write_run(folder, seed, "envsched", [_row(["ToolWorld/gym-1/000"], [0.5])] * 3 * t, {0: [0, 0, 0, 0], 3 * t: env_after})
        _write_run(folder, seed, "random", [_row(["ToolWorld/shop-1/000"], [0.0])] * 3 * t, {3 * t: rnd_after})
        (folder / f"seed{seed}" / "envsched" / "adapter_model.safetensors").write_bytes(b"weights")
    config = {"seeds": ",".join(map(str, seeds))} | ({} if train_args is None else {"train_args": train_args})
    (folder / "summary.json").write_text(json.dumps({"config": config, "T": t, "results": {}}))


def test_an_archive_keeps_the_logs_only_and_reads_back_like_the_live_runs(tmp_path):
    live, kept = tmp_path / "runs", tmp_path / "kept"
    _comparison(live, {0: ([1, 1, 0, 0], [0, 0, 0, 0])})
    (live / "seed0" / "random" / "answers.jsonl").write_text('{"round": 0, "answer": "BKG-007: 21", "reward": 1.0}\n')
    (live / "seed0" / "random" / "eval_answers.jsonl").write_text('{"step": 0, "answer": "suite", "actions": ["suite"], "seed": 0}\n')
    copied = archive(live, kept)
    assert sorted(p.relative_to(kept).as_posix() for p in copied) == ["seed0/envsched", "seed0/random"]
    assert sorted(p.name for p in (kept / "seed0" / "envsched").iterdir()) == ["archived.json", "eval.jsonl", "metrics.jsonl"]
    for name in ("answers.jsonl", "eval_answers.jsonl"):  # kept to read and re-score later (training/rescore.py)
        assert (kept / "seed0" / "random" / name).read_text() == (live / "seed0" / "random" / name).read_text()
    stamp = json.loads((kept / "seed0" / "envsched" / "archived.json").read_text())
    assert stamp["source"] == str(live) and stamp["train_compare_config"] == {"seeds": "0"}
    before, after = load_runs(live), load_runs(kept)
    assert [(r.seed, r.label, r.heldout, r.rounds) for r in before] == [(r.seed, r.label, r.heldout, r.rounds) for r in after]
    assert report(kept).split("\n", 1)[1] == report(live).split("\n", 1)[1]  # the same tables; only the folder name differs


def test_an_archive_refuses_to_overwrite_a_run_or_mix_windows(tmp_path):
    live, kept = tmp_path / "runs", tmp_path / "kept"
    _comparison(live, {0: ([1, 1, 0, 0], [0, 0, 0, 0])})
    archive(live, kept)
    with pytest.raises(SystemExit, match=r"every finished run of .*runs is in .*kept already; nothing to archive"):
        archive(live, kept)
    (live / "seed0" / "envsched" / "eval.jsonl").write_text("")
    with pytest.raises(SystemExit, match=r"seed0/envsched exists already with other logs than .*; remove it first"):
        archive(live, kept)
    other = tmp_path / "runs3"
    _comparison(other, {1: ([1, 1, 1, 0], [1, 0, 0, 0])}, t=3)
    with pytest.raises(SystemExit, match=r"has T = 2, .* has T = 3: archive into another folder"):
        archive(other, kept)
    assert not (kept / "seed1").exists()  # refused before anything was copied
    unfinished = tmp_path / "unfinished"
    _write_run(unfinished, 0, "envsched", [_row(["x/e-1/0"], [0.5])], {0: [0, 0, 0, 0]}, finished=False)
    with pytest.raises(SystemExit, match="has no finished run"):
        archive(unfinished, tmp_path / "nowhere")
    (live / "summary.json").unlink()
    with pytest.raises(SystemExit, match=r"summary\.json is missing"):
        archive(live, tmp_path / "nowhere")


def test_a_run_added_to_an_archived_folder_is_archived_alone(tmp_path):
    live, kept = tmp_path / "runs", tmp_path / "kept"
    _comparison(live, {0: ([1, 1, 0, 0], [0, 0, 0, 0])})
    archive(live, kept)
    first = (kept / "seed0" / "envsched" / "archived.json").read_text()
    _write_run(live, 0, "envsched-cap1", [_row(["ToolWorld/gym-1/001"], [0.25])] * 6, {6: [1, 0, 0, 0]})
    copied = archive(live, kept)
    assert [p.relative_to(kept).as_posix() for p in copied] == ["seed0/envsched-cap1"]
    assert (kept / "seed0" / "envsched" / "archived.json").read_text() == first  # the earlier runs untouched
    assert sorted(r.label for r in load_runs(kept)) == ["envsched", "envsched-cap1", "random"]


def test_the_report_pools_the_seeds_of_a_live_folder_and_an_archive(tmp_path):
    old, new, kept = tmp_path / "old", tmp_path / "new", tmp_path / "kept"
    _comparison(old, {0: ([1, 1, 0, 0], [0, 0, 0, 0])})
    _comparison(new, {1: ([1, 1, 1, 1], [1, 1, 1, 0])})
    archive(old, kept)
    text = report([new, kept], "random")
    assert "seeds [0, 1], window T = 2 steps" in text
    assert "| envsched | pooled 0,1 | 0.375 " in text  # (2 + 1) / 8 tasks, as if both seeds were in one folder
    with pytest.raises(SystemExit, match=r"seed 0's envsched run is in both .*old and .*kept; pass one of them"):
        load_folders([old, kept])
    odd = tmp_path / "odd"
    _comparison(odd, {2: ([1, 0, 0, 0], [0, 0, 0, 0])}, t=3)
    with pytest.raises(SystemExit, match=r"the folders have different T \(2 in .*, 3 in .*\); report them separately"):
        report([kept, odd], "random")


def test_a_control_from_the_same_start_in_another_folder_is_labelled_by_its_flags(tmp_path):
    runs, control = tmp_path / "runs", tmp_path / "control"
    _comparison(runs, {0: ([1, 1, 0, 0], [0, 0, 0, 0])}, train_args="")
    _write_run(control, 0, "random", [_row(["ToolWorld/shop-1/000"], [0.5])] * 6, {0: [0, 0, 0, 0], 6: [1, 1, 1, 0]})
    (control / "summary.json").write_text(json.dumps({"config": {"train_args": "--pg-weight 0 --sft-replay 0.25"}, "T": 2}))
    archive(control, tmp_path / "kept")  # the flags travel with the archive
    for folder in (control, tmp_path / "kept"):
        labels = [log.label for log in load_folders([runs, folder])]
        assert labels == ["envsched", "random", "random [--pg-weight 0 --sft-replay 0.25]"]
    text = report([runs, control], "random [--pg-weight 0 --sft-replay 0.25]")
    assert "| envsched | 0 | -0.250 " in text  # 2 of 4 against the control's 3 of 4 at step 6, paired
    assert "| random | 0 | -0.750 " in text


def test_a_kl_anchor_reads_the_same_from_the_option_and_from_the_train_args(tmp_path):
    runs, option, flags = tmp_path / "runs", tmp_path / "option", tmp_path / "flags"
    _comparison(runs, {0: ([1, 1, 0, 0], [0, 0, 0, 0])}, train_args="--warm-start-steps 64")  # before session 48: no beta key, unanchored
    for folder, config in ((option, {"train_args": "--warm-start-steps 64", "beta": 0.04}), (flags, {"train_args": "--warm-start-steps 64 --beta 0.04"})):
        _write_run(folder, 0, "envsched", [_row(["ToolWorld/shop-1/000"], [0.5])] * 6, {0: [0, 0, 0, 0], 6: [1, 1, 1, 0]})
        (folder / "summary.json").write_text(json.dumps({"config": config, "T": 2}))
        labels = [log.label for log in load_folders([runs, folder])]
        assert labels == ["envsched [--warm-start-steps 64 --beta 0.04]", "envsched [--warm-start-steps 64]", "random [--warm-start-steps 64]"]
    unanchored = tmp_path / "unanchored"
    _comparison(unanchored, {0: ([1, 1, 0, 0], [0, 0, 0, 0])}, train_args="--warm-start-steps 64")
    summary = json.loads((unanchored / "summary.json").read_text())
    (unanchored / "summary.json").write_text(json.dumps({**summary, "config": {**summary["config"], "beta": 0.0}}))
    with pytest.raises(SystemExit, match=r"seed 0's envsched .*run is in both"):  # --beta 0 is the unanchored run of old, not a new label
        load_folders([runs, unanchored])


def test_folders_of_one_seed_must_share_the_start_and_say_their_flags(tmp_path):
    runs, other = tmp_path / "runs", tmp_path / "other"
    _comparison(runs, {0: ([1, 1, 0, 0], [0, 0, 0, 0])}, train_args="")
    _write_run(other, 0, "plr", [_row(["x/e-1/0"], [0.5])], {0: [1, 0, 0, 0], 2: [1, 1, 0, 0]})
    (other / "summary.json").write_text(json.dumps({"config": {"train_args": ""}, "T": 2}))
    with pytest.raises(SystemExit, match=r"seed 0 starts from another policy in .*other than in .*runs"):
        load_folders([runs, other])
    unknown = tmp_path / "unknown"
    _write_run(unknown, 0, "plr", [_row(["x/e-1/0"], [0.5])], {0: [0, 0, 0, 0], 2: [1, 1, 0, 0]})
    also = tmp_path / "also"
    _comparison(also, {1: ([1, 0, 0, 0], [0, 0, 0, 0])})  # its summary.json has no train_args either
    assert [log.label for log in load_folders([unknown, also])] == ["plr", "envsched", "random"]  # none known: nothing to tell apart
    with pytest.raises(SystemExit, match=r"unknown.*seed0/plr: its --train-args are unknown \(no summary.json\)"):
        load_folders([runs, unknown])
