"""Driving a scheduler with seeded coin-flip rewards, shared by the curriculum tests."""

from __future__ import annotations

import numpy as np

from envsched_gym.curriculum import Scheduler


def drive(s: Scheduler, steps: int, seed: int, batch: int = 8, group: int = 4, per_task_p: bool = False) -> list[list[str]]:
    """Run ``steps`` rounds of ``batch`` picks, each answered by ``group`` Bernoulli rewards.

    The success probability is 1/2, or with ``per_task_p`` a per-task probability drawn once from
    the same seed (so tasks differ in difficulty). Returns every round's picks.
    """
    rng = np.random.default_rng(seed)
    p = {t: rng.random() for t in s.task_ids} if per_task_p else None
    out = []
    for _ in range(steps):
        ids = s.next_batch(batch)
        out.append(ids)
        for t in ids:
            s.update(t, (rng.random(group) < (p[t] if p else 0.5)).astype(float))
    return out
