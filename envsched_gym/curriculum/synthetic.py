"""Synthetic suites with realistic-shaped declarations, for scale benchmarks and tests.

Each environment gets a domain vocabulary, 4-12 tools (some writing) and state components;
each task gets an instruction built from its environment's vocabulary, 1-3 scripted user
turns and a gold solution of 1-6 calls (chained, parallel or single). Nothing here is scored:
these nodes exist so the curriculum's graph and selection can be timed and tested at any size
without a benchmark download.
"""

from __future__ import annotations

import numpy as np

from envsched_gym.declarations import AssistantTurn, EnvSpec, StateComponent, TaskSpec, ToolCall, ToolSpec
from envsched_gym.suite import Suite, TaskNode

VERBS = ("get", "list", "find", "create", "update", "delete", "send", "book", "cancel", "check", "set", "move")
WRITE_VERBS = {"create", "update", "delete", "send", "book", "cancel", "set", "move"}
NOUNS = ("order", "flight", "file", "user", "item", "message", "account", "room", "ticket", "payment", "report",
         "calendar", "invoice", "device", "song", "recipe", "vehicle", "claim", "lesson", "package")  # fmt: skip
PATTERNS = ("single", "chain", "parallel")


def synthetic_envs(n_envs: int, seed: int = 0) -> list[EnvSpec]:
    """``n_envs`` environments with distinct tool sets drawn from a shared vocabulary."""
    rng = np.random.default_rng(seed)
    envs = []
    for e in range(n_envs):
        nouns = rng.choice(NOUNS, size=3, replace=False)
        names = sorted({f"{v}_{n}" for v, n in zip(rng.choice(VERBS, 12), rng.choice(nouns, 12), strict=True)})[: int(rng.integers(4, 13))]
        tools = [ToolSpec(name, f"{name.replace('_', ' ')} in domain {e}", write=name.split("_")[0] in WRITE_VERBS) for name in names]
        multi_user = bool(rng.random() < 0.3)
        envs.append(EnvSpec(
            env_id=f"Synth/env-{e}", family="Synth", gym_id="envsched/Synth-v0", tools=tools,
            state_components=[StateComponent(str(n)) for n in nouns], verifier_kind=str(rng.choice(["state", "ast", "db_hash"])),
            interaction="single_response" if rng.random() < 0.15 else "multi_step", user_simulator="llm" if multi_user else "scripted",
        ))  # fmt: skip
    return envs


def synthetic_suite(n_nodes: int, n_envs: int | None = None, seed: int = 0, heldout_fraction: float = 0.0) -> Suite:
    """A suite of ``n_nodes`` synthetic tasks over ``n_envs`` environments (default ``sqrt(n)``)."""
    rng = np.random.default_rng(seed + 1)
    envs = synthetic_envs(n_envs or max(1, int(np.sqrt(n_nodes))), seed)
    env_of = rng.integers(len(envs), size=n_nodes)
    patterns = rng.integers(len(PATTERNS), size=n_nodes)
    lengths = rng.integers(1, 4, size=n_nodes)
    heldout = rng.random(n_nodes) < heldout_fraction
    words = rng.integers(0, 1 << 30, size=(n_nodes, 4))
    nodes = []
    for i in range(n_nodes):
        env = envs[env_of[i]]
        tools = [env.tools[int(w) % len(env.tools)] for w in words[i, : lengths[i] + 1]]
        pattern = PATTERNS[patterns[i]]
        turns = (
            [AssistantTurn(tool_calls=[ToolCall(t.name, {"id": int(w) % 97}) for t, w in zip(tools, words[i], strict=False)])]
            if pattern == "parallel"
            else [AssistantTurn(tool_calls=[ToolCall(t.name, {"id": int(w) % 97})]) for t, w in zip(tools, words[i], strict=False)]
        )
        text = " ".join(t.name.replace("_", " ") for t in tools)
        task = TaskSpec(
            task_id=f"synth-{i}", env_id=env.env_id, instruction=f"Please {text} for case {words[i, 0] % 1000} ({pattern}).",
            solution=[*turns, AssistantTurn(content="Done.")], split="heldout" if heldout[i] else "train", metadata={"pattern": pattern},
        )  # fmt: skip
        nodes.append(TaskNode(env, task))
    return Suite(nodes)
