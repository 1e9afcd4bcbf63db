"""Node features and the dual graph."""

from __future__ import annotations

import networkx as nx
import numpy as np

from envsched_gym import EnvSpec, TaskSpec
from envsched_gym.curriculum import DualGraph, build_features, execution_signature
from envsched_gym.curriculum.synthetic import synthetic_suite
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
