"""Node features and the dual graph."""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.preprocessing import normalize

from envsched_gym import EnvSpec, TaskSpec
from envsched_gym.curriculum import DualGraph, build_features, execution_signature
from envsched_gym.curriculum.features import CALL_KINDS, call_kinds, node_call_kinds, task_text, task_tools
from envsched_gym.curriculum.graph import _SparseBlocks
from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.curriculum.units import used_tools
from envsched_gym.declarations import AssistantTurn, StateComponent, ToolCall, ToolSpec, VerifierConfig
from envsched_gym.suite import Suite, TaskNode


def test_bare_declarations_are_handled() -> None:
    """A family with no tools, no solution, no metadata and an empty instruction still gets features."""
    env = EnvSpec(env_id="Bare", family="Bare", gym_id="envsched/Bare-v0")
    nodes = [TaskNode(env, TaskSpec(task_id=f"b{i}", env_id="Bare", instruction="" if i == 0 else f"do thing {i}")) for i in range(5)]
    features = build_features(nodes)
    numeric, categories = execution_signature(nodes[0])
    assert numeric[:2] == [1, 1] and "pattern=unknown" in categories
    assert np.isfinite(features.signature).all() and features.within.shape[0] == 5
    graph = DualGraph.build(features)
    assert graph.cross.nnz == 0  # a single environment has no cross edges


def test_edges_respect_environments(small_suite: Suite) -> None:
    features = build_features(small_suite.nodes)
    graph = DualGraph.build(features, k_within=5, k_cross=3)
    env = features.env_of
    within, cross = graph.within.tocoo(), graph.cross.tocoo()
    assert (env[within.row] == env[within.col]).all() and (within.row != within.col).all()
    assert (env[cross.row] != env[cross.col]).all()
    assert np.diff(graph.within.indptr).max() <= 5 and np.diff(graph.cross.indptr).max() <= 3
    assert np.diff(graph.within.indptr).min() >= 1


def test_within_edges_prefer_similar_text() -> None:
    """Tasks sharing their tools and wording are each other's nearest within-environment neighbours."""
    suite = synthetic_suite(300, n_envs=3, seed=1)
    features = build_features(suite.nodes)
    graph = DualGraph.build(features, k_within=3)
    sims = (features.within @ features.within.T).toarray()
    np.fill_diagonal(sims, -1)
    same_env = features.env_of[:, None] == features.env_of[None, :]
    best = np.where(same_env, sims, -1).max(axis=1)
    assert np.allclose(graph.within.max(axis=1).toarray().ravel(), best, atol=1e-5)


def test_blocked_search_approximates_exact(small_suite: Suite) -> None:
    """With segments larger than ``block`` the hashed windows still find most exact neighbours."""
    features = build_features(small_suite.nodes)
    exact = DualGraph.build(features, k_within=5, block=4096)
    approx = DualGraph.build(features, k_within=5, block=16)
    overlap = exact.within.multiply(approx.within > 0).nnz / exact.within.nnz
    assert approx.within.nnz >= 0.9 * exact.within.nnz
    assert overlap > 0.3


def test_graphml_export(tmp_path, small_suite: Suite) -> None:
    features = build_features(small_suite.nodes)
    graph = DualGraph.build(features, k_within=2, k_cross=1)
    ids = [n.task_id for n in small_suite.nodes]
    path = tmp_path / "graph.graphml"
    graph.write_graphml(str(path), ids, [n.env.env_id for n in small_suite.nodes])
    loaded = nx.read_graphml(path)
    assert loaded.number_of_edges() == graph.within.nnz + graph.cross.nnz
    kinds = {d["kind"] for _, _, d in loaded.edges(data=True)}
    assert kinds == {"within", "cross"}


def _calls(*names: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(name) for name in names])


def _odd_nodes() -> list[TaskNode]:
    """Synthetic tasks among hand-made ones covering every branch of the per-node rules.

    Gold with and without calls, an empty solution, calls to undeclared tools, task-level tool
    overrides (empty, with gold, with write tools), a duplicated tool name, a call to a tool that
    writes in another task's list only, each default pattern and each metadata pattern key (a
    ``None`` and a non-string value too), reward types, task verifier kinds, scripted user turns
    repeating the instruction, an environment without tools, and one ``env_id`` served by
    ``EnvSpec`` objects that differ (its first and last node use different ones).
    """
    synthetic = list(synthetic_suite(240, n_envs=5, seed=2).nodes)
    synthetic = [TaskNode(replace(n.env, family="Copy"), n.task) if i % 7 == 0 else n for i, n in enumerate(synthetic)]
    bare = EnvSpec(env_id="Bare", family="Bare", gym_id="envsched/Bare-v0")
    tools = [ToolSpec("zeta_read", "z"), ToolSpec("alpha_write", "a", write=True), ToolSpec("alpha_write", "again", write=True), ToolSpec("mid", "m")]
    shop = EnvSpec(env_id="Shop", family="Shop", gym_id="envsched/Shop-v0", tools=tools, state_components=[StateComponent("db")],
                   verifier_kind="db_hash", interaction="single_response", user_simulator="llm")  # fmt: skip
    shop_b = replace(shop, tools=tools[:2], verifier_kind="state", user_simulator="scripted")
    own = [ToolSpec("fn_x", "x", write=True), ToolSpec("fn_y", "y")]
    odd = [
        TaskNode(bare, TaskSpec("bare-0", "Bare", "")),
        TaskNode(bare, TaskSpec("bare-1", "Bare", "do it", metadata={"num_calls": 3, "reward_type": "graded"})),
        TaskNode(shop, TaskSpec("shop-0", "Shop", "buy", user_turns=["buy", "and pay", "now"],
                                solution=[_calls("zeta_read"), _calls("alpha_write", "alpha_write"), AssistantTurn("ok")])),
        TaskNode(shop, TaskSpec("shop-1", "Shop", "look", solution=[AssistantTurn("no tool needed")], metadata={"dependency": 7})),
        TaskNode(shop_b, TaskSpec("shop-2", "Shop", "none", solution=[], metadata={"call_pattern": None, "pattern": "x"})),
        TaskNode(shop, TaskSpec("shop-3", "Shop", "own", tools=own, verifier=VerifierConfig("ast"), metadata={"pattern": "p", "reward_type": 2})),
        TaskNode(shop_b, TaskSpec("shop-4", "Shop", "own gold", tools=own, solution=[_calls("fn_y", "fn_x", "ghost"), _calls("fn_y")])),
        TaskNode(shop, TaskSpec("shop-5", "Shop", "empty own", tools=[], metadata={"dependency_pattern": "tree", "num_calls": 2})),
        TaskNode(shop, TaskSpec("shop-6", "Shop", "chain", user_turns=["chain"], solution=[_calls("mid"), _calls("zeta_read"), _calls("mid")])),
        TaskNode(bare, TaskSpec("bare-2", "Bare", "gold on bare", solution=[_calls("ghost", "fn_x"), _calls()])),
        TaskNode(shop, TaskSpec("shop-7", "Shop", "no gold, a tool name listed twice")),
        TaskNode(shop, TaskSpec("shop-8", "Shop", "one write tool", tools=[ToolSpec("only_write", "w", write=True)])),
        TaskNode(shop, TaskSpec("shop-9", "Shop", "single", solution=[_calls("mid"), AssistantTurn("done")])),
        TaskNode(shop_b, TaskSpec("shop-10", "Shop", "no gold", user_turns=["no gold", "more"])),
    ]  # fmt: skip
    return odd[:4] + synthetic[:120] + odd[4:] + synthetic[120:]


def _per_node_within(nodes: list[TaskNode], text_weight: float = 0.6) -> sp.csr_matrix:
    """The within-environment matrix built from per-node token lists (the attributes of the last node's ``EnvSpec`` per id)."""
    last_env = {n.env.env_id: n.env for n in nodes}
    parts: list[list[list[str]]] = [[], [], []]
    for n in nodes:
        env = last_env[n.env.env_id]
        parts[0].append([f"tool={t.name}" for t in env.tools] if n.task.tools is None else [])
        parts[1].append([f"state={c.name}" for c in env.state_components] + [f"verifier={env.verifier_kind}"])
        own = [f"tool={t.name}" for t in n.task.tools] if n.task.tools is not None else []
        parts[2].append([f"uses={c.name}" for turn in n.task.solution or [] for c in turn.tool_calls] + own)
    hashed = [FeatureHasher(n_features=2**14, input_type="string", alternate_sign=False).transform(p).tocsr() for p in parts]
    for part in hashed:
        part.data = np.minimum(part.data, 1.0)
    attributes = normalize(hashed[0] + hashed[1] + hashed[2])
    vectorizer = HashingVectorizer(n_features=2**18, alternate_sign=False, norm=None, token_pattern=r"(?u)\b\w+\b")
    text = TfidfTransformer(sublinear_tf=True).fit_transform(vectorizer.transform([task_text(n.task) for n in nodes]))
    return normalize(sp.hstack([np.sqrt(text_weight) * text, np.sqrt(1 - text_weight) * attributes], format="csr")).astype(np.float32)


def _per_node_signature(nodes: list[TaskNode]) -> tuple[np.ndarray, np.ndarray]:
    """The standardised numeric facts and the signature, from ``execution_signature`` node by node."""
    signatures = [execution_signature(n) for n in nodes]
    logs = np.log1p(np.maximum(np.array([s[0] for s in signatures], dtype=np.float64), 0.0))
    spread = logs.std(axis=0)
    scaled = (logs - logs.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    onehot = FeatureHasher(n_features=64, input_type="string", alternate_sign=False).transform([s[1] for s in signatures]).toarray()
    dense = np.hstack([scaled, 1.5 * onehot])
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    return scaled.astype(np.float32), (dense / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _per_node_units(nodes: list[TaskNode], env_ids: list[str]) -> tuple[list[str], np.ndarray]:
    """Unit names (environments, then tools, then categories, each by first mention) and the dense node x unit matrix."""
    index = {f"env={e}": i for i, e in enumerate(env_ids)}
    entries: list[tuple[int, str, float]] = []
    category_tuples = []
    for i, n in enumerate(nodes):
        tools = used_tools(n, [t.name for t in task_tools(n)])
        entries += [(i, f"env={n.env.env_id}", 1.0)] + [(i, f"tool={name}", 1 / len(tools)) for name in tools]
        for name in tools:
            index.setdefault(f"tool={name}", len(index))
        categories = execution_signature(n)[1]
        entries += [(i, token, 1 / len(categories)) for token in categories]
        category_tuples.append(tuple(categories))
    for categories in dict.fromkeys(category_tuples):
        for token in categories:
            index.setdefault(token, len(index))
    matrix = np.zeros((len(nodes), len(index)))
    for i, name, weight in entries:
        matrix[i, index[name]] += weight
    return list(index), matrix


def test_build_features_matches_the_per_node_rules() -> None:
    """Every matrix of the vectorised pass equals the one built node by node from the rules it vectorises."""
    nodes = _odd_nodes()
    features = build_features(nodes)
    env_ids = list(dict.fromkeys(n.env.env_id for n in nodes))
    assert features.env_ids == env_ids and features.env_of.tolist() == [env_ids.index(n.env.env_id) for n in nodes]
    within = _per_node_within(nodes)
    assert features.within.shape == within.shape and abs(features.within - within).max() <= 1e-6
    numeric, signature = _per_node_signature(nodes)
    assert np.allclose(features.numeric, numeric, atol=1e-6) and np.allclose(features.signature, signature, atol=1e-6)
    names, matrix = _per_node_units(nodes, env_ids)
    assert features.units.names == names
    assert np.allclose(features.units.matrix.toarray(), matrix, atol=1e-12)
    assert np.array_equal(features.units.count, (matrix > 0).sum(axis=0))
    assert [features.units.kind[names.index(u)] for u in ("tool=alpha_write", "env=Shop", "pattern=7")] == [0, 1, 2]


def test_call_kinds_follow_each_task_gold() -> None:
    """Writes when a gold call names a write tool of the task's list, reads when gold calls only others, no call, open without gold."""
    nodes = _odd_nodes()
    kinds = dict(zip((n.task.task_id for n in nodes), (CALL_KINDS[k] for k in build_features(nodes).call_kind), strict=True))
    expected = {"shop-0": "writes", "shop-4": "writes", "shop-6": "reads", "shop-9": "reads", "bare-2": "reads",
                "shop-1": "no_call", "shop-2": "open", "shop-7": "open", "bare-1": "open"}  # fmt: skip
    assert {task: kinds[task] for task in expected} == expected
    per_node = np.array([execution_signature(n)[0] for n in nodes], dtype=np.float64)
    assert [CALL_KINDS[k] for k in call_kinds(per_node)] == list(kinds.values())
    assert [CALL_KINDS[k] for k in node_call_kinds(nodes)] == list(kinds.values()) and node_call_kinds([]).shape == (0,)


def test_sparse_blocks_equal_the_sparse_product(small_suite: Suite) -> None:
    """The graph's dense similarity blocks are the sparse product's, bit for bit."""
    within = build_features(small_suite.nodes).within
    blocks = _SparseBlocks(within)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, c = rng.choice(len(small_suite), 40, replace=False), rng.choice(len(small_suite), 90, replace=False)
        assert np.array_equal(blocks(q, c), (within[q] @ within[c].T).toarray())
    unsorted = sp.csr_matrix((np.ones(2, dtype=np.float32), np.array([1, 0]), np.array([0, 2])), shape=(1, 3))
    with pytest.raises(ValueError, match="sum_duplicates"):
        _SparseBlocks(unsorted)
