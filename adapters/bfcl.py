"""BFCL-v3 (from the ``bfcl-eval`` 2026.3.23 data) as 17 gymnasium environments.

Every v3 category is registered as ``envsched/BFCL-<category>-v0`` and scored by BFCL's own
rules (see ``docs/bfcl.md``):

* single-turn categories (``simple_*``, ``multiple``, ``parallel*``, ``live_*``) are
  ``single_response`` environments: the first assistant message is decoded (any wire format)
  and checked with the AST rules, or for (ir)relevance by the presence of calls;
* multi-turn categories run BFCL's executable backends turn by turn, with the held-out
  functions of ``miss_func`` added at their turn and ``miss_param``'s clarification turn.

Task ids are BFCL's ids. Split: ``test`` when the first 8 hex digits of SHA-256(``id``) mod 100
are below 20, else ``train`` (about 80/20, stable across runs and machines).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from functools import cache
from typing import Any

from envsched_gym.envs.bfcl.backends import BACKEND_MODULES, BackendSetup, BFCLWorld, backend_class
from envsched_gym.envs.bfcl.data import (
    CATEGORIES,
    FUNC_DOC_FILES,
    MULTI_TURN,
    check_files,
    find_data_dir,
    load_category,
    load_func_docs,
    load_ground_truth,
)  # fmt: skip
from envsched_gym.envs.bfcl.gold import GoldParseError, canonical_call, parse_gold_call
from envsched_gym.envs.bfcl.schema import json_type, language_of, to_tool_spec
from envsched_gym.envs.bfcl.verifiers import MultiTurnVerifier, SingleTurnVerifier
from jsonschema import Draft202012Validator

from envsched_gym.adapter import Adapter
from envsched_gym.data_files import Row
from envsched_gym.declarations import AssistantTurn, EnvSpec, StateComponent, TaskSpec, ToolCall, ToolSpec, VerifierConfig
from envsched_gym.users import ScriptedTurns, UserSimulator
from envsched_gym.verifier import Verifier
from envsched_gym.world import World

TEST_PERCENT = 20
MAX_CALL_STEPS_PER_TURN = 20
"""BFCL's ``MAXIMUM_STEP_LIMIT``: its harness force-quits an entry after the 21st step with calls
in one turn, so an agent has 20 steps with calls plus the text reply that ends the turn."""
MAX_STEPS_PER_TURN = MAX_CALL_STEPS_PER_TURN + 1
ADDED_FUNCTIONS_MESSAGE = "I have updated some more functions you can choose from. What about now?"
"""BFCL's user message for the turn that adds held-out functions (its FC-mode prompt)."""
SINGLE_TURN_PROMPT = (
    "You are an expert in composing functions. Call the provided functions when they achieve the user's purpose "
    "(several at once if needed); if none of them applies, say so without calling any."
)
MULTI_TURN_PROMPT = (
    "You are an expert in composing functions. Complete each user request with the provided functions, one or more "
    "calls per step; when the request is done (or cannot be done), reply in plain text to end the turn."
)
WRITE_TOOLS = frozenset({
    "activateParkingBrake", "add_contact", "add_to_watchlist", "adjustClimateControl", "authenticate_travel",
    "authenticate_twitter", "book_flight", "cancel_booking", "cancel_order", "close_ticket", "comment", "cp",
    "create_ticket", "delete_message", "echo", "edit_ticket", "fillFuelTank", "follow_user", "fund_account",
    "lockDoors", "logout", "mention", "message_login", "mkdir", "mv", "place_order", "post_tweet", "pressBrakePedal",
    "purchase_insurance", "register_credit_card", "releaseBrakePedal", "remove_stock_from_watchlist", "resolve_ticket",
    "retweet", "rm", "rmdir", "send_message", "setCruiseControl", "setHeadlights", "set_budget_limit", "set_navigation",
    "startEngine", "ticket_login", "touch", "trading_login", "trading_logout", "unfollow_user", "withdraw_funds",
})  # fmt: skip
"""Backend methods that change public state: those whose gold calls change it (checked in the tests),
plus the never-called logins/logouts, follows and vehicle controls."""


def split_of(task_id: str) -> str:
    """``test`` for about 20% of ids (by SHA-256), else ``train``."""
    return "test" if int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % 100 < TEST_PERCENT else "train"


def _kind(category: str) -> str:
    if category in MULTI_TURN:
        return "bfcl_multi_turn"
    if "irrelevance" in category:
        return "bfcl_irrelevance"
    return "bfcl_relevance" if category == "live_relevance" else "bfcl_ast"


GOLD_DEFECTS: dict[str, str] = {
    "simple_java_36": "ArrayList of `any`: BFCL turns every element into a string, the answer holds ints and booleans",
    "simple_java_65": "ArrayList of `any`: BFCL turns every element into a string, the answer holds booleans",
    "simple_java_64": "HashMap answer {'format': 'epoch_millis'} is not a list of accepted values, so BFCL compares with its characters",
    "live_simple_106-63-0": "the answer leaves out required parameters",
    "live_simple_112-68-0": "the answer leaves out required parameters",
    "live_multiple_507-149-4": "the answer leaves out required parameter 'origin_airport'",
    "live_multiple_964-207-0": "the answer leaves out required parameter 'statement'",
    "live_multiple_862-181-3": "the answer uses 'journey_start_time', which Trains_1_FindTrains does not declare",
    "multi_turn_miss_func_49": "the gold calls held-out `tail` at turn 1, before the turn that adds it (3); "
    "BFCL's eval path runs any backend method, this environment only offers tools the agent was shown",
}
"""Entries whose gold no output can satisfy (docs/bfcl.md; tests/envs/bfcl/test_oracle.py checks
the AST ones against BFCL's own checker)."""


class BFCLAdapter(Adapter):
    """The 17 BFCL-v3 categories.

    Args:
        data_dir: BFCL data directory (or a benchmark root); default: ``bfcl/bfcl_eval/data``
            under the benchmark root (see :func:`envsched_gym.envs.bfcl.data.find_data_dir`).
        categories: Categories to serve (default: all 17).
        data_source: ``benchmarks`` (the default) or ``package``: the data shipped inside the
            installed ``bfcl-eval`` package, used only when asked for.

    Raises:
        DataNotFoundError: A file the categories need is absent (the message names its path).
    """

    family = "BFCL"
    gold_defects = GOLD_DEFECTS

    def __init__(
        self, data_dir: str | os.PathLike[str] | None = None, categories: Iterable[str] | None = None, data_source: str = "benchmarks"
    ) -> None:
        self.categories = list(categories or CATEGORIES)
        unknown = sorted(set(self.categories) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"unknown BFCL categories {unknown}; choose from {list(CATEGORIES)}")
        self.data_dir = find_data_dir(data_dir, data_source)
        check_files(self.categories, self.data_dir)
        self._tasks: dict[str, list[TaskSpec]] = {}
        self._class_tools: dict[str, list[ToolSpec]] = {}
        self._setups: dict[str, tuple[BackendSetup, dict[str, str]]] = {}
        self._mismatched: dict[str, dict[str, set[str]]] | None = None

    # ------------------------------------------------------------ declarations
    def env_specs(self) -> list[EnvSpec]:
        return [self._env_spec(c) for c in self.categories]

    def _env_spec(self, category: str) -> EnvSpec:
        common = {"env_id": f"BFCL/{category}", "family": self.family, "gym_id": f"envsched/BFCL-{category}-v0"}
        if category not in MULTI_TURN:
            return EnvSpec(
                **common, verifier_kind=_kind(category), interaction="single_response", max_steps=1, system_prompt=SINGLE_TURN_PROMPT
            )
        most_turns = max(len(t.user_turns) for t in self._category_tasks(category))
        return EnvSpec(
            **common,
            tools=[t for name in FUNC_DOC_FILES for t in self.class_tools(name)],
            state_components=[
                StateComponent(name, f"bfcl_eval backend {BACKEND_MODULES[name]}.{name}, loaded from the task's initial_config[{name!r}]")
                for name in FUNC_DOC_FILES
            ],
            verifier_kind="bfcl_multi_turn",
            max_steps=MAX_STEPS_PER_TURN * most_turns,
            max_steps_per_turn=MAX_STEPS_PER_TURN,
            system_prompt=MULTI_TURN_PROMPT,
        )

    def class_tools(self, class_name: str) -> list[ToolSpec]:
        """The tools of one backend class (cached, so the list object is stable).

        BFCL does not type-check multi-turn calls, and a few gold calls pass values of another
        type than the doc declares (``close_ticket(ticket_id='ticket_001')`` for an integer);
        such parameters also accept the gold value's type, so the gold solution is valid here.
        """
        if class_name not in self._class_tools:
            tools = [to_tool_spec(d, write=d["name"] in WRITE_TOOLS) for d in load_func_docs(class_name, self.data_dir)]
            for tool in tools:
                for param, extra in self._gold_types().get(tool.name, {}).items():
                    prop = tool.parameters["properties"].get(param)
                    if prop is not None and "type" in prop:
                        prop["anyOf"] = [{"type": t} for t in sorted({prop.pop("type"), *extra})]
            self._class_tools[class_name] = tools
        return self._class_tools[class_name]

    def _gold_types(self) -> dict[str, dict[str, set[str]]]:
        """``{tool: {param: JSON types}}`` of multi-turn gold values that the declared type rejects."""
        if self._mismatched is None:
            self._mismatched = {}
            props = {d["name"]: to_tool_spec(d).parameters["properties"] for c in FUNC_DOC_FILES for d in load_func_docs(c, self.data_dir)}
            owners = _owners(list(FUNC_DOC_FILES))
            calls = {
                text: _gold_call(row, f"ground_truth[{i}]", text, owners)
                for c in MULTI_TURN for row in load_ground_truth(c, self.data_dir).values()
                for i, turn in enumerate(row.data["ground_truth"]) for text in turn
            }  # fmt: skip
            for call in (calls[text] for text in sorted(calls)):
                for param, value in call.arguments.items():
                    schema = props.get(call.name, {}).get(param)
                    if schema is not None and not Draft202012Validator(schema).is_valid(value):
                        self._mismatched.setdefault(call.name, {}).setdefault(param, set()).add(json_type(value))
        return self._mismatched

    # ------------------------------------------------------------------- tasks
    def tasks(self, split: str = "all") -> Iterable[TaskSpec]:
        for category in self.categories:
            yield from (t for t in self._category_tasks(category) if split in ("all", t.split))

    def _category_tasks(self, category: str) -> list[TaskSpec]:
        if category not in self._tasks:
            build = self._multi_turn_task if category in MULTI_TURN else self._single_turn_task
            entries, answers = load_category(category, self.data_dir)
            self._tasks[category] = [build(row, answers.get(str(row.data["id"])), category) for row in entries]
        return self._tasks[category]

    def _single_turn_task(self, row: Row, answer: Row | None, category: str) -> TaskSpec:
        entry = row.data
        language = language_of(category)
        messages = entry["question"][0]
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        dialogue = [m for m in messages if m["role"] != "system"]
        instruction = dialogue[0]["content"] if len(dialogue) == 1 else "\n".join(f"{m['role']}: {m['content']}" for m in dialogue)
        kind = _kind(category)
        docs = {f["name"]: f for f in entry["function"]}
        truth = None if answer is None else _single_turn_gold(answer, docs)
        if truth is not None:
            calls = [canonical_call(g, docs[next(iter(g))]["parameters"].get("properties", {}), language) for g in truth]
            solution = [AssistantTurn(tool_calls=calls)]
        else:
            solution = [AssistantTurn(content="None of the provided functions applies.")] if kind == "bfcl_irrelevance" else None
        return TaskSpec(
            task_id=entry["id"],
            env_id=f"BFCL/{category}",
            instruction=instruction,
            user_turns=[instruction],
            solution=solution,
            verifier=VerifierConfig(kind, {"functions": entry["function"], "ground_truth": truth, "category": category}),
            split=split_of(entry["id"]),
            tools=[to_tool_spec(f, language) for f in entry["function"]],
            metadata={"category": category, "language": language, **({"system_prompt": system} if system else {})},
        )

    def _multi_turn_task(self, row: Row, answer: Row | None, category: str) -> TaskSpec:
        entry = row.data
        missed = entry.get("missed_function") or {}
        user_turns = [
            "\n".join(m["content"] for m in turn) if turn else (ADDED_FUNCTIONS_MESSAGE if str(i) in missed else "")
            for i, turn in enumerate(entry["question"])
        ]
        owners = _owners(entry["involved_classes"])
        for turn, names in missed.items():
            if unknown := [n for n in names if n not in owners]:
                raise row.error(f"missed_function[{turn!r}]", f"holds out {unknown}, which no class of {entry['involved_classes']} has")
        truth = None if answer is None else answer.data["ground_truth"]
        if truth is not None and len(truth) != len(user_turns):
            raise answer.error("ground_truth", f"has {len(truth)} turns but the question has {len(user_turns)}")
        solution = []
        for index, gold in enumerate(truth or []):
            if gold:
                solution.append(AssistantTurn(tool_calls=[_gold_call(answer, f"ground_truth[{index}]", text, owners) for text in gold]))
            solution.append(AssistantTurn(content="Done." if gold else "I need more information to do that."))
        return TaskSpec(
            task_id=entry["id"],
            env_id=f"BFCL/{category}",
            instruction=user_turns[0],
            user_turns=user_turns,
            initial_state=entry.get("initial_config", {}),
            solution=solution,
            verifier=VerifierConfig("bfcl_multi_turn", {"ground_truth": truth, "category": category}),
            split=split_of(entry["id"]),
            metadata={
                "category": category,
                "involved_classes": entry["involved_classes"],
                "missed_function": missed,
                "long_context": "long_context" in category,
                "path": entry.get("path", []),
            },
        )

    # ---------------------------------------------------------------- episodes
    def _setup(self, task: TaskSpec) -> tuple[BackendSetup, dict[str, str]]:
        """The task's backend setup and method owners (cached: tool lists stay the same objects)."""
        if task.task_id not in self._setups:
            classes = task.metadata["involved_classes"]
            held = {int(turn): set(names) for turn, names in task.metadata["missed_function"].items()}
            held_names = set().union(*held.values()) if held else set()
            every = [t for c in classes for t in self.class_tools(c)]
            setup = BackendSetup(
                classes=classes,
                initial_config=task.initial_state or {},
                long_context=task.metadata["long_context"],
                tools=[t for t in every if t.name not in held_names],
                added_tools={turn: [t for t in every if t.name in names] for turn, names in held.items()},
            )
            self._setups[task.task_id] = (setup, _owners(classes))
        return self._setups[task.task_id]

    def make_world(self, task: TaskSpec) -> World:
        if task.verifier.kind != "bfcl_multi_turn":
            return World()
        return BFCLWorld(self._setup(task)[0])

    def make_verifier(self, task: TaskSpec) -> Verifier:
        if task.verifier.kind != "bfcl_multi_turn":
            return SingleTurnVerifier(task)
        setup, owners = self._setup(task)
        return MultiTurnVerifier(task, setup, owners)

    def make_user(self, task: TaskSpec) -> UserSimulator:
        return ScriptedTurns()


def _single_turn_gold(answer: Row, docs: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's ground truth, each item checked to be ``{function: {param: [values]}}`` of a declared function."""
    truth = answer.data["ground_truth"]
    for index, gold in enumerate(truth):
        if not isinstance(gold, dict) or len(gold) != 1 or not isinstance(next(iter(gold.values())), dict):
            raise answer.error(f"ground_truth[{index}]", "must be one {function: {parameter: [accepted values]}} object")
        if (name := next(iter(gold))) not in docs:
            raise answer.error(
                f"ground_truth[{index}]", f"calls {name!r}, a function the question does not declare (it declares {sorted(docs)})"
            )
    return truth


def _gold_call(answer: Row, field: str, text: str, owners: dict[str, str]) -> ToolCall:
    """One multi-turn gold string as a call of a method the task's backends have."""
    try:
        call = parse_gold_call(text, owners)
    except GoldParseError as exc:
        raise answer.error(field, str(exc)) from None
    if call.name not in owners:
        raise answer.error(field, f"calls {call.name!r}, which no involved backend class has (known: {sorted(owners)})")
    return call


def _owners(classes: list[str]) -> dict[str, str]:
    """``{method: class}`` as BFCL routes calls: the last involved class having the method."""
    return _owners_of(tuple(classes))


@cache
def _owners_of(classes: tuple[str, ...]) -> dict[str, str]:
    owners: dict[str, str] = {}
    for name in classes:
        for method in dir(backend_class(name)):
            if not method.startswith("_") and callable(getattr(backend_class(name), method)):
                owners[method] = name
    return owners
