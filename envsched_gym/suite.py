"""The suite: every (environment, task) node of the registered families, with declarations.

The curriculum schedules over suite nodes; trainers make environments from them.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence
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
    """An ordered, filterable collection of :class:`TaskNode`.

    Args:
        nodes: The nodes, in scheduling order.
        options: Adapter options per family the nodes were loaded with (used by :meth:`make_env`).
        weights: Target share of each family in the training mix, relative (they need not sum
            to 1; see :func:`check_weights`). ``None``: each family's share of the nodes. The
            schedulers read them (``envsched_gym.curriculum.mixture``).
    """

    def __init__(
        self, nodes: Iterable[TaskNode], options: dict[str, dict[str, Any]] | None = None, weights: Mapping[str, float] | None = None
    ) -> None:
        self.nodes: list[TaskNode] = list(nodes)
        self.options: dict[str, dict[str, Any]] = dict(options or {})
        self._by_id = {n.task_id: n for n in self.nodes}
        if len(self._by_id) != len(self.nodes):
            raise ValueError("suite has duplicate task ids; adapters must make task ids unique")
        self.weights: dict[str, float] | None = None if weights is None else check_weights(weights, self.families)

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
    def families(self) -> list[str]:
        """Family names, in order of first appearance."""
        return list(dict.fromkeys(n.family for n in self.nodes))

    def with_weights(self, weights: Mapping[str, float] | None) -> Suite:
        """The same nodes and options with family ``weights`` (checked; ``None``: pool share)."""
        return Suite(self.nodes, self.options, weights)

    @property
    def envs(self) -> dict[str, EnvSpec]:
        """Environment specs by env_id, in order of first appearance."""
        return {n.env.env_id: n.env for n in self.nodes}

    def filter(
        self, family: str | Sequence[str] | None = None, split: str | Sequence[str] | None = None, env_ids: Sequence[str] | None = None
    ) -> Suite:
        """Nodes matching every given criterion (keeping the weights of the families left)."""
        fams = {family} if isinstance(family, str) else set(family or [])
        splits = {split} if isinstance(split, str) else set(split or [])
        nodes = [
            n for n in self.nodes
            if (not fams or n.family in fams) and (not splits or "all" in splits or n.split in splits)
            and (env_ids is None or n.env.env_id in env_ids)
        ]  # fmt: skip
        kept = {n.family for n in nodes}
        weights = None if self.weights is None else {f: w for f, w in self.weights.items() if f in kept}
        return Suite(nodes, self.options, weights)

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
    weights: Mapping[str, float] | None = None,
) -> Suite:
    """Every node of ``families`` (default: all registered) in ``split``.

    Args:
        families: Family names, e.g. ``["ToolWorld", "BFCL"]``.
        split: ``train``, ``test``, ``heldout`` or ``all``.
        options: Adapter options per family, e.g. ``{"Tau": {"task_set": "pre_tau3"}}``.
        weights: Target mix of the families for the curriculum, e.g. ``{"ToolWorld": 0.7,
            "BFCL": 0.3}``: one positive weight for every family (see :func:`check_weights`).
            ``None``: each family's share of the nodes, with the curriculum's floor and cap.

    Families whose data is missing raise with the adapter's own message on how to get it.
    """
    names = [families] if isinstance(families, str) else list(families or registered_families())
    nodes: list[TaskNode] = []
    for name in names:
        adapter = get_adapter(name, (options or {}).get(name))
        envs = {e.env_id: e for e in adapter.env_specs()}
        for task in adapter.tasks(split):
            nodes.append(TaskNode(envs[task.env_id], task))
    return Suite(nodes, {name: opts for name, opts in (options or {}).items() if name in names and opts}, weights)


def check_weights(weights: Mapping[str, float], families: Sequence[str]) -> dict[str, float]:
    """``weights`` as plain floats, in the order of ``families``, once every one is known to be usable.

    A weight is relative (``{"A": 7, "B": 3}`` is ``{"A": 0.7, "B": 0.3}``). Every family of
    the suite needs one, because a silent default would decide a family's share without the
    user; a weight for a family outside the suite is a typo until proven otherwise.

    Raises:
        ValueError: A family without a weight, a weight for an unknown family (with the closest
            known name), or a weight that is not a finite number above zero.
    """
    if not isinstance(weights, Mapping):
        raise ValueError(
            f"family weights must map family names to numbers, e.g. {{'{families[0] if families else 'ToolWorld'}': 1.0}}; got {weights!r:.80}"
        )
    for name in weights:
        if name not in families:
            close = difflib.get_close_matches(str(name), list(families), n=1, cutoff=0.5)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ValueError(f"family weight for '{name}', which is not a family of this suite.{hint} Families: {list(families)}")
    missing = [f for f in families if f not in weights]
    if missing:
        raise ValueError(
            f"no family weight for {missing}; give every family of the suite a weight (families: {list(families)}), or pass no weights"
            " to use each family's share of the tasks"
        )
    out = {}
    for name in families:
        value = weights[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
            raise ValueError(
                f"family weight for '{name}' is {value!r}; weights must be finite numbers above 0 (a family that should not be trained"
                " on belongs outside the suite)"
            )
        out[name] = float(value)
    return out


def parse_weights(text: str) -> dict[str, float] | None:
    """``"ToolWorld=0.7,BugTracker=0.3"`` as ``{"ToolWorld": 0.7, "BugTracker": 0.3}``; ``""`` as ``None`` (pool share).

    Only the syntax is checked here; the names and values are checked against a suite by
    :func:`check_weights`.

    Raises:
        ValueError: An item without ``=``, a repeated family, or a weight that is not a number.
    """
    out: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = (s.strip() for s in item.partition("="))
        if not sep or not name:
            raise ValueError(f"family weight '{item}' is not FAMILY=WEIGHT; write them as ToolWorld=0.7,BugTracker=0.3")
        if name in out:
            raise ValueError(f"family '{name}' has two weights in '{text}'; give each family one")
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(f"family weight '{item}': '{value}' is not a number; write them as ToolWorld=0.7,BugTracker=0.3") from None
    return out or None
