"""compare_report.py: the tables it derives from a comparison folder's logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.compare_report import (
    domain_of,
    domain_split,
    first_visits_by_window,
    kind_table,
    load_runs,
    replays,
    report,
    signal_before,
    task_kinds,
    trained_domains,
    visit_rewards,
)

HELD = ["ToolWorld/gym-5/000", "ToolWorld/gym-5/001", "ToolWorld/shop-5/000", "ToolWorld/shop-5/001"]


def _row(tasks: list[str], means: list[float], variances: list[float] | None = None) -> dict:
    return {"tasks": tasks, "group_mean": means, "group_variance": variances or [0.25] * len(tasks), "reward": sum(means) / len(means)}


def _write_run(
    folder: Path, seed: int, label: str, rounds: list[dict], evals: dict[int, list[float]], finished: bool = True, held: list[str] = HELD
) -> None:
    run = folder / f"seed{seed}" / label
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rounds))
    (run / "eval.jsonl").write_text("".join(json.dumps({"step": s, "task_ids": held, "successes": v}) + "\n" for s, v in evals.items()))
    if finished:
        (run / "scheduler_state.pt").write_bytes(b"")


def test_rewards_are_binned_by_the_visit_they_were_of_their_task():
    rounds = [_row(["a", "b"], [0.0, 0.5]), _row(["a", "c"], [0.25, 1.0]), _row(["a", "a"], [0.5, 0.75]), _row(["a"], [1.0])]
    assert visit_rewards(rounds) == [[0.0, 0.5, 1.0], [0.25], [0.5], [0.75, 1.0]]
    assert first_visits_by_window(rounds, 2) == [[0.0, 0.5, 1.0], []]


def test_a_domain_is_the_environment_without_its_instance_number_and_needs_varied_rewards():
    assert domain_of("ToolWorld/gym-12") == "ToolWorld/gym" and domain_of("BFCL/simple") == "BFCL/simple"
    rounds = [_row(["ToolWorld/gym-1/003", "ToolWorld/deals-2/000"], [0.5, 0.0], [0.25, 0.0])]
    assert trained_domains(rounds) == {"ToolWorld/gym"}


def test_held_out_gain_is_split_by_trained_domain(tmp_path):
    _write_run(tmp_path, 0, "envsched", [_row(["ToolWorld/gym-1/000"], [0.5])], {0: [0, 0, 0, 1], 4: [1, 1, 0, 0]})
    log = load_runs(tmp_path)[0]
    (n_trained, trained), (n_other, other) = domain_split(log, 4)
    assert (n_trained, n_other) == (2, 2)
    assert trained.mean == 1.0 and other.mean == -0.5


def test_step_0_comes_from_the_run_that_evaluated_the_seeds_starting_policy(tmp_path):
    _write_run(tmp_path, 2, "envsched", [_row(["x/e-1/0"], [0.5])], {0: [0, 0, 1, 1], 4: [1, 0, 1, 1]})
    _write_run(tmp_path, 2, "random", [_row(["x/e-1/1"], [0.5])], {4: [0, 0, 1, 0]})
    _write_run(tmp_path, 2, "plr", [_row(["x/e-1/1"], [0.5])], {}, finished=False)
    logs = {log.label: log for log in load_runs(tmp_path)}
    assert set(logs) == {"envsched", "random"}  # plr has not finished
    assert logs["random"].heldout == {0: [0, 0, 1, 1], 4: [0, 0, 1, 0]}


def test_runs_on_other_held_out_tasks_or_without_a_start_are_refused(tmp_path):
    _write_run(tmp_path, 0, "envsched", [_row(["x/e-1/0"], [0.5])], {4: [0, 1, 0, 1]})
    with pytest.raises(SystemExit, match=r"no run of .*seed0 has a step-0 evaluation"):
        load_runs(tmp_path)
    other = tmp_path / "other"
    _write_run(other, 1, "envsched", [_row(["x/e-1/0"], [0.5])], {0: [0, 0, 0, 0]})
    _write_run(other, 1, "random", [_row(["x/e-1/0"], [0.5])], {4: [1, 1, 1, 1]}, held=HELD[::-1])
    with pytest.raises(SystemExit, match=r"seed1/random/eval.jsonl step 4 is on other held-out tasks"):
        load_runs(other)
    with pytest.raises(SystemExit, match="has no finished run"):
        load_runs(tmp_path / "empty")


def test_the_report_pools_seeds_and_refuses_an_unknown_reference(tmp_path):
    for seed, (env_after, rnd_after) in {0: ([1, 1, 0, 0], [0, 0, 0, 0]), 1: ([1, 1, 1, 1], [1, 1, 1, 0])}.items():
        _write_run(tmp_path, seed, "envsched", [_row(["ToolWorld/gym-1/000"], [0.5])] * 4, {0: [0, 0, 0, 0], 4: env_after})
        _write_run(tmp_path, seed, "random", [_row(["ToolWorld/shop-1/000"], [0.0])] * 4, {4: rnd_after})
    text = report(tmp_path, "random", window=2)
    pooled = next(line for line in text.splitlines() if "pooled 0,1" in line)
    assert pooled.startswith("| envsched | pooled 0,1 | 0.375 ")  # (2 + 1) / 8 tasks
    across = next(line for line in text.splitlines() if "pooled 0,1, seeds resampled" in line)
    assert across.startswith("| envsched | pooled 0,1, seeds resampled | 0.375 ")
    width = [float(b) - float(a) for a, b in (re.search(r"\[(\S+), (\S+)\]", line).groups() for line in (pooled, across))]
    assert width[1] >= width[0]  # resampling the seeds too never narrows it here (seed gains 0.5 and 0.25)
    gains = [line for line in text.splitlines() if "pooled, seeds resampled" in line]  # each scheduler over its starts
    assert [line.split(" [")[0] for line in gains] == ["| envsched | seeds 0,1 pooled, seeds resampled | 0.750", "| random | seeds 0,1 pooled, seeds resampled | 0.375"]
    assert "| envsched | 0 | 0.50 | 0.50 | 1 | 4 |" in text  # rollout reward per 2-step window, distinct tasks, groups
    with pytest.raises(SystemExit, match=r"--reference 'dump' is not a finished run .* use one of \['envsched', 'random'\]"):
        report(tmp_path, "dump", window=2)
    with pytest.raises(SystemExit, match=r"summary\.json is missing: pass --window"):
        report(tmp_path)


def test_the_target_table_pairs_each_scheduler_at_t_with_the_reference_at_3t(tmp_path):
    env_at = {0: {2: [1, 1, 0, 0], 6: [1, 1, 1, 1]}, 1: {2: [1, 0, 0, 0], 6: [0, 0, 0, 0]}}
    rnd_at = {0: {2: [0, 0, 0, 0], 6: [0, 1, 1, 1]}, 1: {2: [1, 1, 1, 1], 6: [1, 0, 0, 0]}}
    for seed in env_at:
        _write_run(tmp_path, seed, "envsched", [_row(["x/e-1/0"], [0.5])] * 6, {0: [0, 0, 0, 0], **env_at[seed]})
        _write_run(tmp_path, seed, "random", [_row(["x/e-1/1"], [0.5])] * 6, rnd_at[seed])
    text = report(tmp_path, "random", window=2)
    assert text.count("| at step 2 minus random at step 6 |") == 1
    assert "| envsched | 0 | -0.250 " in text  # envsched at 2 (2 of 4) minus random at 6 (3 of 4)
    assert "| envsched | 1 | 0.000 " in text  # 1 of 4 against 1 of 4
    assert "| envsched | pooled 0,1 | -0.125 " in text
    assert "| envsched | 0 | 2 updates, 2 groups, 2.0 | 6 updates, 6 groups, 6.0 |" in text  # the signal each evaluation was bought with
    assert "at step 3 minus" not in report(tmp_path, "random", window=3)  # no evaluation at 3T = 9: no table
    assert "at step 4 minus" not in text  # no evaluation at 2T = 4: no rollout table


def test_the_rollout_target_pairs_each_scheduler_at_2t_with_the_reference_at_3t(tmp_path):
    env_at = {0: {2: [0, 0, 0, 0], 4: [1, 1, 1, 0], 6: [0, 0, 0, 0]}, 1: {2: [0, 0, 0, 0], 4: [1, 0, 0, 0], 6: [1, 1, 1, 1]}}
    rnd_at = {0: {2: [1, 1, 1, 1], 4: [0, 0, 0, 0], 6: [1, 1, 0, 0]}, 1: {2: [1, 1, 1, 1], 4: [0, 0, 0, 0], 6: [0, 0, 0, 0]}}
    for seed in env_at:
        _write_run(tmp_path, seed, "envsched", [_row(["x/e-1/0"], [0.5])] * 6, {0: [0, 0, 0, 0], **env_at[seed]})
        _write_run(tmp_path, seed, "random", [_row(["x/e-1/1"], [0.5])] * 6, {0: [0, 0, 0, 0], **rnd_at[seed]})
    text = report(tmp_path, "random", window=2)
    rollout = text.split("The rollout target read at 2T")[1].split("Training signal")[0]
    assert "| at step 4 minus random at step 6 |" in rollout
    assert "| envsched | 0 | 0.250 " in rollout  # envsched at 4 (3 of 4) minus random at 6 (2 of 4), not at 2 or 6
    assert "| envsched | 1 | 0.250 " in rollout  # 1 of 4 against 0 of 4
    assert "| envsched | pooled 0,1 | 0.250 " in rollout


def test_signal_counts_varied_groups_and_their_variance_in_units_of_an_even_split():
    rounds = [_row(["a", "b"], [0.5, 1.0], [0.25, 0.0]), _row(["a", "c"], [0.25, 0.75], [0.1875, 0.1875]), _row(["a"], [0.5], [0.25])]
    assert signal_before(rounds, 1) == (1, 1, 1.0)
    assert signal_before(rounds, 2) == (2, 3, 2.5)
    assert signal_before(rounds, 3) == (3, 4, 3.5)
    flat = [_row(["a"], [0.0], [0.0]), *rounds]  # a step whose every group had equal rewards: no update
    assert signal_before(flat, 2) == (1, 1, 1.0)
    assert signal_before(flat, 2, replay=True) == (2, 1, 1.0)  # the replay's gradient steps the optimizer every round


def test_a_replay_is_read_from_the_train_args():
    assert replays("--sft-replay 0.25") and replays("--pg-weight 0 --sft-replay=0.5")
    assert not replays("--sft-replay 0") and not replays("--warm-start-steps 10") and not replays(None)


def test_updates_are_replayed_from_the_varied_groups_when_the_gate_waits_for_several():
    """With groups_per_update 3 the optimizer steps once 3 varied groups have accumulated: at the
    2nd step (1 + 2) and the 5th (1 + 0 + 2), not at the steps between."""
    varied = [[0.25, 0.0], [0.25, 0.25], [0.0, 0.0], [0.25, 0.0], [0.25, 0.25]]
    rounds = [{**_row(["a", "b"], [0.5, 0.5], v), "groups_per_update": 3} for v in varied]
    assert [signal_before(rounds, k)[0] for k in range(1, 6)] == [0, 1, 1, 1, 2]
    assert signal_before(rounds, 5)[1] == 6


def _toolworld_ids(split: str, writes: bool, count: int, calls: bool = True) -> list[str]:
    """ToolWorld tasks by their generator's own ``n_writes`` and whether their gold makes a call."""
    from envsched_gym.rl.tasks import select_tasks

    found = [n.task_id for n in select_tasks("ToolWorld", split, 1)
             if bool(n.task.metadata["n_writes"]) == writes and any(t.tool_calls for t in n.task.solution) == calls]  # fmt: skip
    return found[:count]


def test_a_task_is_a_write_when_its_gold_changes_the_state_and_undeclared_outside_a_family():
    reads, writes = _toolworld_ids("heldout", False, 2), _toolworld_ids("heldout", True, 2)
    silent = _toolworld_ids("heldout", False, 1, calls=False)
    kinds = task_kinds({*reads, *writes, *silent, "x/e-1/0", "ToolWorld/nowhere-1/000"})
    assert [kinds[t] for t in reads] == ["reads", "reads"] and [kinds[t] for t in writes] == ["writes", "writes"]
    assert kinds[silent[0]] == "no_call"
    assert kinds["x/e-1/0"] == kinds["ToolWorld/nowhere-1/000"] == "undeclared"


def test_held_out_gain_and_groups_are_split_by_task_kind(tmp_path):
    held = _toolworld_ids("heldout", False, 2) + _toolworld_ids("heldout", True, 2)
    read, write = _toolworld_ids("train", False, 1)[0], _toolworld_ids("train", True, 1)[0]
    rounds = [_row([read, read, write], [0.5, 0.25, 0.0])]
    _write_run(tmp_path, 0, "envsched", rounds, {0: [0, 0, 1, 1], 4: [1, 1, 0, 0]}, held=held)
    row = kind_table(load_runs(tmp_path))[2]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["envsched", "0", "4"]
    assert cells[3].startswith("-1.000 ") and cells[3].endswith("(2)")  # both writes lost
    assert cells[4].startswith("1.000 ") and cells[4].endswith("(2)")  # both reads learned
    assert cells[5:] == ["1", "2"]  # groups on writes, on reads

