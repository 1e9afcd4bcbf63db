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

Text is hashed (``HashingVectorizer``) so a million nodes need no vocabulary pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.preprocessing import normalize

from envsched_gym.curriculum.units import Units, build_units
from envsched_gym.declarations import TaskSpec, ToolSpec
from envsched_gym.suite import TaskNode

PATTERN_KEYS = ("dependency", "dependency_pattern", "call_pattern", "pattern")
"""``TaskSpec.metadata`` keys read as the call-dependency pattern (first present wins)."""

NUMERIC = ("turns", "calls", "distinct_tools", "max_parallel", "write_fraction", "available_tools", "has_gold")


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
    """

    within: sp.csr_matrix
    signature: np.ndarray
    env_of: np.ndarray
    env_ids: list[str]
    numeric: np.ndarray
    units: Units

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
    env_ids = list(dict.fromkeys(n.env.env_id for n in nodes))
    env_pos = {e: i for i, e in enumerate(env_ids)}
    env_of = np.fromiter((env_pos[n.env.env_id] for n in nodes), dtype=np.int64, count=len(nodes))
    text = _text_matrix([task_text(n.task) for n in nodes], text_dims)
    within = sp.hstack([np.sqrt(text_weight) * text, np.sqrt(1.0 - text_weight) * _attributes(nodes, env_of, env_ids)], format="csr")
    within = normalize(within, copy=False).astype(np.float32)
    writes: dict[int, tuple[set[str], list[str]]] = {}
    rows, available = [], []
    for n in nodes:
        tools = task_tools(n)
        if id(tools) not in writes:
            writes[id(tools)] = ({t.name for t in tools if t.write}, [t.name for t in tools])
        rows.append(execution_signature(n, writes[id(tools)][0]))
        available.append(writes[id(tools)][1])
    numeric, categories = zip(*rows, strict=True) if rows else ((), ())
    scaled, signature = _signature_matrix(np.asarray(numeric, dtype=np.float64).reshape(len(nodes), len(NUMERIC)), list(categories))
    units = build_units(nodes, env_of, env_ids, list(categories), available)
    return NodeFeatures(within=within, signature=signature, env_of=env_of, env_ids=env_ids, numeric=scaled, units=units)


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


def _attributes(nodes: list[TaskNode], env_of: np.ndarray, env_ids: list[str]) -> sp.csr_matrix:
    """Multi-hot of tools, gold calls, state components and verifier kind, rows L2-normalised.

    The environment's part is hashed once per environment, the task's (gold calls, and its own
    tools where it overrides the environment's) once per task.
    """
    envs = {n.env.env_id: n.env for n in nodes}
    env_tools = _hashed([[f"tool={t.name}" for t in envs[e].tools] for e in env_ids])
    env_rest = _hashed([[f"state={c.name}" for c in envs[e].state_components] + [f"verifier={envs[e].verifier_kind}"] for e in env_ids])
    own_tools = np.fromiter((n.task.tools is None for n in nodes), dtype=np.float64, count=len(nodes))
    task_part = _hashed([
        [f"uses={c.name}" for turn in n.task.solution or [] for c in turn.tool_calls]
        + [f"tool={t.name}" for t in n.task.tools or []]
        for n in nodes
    ])  # fmt: skip
    return normalize(sp.diags(own_tools) @ env_tools[env_of] + env_rest[env_of] + task_part)


def _text_matrix(texts: list[str], dims: int) -> sp.csr_matrix:
    hashed = HashingVectorizer(n_features=dims, alternate_sign=False, norm=None, token_pattern=r"(?u)\b\w+\b").transform(texts)
    return TfidfTransformer(sublinear_tf=True).fit_transform(hashed).tocsr()


def _hashed(tokens: list[list[str]], dims: int = 2**14) -> sp.csr_matrix:
    """Binary hashed multi-hot (a repeated token counts once)."""
    matrix = FeatureHasher(n_features=dims, input_type="string", alternate_sign=False).transform(tokens).tocsr()
    matrix.data = np.minimum(matrix.data, 1.0)
    return matrix


def _signature_matrix(numeric: np.ndarray, categories: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The standardised log-numeric facts, and the signature: those next to hashed categories, rows L2-normalised."""
    logs = np.log1p(np.maximum(numeric, 0.0))
    spread = logs.std(axis=0)
    scaled = (logs - logs.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    distinct = {tuple(c): i for i, c in enumerate(dict.fromkeys(tuple(c) for c in categories))}
    table = FeatureHasher(n_features=64, input_type="string", alternate_sign=False).transform(list(distinct)).toarray()
    onehot = table[[distinct[tuple(c)] for c in categories]] if categories else np.zeros((0, 64))
    dense = np.hstack([scaled, 1.5 * onehot])
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    return scaled.astype(np.float32), (dense / np.where(norms > 0, norms, 1.0)).astype(np.float32)
