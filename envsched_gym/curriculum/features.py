"""Node features from the declarations alone (no rollouts): what the graph's edges are built on.

Two views of every (environment, task) node:

- **within-environment** (sparse): TF-IDF of the task text (instruction and user turns) next to
  a multi-hot of the task's tools, the environment's state components and verifier kind; each
  part L2-normalised and weighted so that a dot product is ``text_weight * cos(text) +
  attr_weight * cos(attributes)``.
- **execution signature** (dense, comparable across environments): expected turns and calls,
  distinct tools, parallel calls, read/write mix, dependency pattern, interaction, user simulator,
  verifier kind and reward type. From the gold solution when the task has one, else estimated
  from the task's tools and turns. Missing fields fall back to neutral values, so any family works.

Text is hashed (``HashingVectorizer``) so a million nodes need no vocabulary pass. Everything
else is computed from the declarations gathered into coded arrays (:class:`_Declarations`):
one pass per declaration field, then numpy over the calls and nodes, and Python only once per
distinct environment, tool list, tool name or category tuple. :func:`execution_signature` and
:func:`task_text` state the rules for one node; ``build_features`` computes the same for all.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.preprocessing import normalize

from envsched_gym.curriculum.units import Categories, ToolUse, Units, build_units
from envsched_gym.declarations import AssistantTurn, EnvSpec, TaskSpec, ToolSpec
from envsched_gym.suite import TaskNode

PATTERN_KEYS = ("dependency", "dependency_pattern", "call_pattern", "pattern")
"""``TaskSpec.metadata`` keys read as the call-dependency pattern (first present wins)."""

NUMERIC = ("turns", "calls", "distinct_tools", "max_parallel", "write_fraction", "available_tools", "has_gold")

CALL_KINDS = ("writes", "reads", "no_call", "open")
"""What a node's gold solution does, by code (the values of :attr:`NodeFeatures.call_kind`): calls a
tool declared ``write`` (``writes``), calls only read tools (``reads``), makes no call
(``no_call``: refusals, BFCL irrelevance), or there is no gold solution (``open``)."""

_ATTRIBUTE_DIMS = 2**14

T = TypeVar("T")


@dataclass
class NodeFeatures:
    """Feature matrices of a suite, row ``i`` for node ``i``.

    Attributes:
        within: Sparse CSR, rows L2-normalised; dot product = within-environment similarity.
        signature: Dense float32, rows L2-normalised; dot product = execution-signature similarity.
        env_of: Environment position of each node.
        env_ids: Environment ids by position.
        numeric: Dense float32 ``(nodes, len(NUMERIC))``: the signature's standardised
            log-numeric facts before normalisation (inputs of the declaration model).
        units: The tools, environment and signature categories each node exercises.
        call_kind: Code of each node's :data:`CALL_KINDS` entry (EnvSched covers every kind of
            a family; see :mod:`envsched_gym.curriculum.envsched`).
    """

    within: sp.csr_matrix
    signature: np.ndarray
    env_of: np.ndarray
    env_ids: list[str]
    numeric: np.ndarray
    units: Units
    call_kind: np.ndarray

    def __len__(self) -> int:
        return self.within.shape[0]


def build_features(nodes: list[TaskNode], text_weight: float = 0.6, text_dims: int = 2**18) -> NodeFeatures:
    """Feature matrices for ``nodes`` (see the module docstring).

    Args:
        nodes: Suite nodes in scheduling order.
        text_weight: Share of task-text similarity in the within-environment similarity; the
            rest goes to shared tools, state components and verifier kind.
        text_dims: Hashing dimensions of the task text.
    """
    if not nodes:
        raise ValueError("build_features: no nodes; pass a suite with at least one task")
    decl = _Declarations.gather(nodes)
    text = _text_matrix([task_text(t) for t in decl.tasks], text_dims)
    within = sp.hstack([np.sqrt(text_weight) * text, np.sqrt(1.0 - text_weight) * _attributes(decl)], format="csr")
    within = normalize(within, copy=False).astype(np.float32)
    tools = ToolUse.used(decl.has_gold, decl.call_node, decl.call_name, decl.list_of, decl.list_ptr, decl.list_name, decl.names)
    numeric, categories = _signatures(decl, np.bincount(tools.node, minlength=len(nodes)))
    scaled, signature = _signature_matrix(numeric, categories)
    units = build_units(decl.env_of, decl.env_ids, tools, categories)
    return NodeFeatures(within=within, signature=signature, env_of=decl.env_of, env_ids=decl.env_ids, numeric=scaled, units=units,
                        call_kind=call_kinds(numeric))  # fmt: skip


def call_kinds(numeric: np.ndarray) -> np.ndarray:
    """The :data:`CALL_KINDS` code of every node, from its raw signature facts ``(nodes, len(NUMERIC))``."""
    column = {name: numeric[:, i] for i, name in enumerate(NUMERIC)}
    gold, calls, writes = column["has_gold"] > 0, column["calls"] > 0, column["write_fraction"] > 0
    return np.select([~gold, ~calls, writes], [CALL_KINDS.index("open"), CALL_KINDS.index("no_call"), CALL_KINDS.index("writes")],
                     CALL_KINDS.index("reads")).astype(np.int8)  # fmt: skip


def node_call_kinds(nodes: Sequence[TaskNode]) -> np.ndarray:
    """The :data:`CALL_KINDS` code of each of ``nodes`` by :func:`call_kinds`, without building the suite's features."""
    numeric = np.array([execution_signature(node)[0] for node in nodes], dtype=np.float64).reshape(-1, len(NUMERIC))
    return call_kinds(numeric)


def task_text(task: TaskSpec) -> str:
    """The text a task is described by: instruction plus every scripted user turn."""
    turns = [t for t in task.user_turns if t != task.instruction]
    return " ".join([task.instruction, *turns])


def task_tools(node: TaskNode) -> list[ToolSpec]:
    """Tools the task can use (task-specific tools override the environment's)."""
    return node.task.tools if node.task.tools is not None else node.env.tools


def execution_signature(node: TaskNode, writes: set[str] | None = None) -> tuple[list[float], list[str]]:
    """The abstract execution signature of a node: numeric facts and categorical tokens.

    Numeric (in :data:`NUMERIC` order): expected user turns, expected calls, distinct tools,
    most parallel calls in one message, fraction of write calls, tools available, whether a gold
    solution exists. Categorical: dependency pattern, interaction, user simulator, verifier kind,
    reward type. ``writes`` (names of the write tools) may be passed in when precomputed.
    ``build_features`` computes the same for every node at once (:func:`_signatures`).
    """
    task, env = node.task, node.env
    tools = task_tools(node)
    writes = {t.name for t in tools if t.write} if writes is None else writes
    turns = max(1, len(task.user_turns))
    if task.solution:
        calls = [c.name for turn in task.solution for c in turn.tool_calls]
        per_message = [len(turn.tool_calls) for turn in task.solution]
        n_calls, distinct = len(calls), len(set(calls))
        parallel = max(per_message, default=0)
        write_frac = sum(c in writes for c in calls) / n_calls if n_calls else 0.0
        chained = sum(1 for p in per_message if p) > turns
        default_pattern = "none" if not n_calls else "parallel" if parallel > 1 else "chain" if chained else "single"
    else:
        n_calls = int(task.metadata.get("num_calls", turns))
        distinct = min(n_calls, len(tools))
        parallel = 1
        write_frac = len(writes) / len(tools) if tools else 0.0
        default_pattern = "unknown"
    pattern = next((str(task.metadata[k]) for k in PATTERN_KEYS if k in task.metadata), default_pattern)
    reward_type = str(task.metadata.get("reward_type", "binary"))
    numeric = [turns, n_calls, distinct, parallel, write_frac, len(tools), float(bool(task.solution))]
    categories = [f"pattern={pattern}", f"interaction={env.interaction}", f"user={env.user_simulator}",
                  f"verifier={task.verifier.kind if task.verifier.kind != 'none' else env.verifier_kind}",
                  f"reward={reward_type}"]  # fmt: skip
    return numeric, categories


@dataclass
class _Declarations:
    """What the features read from the nodes, as coded arrays.

    Node arrays have one entry per node, message arrays one per gold message and call arrays one
    per gold call, in node order. Environments and tool lists are coded by identity (the nodes
    of an environment share its objects), so their facts are read once and broadcast.

    Attributes:
        tasks: Each node's task.
        env_of: Environment position of each node (by ``env_id``).
        env_ids: Environment ids by position, in first-appearance order.
        env_last: By position, the ``EnvSpec`` of the last node with that id.
        env_code: Code of each node's ``EnvSpec`` object.
        envs: The ``EnvSpec`` objects by code.
        list_of: Code of each node's tool list (:func:`task_tools`).
        lists: The tool lists by code.
        list_ptr: List ``l``'s tools are entries ``list_ptr[l]:list_ptr[l + 1]`` of ``list_name``/``list_write``.
        list_name: Name code of every listed tool.
        list_write: Whether every listed tool writes.
        overrides: Whether each task declares its own tools.
        has_gold: Whether each task has a non-empty gold solution.
        turns: Expected user turns of each node (at least 1).
        message_node: Node of every gold message.
        message_calls: Tool calls in every gold message.
        call_node: Node of every gold call.
        call_name: Name code of every gold call.
        names: Tool and call names by code.
    """

    tasks: list[TaskSpec]
    env_of: np.ndarray
    env_ids: list[str]
    env_last: list[EnvSpec]
    env_code: np.ndarray
    envs: list[EnvSpec]
    list_of: np.ndarray
    lists: list[list[ToolSpec]]
    list_ptr: np.ndarray
    list_name: np.ndarray
    list_write: np.ndarray
    overrides: np.ndarray
    has_gold: np.ndarray
    turns: np.ndarray
    message_node: np.ndarray
    message_calls: np.ndarray
    call_node: np.ndarray
    call_name: np.ndarray
    names: list[str]

    @classmethod
    def gather(cls, nodes: list[TaskNode]) -> _Declarations:
        """Read ``nodes`` field by field (C-level passes; no per-node Python objects survive)."""
        n = len(nodes)
        tasks = [node.task for node in nodes]
        node_envs = [node.env for node in nodes]
        env_code, envs = _identity_codes(node_envs)
        positions: dict[str, int] = {}
        env_of = _codes([e.env_id for e in envs], positions)[env_code]
        last = n - 1 - np.unique(env_of[::-1], return_index=True)[1]
        own_tools = [t.tools for t in tasks]
        overrides = np.fromiter(map(operator.is_not, own_tools, repeat(None)), dtype=bool, count=n)
        env_tools = [e.tools for e in envs]
        list_of, lists = _identity_codes([own if own is not None else env_tools[e] for own, e in zip(own_tools, env_code.tolist(), strict=True)])
        names: dict[str, int] = {}
        has_gold, message_node, message_calls, call_name = _gold_calls([t.solution for t in tasks], names)
        listed = list(chain.from_iterable(lists))
        user_turns = np.fromiter(map(len, map(operator.attrgetter("user_turns"), tasks)), dtype=np.int64, count=n)
        return cls(
            tasks=tasks, env_of=env_of, env_ids=list(positions), env_last=[node_envs[i] for i in last.tolist()],
            env_code=env_code, envs=envs, list_of=list_of, lists=lists,
            list_ptr=np.concatenate([[0], np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)))]),
            list_name=_codes([t.name for t in listed], names), list_write=np.fromiter((t.write for t in listed), dtype=bool, count=len(listed)),
            overrides=overrides, has_gold=has_gold,
            turns=np.maximum(user_turns, 1), message_node=message_node, message_calls=message_calls,
            call_node=np.repeat(message_node, message_calls), call_name=call_name, names=list(names),
        )  # fmt: skip


def _gold_calls(solutions: list[list[AssistantTurn] | None], names: dict[str, int]) -> tuple[np.ndarray, ...]:
    """Whether each solution is a gold one (non-empty), the node and number of calls of every gold message, and every gold call's name code.

    ``names`` (name -> code) is extended with the names called.
    """
    gold = list(filter(None, solutions))
    has_gold = np.fromiter(map(bool, solutions), dtype=bool, count=len(solutions))
    message_node = np.repeat(np.flatnonzero(has_gold), np.fromiter(map(len, gold), dtype=np.int64, count=len(gold)))
    calls = list(map(operator.attrgetter("tool_calls"), chain.from_iterable(gold)))
    message_calls = np.fromiter(map(len, calls), dtype=np.int64, count=len(calls))
    return has_gold, message_node, message_calls, _codes(list(map(operator.attrgetter("name"), chain.from_iterable(calls))), names)


def _codes(keys: Sequence[Hashable], index: dict[Any, int]) -> np.ndarray:
    """Code of every key in ``index``; keys not yet there are added, numbered in first-appearance order."""
    for key in dict.fromkeys(keys):
        index.setdefault(key, len(index))
    return np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=len(keys))


def _identity_codes(objects: list[T]) -> tuple[np.ndarray, list[T]]:
    """Code of every object by identity (first-appearance order), and the distinct objects by code."""
    codes = _codes(list(map(id, objects)), {})
    first = np.unique(codes, return_index=True)[1]
    return codes, [objects[i] for i in first.tolist()]


def _signatures(decl: _Declarations, distinct: np.ndarray) -> tuple[np.ndarray, Categories]:
    """:func:`execution_signature` of every node: the numeric facts ``(nodes, len(NUMERIC))`` and the categories.

    ``distinct`` holds the distinct tools of each node's gold calls (its tool units) where it has gold.
    """
    n = len(decl.tasks)
    n_calls = np.bincount(decl.call_node, minlength=n)
    parallel = np.zeros(n, dtype=np.int64)
    np.maximum.at(parallel, decl.message_node, decl.message_calls)
    chained = np.bincount(decl.message_node, weights=decl.message_calls > 0, minlength=n) > decl.turns
    available = np.diff(decl.list_ptr)[decl.list_of]
    gold, open_ = decl.has_gold, ~decl.has_gold
    expected = n_calls.astype(np.float64)
    expected[open_] = _expected_calls(decl, np.flatnonzero(open_))
    numeric = np.column_stack([
        decl.turns, expected,
        np.where(gold, distinct, np.minimum(expected, available)),
        np.where(gold, parallel, 1),
        _write_fractions(decl, n_calls, available),
        available, gold,
    ]).astype(np.float64)  # fmt: skip
    default = np.select([open_, n_calls == 0, parallel > 1, chained], ["unknown", "none", "parallel", "chain"], "single").astype(object)
    return numeric, _categories(decl, default)


def _write_fractions(decl: _Declarations, n_calls: np.ndarray, available: np.ndarray) -> np.ndarray:
    """Per node: the share of its gold calls naming a write tool of its list, else its list's distinct write names per tool."""
    width = max(len(decl.names), 1)
    list_row = np.repeat(np.arange(len(decl.lists)), np.diff(decl.list_ptr))
    writes = np.unique(list_row[decl.list_write] * width + decl.list_name[decl.list_write])  # (list, name) pairs of write tools
    is_write = np.isin(decl.list_of[decl.call_node] * width + decl.call_name, writes)
    written = np.bincount(decl.call_node, weights=is_write, minlength=len(n_calls))
    open_writes = np.bincount(writes // width, minlength=len(decl.lists))[decl.list_of]
    return np.where(decl.has_gold, written / np.maximum(n_calls, 1), open_writes / np.maximum(available, 1))


def _expected_calls(decl: _Declarations, nodes: np.ndarray) -> list[int]:
    """Expected calls of tasks without gold: ``metadata["num_calls"]``, else one per user turn."""
    return [int(decl.tasks[i].metadata.get("num_calls", t)) for i, t in zip(nodes.tolist(), decl.turns[nodes].tolist(), strict=True)]


def _categories(decl: _Declarations, default_pattern: np.ndarray) -> Categories:
    """The signature category tokens of every node, coded by distinct tuple."""
    metadata = [t.metadata for t in decl.tasks]
    declared = list(map(_declared_pattern, metadata))
    has_pattern = np.fromiter(map(operator.is_not, declared, repeat(None)), dtype=bool, count=len(declared))
    pattern = np.where(has_pattern, np.array(declared, dtype=object), default_pattern)
    reward = [str(m.get("reward_type", "binary")) for m in metadata]
    kind = np.fromiter(map(operator.attrgetter("verifier.kind"), decl.tasks), dtype=object, count=len(metadata))
    env_kind = np.array([e.verifier_kind for e in decl.envs], dtype=object)[decl.env_code]
    verifier = np.where(kind != "none", kind, env_kind)
    env_part = _codes([(e.interaction, e.user_simulator) for e in decl.envs], {})[decl.env_code]
    parts = [_codes(pattern.tolist(), {}), env_part, _codes(verifier.tolist(), {}), _codes(reward, {})]
    of, first = _tuple_codes(parts)
    tokens = [
        (f"pattern={pattern[i]}", f"interaction={decl.envs[decl.env_code[i]].interaction}", f"user={decl.envs[decl.env_code[i]].user_simulator}",
         f"verifier={verifier[i]}", f"reward={reward[i]}")
        for i in first.tolist()
    ]  # fmt: skip
    return Categories(of=of, tokens=tokens)


def _declared_pattern(metadata: dict[str, Any]) -> str | None:
    """The dependency pattern a task's metadata declares (under the first of :data:`PATTERN_KEYS` present), if any."""
    for key in PATTERN_KEYS:
        if key in metadata:
            return str(metadata[key])
    return None


def _tuple_codes(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One code per distinct tuple ``(parts[0][i], parts[1][i], ...)``, by first appearance, and each code's first index."""
    key = np.zeros(len(parts[0]), dtype=np.int64)
    for part in parts:
        key = np.unique(key * (int(part.max()) + 1) + part, return_inverse=True)[1].ravel()  # stays below the node count
    first = np.unique(key, return_index=True)[1]
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[key], np.sort(first)


def _attributes(decl: _Declarations) -> sp.csr_matrix:
    """Multi-hot of tools, gold calls, state components and verifier kind, rows L2-normalised.

    The environment's part is hashed once per environment, a task's own tools once per tool
    list, and its gold calls once per tool name.
    """
    n = len(decl.tasks)
    env_tools = _hashed([[f"tool={t.name}" for t in e.tools] for e in decl.env_last])
    env_rest = _hashed([[f"state={c.name}" for c in e.state_components] + [f"verifier={e.verifier_kind}"] for e in decl.env_last])
    uses = _hashed([[f"uses={name}"] for name in decl.names]).indices if decl.names else np.zeros(0, dtype=np.int64)
    calls = sp.csr_matrix((np.ones(len(decl.call_node)), (decl.call_node, uses[decl.call_name])), shape=(n, _ATTRIBUTE_DIMS))
    own = np.flatnonzero(decl.overrides)
    place = sp.csr_matrix((np.ones(len(own)), (own, np.arange(len(own)))), shape=(n, len(own)))
    task_part = calls + place @ _hashed([[f"tool={t.name}" for t in tools] for tools in decl.lists])[decl.list_of[own]]
    task_part.data = np.minimum(task_part.data, 1.0)  # a token both called and listed counts once, as in one hashed row
    shared = sp.diags((~decl.overrides).astype(np.float64))
    return normalize(shared @ env_tools[decl.env_of] + env_rest[decl.env_of] + task_part)


def _text_matrix(texts: list[str], dims: int) -> sp.csr_matrix:
    hashed = HashingVectorizer(n_features=dims, alternate_sign=False, norm=None, token_pattern=r"(?u)\b\w+\b").transform(texts)
    return TfidfTransformer(sublinear_tf=True).fit_transform(hashed).tocsr()


def _hashed(tokens: list[list[str]], dims: int = _ATTRIBUTE_DIMS) -> sp.csr_matrix:
    """Binary hashed multi-hot (a repeated token counts once)."""
    matrix = FeatureHasher(n_features=dims, input_type="string", alternate_sign=False).transform(tokens).tocsr()
    matrix.data = np.minimum(matrix.data, 1.0)
    return matrix


def _signature_matrix(numeric: np.ndarray, categories: Categories, block: int = 2**16) -> tuple[np.ndarray, np.ndarray]:
    """The standardised log-numeric facts, and the signature: those next to hashed categories, rows L2-normalised.

    Rows are normalised ``block`` at a time, so the float64 rows of a million nodes (0.5 GB) never exist at once.
    """
    logs = np.log1p(np.maximum(numeric, 0.0))
    spread = logs.std(axis=0)
    scaled = (logs - logs.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    table = 1.5 * FeatureHasher(n_features=64, input_type="string", alternate_sign=False).transform(categories.tokens).toarray()
    signature = np.empty((len(scaled), scaled.shape[1] + table.shape[1]), dtype=np.float32)
    for start in range(0, len(scaled), block):
        rows = slice(start, start + block)
        dense = np.hstack([scaled[rows], table[categories.of[rows]]])
        norms = np.linalg.norm(dense, axis=1, keepdims=True)
        signature[rows] = dense / np.where(norms > 0, norms, 1.0)
    return scaled.astype(np.float32), signature
