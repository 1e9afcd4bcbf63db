"""Sanity table: reference policies on the built-in suite (``python -m envsched_gym.demo``).

Runs the oracle (gold replay), a random tool caller and a no-op agent on a seeded sample of
tasks from each family given, and prints the mean outcome reward per family and policy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import envsched_gym
from envsched_gym.policies import NoOpPolicy, OraclePolicy, Policy, RandomPolicy, run_episode


def evaluate(family: str, policies: Sequence[Policy], n_tasks: int, seed: int) -> dict[str, float]:
    """Mean reward of each policy on ``n_tasks`` seeded tasks (with gold) of ``family``."""
    nodes = [n for n in envsched_gym.suite(family) if n.task.solution is not None]
    rng = np.random.default_rng(seed)
    picks = [nodes[i] for i in rng.choice(len(nodes), size=min(n_tasks, len(nodes)), replace=False)]
    envs: dict[str, gym.Env] = {}
    scores: dict[str, float] = {}
    for policy in policies:
        rewards = []
        for node in picks:
            env = envs.setdefault(node.env.gym_id, gym.make(node.env.gym_id))
            rewards.append(run_episode(env, policy, node.task_id, seed=seed)["reward"])
        scores[policy.name] = float(np.mean(rewards))
    return scores


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--families", nargs="+", default=["ToolWorld"], help="families to run (default: ToolWorld)")
    parser.add_argument("--tasks", type=int, default=200, help="tasks sampled per family")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    policies = [OraclePolicy(), RandomPolicy(seed=args.seed), NoOpPolicy()]
    print(f"{'family':<12}" + "".join(f"{p.name:>10}" for p in policies) + "   (mean outcome reward)")
    for family in args.families:
        scores = evaluate(family, policies, args.tasks, args.seed)
        print(f"{family:<12}" + "".join(f"{scores[p.name]:>10.3f}" for p in policies))


if __name__ == "__main__":
    main()
