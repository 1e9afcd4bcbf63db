"""Oracle and no-call policies over every BFCL entry, through the environment."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from envsched_gym.adapters.bfcl import GOLD_DEFECTS
from envsched_gym.envs.bfcl.data import CATEGORIES, MULTI_TURN

from envsched_gym.rendering import render_turn

sys.path.insert(0, str(Path(__file__).parent))
from bfcl_official import official_ast

UNSATISFIABLE_AST = {k: v for k, v in GOLD_DEFECTS.items() if not k.startswith("multi_turn")}
"""AST entries whose ground truth no output can satisfy under BFCL's own checker (checked below)."""
CALLS_HELD_OUT_FUNCTION = {k: v for k, v in GOLD_DEFECTS.items() if k.startswith("multi_turn")}


def _oracle_reward(play, task) -> float:
    return play(task, [render_turn(turn) for turn in task.solution])[0]


@pytest.mark.parametrize("category", CATEGORIES)
def test_oracle_scores_one_on_every_entry_with_ground_truth(bfcl, play, category):
    tasks = [t for t in bfcl.tasks("all") if t.metadata["category"] == category and t.solution is not None]
    failed = {t.task_id for t in tasks if _oracle_reward(play, t) != 1.0}
    expected = {t.task_id for t in tasks} & (set(UNSATISFIABLE_AST) | set(CALLS_HELD_OUT_FUNCTION))
    assert failed == expected
    if category != "live_relevance":
        assert len(tasks) >= 16


def test_unsatisfiable_entries_are_rejected_by_official_checker_too(bfcl):
    pytest.importorskip("bfcl_eval")
    tasks = {t.task_id: t for t in bfcl.tasks("all") if t.task_id in UNSATISFIABLE_AST}
    assert set(tasks) == set(UNSATISFIABLE_AST)
    for task in tasks.values():
        params = task.verifier.params
        calls = [{c.name: c.arguments} for c in task.solution[0].tool_calls]
        assert not official_ast(params["functions"], calls, params["ground_truth"], params["category"]), task.task_id


@pytest.mark.parametrize("category", CATEGORIES)
def test_no_call_policy(bfcl, play, category):
    tasks = [t for t in bfcl.tasks("all") if t.metadata["category"] == category]
    if category in MULTI_TURN:
        tasks = tasks[::4]
    rewards = Counter(play(t, ["I will not call any function."] * len(t.user_turns))[0] for t in tasks)
    expected = 1.0 if category in ("irrelevance", "live_irrelevance") else 0.0
    assert rewards == Counter({expected: len(tasks)})
