"""``validate_family``: each misconfiguration a new user made is an error at registration,
and every built-in family passes."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

import envsched_gym
from envsched_gym import AssistantTurn, FamilyValidationError, ToolSpec, VerifierConfig, World, validate_family
from envsched_gym.env import ToolUseEnv
from envsched_gym.rendering import render_calls

sys.path.insert(0, str(Path(__file__).parent))
from bugtracker import BugTrackerAdapter, adapter_with, assign_call, task

GOLD = [AssistantTurn(tool_calls=[assign_call()]), AssistantTurn("BUG-1 is assigned to ana.")]


def problems_of(adapter: BugTrackerAdapter, **kw: Any) -> list[str]:
    with pytest.raises(FamilyValidationError) as err:
        validate_family(adapter, **kw)
    return [str(p) for p in err.value.problems]


def test_the_bugtracker_family_passes_and_registers() -> None:
    report = validate_family(BugTrackerAdapter())
    assert (report.tasks, report.replayed, report.without_gold) == (3, 3, 0)
    assert set(report.seconds) == {"load", "tasks", "worlds", "gold replay"}
    assert envsched_gym.register_adapter(BugTrackerAdapter(), replace=True) == ["envsched/BugTracker-v0"]


def test_unknown_verifier_kind_is_an_error_not_a_gold_state_score() -> None:
    """Old main: kind 'exact_match' fell back to gold-state scoring, and a wrong answer scored 1.0."""
    (problem,) = problems_of(adapter_with(task("bug/x", VerifierConfig("exact_match", {"answer": "ana"}), GOLD)))
    assert "task 'bug/x' [verifier]" in problem and "unknown verifier kind 'exact_match'" in problem and "gold_state" in problem


def test_the_default_kind_none_says_to_set_a_verifier() -> None:
    spec = task("bug/none", VerifierConfig("none"), GOLD)
    (problem,) = problems_of(adapter_with(spec))
    assert "the TaskSpec default: set verifier=VerifierConfig" in problem


def test_mistyped_parameter_is_an_error() -> None:
    """Old main: {"fact": [...]} was ignored and a wrong answer scored 1.0."""
    (problem,) = problems_of(adapter_with(task("bug/typo", VerifierConfig("gold_state", {"fact": ["ana"]}), GOLD)))
    assert "unknown parameter 'fact' (did you mean 'facts'?)" in problem


def test_unresolved_env_id_is_an_error_not_a_dropped_task() -> None:
    """Old main: the task vanished, and the error came later as "unknown task_id ... Example ids: []"."""
    (problem,) = problems_of(adapter_with(task("bug/lost", VerifierConfig("gold_state"), GOLD, env_id="Bugtracker")))
    assert "env_id 'Bugtracker' names no environment. Did you mean 'BugTracker'?" in problem


def test_failing_gold_call_is_an_error() -> None:
    """Old main: the failing gold call was never checked, and the oracle still scored 1.0."""
    bad = [AssistantTurn(tool_calls=[assign_call("BUG-9")]), AssistantTurn("BUG-9 is assigned to ana.")]
    first, *_ = problems_of(adapter_with(task("bug/gold", VerifierConfig("gold_state"), bad)))
    assert "task 'bug/gold' [gold]: gold call assign(" in first and "unknown issue 'BUG-9'" in first


def test_gold_that_does_not_score_one_is_an_error() -> None:
    spec = task("bug/facts", VerifierConfig("gold_state", {"facts": ["bo"]}), GOLD)
    (problem,) = problems_of(adapter_with(spec))
    assert "the gold scores 0.0, not 1.0" in problem and "'facts': 0.0" in problem


def test_state_match_without_gold_is_an_error() -> None:
    (problem,) = problems_of(adapter_with(task("bug/nogold", VerifierConfig("gold_state"), None)))  # type: ignore[arg-type]
    assert "state_match needs the task's gold solution" in problem


def test_duplicate_task_ids_and_bad_split_are_errors() -> None:
    found = problems_of(adapter_with(task("bug/assign", VerifierConfig("gold_state"), GOLD, split="dev")))
    assert any("two tasks share this id" in p for p in found) and any("split 'dev'" in p for p in found)


def test_failed_validation_registers_nothing() -> None:
    adapter = adapter_with(task("bug/x", VerifierConfig("exact_match"), GOLD), family="BrokenTracker")
    with pytest.raises(FamilyValidationError):
        envsched_gym.register_adapter(adapter)
    assert "BrokenTracker" not in envsched_gym.families()


class SqlTracker(World):
    """Tools declared as JSON schemas, executed on sqlite: the state lives in a private connection."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("create table issues (id text primary key, assignee text)")
        self._db.execute("insert into issues values ('BUG-1', null)")

    def tools(self) -> list[ToolSpec]:
        params = {"type": "object", "properties": {"issue_id": {"type": "string"}, "user": {"type": "string"}}, "required": ["issue_id", "user"]}
        return [ToolSpec("assign", "Assign an issue.", params, write=True)]

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        self._db.execute("update issues set assignee = ? where id = ?", (arguments["user"], arguments["issue_id"]))
        return "ok"


class SqlTrackerWithState(SqlTracker):
    def state(self) -> Any:
        return [list(row) for row in self._db.execute("select id, assignee from issues order by id")]


class ConstantState(SqlTracker):
    def state(self) -> Any:
        return {"schema": "issues"}


def sql_adapter(world: type[World]) -> BugTrackerAdapter:
    cls = type("SqlAdapter", (BugTrackerAdapter,), {"family": "SqlTracker", "world": world})
    spec = task("sql/0", VerifierConfig("gold_state"), GOLD, env_id="SqlTracker")
    cls.tasks = lambda self, split="all": [spec] if split in ("all", "train") else []  # type: ignore[method-assign]
    return cls()


def test_world_with_write_tools_and_empty_state_is_an_error() -> None:
    """Old main: state() reported {} for both worlds, so a wrong write scored 1.0."""
    found = problems_of(sql_adapter(SqlTracker))
    assert len(found) == 1 and "[state]" in found[0] and "SqlTracker.state() is empty" in found[0] and "override state()" in found[0]


def test_world_whose_state_ignores_writes_is_an_error() -> None:
    (problem,) = problems_of(sql_adapter(ConstantState))
    assert "family 'SqlTracker' [state]" in problem and "state() was the same before and after" in problem


def test_world_with_state_passes_and_its_env_spec_lists_the_tools() -> None:
    """Old main: EnvSpec.tools was [] for a world that overrides tools(), so the curriculum saw no tools."""
    adapter = sql_adapter(SqlTrackerWithState)
    assert [t.name for t in adapter.env_specs()[0].tools] == ["assign"]
    assert validate_family(adapter).replayed == 1
    env = ToolUseEnv(adapter, "envsched/SqlTracker-v0")
    env.reset(options={"task_id": "sql/0"})
    env.step(render_calls([assign_call(user="bo")]))
    assert env.step("Done.")[1] == 0.0  # the wrong write is seen by the state match


def test_stale_gold_defect_entry_is_an_error() -> None:
    adapter = BugTrackerAdapter()
    adapter.gold_defects = {"bug/assign": "pretend it is broken", "bug/gone": "no such task"}  # type: ignore[misc]
    found = problems_of(adapter)
    assert any("listed in gold_defects but its gold replays clean" in p for p in found)
    assert any("gold_defects names unknown tasks ['bug/gone']" in p for p in found)


@pytest.mark.parametrize("family", ["ToolWorld", "BFCL", "ACE", "Tau"])
def test_every_built_in_family_passes_the_static_checks(benchmarks: Path, family: str) -> None:
    report = validate_family(family, replay=False)
    assert report.tasks > 100 and report.envs >= 2


@pytest.mark.parametrize("family", ["ToolWorld", "BFCL", "ACE", pytest.param("Tau", marks=pytest.mark.slow)])
def test_every_built_in_family_passes_gold_replay(benchmarks: Path, family: str) -> None:
    report = validate_family(family)
    assert report.replayed > 100 and report.replayed + report.without_gold == report.tasks
