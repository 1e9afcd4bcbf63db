"""Simulated learner B for ``scheduler_sim.py --learner B``: other dynamics than learner A.

Written and fixed before any scheduler was compared on it (issue 15, part 4). Each assumption
punishes a way a scheduler can look good on learner A without teaching what transfers:

1. **Weakest link.** ``p = sigmoid(env + min(tools used) + pattern + memo - difficulty)``: a task
   needs every tool it uses, so a chain of calls is as hard as its least-known tool (learner A
   averages them). Initial skills: environment ``N(0, 1.2^2)``, tool ``N(-0.3, 1)``, pattern
   ``N(0, 0.5^2)``; ``difficulty`` as learner A's, with hidden noise ``N(0, 1.2^2)``.
2. **Memorisation that does not transfer.** Every task has its own ``memo`` term, starting at 0,
   that a varied group of that task raises by ``0.6 * var / 0.25``. It counts only on that task:
   held-out tasks never have one, so revisiting a task inflates its training success and
   teaches the held-out tasks nothing more than the first visit's shared part.
3. **Shared learning only from the first tools.** A varied group moves the skills of its task by
   ``lr * var / 0.25`` (``lr``: 0.12 tools, 0.04 environments, 0.03 patterns), but only the
   task's weakest tool and its environment and pattern learn (the learner fixes the bottleneck).
4. **Interference.** Every environment has 3 conflicting environments of the same family (a
   seeded draw); a step that raises an environment's skill by ``d`` lowers each of its
   conflicting environments' by ``0.25 d``.
5. **Forgetting.** After every step, each tool and environment skill that no group of the step
   used moves 1 % of the way back to its initial value.
6. **Dead ends.** Tasks whose gold makes no call, and a seeded 10 % of the others, have a fixed
   success probability drawn from ``U(0.3, 0.7)``: their rewards vary, but they teach nothing
   shared and nothing about themselves.

The held-out score is the mean success probability over held-out tasks (memo 0).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from envsched_gym.suite import TaskNode


class LearnerB:
    """Learner B (see the module docstring); the interface of ``scheduler_sim.Learner``."""

    LR = {"tool": 0.12, "env": 0.04, "pattern": 0.03}
    SPREAD = {"tool": 1.0, "env": 1.2, "pattern": 0.5}
    MEAN = {"tool": -0.3, "env": 0.0, "pattern": 0.0}
    HIDDEN = 1.2
    MEMO_LR = 0.6
    INTERFERENCE = 0.25
    CONFLICTS = 3
    FORGET = 0.01
    DEAD_END_FRACTION = 0.10

    def __init__(
        self, nodes: list[TaskNode], seed: int, skills_of: Callable[[TaskNode], tuple[list[str], int, int]], pattern_of: Callable[[TaskNode], str]
    ) -> None:
        rng = np.random.default_rng([seed, 11])
        units: dict[str, int] = {}
        self.tools: list[np.ndarray] = []
        env_unit: list[int] = []
        pattern_unit: list[int] = []
        difficulty: list[float] = []
        no_call: list[bool] = []
        for node in nodes:
            tools, turns, calls = skills_of(node)
            self.tools.append(np.array([units.setdefault(f"tool:{t}", len(units)) for t in tools]))
            env_unit.append(units.setdefault(f"env:{node.env.env_id}", len(units)))
            pattern_unit.append(units.setdefault(f"pattern:{pattern_of(node)}", len(units)))
            difficulty.append(0.5 * np.log1p(calls) + 0.5 * (turns - 1))
            no_call.append(not any(t.tool_calls for t in node.task.solution or []))
        self.kind = np.array([name.split(":", 1)[0] for name in units])
        self.env, self.pattern = np.array(env_unit), np.array(pattern_unit)
        self.lr = np.array([self.LR[k] for k in self.kind])
        self.initial = np.array([self.MEAN[k] for k in self.kind]) + rng.standard_normal(len(units)) * np.array([self.SPREAD[k] for k in self.kind])
        self.skill = self.initial.copy()
        self.declared_difficulty = np.asarray(difficulty)
        self.difficulty = self.declared_difficulty + rng.normal(0.0, self.HIDDEN, len(nodes))
        self.memo = np.zeros(len(nodes))
        self.no_call = np.asarray(no_call)
        self.dead = self.no_call | (rng.random(len(nodes)) < self.DEAD_END_FRACTION)
        self.dead_p = rng.uniform(0.3, 0.7, len(nodes))
        self.conflict = self._conflicts(nodes, rng, units)

    def _conflicts(self, nodes: list[TaskNode], rng: np.random.Generator, units: dict[str, int]) -> sp.csr_matrix:
        """Environment-unit x environment-unit matrix: 1 where the column conflicts with the row."""
        by_family: dict[str, list[int]] = {}
        for node in nodes:
            unit = units[f"env:{node.env.env_id}"]
            if unit not in by_family.setdefault(node.family, []):
                by_family[node.family].append(unit)
        rows, cols = [], []
        for members in by_family.values():
            for unit in members:
                others = [m for m in members if m != unit]
                for other in rng.permutation(others)[: self.CONFLICTS] if others else []:
                    rows.append(unit)
                    cols.append(int(other))
        size = len(units)
        return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(size, size))

    def logits(self, nodes: np.ndarray, skill: np.ndarray | None = None, difficulty: np.ndarray | None = None) -> np.ndarray:
        """Logits of ``nodes`` (assumption 1) with the current skills and the true difficulty by default."""
        skill = self.skill if skill is None else skill
        difficulty = self.difficulty if difficulty is None else difficulty
        weakest = np.array([skill[self.tools[i]].min() for i in nodes])
        return skill[self.env[nodes]] + weakest + skill[self.pattern[nodes]] + self.memo[nodes] - difficulty[nodes]

    def success(self, nodes: np.ndarray | None = None) -> np.ndarray:
        """Success probability of ``nodes`` (all when None)."""
        nodes = np.arange(len(self.memo)) if nodes is None else np.asarray(nodes)
        p = 1.0 / (1.0 + np.exp(-self.logits(nodes)))
        return np.where(self.dead[nodes], self.dead_p[nodes], p)

    def expected_variance(self, nodes: np.ndarray) -> np.ndarray:
        """``E[p (1 - p)]`` knowing every skill and memo but not the hidden difficulty."""
        nodes = np.asarray(nodes)
        dead = self.dead_p[nodes]
        return np.where(self.dead[nodes], dead * (1 - dead), self._live_variance(nodes))

    def _live_variance(self, nodes: np.ndarray) -> np.ndarray:
        """``E[p (1 - p)]`` over the hidden difficulty of ``nodes`` as if none were a dead end."""
        points, weights = np.polynomial.hermite_e.hermegauss(20)
        logits = self.logits(nodes, difficulty=self.declared_difficulty)[:, None] - self.HIDDEN * points[None, :]
        p = 1.0 / (1.0 + np.exp(-logits))
        return (p * (1 - p)) @ weights / weights.sum()

    def direction(self, nodes: np.ndarray, held: np.ndarray, declared: bool = False) -> np.ndarray:
        """First-order change of the mean success over ``held`` per unit of group signal ``var / 0.25`` on each of ``nodes``.

        Assumptions 1, 3, 4 and 6 to first order: the signal moves the node's weakest tool,
        environment and pattern, and lowers its conflicting environments (which, unused by the
        group, then keep ``1 - FORGET`` of that drop); a held-out task responds through its own
        weakest tool, environment and pattern. Dead ends and memorisation move no held-out task.
        Picking a task also spares its tools and environment that step's forgetting; that term
        does not grow with the group's signal and is left out.

        ``declared``: a task's chance of being live as its declarations tell it, instead of whether
        it is: ``1 - DEAD_END_FRACTION`` for a task whose gold makes a call, 0 for a no-call task.
        """
        held = np.asarray(held)
        live = held[~self.dead[held]]
        p_held = self.success(live)
        slope = p_held * (1 - p_held) / len(held)
        gradient = np.zeros_like(self.skill)
        weakest_held = np.array([self.tools[j][np.argmin(self.skill[self.tools[j]])] for j in live], dtype=np.int64)
        for units in (weakest_held, self.env[live], self.pattern[live]):
            np.add.at(gradient, units, slope)
        nodes = np.asarray(nodes)
        weakest = np.array([self.tools[i][np.argmin(self.skill[self.tools[i]])] for i in nodes], dtype=np.int64)
        env = self.env[nodes]
        interference = (1 - self.FORGET) * self.INTERFERENCE * self.lr[env] * (self.conflict[env] @ gradient)
        pattern = self.pattern[nodes]
        direct = self.lr[weakest] * gradient[weakest] + self.lr[env] * gradient[env] + self.lr[pattern] * gradient[pattern]
        alive = np.where(self.no_call[nodes], 0.0, 1.0 - self.DEAD_END_FRACTION) if declared else (~self.dead[nodes]).astype(float)
        return alive * (direct - interference)

    def expected_gain(self, nodes: np.ndarray, held: np.ndarray, group: int, declared: bool = False) -> np.ndarray:
        """First-order expected change of the mean success over ``held`` from one group of ``group`` rollouts of each of ``nodes``.

        The group's expected signal ``(G - 1) / G * p (1 - p) / 0.25`` times the :meth:`direction`.
        ``declared``: the expectation over what a task's declarations do not reveal, its hidden
        difficulty and whether it is one of the undeclared dead ends (a live task's expected
        variance times its declared chance of being live).
        """
        nodes = np.asarray(nodes)
        if declared:
            variance = self._live_variance(nodes)
        else:
            p = self.success(nodes)
            variance = p * (1 - p)
        return (group - 1) / group * variance / 0.25 * self.direction(nodes, held, declared)

    def learn(self, nodes: np.ndarray, variances: np.ndarray) -> None:
        """Apply one step's groups (assumptions 2-5)."""
        delta = np.zeros_like(self.skill)
        used = np.zeros(len(self.skill), dtype=bool)
        for node, variance in zip(np.asarray(nodes), np.asarray(variances), strict=True):
            tools = self.tools[node]
            used[tools] = used[self.env[node]] = True
            if self.dead[node] or variance <= 0:
                continue
            signal = variance / 0.25
            self.memo[node] += self.MEMO_LR * signal
            weakest = tools[np.argmin(self.skill[tools])]
            for unit in (weakest, self.env[node], self.pattern[node]):
                delta[unit] += self.lr[unit] * signal
        env_delta = np.where(self.kind == "env", delta, 0.0)
        delta -= self.INTERFERENCE * (self.conflict.T @ env_delta)
        self.skill += delta
        idle = ~used & (self.kind != "pattern")
        self.skill[idle] -= self.FORGET * (self.skill[idle] - self.initial[idle])
