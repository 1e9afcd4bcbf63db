"""train_compare.py: the command lines it runs and the target check it prints (from per-task results)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchmarks.train_compare import (
    CompareConfig,
    _targets,
    collect,
    extra_args,
    in_child,
    main,
    runs,
    shared_start,
    start_evaluation,
    starting_policy,
    train_command,
)
from training.train_grpo import parse_config


def _result(heldout: dict[int, list[float]], ratio: float) -> dict:
    return {"effective_ratio": [ratio] * 12, "reward": [0.0] * 12, "heldout": heldout, "distinct_tasks": 10}


def test_every_run_starts_from_the_seeds_shared_policy_at_equal_rollouts():
    config = CompareConfig(steps=12, tasks_per_step=4, num_generations=4, eval_tasks=100)
    cmd = train_command(config, "plr", 1, Path("/m"), Path("/out/seed1/plr"))
    args = dict(zip(cmd[2::2], cmd[3::2], strict=True))
    assert args["--model"] == "/m" and args["--warm-start-steps"] == "0" and args["--scheduler"] == "plr"
    assert (args["--steps"], args["--eval-steps"], args["--tasks-per-step"], args["--num-generations"], args["--seed"]) == ("12", "0,4,12", "4", "4", "1")
    later = dict(zip(*[iter(train_command(config, "random", 1, Path("/m"), Path("/out/seed1/random"), first=False)[2:])] * 2, strict=True))
    assert later["--eval-steps"] == "4,12"  # step 0 is the seed's shared policy: evaluated once
    with_2t = train_command(CompareConfig(steps=12, eval_2t=True), "plr", 1, Path("/m"), Path("/r"))
    assert with_2t[with_2t.index("--eval-steps") + 1] == "0,4,8,12"


def test_train_args_reach_every_run_and_the_starting_policy_but_not_the_runs_warm_start():
    config = CompareConfig(steps=12, train_args="--learning-rate 1e-4 --temperature 0.9 --warm-start-steps 6")
    run = parse_config(train_command(config, "random", 2, Path("/m"), Path("/out/seed2/random"))[2:])
    assert (run.learning_rate, run.temperature, run.warm_start_steps, run.seed, run.steps) == (1e-4, 0.9, 0, 2, 12)
    start = parse_config(["--preset", config.preset, *extra_args(config)])
    assert start.warm_start_steps == 6 and start.learning_rate == 1e-4


def test_every_run_is_anchored_to_its_start_by_default_and_the_option_sets_it():
    default = parse_config(train_command(CompareConfig(steps=12), "random", 2, Path("/m"), Path("/r"))[2:])
    unanchored = parse_config(train_command(CompareConfig(steps=12, beta=0.0), "envsched", 2, Path("/m"), Path("/r"))[2:])
    assert (default.beta, unanchored.beta) == (0.04, 0.0)


def test_a_negative_kl_coefficient_stops_the_comparison_before_any_start_is_built(tmp_path):
    with pytest.raises(SystemExit, match=r"--beta -0.1: the KL coefficient must be a finite number >= 0"):
        main(CompareConfig(output_dir=str(tmp_path / "cmp"), beta=-0.1))
    assert not (tmp_path / "cmp" / "start-seed0").exists()


@pytest.mark.parametrize("flag", ["--seed 3", "--steps=20", "--scheduler_options repeat_discount=0", "--eval-tasks 10", "--beta 0.1"])
def test_train_args_may_not_set_what_the_comparison_sets(flag):
    with pytest.raises(SystemExit, match=r"is set by this script; use its own option"):
        extra_args(CompareConfig(train_args=flag))


@pytest.mark.parametrize(("flag", "message"), [("--learning-rte 1e-4", "has no flag --learning-rte"), ("--see 3", "has no flag --see"),
                                               ("--learning-rate fast", "not valid train_grpo.py flags")])  # fmt: skip
def test_train_args_unknown_to_train_grpo_stop_the_comparison(flag, message):
    with pytest.raises(SystemExit, match=message):
        extra_args(CompareConfig(train_args=flag))


def _run(path: Path, evals: dict[int, list[float]]) -> None:
    path.mkdir(parents=True)
    (path / "metrics.jsonl").write_text(json.dumps({"effective_ratio": 0.5, "reward": 0.1, "tasks": ["a"]}) + "\n")
    (path / "eval.jsonl").write_text("".join(json.dumps({"step": k, "successes": v}) + "\n" for k, v in evals.items()))
    (path / "scheduler_state.pt").write_bytes(b"finished")


def test_every_run_of_a_seed_shares_the_step_0_evaluation_one_finished_run_made(tmp_path):
    _run(tmp_path / "seed0" / "random", {0: [1.0, 0.0], 4: [1.0, 1.0]})
    _run(tmp_path / "seed0" / "envsched", {4: [0.0, 0.0]})
    results = collect(CompareConfig(schedulers="envsched,random", seeds="0"), tmp_path)
    assert results["envsched"][0]["heldout"] == {4: [0.0, 0.0], 0: [1.0, 0.0]}
    (tmp_path / "seed0" / "random" / "scheduler_state.pt").unlink()  # an unfinished run's evaluations are not used
    assert start_evaluation(tmp_path, 0) is None
    with pytest.raises(SystemExit, match=r"no run of .*seed0 has a step-0 evaluation"):
        collect(CompareConfig(schedulers="envsched,random", seeds="0"), tmp_path)


def test_envsched_variants_run_with_their_options_under_their_own_label():
    config = CompareConfig(schedulers="envsched,random", variants="rd0:repeat_discount=0; t1:transfer_weight=1,repeat_discount=3")
    assert runs(config) == {"envsched": ("envsched", ""), "random": ("random", ""), "envsched-rd0": ("envsched", "repeat_discount=0"),
                            "envsched-t1": ("envsched", "transfer_weight=1,repeat_discount=3")}  # fmt: skip
    cmd = train_command(config, "envsched", 0, Path("/m"), Path("/out/seed0/envsched-rd0"), options="repeat_discount=0")
    assert cmd[cmd.index("--scheduler-options") + 1] == "repeat_discount=0" and "--scheduler-options" not in train_command(config, "random", 0, Path("/m"), Path("/r"))
    with pytest.raises(SystemExit, match="LABEL:key=value"):
        runs(CompareConfig(variants="repeat_discount=0"))
    with pytest.raises(SystemExit, match="'x' is not a number"):
        runs(CompareConfig(variants="bad:repeat_discount=x"))


def test_variants_may_run_alone_to_join_an_archived_seed_but_something_must_run():
    assert runs(CompareConfig(schedulers="", variants="cap2:max_visits=2")) == {"envsched-cap2": ("envsched", "max_visits=2")}
    with pytest.raises(SystemExit, match="nothing to run"):
        runs(CompareConfig(schedulers=" , ", variants=""))


def test_target_holds_only_when_envsched_at_t_matches_random_at_3t_on_every_seed():
    tasks = 50
    good = {"envsched": {0: _result({4: [1.0] * 30 + [0.0] * 20}, 0.6)}, "random": {0: _result({12: [1.0] * 25 + [0.0] * 25}, 0.3)}}
    target = _targets(good, [0], 4)
    assert target["envsched_at_T_ge_random_at_3T_every_seed"] and target["effective_ratio_envsched_gt_random_every_seed"]
    assert target["per_seed"][0]["gain"] == 5 / tasks
    good["envsched"][1] = _result({4: [0.0] * tasks}, 0.2)
    good["random"][1] = _result({12: [1.0] * 10 + [0.0] * 40}, 0.3)
    target = _targets(good, [0, 1], 4)
    assert not target["envsched_at_T_ge_random_at_3T_every_seed"] and not target["effective_ratio_envsched_gt_random_every_seed"]


def test_a_start_from_another_folder_is_copied_once_and_must_match_after(tmp_path):
    source, out = tmp_path / "compare", tmp_path / "control"
    (source / "start-seed2" / "warm-start").mkdir(parents=True)
    (source / "start-seed2" / "warm-start" / "warm_start.json").write_text('{"steps": 64}')
    copied = shared_start(source, 2, out)
    assert (copied / "warm-start" / "warm_start.json").read_text() == '{"steps": 64}'
    assert shared_start(source, 2, out) == copied  # a rerun of the control finds the same copy
    with pytest.raises(SystemExit, match=r"--start-from .*compare: .*start-seed3 is missing; pass a train_compare.py --output-dir that ran seed 3"):
        shared_start(source, 3, out)
    (copied / "warm-start" / "warm_start.json").write_text('{"steps": 16}')
    with pytest.raises(SystemExit, match=r"control/start-seed2 exists and differs from .*compare/start-seed2; remove it"):
        shared_start(source, 2, out)
    (copied / "warm-start" / "warm_start.json").unlink()
    with pytest.raises(SystemExit, match="differs"):  # a file missing on one side
        shared_start(source, 2, out)


def test_the_starting_policy_is_built_in_a_child_process():
    assert in_child(os.getpid) != os.getpid()


@pytest.mark.slow
def test_the_starting_policy_of_the_micro_preset_is_a_from_pretrained_folder(tmp_path):
    path = starting_policy(CompareConfig(preset="tiny-cpu"), 0, tmp_path)
    assert path == (tmp_path / "start-seed0" / "micro-model").resolve() and (path / "config.json").exists()
    assert starting_policy(CompareConfig(preset="tiny-cpu"), 0, tmp_path) == path  # built once
