"""Baseline curricula behind the :class:`~envsched_gym.curriculum.base.Scheduler` interface.

- ``random``: uniform over the pool.
- ``dapo``: DAPO dynamic sampling. Over-samples uniformly (``B / effective ratio`` groups, at
  most ``max_oversample * B``), and :meth:`DAPOScheduler.keep` drops zero-variance groups and
  groups beyond ``B``. Every rolled group, dropped or not, counts in ``rollouts``.
- ``mopps``: MoPPS. A Beta posterior over each task's success rate (discounted towards the prior
  by ``forget`` each step), Thompson sampling, the ``B`` tasks whose draws are closest to
  ``target`` (0.5).
- ``plr``: prioritised level replay on learnability ``p(1 - p)`` (last group's mean),
  rank-prioritised (temperature ``beta``) and mixed with staleness (``staleness_mix``); each slot
  replays a seen task with probability ``replay_prob``, else takes an unseen one.
- ``dump``: DUMP. A UCB per environment over the mean absolute advantage of its recent groups
  (window ``window``), environments sampled by a softmax of the UCB (temperature ``temperature``),
  tasks uniform within the environment.

Each draws family by family, as many groups of each family as the scheduler's mixture says
(see :mod:`envsched_gym.curriculum.mixture`), applying its own rule within the family. With one
family this is exactly the rule above over the whole pool.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from envsched_gym.curriculum.base import BaseScheduler, checked_rewards
from envsched_gym.curriculum.mixture import MixtureConfig
from envsched_gym.curriculum.state import StateReader
from envsched_gym.suite import Suite


class RandomScheduler(BaseScheduler):
    """Uniform task selection: the reference every curriculum is measured against."""

    name = "random"

    def next_batch(self, batch_size: int) -> list[str]:
        """``batch_size`` distinct task ids, uniform within each family."""
        size = self.check_batch_size(batch_size)
        self.step += 1
        picks = [self.rng.choice(members, count, replace=False) for members, count in self.mixture.groups(size)]
        return [self.task_ids[i] for i in np.concatenate(picks)]

    def state_dict(self) -> dict[str, Any]:
        """Clock, RNG and totals."""
        return self.base_state()


class DAPOScheduler(RandomScheduler):
    """DAPO dynamic sampling: over-sample, then train only on groups whose rewards vary.

    ``next_batch(B)`` returns more than ``B`` ids (at most the whole pool); the trainer rolls all
    of them and asks :meth:`keep` for each finished group.
    """

    name = "dapo"
    STATE_KEYS = (*BaseScheduler.STATE_KEYS, "effective", "target", "kept", "dropped")

    def __init__(
        self, suite: Suite, seed: int = 0, max_oversample: float = 3.0, smoothing: float = 0.05,
        weights: Mapping[str, float] | None = None, mixture: MixtureConfig | None = None,
    ) -> None:  # fmt: skip
        super().__init__(suite, seed, weights, mixture)
        self.max_oversample = max_oversample
        self.smoothing = smoothing
        self.effective = 1.0
        self.target = 0
        self.kept = 0
        self.dropped = 0

    def next_batch(self, batch_size: int) -> list[str]:
        """``B / effective ratio`` uniform ids (at most ``max_oversample * B`` and the pool), so about ``B`` groups survive the filter."""
        self.check_batch_size(batch_size)
        self.target, self.kept = batch_size, 0
        want = math.ceil(batch_size / max(self.effective, 1.0 / self.max_oversample))
        return super().next_batch(min(want, len(self.task_ids)))

    def observe(self, node: int, rewards: np.ndarray, mean: float, variance: float) -> None:
        """Track the running effective ratio that sets the over-sampling."""
        varies = float(np.ptp(rewards) > 0)
        self.effective += self.smoothing * (varies - self.effective)

    def keep(self, task_id: str, rewards: Sequence[float]) -> bool:
        """False for a zero-variance group and for groups beyond the batch size (non-finite rewards raise)."""
        if np.ptp(checked_rewards(task_id, rewards)) == 0 or self.kept >= self.target:
            self.dropped += 1
            return False
        self.kept += 1
        return True

    def state_dict(self) -> dict[str, Any]:
        """Adds the running effective ratio and the filter's counters."""
        return {**super().state_dict(), "effective": self.effective, "target": self.target, "kept": self.kept, "dropped": self.dropped}

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """Adds the checked ratio (in [0, 1]) and counters."""
        return {**super().read_state(reader), "effective": reader.number("effective", 0.0, 1.0),
                **{key: reader.integer(key, minimum=0) for key in ("target", "kept", "dropped")}}  # fmt: skip


class MoPPSScheduler(BaseScheduler):
    """MoPPS: Thompson sampling from per-task Beta posteriors towards a target success rate."""

    name = "mopps"
    STATE_KEYS = (*BaseScheduler.STATE_KEYS, "alpha", "beta")

    def __init__(
        self, suite: Suite, seed: int = 0, target: float = 0.5, forget: float = 0.95, prior: float = 1.0,
        weights: Mapping[str, float] | None = None, mixture: MixtureConfig | None = None,
    ) -> None:  # fmt: skip
        super().__init__(suite, seed, weights, mixture)
        self.target, self.forget, self.prior = target, forget, prior
        self.alpha = np.full(len(self.task_ids), prior)
        self.beta = np.full(len(self.task_ids), prior)

    def next_batch(self, batch_size: int) -> list[str]:
        """The tasks of each family whose sampled success rates are closest to ``target`` (closest first)."""
        size = self.check_batch_size(batch_size)
        draws = self.rng.beta(self.alpha, self.beta)
        gap = np.abs(draws - self.target)
        chosen = [members[np.argpartition(gap[members], count - 1)[:count]] if count < len(members) else members
                  for members, count in self.mixture.groups(size)]  # fmt: skip
        picks = np.concatenate(chosen)
        self.step += 1
        for posterior in (self.alpha, self.beta):
            posterior *= self.forget
            posterior += (1.0 - self.forget) * self.prior
        return [self.task_ids[i] for i in picks[np.argsort(gap[picks], kind="stable")]]

    def observe(self, node: int, rewards: np.ndarray, mean: float, variance: float) -> None:
        """Add the group's successes and failures (rewards clipped to [0, 1]) to the posterior."""
        values = np.clip(rewards, 0.0, 1.0)
        self.alpha[node] += values.sum()
        self.beta[node] += (1.0 - values).sum()

    def estimates(self, nodes: np.ndarray) -> dict[str, np.ndarray]:
        """Posterior mean ``m``, Bernoulli variance ``m (1 - m)``, posterior std."""
        a, b = self.alpha[nodes], self.beta[nodes]
        mean = a / (a + b)
        return {"variance": mean * (1 - mean), "mean": mean, "uncertainty": np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))}

    def state_dict(self) -> dict[str, Any]:
        """Posteriors, clock and RNG."""
        return {**self.base_state(), "alpha": self.alpha.tolist(), "beta": self.beta.tolist()}

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """Adds the checked posteriors (positive, one per task)."""
        n = len(self.task_ids)
        return {
            **super().read_state(reader),
            "alpha": reader.array("alpha", (n,), positive=True),
            "beta": reader.array("beta", (n,), positive=True),
        }


class PLRScheduler(BaseScheduler):
    """Prioritised level replay with the learnability score ``p (1 - p)`` and staleness."""

    name = "plr"
    STATE_KEYS = (*BaseScheduler.STATE_KEYS, "last_mean", "last_seen")

    def __init__(
        self, suite: Suite, seed: int = 0, replay_prob: float = 0.5, beta: float = 0.1, staleness_mix: float = 0.3,
        weights: Mapping[str, float] | None = None, mixture: MixtureConfig | None = None,
    ) -> None:  # fmt: skip
        super().__init__(suite, seed, weights, mixture)
        self.replay_prob, self.beta, self.staleness_mix = replay_prob, beta, staleness_mix
        self.last_mean = np.full(len(self.task_ids), np.nan)
        self.last_seen = np.full(len(self.task_ids), -1, dtype=np.int64)

    def replay_distribution(self, seen: np.ndarray) -> np.ndarray:
        """PLR's replay probabilities over the ``seen`` nodes (rank-prioritised score + staleness)."""
        p = self.last_mean[seen]
        score = p * (1 - p)
        rank = np.empty(len(seen))
        rank[np.argsort(-score, kind="stable")] = np.arange(1, len(seen) + 1)
        by_score = rank ** (-1.0 / self.beta)
        staleness = (self.step - self.last_seen[seen]).astype(np.float64)
        by_age = staleness / staleness.sum() if staleness.sum() > 0 else np.full(len(seen), 1.0 / len(seen))
        return (1 - self.staleness_mix) * by_score / by_score.sum() + self.staleness_mix * by_age

    def next_batch(self, batch_size: int) -> list[str]:
        """Per family: replay slots from its prioritised seen set, the rest from its unseen tasks."""
        size = self.check_batch_size(batch_size)
        picks = [self._draw(members, count) for members, count in self.mixture.groups(size)]
        self.step += 1
        return [self.task_ids[i] for i in np.concatenate(picks)]

    def _draw(self, members: np.ndarray, count: int) -> np.ndarray:
        """``count`` distinct nodes of ``members``: each slot a replay with probability ``replay_prob`` (while seen ones last)."""
        seen = members[self.last_seen[members] >= 0]
        n_replay = min(int(self.rng.binomial(count, self.replay_prob)) if seen.size else 0, seen.size)
        n_replay = max(n_replay, count - (members.size - seen.size))
        replay = self.rng.choice(seen, n_replay, replace=False, p=self.replay_distribution(seen)) if n_replay else np.empty(0, np.int64)
        fresh: np.ndarray = np.empty(0, np.int64)
        if count - n_replay:
            fresh = self.rng.choice(members[self.last_seen[members] < 0], count - n_replay, replace=False)
        return np.concatenate([replay, fresh])

    def observe(self, node: int, rewards: np.ndarray, mean: float, variance: float) -> None:
        """Remember the group's mean success and when it was seen."""
        self.last_mean[node] = mean
        self.last_seen[node] = self.step

    def estimates(self, nodes: np.ndarray) -> dict[str, np.ndarray]:
        """``p (1 - p)`` of the last group for seen tasks, the pool-wide figures for unseen ones."""
        out = self.global_estimates(len(nodes))
        seen = self.last_seen[nodes] >= 0
        p = self.last_mean[nodes][seen]
        out["variance"][seen], out["mean"][seen] = p * (1 - p), p
        age = (self.step - self.last_seen[nodes][seen]).astype(np.float64)
        out["uncertainty"][seen] = age / (age + 10.0)
        return out

    def state_dict(self) -> dict[str, Any]:
        """Scores, ages, clock and RNG (NaN marks unseen tasks)."""
        return {**self.base_state(), "last_mean": [None if np.isnan(v) else v for v in self.last_mean.tolist()],
                "last_seen": self.last_seen.tolist()}  # fmt: skip

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """Adds the checked scores (``None`` exactly for unseen tasks) and ages (at most the clock)."""
        values = super().read_state(reader)
        n = len(self.task_ids)
        last_mean = reader.array("last_mean", (n,), nullable=True)
        last_seen = reader.array("last_seen", (n,), integer=True, minimum=-1)
        late = np.flatnonzero(last_seen > values["step"])
        if late.size:
            reader.fail("last_seen", f"entry {late[0]} is {last_seen[late[0]]}, later than the saved step {values['step']}")
        mismatch = np.flatnonzero(np.isnan(last_mean) != (last_seen < 0))
        if mismatch.size:
            reader.fail(
                "last_mean",
                f"must be null exactly where last_seen is -1 (unseen tasks); entry {mismatch[0]} is {last_mean[mismatch[0]]} with last_seen {last_seen[mismatch[0]]}",
            )
        return {**values, "last_mean": last_mean, "last_seen": last_seen}


class DUMPScheduler(BaseScheduler):
    """DUMP: environment-level UCB over the mean absolute advantage of recent groups."""

    name = "dump"
    STATE_KEYS = (*BaseScheduler.STATE_KEYS, "recent", "means", "pulls")

    def __init__(
        self, suite: Suite, seed: int = 0, window: int = 64, exploration: float = 1.0, temperature: float = 0.1,
        weights: Mapping[str, float] | None = None, mixture: MixtureConfig | None = None,
    ) -> None:  # fmt: skip
        super().__init__(suite, seed, weights, mixture)
        self.window, self.exploration, self.temperature = window, exploration, temperature
        self.members = [np.flatnonzero(self.env_of == e) for e in range(len(self.env_ids))]
        self.env_family = np.array([self.mixture.family_of[m[0]] for m in self.members])
        self.recent: list[list[float]] = [[] for _ in self.env_ids]
        self.means: list[list[float]] = [[] for _ in self.env_ids]
        self.pulls = np.zeros(len(self.env_ids))

    def ucb(self) -> np.ndarray:
        """Per-environment UCB score (infinite for environments never sampled)."""
        total = max(self.pulls.sum(), 1.0)
        value = np.array([np.mean(r) if r else 0.0 for r in self.recent])
        bonus = self.exploration * np.sqrt(2 * math.log(total) / np.maximum(self.pulls, 1e-12))
        return np.where(self.pulls > 0, value + bonus, np.inf)

    def next_batch(self, batch_size: int) -> list[str]:
        """Per family, its environments by softmax of UCB, tasks uniformly within each (distinct in the batch)."""
        size = self.check_batch_size(batch_size)
        counts = np.zeros(len(self.env_ids), dtype=np.int64)
        sizes = np.array([len(m) for m in self.members])
        families = self.mixture.counts(size)
        for family in np.repeat(np.arange(len(families)), families):
            score = np.where((counts < sizes) & (self.env_family == family), self.ucb(), -np.inf)
            if (score == np.inf).any():
                probs = (score == np.inf).astype(np.float64)
            else:
                logits = (score - score.max()) / self.temperature
                probs = np.where(np.isfinite(logits), np.exp(logits), 0.0)
            env = int(self.rng.choice(len(probs), p=probs / probs.sum()))
            counts[env] += 1
            self.pulls[env] += 1  # optimistic: a pick counts before its result arrives
        picks = [self.rng.choice(self.members[e], c, replace=False) for e, c in enumerate(counts) if c]
        self.step += 1
        return [self.task_ids[i] for i in np.concatenate(picks)]

    def observe(self, node: int, rewards: np.ndarray, mean: float, variance: float) -> None:
        """Add the group's mean |advantage| (``mean |r - mean r|``) to its environment's window."""
        env = int(self.env_of[node])
        for series, value in ((self.recent[env], float(np.abs(rewards - mean).mean())), (self.means[env], mean)):
            series.append(value)
            del series[: -self.window]

    def estimates(self, nodes: np.ndarray) -> dict[str, np.ndarray]:
        """Per-environment figures: variance ``mean |A| / 2`` (exact for 0/1 rewards), mean reward."""
        out = self.global_estimates(len(nodes))
        for k, env in enumerate(self.env_of[nodes]):
            if self.recent[env]:
                out["variance"][k] = np.mean(self.recent[env]) / 2
                out["mean"][k] = np.mean(self.means[env])
                out["uncertainty"][k] = 1.0 / math.sqrt(1.0 + self.pulls[env])
        return out

    def state_dict(self) -> dict[str, Any]:
        """Windows, pull counts, clock and RNG."""
        return {**self.base_state(), "recent": self.recent, "means": self.means, "pulls": self.pulls.tolist()}

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """Adds the checked windows (one per environment, at most ``window`` long) and pull counts."""
        envs = len(self.env_ids)
        recent = reader.series("recent", envs, self.window, minimum=0.0)
        means = reader.series("means", envs, self.window)
        for env, (r, m) in enumerate(zip(recent, means, strict=True)):
            if len(r) != len(m):
                reader.fail(f"means[{env}]", f"has {len(m)} entries but recent[{env}] has {len(r)}; the two windows grow together")
        return {**super().read_state(reader), "recent": recent, "means": means, "pulls": reader.array("pulls", (envs,), minimum=0.0)}
