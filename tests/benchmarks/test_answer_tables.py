"""answer_tables.py: tables 8 and 9 of compare_report.py, read from the runs' answer logs."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.answer_tables import argument_counter, gold_arguments
from benchmarks.compare_report import report
from tests.benchmarks.test_compare_report import _row, _write_run

GOOD = '<tool_call>\n{"name": "open_gym", "arguments": {}}\n</tool_call>'
BAD = "<tool_response>\n<tool_call>\n<tool_call>\n<tool_call>"


def _call(name: str, arguments: dict) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def _episode(key: str, at: int, actions: list[str], success: bool, task: str = "ToolWorld/gym-5/000") -> dict:
    return {key: at, "task_id": task, "actions": actions, "success": success, "reward": float(success)}


def _write_answers(run: Path, name: str, rows: list[dict]) -> None:
    (run / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_malformed_turns_are_counted_per_evaluation_and_per_window_with_step_0_from_the_seeds_start(tmp_path):
    _write_run(tmp_path, 0, "envsched", [_row(["ToolWorld/gym-1/000"], [0.5])] * 4, {0: [1, 1, 1, 0], 4: [1, 0, 0, 0]})
    _write_run(tmp_path, 0, "random", [_row(["ToolWorld/gym-1/000"], [0.5])] * 4, {4: [1, 1, 1, 1]})
    _write_run(tmp_path, 0, "plr", [_row(["ToolWorld/gym-1/000"], [0.5])] * 4, {4: [1, 1, 1, 1]})
    env, rnd = tmp_path / "seed0" / "envsched", tmp_path / "seed0" / "random"
    _write_answers(env, "eval_answers.jsonl", [_episode("step", 0, [GOOD, "Done."], True)] * 3 + [_episode("step", 0, [GOOD, BAD], False)]
                   + [_episode("step", 4, [GOOD, BAD], False)] * 2 + [_episode("step", 4, [BAD + "\n" + GOOD, "Done."], True)] + [_episode("step", 4, ["No."], False)])  # fmt: skip
    _write_answers(env, "answers.jsonl", [_episode("round", r, [GOOD, BAD if r >= 2 else "Done."], False) for r in range(4) for _ in range(2)])
    _write_answers(rnd, "eval_answers.jsonl", [_episode("step", 4, [GOOD, "Done."], True)] * 4)
    _write_answers(rnd, "answers.jsonl", [_episode("round", r, [BAD], False) for r in (1, 3)])
    old = tmp_path / "seed0" / "plr"  # logged as in sessions 40-41: no actions
    _write_answers(old, "eval_answers.jsonl", [{"step": 4, "task_id": "ToolWorld/gym-5/000", "answer": "x", "success": False}])
    _write_answers(old, "answers.jsonl", [{"round": 0, "task_id": "ToolWorld/gym-1/000", "answer": "x", "success": False}])
    lines = report(tmp_path, "random", window=2).split("Malformed turns")[1].split("Argument drift")[0].splitlines()
    assert "| envsched | 0 | 1 (1) of 4 | 3 (2) of 4 | 0, 4 |" in lines
    assert "| random | 0 | 1 (1) of 4 | 0 (0) of 4 | 1, 1 |" in lines  # step 0 is the start's, evaluated by envsched
    assert "| plr | 0 | no answer logs | no answer logs | no answer logs |" in lines
    arguments = report(tmp_path, "random", window=2).split("Argument drift")[1].splitlines()
    assert "| plr | 0 | no answer logs | no answer logs |" in arguments


def test_gold_arguments_are_read_from_the_registered_familys_gold_calls():
    gold = gold_arguments({"ToolWorld/gym-5/001", "ToolWorld/shop-5/000", "Elsewhere/e-1/000"})
    assert gold == {"ToolWorld/gym-5/001": {"book_classes": (frozenset({"member_id", "classes"}),) * 2},
                    "ToolWorld/shop-5/000": {"add_items": (frozenset({"order_id", "count"}),) * 2}}  # fmt: skip


def test_an_argument_beyond_the_gold_or_one_it_lacks_is_counted_even_before_a_malformed_turn():
    count = argument_counter(gold_arguments({"ToolWorld/gym-5/001"}))
    task = "ToolWorld/gym-5/001"
    assert count(_episode("step", 0, [_call("book_classes", {"member_id": "GYM-014", "classes": 5}), "Done."], True, task)) == (1, 0, 0)
    assert count(_episode("step", 0, [_call("book_classes", {"member_id": "GYM-014", "classes": 5, "minutes": 240}), BAD], False, task)) == (1, 1, 0)
    assert count(_episode("step", 0, [_call("book_classes", {"member_id": "GYM-014"}), "Done."], False, task)) == (1, 0, 1)
    assert count(_episode("step", 0, [_call("get_member", {"member_id": "GYM-014", "x": 1}), "Done."], False, task)) == (0, 0, 0)  # not a gold tool
    assert count(_episode("step", 0, ["Done."], False, "Elsewhere/e-1/000")) == (0, 0, 0)  # no gold known


def test_the_argument_table_has_a_row_per_run_and_step(tmp_path):
    task = "ToolWorld/gym-5/001"
    _write_run(tmp_path, 0, "envsched", [_row(["ToolWorld/gym-1/000"], [0.5])] * 2, {0: [1, 1, 1, 0], 2: [1, 0, 0, 0]})
    _write_run(tmp_path, 0, "random", [_row(["ToolWorld/gym-1/000"], [0.5])] * 2, {2: [1, 1, 1, 1]})
    right, extra = _call("book_classes", {"member_id": "GYM-014", "classes": 5}), _call("book_classes", {"member_id": "GYM-014", "classes": 5, "nights": 2})
    _write_answers(tmp_path / "seed0" / "envsched", "eval_answers.jsonl", [_episode("step", 0, [right], True, task), _episode("step", 2, [extra], False, task)])
    _write_answers(tmp_path / "seed0" / "random", "eval_answers.jsonl", [_episode("step", 2, [right], True, task)])
    lines = report(tmp_path, "random", window=1).split("Argument drift")[1].splitlines()
    assert "| envsched | 0 | 0 / 0 (1) | 1 / 0 (1) |" in lines and "| random | 0 | 0 / 0 (1) | 0 / 0 (1) |" in lines
