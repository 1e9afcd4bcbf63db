"""ACEBench as environments: ``envsched/ACE-normal-v0``, ``envsched/ACE-special-v0``, ``envsched/ACE-agent-v0``.

One :class:`~envsched_gym.EnvSpec` per (group, category, language), e.g.
``ACE/normal/normal_atom_bool/en``; task ids are ``ace/<language>/<entry id>``
(``ace/en/normal_atom_bool_3``). Normal and special entries are ``single_response``: the
first assistant message is scored, with the entry's functions as tools and ACEBench's own
system prompt (time, profile and function list filled in). Agent entries run in a
:class:`~envsched_gym.envs.acebench.world.ScenarioWorld`; multi-step entries give the task
to the agent directly, multi-turn entries have a user simulator (scripted by default, an
LLM through :class:`envsched_gym.llm_user.LLMUser` when ``user_backend`` is given).

Options (``gym.make(id, adapter_options={...})`` or ``suite(options={"ACE": {...}})``):
``language`` (``en``, ``zh`` or ``all``), ``mode`` (``strict`` or ``faithful``),
``categories`` (a subset of category names), ``data_dir``, ``user_backend``, ``strip_whitespace``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

from envsched_gym.envs.acebench import dataset as D
from envsched_gym.envs.acebench.agent_check import check_end_state, milestone_alternatives, parse_call_string
from envsched_gym.envs.acebench.normal_check import alternatives, gold_function_name
from envsched_gym.envs.acebench.schemas import tool_spec
from envsched_gym.envs.acebench.special_check import gold_reply
from envsched_gym.envs.acebench.verifiers import AgentVerifier, NormalVerifier, SpecialVerifier, _check_mode
from envsched_gym.envs.acebench.world import SCENARIO_CLASSES, ScenarioWorld

from envsched_gym import Adapter, AssistantTurn, EnvSpec, StateComponent, TaskSpec, ToolCall, ToolError, Verifier, VerifierConfig, World
from envsched_gym.data_files import Row
from envsched_gym.users import ScriptedTurns, UserSimulator

CATEGORIES = D.NORMAL + D.SPECIAL + D.AGENT
OPENING = {"en": "I am the user described here; please help me. {question}", "zh": "我是下面描述的用户，请帮助我。{question}"}
DONE = {"en": "The task has been completed.", "zh": "任务已完成。"}
TEST_FRACTION = 5
"""One task in ``TEST_FRACTION`` (by a CRC32 of its id) is in the ``test`` split, the rest in ``train``."""


class ACEBenchAdapter(Adapter):
    """ACEBench normal, special and agent categories in English and Chinese.

    Args:
        language: ``en``, ``zh`` or ``all``.
        mode: ``strict`` (exact values; the default, for RL rewards) or ``faithful`` (the
            original evaluator with its quirks, for comparable benchmark numbers).
        categories: Category names to serve (default: all 17).
        data_dir: Benchmark data root (default: ``$ENVSCHED_BENCHMARKS`` or ``../shared/benchmarks``).
        user_backend: A :class:`envsched_gym.llm_user.ChatBackend` for an LLM user in
            ``agent_multi_turn`` (default: the scripted user).
        max_steps: Assistant messages per agent episode.
        strip_whitespace: Faithful mode only: delete whitespace inside string arguments before
            the normal checker, as the original does to the raw model text (off by default: it
            makes the original reject 72 of its own ground truths).
    """

    family = "ACE"
    gold_defects = {
        f"ace/zh/agent_multi_turn_{n}": "a milestone calls find_transfer_flights, which the entry's function list does not offer "
        "(ACEBench data); the end state is reached without it"
        for n in (26, 27)
    }

    def __init__(
        self,
        language: str = "all",
        mode: str = "strict",
        categories: list[str] | None = None,
        data_dir: str | None = None,
        user_backend: Any = None,
        max_steps: int = 30,
        strip_whitespace: bool = False,
    ) -> None:
        if language not in (*D.LANGUAGES, "all"):
            raise ValueError(f"unknown ACEBench language {language!r}; use 'en', 'zh' or 'all'")
        unknown = sorted(set(categories or []) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"unknown ACEBench categories {unknown}; known: {list(CATEGORIES)}")
        self.languages = D.LANGUAGES if language == "all" else (language,)
        self.mode = _check_mode(mode)
        self.categories = tuple(c for c in CATEGORIES if categories is None or c in categories)
        self.data_dir = data_dir
        self.user_backend = user_backend
        self.max_steps = max_steps
        self.strip_whitespace = strip_whitespace
        self._tasks: list[TaskSpec] | None = None

    # -------------------------------------------------------------- declarations
    def env_specs(self) -> list[EnvSpec]:
        return [self._env_spec(language, category) for language in self.languages for category in self.categories]

    def _env_spec(self, language: str, category: str) -> EnvSpec:
        group = D.group_of(category)
        agent = group == "agent"
        entries = D.load_entries(language, category, self.data_dir) if agent else ()
        classes = sorted({c for e in entries for c in e.data["involved_classes"]})
        return EnvSpec(
            env_id=env_id(language, category),
            family=self.family,
            gym_id=f"envsched/ACE-{group}-v0",
            tools=[tool_spec(f) for f in entries[0].data["function"]] if entries else [],
            state_components=[StateComponent(c) for c in classes],
            verifier_kind=f"ace_{group}_{self.mode}",
            interaction="multi_step" if agent else "single_response",
            user_simulator=("llm" if self.user_backend is not None else "scripted") if category == "agent_multi_turn" else "none",
            max_steps=self.max_steps if agent else 1,
        )

    def tasks(self, split: str = "all") -> Iterable[TaskSpec]:
        if self._tasks is None:
            self._tasks = [
                self._task(e) for lang in self.languages for cat in self.categories for e in D.load_entries(lang, cat, self.data_dir)
            ]
        return [t for t in self._tasks if split == "all" or t.split == split]

    def _task(self, entry: D.Entry) -> TaskSpec:
        task_id = f"ace/{entry.language}/{entry.id}"
        common = {
            "task_id": task_id,
            "env_id": env_id(entry.language, entry.category),
            "split": "test" if zlib.crc32(task_id.encode()) % TEST_FRACTION == 0 else "train",
            "tools": [tool_spec(f) for f in entry.data["function"]],
        }
        meta = {"language": entry.language, "category": entry.category, "group": entry.group, "source_id": entry.id}
        if entry.group == "agent":
            return self._agent_task(entry, common, meta)
        answer = entry.answer["ground_truth"]
        if entry.group == "normal":
            first = _checked_alternatives(entry)[0]
            gold = AssistantTurn(tool_calls=[ToolCall(gold_function_name(k, entry.data["function"]), v) for k, v in first.items()])
        else:
            gold = AssistantTurn(content=gold_reply(entry.category, answer))
        instruction = self._prompt(f"USER_PROMPT_{entry.language.upper()}").format(question=entry.data["question"])
        return TaskSpec(
            instruction=instruction,
            user_turns=[instruction],
            solution=[gold],
            verifier=VerifierConfig(
                kind=f"ace_{entry.group}", params={"functions": entry.data["function"], "answer": answer, "category": entry.category}
            ),
            metadata={**meta, "system_prompt": self._single_system_prompt(entry)},
            **common,
        )

    def _prompt(self, name: str) -> str:
        return D.prompt(name, self.data_dir)

    def _single_system_prompt(self, entry: D.Entry) -> str:
        lang = entry.language.upper()
        data = entry.data
        if entry.group == "special":
            return self._prompt(f"SYSTEM_PROMPT_FOR_SPECIAL_DATA_{lang}").format(time=data.get("time", ""), function=data["function"])
        if entry.category == "normal_preference":
            return self._prompt(f"SYSTEM_PROMPT_FOR_PREFERENCE_DATA_{lang}").format(
                profile=data.get("profile", ""), function=data["function"]
            )
        return self._prompt(f"SYSTEM_PROMPT_FOR_NORMAL_DATA_{lang}").format(time=data.get("time", ""), function=data["function"])

    # ---------------------------------------------------------------------- agent
    def _agent_task(self, entry: D.Entry, common: dict[str, Any], meta: dict[str, Any]) -> TaskSpec:
        data, lang = entry.data, entry.language
        if unknown := [c for c in data["involved_classes"] if c not in SCENARIO_CLASSES]:
            raise entry.row.error(
                "involved_classes", f"names {unknown}, which are not scenario classes (known: {sorted(SCENARIO_CLASSES)})"
            )
        kind = entry.category.split("_", 1)[1]
        question = data["question"]
        first = question if kind == "multi_step" else OPENING[lang].format(question=question)
        meta |= {
            "kind": kind, "question": question, "involved_classes": list(data["involved_classes"]),
            "initial_config": data["initial_config"], "system_prompt": self._agent_system_prompt(entry, kind),
        }  # fmt: skip
        task = TaskSpec(
            instruction=first,
            user_turns=[first],
            verifier=VerifierConfig(
                kind="ace_agent", params={"ground_truth": entry.answer["ground_truth"], "mile_stone": entry.answer["mile_stone"]}
            ),
            metadata=meta,
            **common,
        )
        solution = self._milestone_solution(task, entry.answer_row)
        task.metadata["gold_reaches_end_state"] = solution is not None
        task.solution = solution
        return task

    def _agent_system_prompt(self, entry: D.Entry, kind: str) -> str:
        lang = entry.language.upper()
        base = D.prompt_in(f"{kind}/APIModel_agent.py", f"MULTI_TURN_AGENT_PROMPT_SYSTEM_{lang}", self.data_dir)
        policy = self._prompt(f"TRAVEL_PROMPT_{lang}" if "Travel" in entry.data["involved_classes"] else f"BASE_PROMPT_{lang}")
        extra = D.prompt_in("multi_step/APIModel_agent.py", f"FOOD_SYSTEM_{lang}", self.data_dir) if kind == "multi_step" else ""
        return "\n".join(p for p in (base, policy, extra) if p)

    def _milestone_solution(self, task: TaskSpec, answer: Row) -> list[AssistantTurn] | None:
        """The first milestone list as gold turns, if replaying it reaches the ground-truth end state.

        Raises:
            DataError: A milestone calls a tool that none of the task's scenario classes has.
        """
        world = self.make_world(task)
        tools = {t.name for t in world.tools()}
        alternatives = milestone_alternatives(task.verifier.params["mile_stone"])
        for index, stones in enumerate(alternatives):
            for call in (c for text in stones for c in parse_call_string(text) or []):
                if call.name not in tools:
                    raise answer.error(f"mile_stone[{index}]" if len(alternatives) > 1 else "mile_stone",
                                       f"calls {call.name!r}, a tool none of {task.metadata['involved_classes']} has")  # fmt: skip
        stones = alternatives[0]
        turns = [AssistantTurn(tool_calls=calls) for calls in map(parse_call_string, stones) if calls]
        if len(turns) != len(stones):
            return None
        for turn in turns:
            for call in turn.tool_calls:
                try:
                    world.call(call.name, call.arguments)
                except (ToolError, KeyError, TypeError):
                    return None
        assert isinstance(world, ScenarioWorld)
        if not check_end_state(world.saved_state(), task.verifier.params["ground_truth"], "strict").valid:
            return None
        return [*turns, AssistantTurn(content=DONE[task.metadata["language"]])]

    # ------------------------------------------------------------------- episodes
    def make_world(self, task: TaskSpec) -> World:
        meta = task.metadata
        if meta.get("group") != "agent":
            return World()
        states = D.initial_states(meta["language"], meta["kind"], self.data_dir)
        return ScenarioWorld(meta["involved_classes"], states, meta["initial_config"], meta["language"])

    def make_verifier(self, task: TaskSpec) -> Verifier:
        group = task.metadata.get("group")
        if group == "normal":
            return NormalVerifier(task, self.mode, self.strip_whitespace)
        if group == "special":
            return SpecialVerifier(task, self.mode)
        return AgentVerifier(task, self.mode)

    def make_user(self, task: TaskSpec) -> UserSimulator:
        if self.user_backend is None or task.metadata.get("kind") != "multi_turn":
            return ScriptedTurns()
        from envsched_gym.llm_user import LLMUser

        lang = task.metadata["language"].upper()
        travel = "Travel" in task.metadata["involved_classes"]
        guidelines = D.prompt(f"SYSTEM_PROMPT_{'TRAVEL' if travel else 'BASE'}_{lang}", self.data_dir)
        return LLMUser(
            self.user_backend,
            guidelines=guidelines.replace("{instruction}", "(the scenario below)"),
            scenario=lambda t: str(t.metadata["question"]),
            greeting=None,
            stop_tokens=("finish conversation",),
        )


def _checked_alternatives(entry: D.Entry) -> list[dict[str, Any]]:
    """The alternatives of a normal entry's ground truth, each calling only functions the entry declares."""
    declared = {f["name"] for f in entry.data["function"]}
    options = alternatives(entry.answer["ground_truth"])
    for option in options:
        if not isinstance(option, dict):
            raise entry.answer_row.error("ground_truth", f"must be {{function: {{parameter: value}}}} objects, not {type(option).__name__}")
        for key in option:
            if gold_function_name(key, entry.data["function"]) not in declared:
                raise entry.answer_row.error(
                    "ground_truth", f"calls {key!r}, a function the entry does not declare (it declares {sorted(declared)})"
                )
    return options


def env_id(language: str, category: str) -> str:
    """The environment id of a (language, category), e.g. ``ACE/normal/normal_atom_bool/en``."""
    return f"ACE/{D.group_of(category)}/{category}/{language}"
