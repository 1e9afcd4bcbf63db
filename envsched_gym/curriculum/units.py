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

The rows are built from coded arrays (:class:`ToolUse`, :class:`Categories`), never node by
node: :func:`used_tools` is the rule for one node, :meth:`ToolUse.used` applies it to all.
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
            Environments come first (in ``env_ids`` order), then tools, then categories, each in
            the order the nodes first mention them.
        count: Number of nodes having each unit.
    """

    matrix: sp.csr_matrix
    kind: np.ndarray
    names: list[str]
    count: np.ndarray

    def __len__(self) -> int:
        return self.matrix.shape[1]


@dataclass
class Categories:
    """Every node's signature category tokens, coded: node ``i`` has ``tokens[of[i]]``.

    Attributes:
        of: Code of each node's category tuple; codes number the tuples by first appearance.
        tokens: The distinct tuples (``("pattern=chain", "interaction=multi_step", ...)``).
    """

    of: np.ndarray
    tokens: list[tuple[str, ...]]


@dataclass
class ToolUse:
    """The tool names each node exercises, flattened: entry ``j`` is ``names[name[j]]`` used by node ``node[j]``.

    Entries are grouped by node in node order, and within a node in :func:`used_tools`'s order.
    """

    node: np.ndarray
    name: np.ndarray
    names: list[str]

    @classmethod
    def used(
        cls,
        has_gold: np.ndarray,
        call_node: np.ndarray,
        call_name: np.ndarray,
        list_of: np.ndarray,
        list_ptr: np.ndarray,
        list_name: np.ndarray,
        names: list[str],
    ) -> ToolUse:
        """:func:`used_tools` of every node from coded arrays.

        Args:
            has_gold: Whether each node has a (non-empty) gold solution.
            call_node: Node of every gold call, nondecreasing.
            call_name: Name code of every gold call.
            list_of: Each node's tool list (the tools it can use), as a code.
            list_ptr: Tool list ``l``'s name codes are ``list_name[list_ptr[l]:list_ptr[l + 1]]``, in list order.
            list_name: Name codes of the lists' tools.
            names: Name of every code.
        """
        width = max(len(names), 1)
        by_name = np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
        rank = np.empty(len(names), dtype=np.int64)
        rank[by_name] = np.arange(len(names))
        pairs = np.sort(call_node * width + rank[call_name])  # (node, name) by node, then name: each node's sorted(set(calls))
        pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs  # np.unique would hash: 20x slower at 3.5M keys
        gold_node, gold_name = pairs // width, by_name[pairs % width]
        open_nodes = np.flatnonzero(~has_gold)
        open_row, open_name = _ragged_take(list_ptr, list_name, list_of[open_nodes])
        node = np.concatenate([gold_node, open_nodes[open_row]])
        order = np.argsort(node, kind="stable")  # no node is in both parts; each part is already in node order
        return cls(node=node[order], name=np.concatenate([gold_name, open_name])[order], names=names)


def used_tools(node: TaskNode, available: list[str]) -> list[str]:
    """Distinct tools the node exercises: its gold calls', none for a gold without calls, else ``available``."""
    if node.task.solution:
        return sorted({c.name for turn in node.task.solution for c in turn.tool_calls})
    return available


def build_units(env_of: np.ndarray, env_ids: list[str], tools: ToolUse, categories: Categories) -> Units:
    """The unit rows (see the module docstring).

    Args:
        env_of: Environment position of each node.
        env_ids: Environment ids by position (units ``0 .. len(env_ids) - 1`` are the environments).
        tools: The tools each node exercises.
        categories: Each node's signature categories.
    """
    n = len(env_of)
    index = {f"env={e}": i for i, e in enumerate(env_ids)}
    seen, first = np.unique(tools.name, return_index=True)
    tool_codes = seen[np.argsort(first, kind="stable")]
    tool_column = np.zeros(len(tools.names), dtype=np.int64)
    tool_column[tool_codes] = [index.setdefault(f"tool={tools.names[c]}", len(index)) for c in tool_codes.tolist()]
    token_column = np.array([index.setdefault(t, len(index)) for cats in categories.tokens for t in cats], dtype=np.int64)
    widths = np.array([len(cats) for cats in categories.tokens], dtype=np.int64)
    cat_rows, cat_cols = _ragged_take(np.concatenate([[0], np.cumsum(widths)]), token_column, categories.of)
    per_node = np.bincount(tools.node, minlength=n)
    rows = np.concatenate([np.arange(n), tools.node, cat_rows])
    cols = np.concatenate([env_of, tool_column[tools.name], cat_cols])
    vals = np.concatenate([np.ones(n), 1.0 / per_node[tools.node], 1.0 / widths[categories.of][cat_rows]])
    names = list(index)
    matrix = sp.csr_matrix((vals, (rows, cols)), shape=(n, len(names)))
    kind = np.array([0 if u.startswith("tool=") else 1 if u.startswith("env=") else 2 for u in names], dtype=np.int8)
    return Units(matrix=matrix, kind=kind, names=names, count=np.diff(matrix.tocsc().indptr))


def _ragged_take(ptr: np.ndarray, values: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``which`` of a ragged array (``values[ptr[r]:ptr[r + 1]]`` is row ``r``), concatenated.

    Returns:
        The position in ``which`` of every taken value, and the values.
    """
    lengths = ptr[which + 1] - ptr[which]
    at = np.repeat(np.arange(len(which)), lengths)
    offsets = np.arange(len(at)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return at, values[ptr[which][at] + offsets]

