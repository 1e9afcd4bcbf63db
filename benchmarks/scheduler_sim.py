"""Scheduler quality on a simulated learner over a real task pool.

Every registered family whose ``suite()`` loads (ToolWorld needs no data; BFCL, Tau and ACE
need the benchmark files) provides the pool: its ``train`` split is scheduled, its ``test`` and
``heldout`` splits are only evaluated (a seeded 20 % of the nodes when a pool has neither).
Only the rewards are simulated; the tasks, tools and declarations are the real ones.

Learner A's assumptions (:class:`Learner`, fixed before any scheduler was run, identical for all of them);
``--learner B`` uses :class:`benchmarks.learner_b.LearnerB` instead (forgetting, per-task
memorisation, interference between environments, dead-end tasks; see its module), and
``--learner C`` uses :class:`benchmarks.learner_c.LearnerC` (learner B plus a trade-off between a
family's write and look-up tasks, the real learner's failure without kind cover; see its module),
``--learner both`` runs every row on A and B, ``--learner all`` on A, B and C:

1. **Latent skills.** The learner has one skill per tool name, one per environment and one per
   interaction pattern (interaction kind, user simulator, call-dependency pattern, single- or
   multi-turn). Initial skills are drawn per seed: environment ``N(0, 1.5^2)``, tool ``N(0, 1)``,
   pattern ``N(0, 0.5^2)``.
2. **Success probability.** ``p = sigmoid(env + mean(tools used) + pattern - difficulty)`` where
   the tools used are the gold solution's (else the task's available tools) and
   ``difficulty = 0.5 log(1 + gold calls) + 0.5 (user turns - 1) + eps`` with a hidden per-task
   ``eps ~ N(0, 1.5^2)`` that no declaration reveals. Rewards are Bernoulli(p), G per group.
3. **Learning only from varied groups.** A group with rewards ``r`` moves every skill of its task
   up by ``lr * var(r) / 0.25`` (GRPO's expected signal grows with ``p (1 - p)``; a group whose
   rewards are all equal teaches nothing). ``lr`` is 0.15 for tools, 0.05 for environments,
   0.03 for patterns. Skills never decrease (no forgetting, no interference).
4. **Equal budgets.** Each scheduler spends ``3T * B * G`` rollouts. Step ``k`` on every axis
   means ``k * B * G`` rollouts spent; DAPO's extra (over-sampled) groups spend budget too, and
   it learns only from the groups its filter keeps.
5. **Held-out score** is the mean success probability over held-out tasks (no sampling noise).

Metrics (DESIGN section 6): held-out score at T and 3T; rollouts-to-target (rollouts until the
held-out score reaches the best random reached in 3T, as a fraction of random's own); effective
ratio (fraction of groups with non-zero reward variance); calibration (Spearman of the
scheduler's predicted variance, taken just before the rollouts, with the realised group
variance), overall and on groups of never-seen tasks; ``ceiling``: the never-seen calibration
of a predictor that knows every latent skill but not the hidden per-task difficulty (the best a
declaration-based prediction can do here). ``probe`` and ``p-ceil``: the same two on a uniform
sample of never-seen train tasks drawn at every step (:func:`probe`), which the scheduler did
not choose, so the selection does not shorten the range of its predictions. The last rows are
references, not schedulers (:mod:`benchmarks.sim_reference`): ``oracle`` picks the tasks of
highest true ``p (1 - p)``; ``gain`` those of highest true expected held-out gain within the
target mix (``gain-free``: without it), the reachable ceiling, and ``gain-decl`` the same blind
to a never-rolled task's hidden difficulty and undeclared dead-end status; ``direction`` scores
EnvSched's own predictions along the learner's declared direction; ``truth-all``, ``truth-new`` and
``decl-new`` run EnvSched told the true variance of every task, the true variance of
never-rolled tasks, and the declaration ceiling of never-rolled tasks; ``dead`` runs it told
which tasks are dead ends, ``truth-dead`` told both.

A second table gives each family's share of the groups against the curriculum's target mix
(``envsched_gym.curriculum.mixture``: the pool share with a 5 % floor and an 80 % cap, or
``--family-weights``), over all steps and seeds; ``oracle`` and ``gain-free`` follow no mix. A
third gives each call kind's share of the groups and its held-out change from step 0 to T
(:func:`benchmarks.sim_report.kind_table`; the kinds are EnvSched's ``features.CALL_KINDS``).

The held-out columns give the mean over seeds and ``[min, max]`` over seeds; the acceptance
lines check issue 15's targets for every EnvSched row and for the ``gain`` and ``gain-decl`` ceilings.
``--variant LABEL:key=value,...`` adds an EnvSched row with other options (ablations),
``--seed-start 100`` runs the tuning seeds.

Run: ``python benchmarks/scheduler_sim.py [--learner A|B|C|both|all --seeds 5 --seed-start 0 --steps 40 --png curves.png
--family-weights BFCL=1,... --variant no-transfer:transfer_weight=0]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import envsched_gym
from benchmarks.learner_b import LearnerB
from benchmarks.learner_c import LearnerC
from benchmarks.sim_reference import DIRECTED, GAIN, TOLD, DirectedEnvSched, GainOracleScheduler, OracleScheduler, told_envsched
from benchmarks.sim_report import Run, acceptance, family_table, kind_table, summarise
from envsched_gym.curriculum import execution_signature, make_scheduler, parse_variant
from envsched_gym.curriculum.features import CALL_KINDS, node_call_kinds, task_tools
from envsched_gym.suite import Suite, TaskNode, parse_weights

FAMILIES = ("ToolWorld", "BFCL", "Tau", "ACE")
ORDER = ("envsched", "random", "dapo", "mopps", "plr", "dump", "oracle", *GAIN, DIRECTED, *TOLD)
PROBE = 128
"""Never-seen train tasks drawn at every step for the unselected calibration (:func:`probe`)."""


@dataclass
class SimConfig:
    """Benchmark settings.

    Attributes:
        seeds: Independent runs per scheduler (learner init, rewards and scheduler seeds).
        seed_start: First seed (seeds ``seed_start .. seed_start + seeds - 1``); the reported
            comparison uses 0-4, any tuning of EnvSched's constants uses 100-104.
        steps: T; every scheduler runs to 3T steps' worth of rollouts.
        batch: Groups per step (B).
        group: Rollouts per group (G).
        png: Learning-curve figure path (one panel per learner).
        families: Families to pool (those whose data is missing are skipped with a note).
        family_weights: Target mix, ``"BFCL=2,ACE=1,..."`` (``""``: the pool share with floor and cap).
        learner: ``"A"`` (:class:`Learner`), ``"B"`` (:class:`benchmarks.learner_b.LearnerB`), ``"C"``
            (:class:`benchmarks.learner_c.LearnerC`), ``"both"`` (A and B) or ``"all"`` (A, B and C).
        schedulers: Rows to run, from :data:`ORDER`.
        variants: Extra EnvSched rows, each ``"LABEL:key=value,..."`` (EnvSchedConfig or
            PredictorConfig fields, e.g. ``"no-transfer:transfer_weight=0"``) for ablations.
    """

    seeds: int = 5
    seed_start: int = 0
    steps: int = 40
    batch: int = 16
    group: int = 8
    png: str = "scheduler_sim.png"
    families: tuple[str, ...] = FAMILIES
    family_weights: str = ""
    learner: str = "A"
    schedulers: tuple[str, ...] = ORDER
    variants: tuple[str, ...] = ()


class Learner:
    """The simulated policy: latent skills -> per-task success probabilities (assumptions 1-3)."""

    LR = {"tool": 0.15, "env": 0.05, "pattern": 0.03}
    SPREAD = {"tool": 1.0, "env": 1.5, "pattern": 0.5}
    HIDDEN = 1.5

    def __init__(self, nodes: list[TaskNode], seed: int) -> None:
        rng = np.random.default_rng([seed, 7])
        units: dict[str, int] = {}
        rows, cols, vals, difficulty = [], [], [], []
        for i, node in enumerate(nodes):
            tools, turns, calls = _skills_of(node)
            named = [(f"tool:{t}", 1.0 / len(tools)) for t in tools] + [(f"env:{node.env.env_id}", 1.0), (f"pattern:{_pattern(node)}", 1.0)]
            for name, weight in named:
                rows.append(i)
                cols.append(units.setdefault(name, len(units)))
                vals.append(weight)
            difficulty.append(0.5 * np.log1p(calls) + 0.5 * (turns - 1))
        self.weights = sp.csr_matrix((vals, (rows, cols)), shape=(len(nodes), len(units)))
        self.member = self.weights.copy()
        self.member.data[:] = 1.0
        kinds = [name.split(":", 1)[0] for name in units]
        self.lr = np.array([self.LR[k] for k in kinds])
        self.skill = rng.standard_normal(len(units)) * np.array([self.SPREAD[k] for k in kinds])
        self.declared_difficulty = np.asarray(difficulty)
        self.difficulty = self.declared_difficulty + rng.normal(0.0, self.HIDDEN, len(nodes))
        self.dead = np.zeros(len(nodes), dtype=bool)  # no dead ends (learner B has some; the reference rows read this)

    def success(self, nodes: np.ndarray | None = None) -> np.ndarray:
        """Success probability of ``nodes`` (all when None)."""
        logits = self.weights @ self.skill - self.difficulty
        return 1.0 / (1.0 + np.exp(-(logits if nodes is None else logits[nodes])))

    def expected_variance(self, nodes: np.ndarray) -> np.ndarray:
        """``E[p (1 - p)]`` knowing every skill but not the hidden difficulty: the best any
        predictor that sees only declarations and rollouts of *other* tasks could do."""
        points, weights = np.polynomial.hermite_e.hermegauss(20)
        logits = (self.weights @ self.skill - self.declared_difficulty)[nodes][:, None] - self.HIDDEN * points[None, :]
        p = 1.0 / (1.0 + np.exp(-logits))
        return (p * (1 - p)) @ weights / weights.sum()

    def direction(self, nodes: np.ndarray, held: np.ndarray, declared: bool = False) -> np.ndarray:
        """First-order change of the mean success over ``held`` per unit of group signal ``var / 0.25`` on each of ``nodes``.

        The signal moves every skill of the node by ``lr`` times it (:meth:`learn`); the held-out
        mean moves by those skills' gradient. ``declared`` changes nothing: learner A has no dead ends.
        """
        p_held = self.success(held)
        gradient = self.weights[held].T @ (p_held * (1 - p_held)) / len(held)
        return self.member[nodes] @ (self.lr * gradient)

    def expected_gain(self, nodes: np.ndarray, held: np.ndarray, group: int, declared: bool = False) -> np.ndarray:
        """First-order expected change of the mean success over ``held`` from one group of ``group`` rollouts of each of ``nodes``.

        A group's expected signal is ``(G - 1) / G * p (1 - p) / 0.25``, times the :meth:`direction`.
        ``declared``: the expectation over the nodes' hidden difficulty instead (``p (1 - p)``
        replaced by :meth:`expected_variance`): what is known of a task before its own rollouts.
        """
        p = self.success(nodes)
        variance = self.expected_variance(nodes) if declared else p * (1 - p)
        return (group - 1) / group * variance / 0.25 * self.direction(nodes, held)

    def learn(self, nodes: np.ndarray, variances: np.ndarray) -> None:
        """Apply one step's groups: each moves its task's skills by ``lr * var / 0.25``."""
        signal = np.zeros(self.weights.shape[0])
        np.add.at(signal, nodes, variances / 0.25)
        self.skill += self.lr * (self.member.T @ signal)


def _skills_of(node: TaskNode) -> tuple[list[str], int, int]:
    solution = node.task.solution or []
    used = [c.name for turn in solution for c in turn.tool_calls]
    tools = sorted(set(used)) or sorted({t.name for t in task_tools(node)}) or ["<no tools>"]
    return tools, max(1, len(node.task.user_turns)), len(used) if solution else max(1, len(node.task.user_turns))


def _pattern(node: TaskNode) -> str:
    _, categories = execution_signature(node)
    return "/".join(categories[:3]) + ("/multi-turn" if len(node.task.user_turns) > 1 else "/single-turn")


LEARNERS = {"both": ("A", "B"), "all": ("A", "B", "C")}
"""``--learner`` values that run several learners, and which."""


def make_learner(kind: str, nodes: list[TaskNode], seed: int) -> Learner | LearnerB:
    """Learner ``kind`` (``"A"``, ``"B"`` or ``"C"``) over ``nodes``."""
    if kind == "A":
        return Learner(nodes, seed)
    if kind == "B":
        return LearnerB(nodes, seed, _skills_of, _pattern)
    if kind == "C":
        return LearnerC(nodes, seed, _skills_of, _pattern)
    raise ValueError(f"unknown learner {kind!r}; use 'A', 'B' or 'C' (or --learner both / all to run several)")


def simulate(name: str, train: Suite, heldout_nodes: list[TaskNode], seed: int, cfg: SimConfig, learner_kind: str = "A",
             overrides: dict[str, Any] | None = None) -> Run:  # fmt: skip
    """Run scheduler ``name`` (with EnvSched ``overrides``) for ``3T`` steps' worth of rollouts on learner ``learner_kind``.

    The curve has one point per step's worth of rollouts.
    """
    nodes = list(train.nodes) + heldout_nodes
    learner = make_learner(learner_kind, nodes, seed)
    held = np.arange(len(train), len(nodes))
    rng = np.random.default_rng([seed, 11])
    probe_rng = np.random.default_rng([seed, 13])  # its own stream: probing leaves the run's rewards unchanged
    started = time.perf_counter()
    if name == "oracle":
        scheduler: Any = OracleScheduler(train, learner)
    elif name in GAIN:
        scheduler = GainOracleScheduler(train, learner, held, cfg.group, mixed=name != "gain-free", declared=name == "gain-decl")
    elif name == DIRECTED:
        scheduler = DirectedEnvSched(train, learner, held, seed, **(overrides or {}))
    elif name in TOLD:
        scheduler = told_envsched(name, train, learner, seed, cfg.group, **(overrides or {}))
    else:
        scheduler = make_scheduler(name, train, seed=seed, **(overrides or {}))
    position = {t: i for i, t in enumerate(n.task_id for n in train.nodes)}
    step_cost, budget = cfg.batch * cfg.group, 3 * cfg.steps * cfg.batch * cfg.group
    run, seen, spent = Run(curve=[float(learner.success(held).mean())]), set(), 0
    kinds = node_call_kinds(nodes)
    run.kind_held[0] = kind_means(learner, held, kinds[held])
    while spent < budget:
        batch = scheduler.next_batch(cfg.batch)[: (budget - spent) // cfg.group]
        predicted = scheduler.predict(batch)["variance"]
        probe(run, scheduler, learner, train, seen, probe_rng, cfg.group)
        idx = np.array([position[t] for t in batch])
        run.ceiling.extend(learner.expected_variance(idx).tolist())
        rewards = (rng.random((len(batch), cfg.group)) < learner.success(idx)[:, None]).astype(float)
        kept_nodes, kept_var = [], []
        for k, task_id in enumerate(batch):
            scheduler.update(task_id, rewards[k])
            var = float(rewards[k].var())
            run.predicted.append(float(predicted[k]))
            run.realised.append(var)
            run.fresh.append(task_id not in seen)
            seen.add(task_id)
            if scheduler.keep(task_id, rewards[k]):
                kept_nodes.append(idx[k])
                kept_var.append(var)
        learner.learn(np.asarray(kept_nodes, dtype=np.int64), np.asarray(kept_var))
        run.groups += len(batch)
        run.family_groups.update(train.node(t).family for t in batch)
        run.kind_groups.update(CALL_KINDS[kinds[i]] for i in idx)
        run.varied += int((rewards.var(axis=1) > 0).sum())
        before, spent = spent, spent + len(batch) * cfg.group
        score = float(learner.success(held).mean())
        run.curve.extend([score] * (spent // step_cost - before // step_cost))
        if len(run.curve) > cfg.steps and cfg.steps not in run.kind_held:
            run.kind_held[cfg.steps] = kind_means(learner, held, kinds[held])
    run.seconds = time.perf_counter() - started
    return run


def kind_means(learner: Learner | LearnerB, held: np.ndarray, kinds: np.ndarray) -> dict[str, float]:
    """Mean held-out success per call kind present among ``held`` (``kinds``: their codes)."""
    success = learner.success(held)
    return {kind: float(success[kinds == code].mean()) for code, kind in enumerate(CALL_KINDS) if (kinds == code).any()}


def probe(
    run: Run, scheduler: Any, learner: Learner | LearnerB, train: Suite, seen: set[str], rng: np.random.Generator, group: int
) -> None:
    """Calibration on never-seen tasks that the scheduler did not choose: ``PROBE`` random never-seen train tasks.

    The ``calib-new`` column correlates predictions with realised variances on the groups the
    scheduler rolled, which it picked *for* their predicted variance: the range of its
    predictions there is cut short, which lowers its correlation but not the ceiling's (picked on
    nothing). The probe takes a uniform sample of the tasks not yet rolled, asks the scheduler's
    predicted variance (after its own ``predict`` of the batch, so no extra refit moves its
    state), and draws ``group`` rollouts each from the learner with ``rng``: nothing of it
    reaches the scheduler or the learner.
    """
    fresh = [i for i, node in enumerate(train.nodes) if node.task_id not in seen]
    if not fresh:
        return
    idx = np.sort(rng.choice(fresh, size=min(PROBE, len(fresh)), replace=False))
    rewards = rng.random((len(idx), group)) < learner.success(idx)[:, None]
    run.probe_predicted.extend(scheduler.predict([train.nodes[i].task_id for i in idx])["variance"])
    run.probe_realised.extend(rewards.astype(float).var(axis=1).tolist())
    run.probe_ceiling.extend(learner.expected_variance(idx).tolist())


def load_pool(families: tuple[str, ...]) -> tuple[Suite, list[TaskNode], list[str]]:
    """The train suite and held-out nodes of every family that loads, with notes on skipped ones."""
    nodes, notes = [], []
    for family in families:
        try:
            nodes.extend(envsched_gym.suite([family]).nodes)
        except Exception as exc:  # a family without data or not yet installed is skipped, with the reason
            notes.append(f"skipped {family}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
    if not nodes:
        raise SystemExit("no family could be loaded; " + "; ".join(notes))
    train = [n for n in nodes if n.split == "train"]
    held = [n for n in nodes if n.split != "train"]
    if not held:
        pick = np.random.default_rng(0).random(len(nodes)) < 0.2
        train, held = [n for n, p in zip(nodes, pick, strict=True) if not p], [n for n, p in zip(nodes, pick, strict=True) if p]
    return Suite(train), held, notes


def plot(results: dict[str, dict[str, list[Run]]], cfg: SimConfig) -> None:
    """Mean held-out score against rollouts, one panel per learner, one line per row (band: min-max over seeds)."""
    fig, axes = plt.subplots(1, len(results), figsize=(7 * len(results), 4.5), squeeze=False)
    for ax, (learner, runs) in zip(axes[0], results.items(), strict=True):
        ax.set_prop_cycle(color=plt.cm.tab20.colors)  # distinct colours for up to 20 rows
        for name in runs:
            curves = np.array([r.curve[: 3 * cfg.steps + 1] for r in runs[name]])
            x = np.arange(curves.shape[1]) * cfg.batch * cfg.group
            ax.plot(x, curves.mean(axis=0), label=name, linewidth=2.2 if name == "envsched" else 1.3)
            ax.fill_between(x, curves.min(axis=0), curves.max(axis=0), alpha=0.12)
        ax.axvline(cfg.steps * cfg.batch * cfg.group, color="grey", linestyle=":", label="T")
        ax.set_xlabel("rollouts")
        ax.set_ylabel("held-out success (mean p)")
        ax.set_title(f"Learner {learner}, B={cfg.batch}, G={cfg.group}, seeds {cfg.seed_start}-{cfg.seed_start + cfg.seeds - 1}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(cfg.png, dpi=110)
    plt.close(fig)


def run_all(train: Suite, held: list[TaskNode], cfg: SimConfig, learner: str) -> dict[str, list[Run]]:
    """Every scheduler row (and EnvSched variant) over every seed on ``learner``."""
    rows: dict[str, tuple[str, dict[str, Any]]] = {name: (name, {}) for name in cfg.schedulers}
    for text in cfg.variants:
        label, overrides = parse_variant(text)
        rows[f"envsched-{label}"] = ("envsched", overrides)
    if "random" not in rows:
        raise ValueError("the tables measure every scheduler against random; keep 'random' in --schedulers")
    seeds = range(cfg.seed_start, cfg.seed_start + cfg.seeds)
    return {label: [simulate(name, train, held, seed, cfg, learner, over) for seed in seeds] for label, (name, over) in rows.items()}


def main(cfg: SimConfig) -> dict[str, dict[str, list[Run]]]:
    """Run every scheduler over every seed on the chosen learner(s), print the tables, write the figures."""
    train, held, notes = load_pool(cfg.families)
    train = train.with_weights(parse_weights(cfg.family_weights))
    families = sorted({n.family for n in train.nodes} | {n.family for n in held})
    print(f"pool: {len(train)} train nodes, {len(held)} held-out nodes, {len(train.envs)} environments, families {families}")
    for note in notes:
        print(note)
    learners = LEARNERS.get(cfg.learner, (cfg.learner,))
    seeds = f"seeds {cfg.seed_start}-{cfg.seed_start + cfg.seeds - 1}"
    results = {}
    for learner in learners:
        runs = results[learner] = run_all(train, held, cfg, learner)
        print(f"\n== learner {learner}: {seeds}, T={cfg.steps}, B={cfg.batch}, G={cfg.group} ==")
        tables = [*summarise(runs, cfg.steps, cfg.batch * cfg.group), "", *family_table(runs, train), "", *kind_table(runs, cfg.steps)]
        for line in tables:
            print(line)
        for name in [n for n in runs if n.startswith("envsched")]:
            print(f"acceptance ({name}, learner {learner}):")
            print("\n".join(acceptance(runs, train, cfg.steps, name)))
        for name, what in (("gain", "knows the learner"), ("gain-decl", "knows the learner, not never-rolled tasks' hidden draws")):
            if name in runs:
                print(f"the same targets for the reachable ceiling ({name}, a reference that {what}; learner {learner}):")
                print("\n".join(acceptance(runs, train, cfg.steps, name)))
    plot(results, cfg)
    print(f"learning curves: {cfg.png}")
    return results


def parse_args() -> SimConfig:
    """CLI over :class:`SimConfig`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = SimConfig()
    parser.add_argument("--seeds", type=int, default=defaults.seeds)
    parser.add_argument("--seed-start", type=int, default=defaults.seed_start, help="first seed (tuning: 100)")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="T")
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--group", type=int, default=defaults.group)
    parser.add_argument("--png", default=defaults.png)
    parser.add_argument("--families", nargs="+", default=list(defaults.families))
    parser.add_argument("--family-weights", default=defaults.family_weights, help="target mix, e.g. BFCL=2,ACE=1,Tau=1,ToolWorld=1")
    parser.add_argument("--learner", choices=("A", "B", "C", *LEARNERS), default=defaults.learner)
    parser.add_argument("--schedulers", nargs="+", choices=ORDER, default=list(defaults.schedulers))
    parser.add_argument("--variant", action="append", default=[], help="extra EnvSched row LABEL:key=value,... (repeatable)")
    a = parser.parse_args()
    return SimConfig(a.seeds, a.seed_start, a.steps, a.batch, a.group, a.png, tuple(a.families), a.family_weights, a.learner,
                     tuple(a.schedulers), tuple(a.variant))  # fmt: skip


if __name__ == "__main__":
    main(parse_args())
