"""τ-bench task files to :class:`TaskSpec`: ids, splits, scoring criteria and a gold conversation.

Three task sets: τ2's current ``tasks.json``, τ2's first release, and the original τ-bench
(``tau1``), whose ``{instruction, actions, outputs}`` tasks are read as τ2 tasks with the
instruction as the scenario, the outputs as ``communicate_info`` and ``[DB, COMMUNICATE]``
scoring (τ-bench's own rule). All three run on τ2's ``db.json``.

τ2 tasks carry gold *actions* (tool calls), not gold conversations. The gold solution built
here is what a policy-abiding agent would send: before each write action a confirmation
request (the policy requires an explicit "yes"), then the action; at the end one message
that states every ``communicate_info`` string (or the transfer notice after
``transfer_to_human_agents``). The scripted user answers the confirmations and stops on the
final message, so an oracle replaying this solution reproduces the gold DB exactly.

The files are checked as they load (see :mod:`envsched_gym.data_files`): required fields, unique
ids, gold actions that name tools the domain has, a known ``reward_basis``, and a split file
that puts every task in exactly one of ``train`` and ``test``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envsched_gym.envs.tau.scripted_user import opening_message

from envsched_gym import AssistantTurn, TaskSpec, ToolCall, VerifierConfig
from envsched_gym.data_files import DataError, DataNotFoundError, Row, read_json, read_json_rows, require, require_unique

TASK_SETS = {
    "current": ("tau2", "data"),
    "pre_tau3": ("tau2", "pre_tau3_37199f3", "data"),
    "tau1": ("tau2", "tau-bench", "tau_bench", "envs"),
}
"""Task set name -> its folder under the benchmark root."""
ID_TAGS = {"current": "", "pre_tau3": "@pre", "tau1": "@tau1"}
TAU1_SPLITS = {"train": "train", "test": "test", "dev": "test"}
"""Original τ-bench task file (``tasks_<name>.json``) -> split; dev tasks are evaluation tasks."""
TAU1_FILES = {"retail": ("train", "test", "dev"), "airline": ("test",)}
"""The original τ-bench task files of each domain (airline has test tasks only)."""
DEFAULT_REWARD_BASIS = ["DB", "COMMUNICATE"]
REWARD_BASES = frozenset({"DB", "COMMUNICATE", "ACTION", "ENV_ASSERTION", "NL_ASSERTION"})
TRANSFER_TOOL = "transfer_to_human_agents"
TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
AGENT_GREETING = "Hi! How can I help you today?"


@dataclass(frozen=True)
class TaskSource:
    """Where one domain's tasks of one task set live.

    Attributes:
        domain: ``retail`` or ``airline``.
        task_set: ``current`` (τ2 at a2c0247), ``pre_tau3`` (the first τ2 release) or ``tau1``.
        tasks_file: The ``tasks.json`` path (for ``tau1``: the domain's folder).
        split_file: τ2's ``split_tasks.json`` (train/test ids, shared by the τ2 sets).
    """

    domain: str
    task_set: str
    tasks_file: Path
    split_file: Path

    @property
    def id_prefix(self) -> str:
        """Prefix of suite task ids: ``retail/``, ``retail@pre/`` or ``retail@tau1/``."""
        return f"{self.domain}{ID_TAGS[self.task_set]}/"


def load_tasks(source: TaskSource, env_id: str, tools: set[str], write_tools: set[str]) -> list[TaskSpec]:
    """Every task of ``source`` as a :class:`TaskSpec` (split from ``split_tasks.json``).

    Args:
        source: Where the tasks are.
        env_id: The domain's environment id.
        tools: Every tool name of the domain (gold actions must name one of them).
        write_tools: The tools that change the DB.

    Raises:
        DataError: A task, its gold actions or the split file is not usable (the message says where).
    """
    if source.task_set == "tau1":
        return load_tau1_tasks(source, env_id, tools, write_tools)
    rows = require_unique(read_json_rows(source.tasks_file, "tasks"))
    for row in rows.values():
        check_task(row, source.domain, tools)
    split_of = load_splits(source.split_file, source.tasks_file, list(rows))
    return [to_task_spec(row.data, source, env_id, write_tools, split_of[key]) for key, row in rows.items()]


def check_task(row: Row, domain: str, tools: set[str]) -> None:
    """Check the fields of one τ2 task that loading and scoring use."""
    scenario = row.child("user_scenario", require(row, "user_scenario", dict))
    require(scenario, "instructions", (dict, str))
    criteria = require(row, "evaluation_criteria", dict, optional=True)
    if criteria is None:
        return
    criteria_row = row.child("evaluation_criteria", criteria)
    for index, action in enumerate(require(criteria_row, "actions", list, optional=True) or []):
        check_action(criteria_row.child(f"actions[{index}]", action), "arguments", domain, tools)
    for field in ("communicate_info", "nl_assertions", "env_assertions"):
        require(criteria_row, field, list, optional=True)
    basis = require(criteria_row, "reward_basis", list, optional=True) or []
    if unknown := [b for b in basis if b not in REWARD_BASES]:
        raise criteria_row.error(
            "reward_basis", f"names {unknown}, which are not scoring components", f"use names of {sorted(REWARD_BASES)}"
        )


def check_action(action: Row, arguments_field: str, domain: str, tools: set[str]) -> None:
    """A gold action must name a tool of the domain and pass its arguments as an object."""
    name = require(action, "name", str)
    if name not in tools:
        raise action.error("name", f"is {name!r}, a tool the {domain} environment does not have",
                           f"name one of its tools ({', '.join(sorted(tools))}), or restore the task from the benchmark download")  # fmt: skip
    require(action, arguments_field, dict, optional=True)


def load_splits(split_file: Path, tasks_file: Path, task_ids: list[str]) -> dict[str, str]:
    """``{task id: 'train' | 'test'}`` from τ2's ``split_tasks.json``, which must list each task exactly once."""
    raw = read_json(split_file)
    if not isinstance(raw, dict):
        raise DataError(split_file, 'must hold a JSON object {"train": [task ids], "test": [task ids]}')
    row, known, split_of = Row(split_file, "", raw), set(task_ids), {}
    fix = f"list every task id of {tasks_file} in exactly one of 'train' and 'test', or restore the file from the benchmark download"
    for name in ("train", "test"):
        ids = require(row, name, list)
        if bad := [i for i in ids if not isinstance(i, str)]:
            raise row.error(name, f"must hold task id strings, not {bad[:3]}", fix)
        if unknown := [i for i in ids if i not in known]:
            raise row.error(name, f"lists {unknown[:5]}, which are not tasks of {tasks_file}", fix)
        if twice := [i for i in ids if i in split_of]:
            raise row.error(name, f"lists {twice[:5]}, which '{split_of[twice[0]]}' lists too (a task is in one split)", fix)
        split_of |= dict.fromkeys(ids, name)
    if missing := [i for i in task_ids if i not in split_of]:
        raise DataError(split_file, "are in neither 'train' nor 'test'", entry=f"tasks {missing[:5]} of {tasks_file}", fix=fix)
    return split_of


def load_tau1_tasks(source: TaskSource, env_id: str, tools: set[str], write_tools: set[str]) -> list[TaskSpec]:
    """The original τ-bench tasks of one domain (``tasks_{train,test,dev}.json``), ids ``<file>/<index>``."""
    specs = []
    for name in TAU1_FILES[source.domain]:
        path = source.tasks_file / f"tasks_{name}.json"
        if not path.is_file():
            raise DataNotFoundError(f"{path} does not exist; the original τ-bench {source.domain} tasks include it. "
                                    "Fix: restore it from tau-bench's tasks (docs/tau.md).")  # fmt: skip
        for index, row in enumerate(read_json_rows(path, "tasks")):
            task = _tau1_task(row.named(f"{name}/{index}"), source.domain, tools)
            actions = [
                {"action_id": f"{name}/{index}_{i}", "name": a["name"], "arguments": a["kwargs"]} for i, a in enumerate(task["actions"])
            ]
            as_tau2 = {
                "id": f"{name}/{index}",
                "user_scenario": {"persona": None, "instructions": task["instruction"]},
                "evaluation_criteria": {
                    "actions": actions,
                    "communicate_info": task["outputs"],
                    "reward_basis": list(DEFAULT_REWARD_BASIS),
                },
            }
            specs.append(to_task_spec(as_tau2, source, env_id, write_tools, TAU1_SPLITS[name]))
    return specs


def _tau1_task(row: Row, domain: str, tools: set[str]) -> dict[str, Any]:
    """One checked original τ-bench task ``{instruction, actions[{name, kwargs}], outputs}``."""
    require(row, "instruction", str)
    for index, action in enumerate(require(row, "actions", list)):
        action_row = row.child(f"actions[{index}]", action)
        check_action(action_row, "kwargs", domain, tools)
        require(action_row, "kwargs", dict)
    if bad := [o for o in require(row, "outputs", list) if not isinstance(o, str)]:
        raise row.error("outputs", f"must hold strings, not {bad[:3]}")
    return row.data


def to_task_spec(task: dict[str, Any], source: TaskSource, env_id: str, write_tools: set[str], split: str) -> TaskSpec:
    """One τ2 task as a :class:`TaskSpec`; the criteria go to ``verifier.params``."""
    criteria = task.get("evaluation_criteria") or {}
    actions = criteria.get("actions") or []
    params = {
        "actions": actions,
        "communicate_info": criteria.get("communicate_info") or [],
        "nl_assertions": criteria.get("nl_assertions") or [],
        "env_assertions": criteria.get("env_assertions") or [],
        "reward_basis": criteria.get("reward_basis") or list(DEFAULT_REWARD_BASIS),
    }
    scenario = task["user_scenario"]
    return TaskSpec(
        task_id=f"{source.id_prefix}{task['id']}",
        env_id=env_id,
        instruction=opening_message(scenario),
        initial_state=None,
        solution=gold_solution(actions, params["communicate_info"], write_tools),
        verifier=VerifierConfig(kind="tau", params=params),
        split=split,
        metadata={
            "domain": source.domain,
            "task_set": source.task_set,
            "source_id": str(task["id"]),
            "user_scenario": scenario,
            "description": task.get("description"),
            "agent_greeting": AGENT_GREETING,
            "n_actions": len(actions),
            "n_write_actions": sum(a["name"] in write_tools for a in actions),
        },
    )


def gold_solution(actions: list[dict[str, Any]], communicate_info: list[str], write_tools: set[str]) -> list[AssistantTurn]:
    """The gold conversation for ``actions`` (see the module docstring)."""
    turns: list[AssistantTurn] = []
    for action in actions:
        call = ToolCall(action["name"], dict(action.get("arguments") or {}))
        if call.name in write_tools:
            turns.append(AssistantTurn(confirmation_request(call)))
        turns.append(AssistantTurn(tool_calls=[call]))
    turns.append(AssistantTurn(final_message(communicate_info, any(a["name"] == TRANSFER_TOOL for a in actions))))
    return turns


def confirmation_request(call: ToolCall) -> str:
    """The policy's "list the action details and ask for a yes" message for a write call."""
    return f"Here is what I will do: {call.name} with {json.dumps(call.arguments, ensure_ascii=False)}. Do you confirm (yes/no)?"


def final_message(communicate_info: list[str], transferred: bool) -> str:
    """The closing message: every required fact, then the transfer notice if transferred."""
    facts = f" For your reference: {'; '.join(communicate_info)}." if communicate_info else ""
    return (TRANSFER_MESSAGE + facts) if transferred else f"Your request has been handled.{facts}"


def scenario_text(scenario: dict[str, Any]) -> str:
    """The user scenario as τ2 shows it to a user simulator (persona, then instructions)."""
    instructions = scenario.get("instructions") or {}
    if isinstance(instructions, str):
        body = instructions
    else:
        labels = (("domain", "Domain"), ("reason_for_call", "Reason for call"), ("known_info", "Known info"),
                  ("unknown_info", "Unknown info"), ("task_instructions", "Task instructions"))  # fmt: skip
        body = "\n".join(
            f"{label}:\n\t{str(instructions[key]).replace(chr(10), chr(10) + chr(9))}" for key, label in labels if instructions.get(key)
        )
    persona = scenario.get("persona")
    return f"Persona:\n\t{persona}\nInstructions:\n{body}" if persona else f"Instructions:\n{body}"
