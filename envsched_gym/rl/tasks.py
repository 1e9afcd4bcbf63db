"""Choosing the tasks a run trains or evaluates on: families or gym ids, a split, a seeded sample."""

from __future__ import annotations

import numpy as np

import envsched_gym
from envsched_gym.plugins import resolve
from envsched_gym.registry import family_of
from envsched_gym.suite import Suite, parse_weights


def select_tasks(benchmarks: str, split: str, max_difficulty: int = 0, limit: int = 0, seed: int = 0, family_weights: str = "") -> Suite:
    """Nodes of ``benchmarks`` in ``split``, optionally filtered by difficulty, then a seeded sample.

    Args:
        benchmarks: Comma-separated family names (``ToolWorld``) or gym ids (``envsched/BFCL-simple_python-v0``),
            either with gymnasium's ``module:`` prefix to import the module that registers it first.
        split: ``train``, ``test``, ``heldout`` or ``all``.
        max_difficulty: Keep tasks whose ``metadata["difficulty"]`` is at most this (0: keep all;
            tasks without a difficulty count as 1).
        limit: Keep a seeded sample of at most this many tasks per benchmark (0: all).
        seed: Seed of the sample.
        family_weights: The curriculum's target mix as ``"ToolWorld=0.7,BugTracker=0.3"``, one
            weight for every family of ``benchmarks`` (``""``: each family's share of the tasks,
            with the curriculum's floor and cap; see ``envsched_gym.curriculum.mixture``).

    Raises:
        SystemExit: No task matches, or ``family_weights`` is malformed or does not name
            exactly the families of ``benchmarks`` (the message says which and how to fix it).
    """
    nodes = []
    for name in [resolve(b.strip()) for b in benchmarks.split(",") if b.strip()]:
        family = family_of(name) if "/" in name else name
        found = [n for n in envsched_gym.suite(family, split=split)
                 if ("/" not in name or n.env.gym_id == name)
                 and (not max_difficulty or int(n.task.metadata.get("difficulty", 1)) <= max_difficulty)]  # fmt: skip
        if limit and len(found) > limit:
            found = [found[i] for i in sorted(np.random.default_rng(seed).choice(len(found), size=limit, replace=False))]
        if not found:
            raise SystemExit(f"no '{split}' tasks in {name}" + (f" with difficulty <= {max_difficulty}" if max_difficulty else ""))
        nodes.extend(found)
    try:
        return Suite(nodes, weights=parse_weights(family_weights))
    except ValueError as exc:
        raise SystemExit(f"--family-weights {family_weights!r}: {exc}") from None
