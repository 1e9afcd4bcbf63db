"""The suite: every (environment, task) node of the registered families, with declarations.

The curriculum schedules over suite nodes; trainers make environments from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from envsched_gym.declarations import EnvSpec, TaskSpec
from envsched_gym.registry import families as registered_families
from envsched_gym.registry import get_adapter


@dataclass(frozen=True)
class TaskNode:
    """One schedulable unit: a task in its environment."""

    env: EnvSpec
    task: TaskSpec

    @property
    def task_id(self) -> str:
        """The task's id (unique within the suite)."""
        return self.task.task_id

    @property
    def family(self) -> str:
        """The environment's family."""
        return self.env.family

    @property
    def split(self) -> str:
        """``train``, ``test`` or ``heldout``."""
        return self.task.split


class Suite(Sequence[TaskNode]):
    """An ordered, filterable collection of :class:`TaskNode`."""

    def __init__(self, nodes: Iterable[TaskNode], options: dict[str, dict[str, Any]] | None = None) -> None:
        self.nodes: list[TaskNode] = list(nodes)
        self.options: dict[str, dict[str, Any]] = dict(options or {})
        """Adapter options per family the nodes were loaded with (used by :meth:`make_env`)."""
        self._by_id = {n.task_id: n for n in self.nodes}
        if len(self._by_id) != len(self.nodes):
            raise ValueError("suite has duplicate task ids; adapters must make task ids unique")

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[TaskNode]:
        return iter(self.nodes)

    def __getitem__(self, index: Any) -> Any:
        return self.nodes[index]

    def node(self, task_id: str) -> TaskNode:
        """The node of ``task_id``."""
        try:
            return self._by_id[task_id]
        except KeyError:
            raise KeyError(f"task '{task_id}' is not in this suite ({len(self)} nodes)") from None

    @property
    def envs(self) -> dict[str, EnvSpec]:
        """Environment specs by env_id, in order of first appearance."""
        return {n.env.env_id: n.env for n in self.nodes}

    def filter(self, family: str | Sequence[str] | None = None, split: str | Sequence[str] | None = None, env_ids: Sequence[str] | None = None) -> Suite:
        """Nodes matching every given criterion."""
        fams = {family} if isinstance(family, str) else set(family or [])
        splits = {split} if isinstance(split, str) else set(split or [])
        nodes = [
            n for n in self.nodes
            if (not fams or n.family in fams) and (not splits or "all" in splits or n.split in splits)
            and (env_ids is None or n.env.env_id in env_ids)
        ]  # fmt: skip
        return Suite(nodes, self.options)

    def make_env(self, task_id: str, **kwargs: Any) -> gym.Env:
        """``gym.make`` the environment that serves ``task_id``, with the suite's adapter options."""
        node = self.node(task_id)
        if node.family in self.options:
            kwargs.setdefault("adapter_options", self.options[node.family])
        return gym.make(node.env.gym_id, **kwargs)


def suite(
    families: str | Sequence[str] | None = None,
    split: str = "all",
    options: dict[str, dict[str, Any]] | None = None,
) -> Suite:
    """Every node of ``families`` (default: all registered) in ``split``.

    Args:
        families: Family names, e.g. ``["ToolWorld", "BFCL"]``.
        split: ``train``, ``test``, ``heldout`` or ``all``.
        options: Adapter options per family, e.g. ``{"Tau": {"task_set": "pre_tau3"}}``.

    Families whose data is missing raise with the adapter's own message on how to get it.
    """
    names = [families] if isinstance(families, str) else list(families or registered_families())
    nodes: list[TaskNode] = []
    for name in names:
        adapter = get_adapter(name, (options or {}).get(name))
        envs = {e.env_id: e for e in adapter.env_specs()}
        for task in adapter.tasks(split):
            nodes.append(TaskNode(envs[task.env_id], task))
    return Suite(nodes, {name: opts for name, opts in (options or {}).items() if name in names and opts})
