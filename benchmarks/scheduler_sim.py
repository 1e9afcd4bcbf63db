"""Scheduler quality on a simulated learner over a real task pool.

Every registered family whose ``suite()`` loads (ToolWorld needs no data; BFCL, Tau and ACE
need the benchmark files) provides the pool: its ``train`` split is scheduled, its ``test`` and
``heldout`` splits are only evaluated (a seeded 20 % of the nodes when a pool has neither).
Only the rewards are simulated; the tasks, tools and declarations are the real ones.

The simulator's assumptions (fixed before any scheduler was run, identical for all of them):

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
declaration-based prediction can do here). The ``oracle`` row is a reference, not a
scheduler: it picks the tasks of highest true ``p (1 - p)``.

A second table gives each family's share of the groups against the curriculum's target mix
(``envsched_gym.curriculum.mixture``: the pool share with a 5 % floor and an 80 % cap, or
``--family-weights``), over all steps and seeds; the oracle follows no mix.

Run: ``python benchmarks/scheduler_sim.py [--seeds 5 --steps 40 --png curves.png --family-weights BFCL=1,...]``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from scipy.stats import spearmanr

import envsched_gym
from envsched_gym.curriculum import execution_signature, make_scheduler
from envsched_gym.curriculum.features import task_tools
from envsched_gym.curriculum.mixture import Mixture
from envsched_gym.suite import Suite, TaskNode, parse_weights

FAMILIES = ("ToolWorld", "BFCL", "Tau", "ACE")
ORDER = ("envsched", "random", "dapo", "mopps", "plr", "dump", "oracle")


@dataclass
class SimConfig:
    """Benchmark settings.

    Attributes:
        seeds: Independent runs per scheduler (learner init, rewards and scheduler seeds).
        steps: T; every scheduler runs to 3T steps' worth of rollouts.
        batch: Groups per step (B).
        group: Rollouts per group (G).
        png: Learning-curve figure path.
        families: Families to pool (those whose data is missing are skipped with a note).
        family_weights: Target mix, ``"BFCL=2,ACE=1,..."`` (``""``: the pool share with floor and cap).
    """

    seeds: int = 5
    steps: int = 40
    batch: int = 16
    group: int = 8
    png: str = "scheduler_sim.png"
    families: tuple[str, ...] = FAMILIES
    family_weights: str = ""


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


@dataclass
class Run:
    """One scheduler, one seed."""

    curve: list[float] = field(default_factory=list)
    groups: int = 0
    varied: int = 0
    predicted: list[float] = field(default_factory=list)
    realised: list[float] = field(default_factory=list)
    fresh: list[bool] = field(default_factory=list)
    ceiling: list[float] = field(default_factory=list)
    family_groups: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


class OracleScheduler:
    """Reference only (not a real scheduler): the B tasks of highest true ``p (1 - p)``."""

    name = "oracle"

    def __init__(self, train: Suite, learner: Learner) -> None:
        self.task_ids = [n.task_id for n in train.nodes]
        self.learner = learner
        self.position = {t: i for i, t in enumerate(self.task_ids)}

    def next_batch(self, batch_size: int) -> list[str]:
        """Top ``batch_size`` by true variance."""
        p = self.learner.success(np.arange(len(self.task_ids)))
        return [self.task_ids[i] for i in np.argsort(-(p * (1 - p)), kind="stable")[:batch_size]]

    def predict(self, task_ids: list[str]) -> dict[str, np.ndarray]:
        """The true ``p (1 - p)``."""
        p = self.learner.success(np.array([self.position[t] for t in task_ids]))
        return {"variance": p * (1 - p)}

    def update(self, task_id: str, rewards: np.ndarray) -> None:
        """Nothing to learn."""

    def keep(self, task_id: str, rewards: np.ndarray) -> bool:
        """Every group trains."""
        return True


def simulate(name: str, train: Suite, heldout_nodes: list[TaskNode], seed: int, cfg: SimConfig) -> Run:
    """Run ``name`` for ``3T`` steps' worth of rollouts; the curve has one point per step's worth."""
    nodes = list(train.nodes) + heldout_nodes
    learner = Learner(nodes, seed)
    held = np.arange(len(train), len(nodes))
    rng = np.random.default_rng([seed, 11])
    started = time.perf_counter()
    scheduler = OracleScheduler(train, learner) if name == "oracle" else make_scheduler(name, train, seed=seed)
    position = {t: i for i, t in enumerate(n.task_id for n in train.nodes)}
    step_cost, budget = cfg.batch * cfg.group, 3 * cfg.steps * cfg.batch * cfg.group
    run, seen, spent = Run(curve=[float(learner.success(held).mean())]), set(), 0
    while spent < budget:
        batch = scheduler.next_batch(cfg.batch)[: (budget - spent) // cfg.group]
        predicted = scheduler.predict(batch)["variance"]
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
        run.varied += int((rewards.var(axis=1) > 0).sum())
        before, spent = spent, spent + len(batch) * cfg.group
        score = float(learner.success(held).mean())
        run.curve.extend([score] * (spent // step_cost - before // step_cost))
    run.seconds = time.perf_counter() - started
    return run


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


def _spearman(pred: list[float], real: list[float]) -> float:
    if len(pred) < 3 or np.ptp(pred) == 0 or np.ptp(real) == 0:
        return float("nan")
    return float(spearmanr(pred, real).statistic)


def _first_reach(curve: list[float], target: float) -> int | None:
    hits = np.flatnonzero(np.asarray(curve) >= target - 1e-12)
    return int(hits[0]) if hits.size else None


def summarise(runs: dict[str, list[Run]], cfg: SimConfig) -> list[str]:
    """The results table (one row per scheduler, means over seeds)."""
    T, step_cost = cfg.steps, cfg.batch * cfg.group
    targets = [max(r.curve) for r in runs["random"]]
    random_reach = [_first_reach(r.curve, t) for r, t in zip(runs["random"], targets, strict=True)]
    header = f"{'scheduler':<9} {'held@0':>7} {'held@T':>7} {'held@3T':>8} {'to-target':>10} {'x random':>9} {'eff.ratio':>9} {'calib':>6} {'calib-new':>9} {'ceiling':>7} {'s/run':>6}"
    lines = [header, "-" * len(header)]
    for name in [n for n in ORDER if n in runs]:
        rs = runs[name]
        reach = [_first_reach(r.curve, t) for r, t in zip(rs, targets, strict=True)]
        done = [(k, base) for k, base in zip(reach, random_reach, strict=True) if k is not None]
        to_target = f"{np.mean([k for k, _ in done]) * step_cost:,.0f}" if done else "never"
        ratio = f"{np.mean([k for k, _ in done]) / np.mean([b for _, b in done]):.2f}" if done else "-"
        if len(done) < len(rs):
            to_target += f" ({len(done)}/{len(rs)})"
        calib = np.nanmean([_spearman(r.predicted, r.realised) for r in rs]) if name != "random" and name != "dapo" else float("nan")
        fresh = [
            _spearman(
                [p for p, f in zip(r.predicted, r.fresh, strict=True) if f], [v for v, f in zip(r.realised, r.fresh, strict=True) if f]
            )
            for r in rs
        ]
        calib_new = np.nanmean(fresh) if name not in ("random", "dapo") and not np.isnan(fresh).all() else float("nan")
        ceiling = [
            _spearman([c for c, f in zip(r.ceiling, r.fresh, strict=True) if f], [v for v, f in zip(r.realised, r.fresh, strict=True) if f])
            for r in rs
        ]
        lines.append(
            f"{name:<9} {np.mean([r.curve[0] for r in rs]):7.3f} {np.mean([r.curve[T] for r in rs]):7.3f} {np.mean([r.curve[3 * T] for r in rs]):8.3f} "
            f"{to_target:>10} {ratio:>9} {np.mean([r.varied / r.groups for r in rs]):9.3f} {_fmt(calib):>6} {_fmt(calib_new):>9} {_fmt(_nanmean(ceiling)):>7} {np.mean([r.seconds for r in rs]):6.1f}"
        )  # fmt: skip
    return lines


def family_table(runs: dict[str, list[Run]], train: Suite) -> list[str]:
    """Each family's share of the groups (all steps and seeds) per scheduler, next to the target mix."""
    mix = Mixture(train)
    names = [n for n in ORDER if n in runs]
    header = f"{'family':<10} {'pool':>6} {'target':>7} " + " ".join(f"{n:>8}" for n in names)
    lines = [header, "-" * len(header)]
    worst = dict.fromkeys(names, 0.0)
    for f, family in enumerate(mix.families):
        cells = []
        for name in names:
            share = sum(r.family_groups[family] for r in runs[name]) / sum(r.groups for r in runs[name])
            worst[name] = max(worst[name], abs(share - mix.target[f]))
            cells.append(f"{share:8.3f}")
        lines.append(f"{family:<10} {mix.sizes[f] / mix.sizes.sum():6.3f} {mix.target[f]:7.3f} " + " ".join(cells))
    lines.append(f"{'max |share - target|':<25} " + " ".join(f"{worst[n]:8.3f}" for n in names))
    return lines


def _nanmean(values: list[float]) -> float:
    return float("nan") if np.isnan(values).all() else float(np.nanmean(values))


def _fmt(value: float) -> str:
    return "n/a" if np.isnan(value) else f"{value:.2f}"


def plot(runs: dict[str, list[Run]], cfg: SimConfig) -> None:
    """Mean held-out score against rollouts, one line per scheduler (band: min-max over seeds)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in [n for n in ORDER if n in runs]:
        curves = np.array([r.curve[: 3 * cfg.steps + 1] for r in runs[name]])
        x = np.arange(curves.shape[1]) * cfg.batch * cfg.group
        ax.plot(x, curves.mean(axis=0), label=name, linewidth=2.2 if name == "envsched" else 1.3)
        ax.fill_between(x, curves.min(axis=0), curves.max(axis=0), alpha=0.12)
    ax.axvline(cfg.steps * cfg.batch * cfg.group, color="grey", linestyle=":", label="T")
    ax.set_xlabel("rollouts")
    ax.set_ylabel("held-out success (mean p)")
    ax.set_title(f"Simulated learner, B={cfg.batch}, G={cfg.group}, {cfg.seeds} seeds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(cfg.png, dpi=120)


def main(cfg: SimConfig) -> dict[str, list[Run]]:
    """Run every scheduler over every seed, print the table, write the figure."""
    train, held, notes = load_pool(cfg.families)
    train = train.with_weights(parse_weights(cfg.family_weights))
    families = sorted({n.family for n in train.nodes} | {n.family for n in held})
    print(f"pool: {len(train)} train nodes, {len(held)} held-out nodes, {len(train.envs)} environments, families {families}")
    for note in notes:
        print(note)
    runs: dict[str, list[Run]] = {name: [simulate(name, train, held, seed, cfg) for seed in range(cfg.seeds)] for name in ORDER}
    for line in summarise(runs, cfg):
        print(line)
    print()
    for line in family_table(runs, train):
        print(line)
    env_T = np.mean([r.curve[cfg.steps] for r in runs["envsched"]])
    rnd_3T = np.mean([r.curve[3 * cfg.steps] for r in runs["random"]])
    print(f"EnvSched at T ({env_T:.3f}) vs random at 3T ({rnd_3T:.3f}): {'met' if env_T >= rnd_3T else 'missed'}")
    plot(runs, cfg)
    print(f"learning curves: {cfg.png}")
    return runs


def parse_args() -> SimConfig:
    """CLI over :class:`SimConfig`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = SimConfig()
    parser.add_argument("--seeds", type=int, default=defaults.seeds)
    parser.add_argument("--steps", type=int, default=defaults.steps, help="T")
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--group", type=int, default=defaults.group)
    parser.add_argument("--png", default=defaults.png)
    parser.add_argument("--families", nargs="+", default=list(defaults.families))
    parser.add_argument("--family-weights", default=defaults.family_weights, help="target mix, e.g. BFCL=2,ACE=1,Tau=1,ToolWorld=1")
    args = parser.parse_args()
    return SimConfig(args.seeds, args.steps, args.batch, args.group, args.png, tuple(args.families), args.family_weights)


if __name__ == "__main__":
    main(parse_args())
