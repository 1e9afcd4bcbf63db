"""Per-round bookkeeping: feed gathered rewards to the curriculum and log what happened.

One JSONL record per generation round: the outcome reward, the effective ratio (fraction of
GRPO groups whose rewards are not all equal), each environment's and each family's share of the
batch next to the family's target share for the round, and the scheduler's predictions next to
the realised group statistics.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from envsched_gym.rl.sampler import CurriculumSampler


@dataclass
class GroupResult:
    """The G rollouts of one task in one round."""

    task_id: str
    env_id: str
    rewards: list[float]
    successes: list[bool]
    malformed: list[bool] = field(default_factory=list)
    """Per rollout, whether a turn was malformed (:func:`envsched_gym.parsing.malformed_turn`); empty where not known."""


@dataclass
class RoundRecord:
    """What one generation round did (a line of ``metrics.jsonl``)."""

    round: int
    reward: float
    success: float
    effective_ratio: float
    env_share: dict[str, float]
    tasks: list[str]
    group_rewards: list[list[float]]
    group_variance: list[float]
    group_mean: list[float]
    predicted_variance: list[float] = field(default_factory=list)
    predicted_mean: list[float] = field(default_factory=list)
    spearman_variance: float | None = None
    family_share: dict[str, float] = field(default_factory=dict)
    family_target: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    groups_per_update: int = 1
    """The run's ``signal_groups_per_update``: how many varied groups the optimizer waits for (records without it: 1)."""
    malformed: int | None = None
    """Rollouts with a malformed turn (a call that does not parse, or tool-call tags outside the calls): the
    policy's format drifting under training shows here first (records without it, before session 47: None)."""


def group_rollouts(
    task_ids: list[str], env_ids: list[str], rewards: list[float], successes: list[bool], num_generations: int, malformed: list[bool] | None = None,
) -> list[GroupResult]:  # fmt: skip
    """Consecutive runs of ``num_generations`` rollouts (the sampler's layout) as groups; ``malformed``, per rollout, where known."""
    if len(task_ids) % num_generations:
        raise ValueError(f"{len(task_ids)} rollouts do not split into groups of {num_generations}")
    if malformed is not None and len(malformed) != len(task_ids):
        raise ValueError(f"{len(malformed)} malformed flags for {len(task_ids)} rollouts; give one per rollout")
    groups = []
    for start in range(0, len(task_ids), num_generations):
        stop = start + num_generations
        if len(set(task_ids[start:stop])) != 1:
            raise ValueError(f"rollouts {start}..{stop - 1} mix tasks {sorted(set(task_ids[start:stop]))}; a GRPO group must be one task")
        flags = list(malformed[start:stop]) if malformed is not None else []
        groups.append(GroupResult(task_ids[start], env_ids[start], list(rewards[start:stop]), list(successes[start:stop]), flags))
    return groups


def round_record(
    r: int, groups: list[GroupResult], predictions: dict[str, list[float]] | None, seconds: float = 0.0,
    mix: dict[str, dict[str, float]] | None = None,
) -> RoundRecord:  # fmt: skip
    """Summarise one round; ``predictions`` and ``mix`` (the family shares bound and aimed for) are the sampler's, made when it chose the round's tasks."""
    rewards = np.array([g.rewards for g in groups], dtype=float)
    variance = rewards.var(axis=1)
    envs = Counter(g.env_id for g in groups)
    record = RoundRecord(
        round=r, reward=float(rewards.mean()), success=float(np.mean([g.successes for g in groups])),
        effective_ratio=float((variance > 1e-12).mean()), env_share={e: n / len(groups) for e, n in sorted(envs.items())},
        tasks=[g.task_id for g in groups], group_rewards=rewards.tolist(), group_variance=variance.tolist(), group_mean=rewards.mean(axis=1).tolist(), seconds=seconds,
        family_share=dict((mix or {}).get("share", {})), family_target=dict((mix or {}).get("target", {})),
    )  # fmt: skip
    if all(len(g.malformed) == len(g.rewards) for g in groups):
        record.malformed = sum(map(sum, (g.malformed for g in groups)))
    if predictions and len(predictions.get("variance", [])) == len(groups):
        record.predicted_variance = predictions["variance"]
        record.predicted_mean = predictions.get("mean", [])
        if np.ptp(variance) > 0 and np.ptp(record.predicted_variance) > 0:
            record.spearman_variance = float(spearmanr(record.predicted_variance, variance).statistic)
    return record


class RoundLogger:
    """Feeds each round's groups to the sampler and appends its record to ``metrics.jsonl``."""

    def __init__(self, sampler: CurriculumSampler, path: str | Path | None, write: bool = True, groups_per_update: int = 1) -> None:
        self.sampler = sampler
        self.path = Path(path) if path else None
        self.write = write
        self.groups_per_update = groups_per_update
        self.records: list[RoundRecord] = []

    def observe(self, r: int, groups: list[GroupResult], seconds: float = 0.0) -> RoundRecord:
        """Record round ``r`` and buffer its rewards for the curriculum."""
        self.sampler.feedback(r, [(g.task_id, g.rewards) for g in groups])
        predictions = self.sampler.predictions[r] if r < len(self.sampler.predictions) else None
        mix = self.sampler.mixes[r] if r < len(self.sampler.mixes) else None
        record = replace(round_record(r, groups, predictions, seconds, mix), groups_per_update=self.groups_per_update)
        self.records.append(record)
        if self.write and self.path is not None:
            with self.path.open("a") as f:
                f.write(json.dumps(asdict(record)) + "\n")
        return record
