"""Per-process index of the tasks behind one gymnasium id, shared by every env instance.

Loading a benchmark's tasks and compiling tool validators is done once per process, not per
``gym.make``; environments in a vectorised or GRPO rollout pool share the index.
"""

from __future__ import annotations

import difflib
from typing import Any, ClassVar

from envsched_gym.adapter import Adapter
from envsched_gym.declarations import EnvSpec, TaskSpec, ToolSpec
from envsched_gym.validation import ToolBox


class TaskIndex:
    """Tasks of one gymnasium id by task id, with caches keyed by tool-list identity."""

    _instances: ClassVar[dict[tuple[int, str], TaskIndex]] = {}

    def __init__(self, adapter: Adapter, gym_id: str) -> None:
        envs = {e.env_id: e for e in adapter.env_specs() if e.gym_id == gym_id}
        if not envs:
            raise ValueError(f"adapter {type(adapter).__name__} serves no environment with gym id '{gym_id}'; it serves {adapter.gym_ids()}")
        self.adapter = adapter
        """Held so that the adapter's ``id`` (the cache key) is never reused while cached."""
        self.gym_id = gym_id
        self.envs = envs
        self.tasks: dict[str, TaskSpec] = {}
        for task in adapter.tasks("all"):
            if task.env_id in envs:
                if task.task_id in self.tasks:
                    raise ValueError(f"{gym_id}: duplicate task id '{task.task_id}'; task ids must be unique")
                self.tasks[task.task_id] = task
        self._by_split: dict[str, list[str]] = {}
        for task_id, task in self.tasks.items():
            self._by_split.setdefault(task.split, []).append(task_id)
        self._toolboxes: dict[int, tuple[list[ToolSpec], ToolBox, list[dict[str, Any]], dict[str, list[str]]]] = {}

    @classmethod
    def for_adapter(cls, adapter: Adapter, gym_id: str) -> TaskIndex:
        """The shared index of ``adapter``'s tasks under ``gym_id`` (built on first use)."""
        key = (id(adapter), gym_id)
        if key not in cls._instances:
            cls._instances[key] = cls(adapter, gym_id)
        return cls._instances[key]

    def get(self, task_id: str) -> tuple[TaskSpec, EnvSpec]:
        """The task and its environment; a did-you-mean error for an unknown id."""
        task = self.tasks.get(task_id)
        if task is None:
            close = difflib.get_close_matches(str(task_id), list(self.tasks), n=3)
            hint = f" Did you mean {close}?" if close else f" Example ids: {list(self.tasks)[:3]}"
            raise KeyError(f"{self.gym_id}: unknown task_id '{task_id}'.{hint}")
        return task, self.envs[task.env_id]

    def ids(self, split: str = "all") -> list[str]:
        """Task ids of ``split`` (``all`` for every task), in declaration order."""
        return list(self.tasks) if split == "all" else self._by_split.get(split, [])

    def splits(self) -> list[str]:
        """Splits that have at least one task."""
        return sorted(self._by_split)

    def tool_entry(self, tools: list[ToolSpec]) -> tuple[list[ToolSpec], ToolBox, list[dict[str, Any]], dict[str, list[str]]]:
        """``(tools, toolbox, openai_tools, signatures)`` in one lookup (cached per list object)."""
        entry = self._toolboxes.get(id(tools))
        if entry is None or entry[0] is not tools:
            signatures = {t.name: list(t.parameters.get("properties", {})) for t in tools}
            entry = (tools, ToolBox(tools), [t.openai_schema() for t in tools], signatures)
            if len(self._toolboxes) > 4096:
                self._toolboxes.clear()
            self._toolboxes[id(tools)] = entry
        return entry

    def toolbox(self, tools: list[ToolSpec]) -> ToolBox:
        """Compiled validators for ``tools`` (cached while the same list object is used)."""
        return self.tool_entry(tools)[1]

    def openai_tools(self, tools: list[ToolSpec]) -> list[dict[str, Any]]:
        """``tools`` in OpenAI ``{"type": "function", ...}`` form (cached)."""
        return self.tool_entry(tools)[2]

    def signatures(self, tools: list[ToolSpec]) -> dict[str, list[str]]:
        """Parameter names per tool in declaration order, for positional python-syntax calls."""
        return self.tool_entry(tools)[3]
