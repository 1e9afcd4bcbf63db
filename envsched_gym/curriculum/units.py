"""Shared units of the pool: the tools, environment and signature categories each task exercises.

A *unit* is something several tasks can have in common and a policy can get better at: a tool
name, an environment, or a category token of the execution signature (dependency pattern,
interaction, user simulator, verifier kind, reward type). Every node is a weighted row over the
units, each *kind* of unit summing to 1 where present:

- **tool**: the tools its gold solution calls, ``1 / distinct tools`` each. A task with a gold
  solution that makes no call exercises no tool (it teaches refusing, a signature category); a
  task without a gold solution exercises the tools it can use;
- **env**: its environment, 1;
- **signature**: its signature categories, ``1 / categories`` each.

Two consumers share the rows: the declaration model (:mod:`envsched_gym.curriculum.regression`)
regresses success on them, and EnvSched's transfer term
(:meth:`envsched_gym.curriculum.envsched.EnvSchedScheduler.transfer_value`) asks how much of the
pool shares a candidate's units and how well those units are learned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from envsched_gym.suite import TaskNode

KINDS = ("tool", "env", "signature")
"""Unit kinds by code (the values of :attr:`Units.kind`)."""


@dataclass
class Units:
    """The node x unit matrix of a suite and what each unit is.

    Attributes:
        matrix: Sparse CSR ``(nodes, units)``; each kind's entries of a row sum to 1 where present.
        kind: Kind code of every unit (an index into :data:`KINDS`).
        names: Name of every unit (``"tool=get_order"``, ``"env=ToolWorld/shop-3"``, ``"pattern=chain"``).
        count: Number of nodes having each unit.
    """

    matrix: sp.csr_matrix
    kind: np.ndarray
    names: list[str]
    count: np.ndarray

    def __len__(self) -> int:
        return self.matrix.shape[1]


def used_tools(node: TaskNode, available: list[str]) -> list[str]:
    """Distinct tools the node exercises: its gold calls', none for a gold without calls, else ``available``."""
    if node.task.solution:
        return sorted({c.name for turn in node.task.solution for c in turn.tool_calls})
    return available


def build_units(
    nodes: list[TaskNode], env_of: np.ndarray, env_ids: list[str], categories: list[list[str]], available: list[list[str]]
) -> Units:
    """The unit rows of ``nodes`` (see the module docstring).

    Args:
        nodes: Suite nodes in scheduling order.
        env_of: Environment position of each node.
        env_ids: Environment ids by position (units ``0 .. len(env_ids) - 1`` are the environments).
        categories: Each node's signature category tokens (from ``execution_signature``).
        available: Each node's available tool names (shared list objects are fine).
    """
    index = {f"env={e}": i for i, e in enumerate(env_ids)}
    rows, cols, vals = [np.arange(len(nodes))], [env_of], [np.ones(len(nodes))]
    row_ids, col_ids, weights = [], [], []
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, (node, cats) in enumerate(zip(nodes, categories, strict=True)):
        tools = used_tools(node, available[i])
        for name in tools:
            row_ids.append(i)
            col_ids.append(index.setdefault(f"tool={name}", len(index)))
            weights.append(1.0 / len(tools))
        groups.setdefault(tuple(cats), []).append(i)
    for cats, members in groups.items():
        for token in cats:
            column = index.setdefault(token, len(index))
            rows.append(np.asarray(members))
            cols.append(np.full(len(members), column))
            vals.append(np.full(len(members), 1.0 / len(cats)))
    rows.append(np.asarray(row_ids, dtype=np.int64))
    cols.append(np.asarray(col_ids, dtype=np.int64))
    vals.append(np.asarray(weights))
    names = list(index)
    matrix = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(len(nodes), len(names)))
    kind = np.array([0 if n.startswith("tool=") else 1 if n.startswith("env=") else 2 for n in names], dtype=np.int8)
    return Units(matrix=matrix, kind=kind, names=names, count=np.diff(matrix.tocsc().indptr))
