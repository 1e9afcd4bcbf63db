"""Held-out success with bootstrap intervals: the table a run prints when it ends.

Every evaluation record of ``eval.jsonl`` keeps its per-task successes, so intervals come from
resampling tasks (scipy's bootstrap, percentile method), and a gain between two evaluations of the
same tasks is judged by a *paired* bootstrap of the per-task differences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import bootstrap


@dataclass
class Interval:
    """A mean and its bootstrap 95% interval."""

    mean: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"


def success_interval(successes: Sequence[float], seed: int = 0, resamples: int = 2000) -> Interval:
    """Mean of ``successes`` with a bootstrap 95% interval over tasks."""
    x = np.asarray(successes, dtype=float)
    if not len(x):
        raise ValueError("no results to summarise")
    if np.ptp(x) == 0:  # every resample has the same mean
        return Interval(float(x[0]), float(x[0]), float(x[0]))
    ci = bootstrap((x,), np.mean, confidence_level=0.95, n_resamples=resamples, method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    return Interval(float(x.mean()), float(ci.low), float(ci.high))


def paired_gain(before: Sequence[float], after: Sequence[float], seed: int = 0, resamples: int = 2000) -> Interval:
    """``after - before`` on the same tasks, with a paired bootstrap 95% interval.

    Raises:
        ValueError: The two evaluations are not of the same number of tasks.
    """
    if len(before) != len(after):
        raise ValueError(f"a paired gain needs the same tasks: {len(before)} results before, {len(after)} after")
    return success_interval(np.asarray(after, dtype=float) - np.asarray(before, dtype=float), seed, resamples)


def seeds_and_tasks_gain(befores: Sequence[Sequence[float]], afters: Sequence[Sequence[float]], seed: int = 0, resamples: int = 2000) -> Interval:
    """``after - before`` pooled over several training seeds, with a two-level bootstrap 95% interval.

    Each resample draws the seeds with replacement, then each drawn seed's tasks with replacement,
    and takes the mean of every drawn per-task difference. So the interval carries the spread
    between training runs as well as the held-out sample; a bootstrap of the pooled tasks alone
    (:func:`paired_gain` on the concatenation) carries only the latter, and can exclude 0 when
    the seeds disagree. The mean is that of all the per-task differences, as in the pooled
    bootstrap. With two or three seeds only a few seed draws exist, so the interval is coarse.

    Raises:
        ValueError: No seeds, a different number of befores and afters, a seed whose two
            evaluations are not of the same number of tasks, or one with no tasks.
    """
    if not befores or len(befores) != len(afters):
        raise ValueError(f"a pooled gain needs one before and one after per seed: {len(befores)} befores, {len(afters)} afters")
    diffs = []
    for i, (before, after) in enumerate(zip(befores, afters, strict=True)):
        if len(before) != len(after):
            raise ValueError(f"seed {i}: a paired gain needs the same tasks: {len(before)} results before, {len(after)} after")
        if not len(before):
            raise ValueError(f"seed {i} has no held-out results; leave the seed out or evaluate it")
        diffs.append(np.asarray(after, dtype=float) - np.asarray(before, dtype=float))
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for b in range(resamples):
        drawn = [diffs[i][rng.integers(len(diffs[i]), size=len(diffs[i]))] for i in rng.integers(len(diffs), size=len(diffs))]
        means[b] = np.concatenate(drawn).mean()
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(np.concatenate(diffs).mean()), float(low), float(high))


def heldout_table(evals: list[dict[str, Any]]) -> str:
    """A Markdown table of every evaluation, then the gain of the last over the first and over step 0."""
    if not evals:
        return "no held-out evaluation was run (--eval-every 0)"
    lines = ["| held-out | step | tasks | success [95% CI] |", "|---|---|---|---|"]
    for e in evals:
        lines.append(f"| {e.get('stage', 'grpo')} | {e['step']} | {e['n']} | {success_interval(e['successes'])} |")
    last = evals[-1]
    start = next((e for e in evals if e.get("stage") != "base"), evals[0])
    for first in [evals[0]] + ([start] if start is not evals[0] else []):
        if first is not last and first["task_ids"] == last["task_ids"]:
            gain = paired_gain(first["successes"], last["successes"])
            verdict = "above the interval" if gain.low > 0 else ("below" if gain.high < 0 else "within noise: the interval includes 0")
            lines.append(f"\ngain of {last.get('stage', 'grpo')} step {last['step']} over {first.get('stage', 'grpo')} step {first['step']}: "
                         f"{gain} (paired bootstrap; {verdict})")  # fmt: skip
    return "\n".join(lines)
