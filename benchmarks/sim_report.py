"""Tables of ``scheduler_sim.py``: the results per scheduler, the family shares, the acceptance targets.

Every figure is a mean over seeds; ``held@T`` and ``held@3T`` also give the per-seed minimum
and maximum in brackets, since a mean can hide a seed on which a scheduler lost.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import spearmanr

from envsched_gym.curriculum.mixture import Mixture
from envsched_gym.suite import Suite

BASELINES = ("random", "dapo", "mopps", "plr", "dump")
"""The real baselines (the oracle is a reference, not a scheduler)."""


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
    probe_predicted: list[float] = field(default_factory=list)
    probe_realised: list[float] = field(default_factory=list)
    probe_ceiling: list[float] = field(default_factory=list)
    family_groups: Counter[str] = field(default_factory=Counter)
    kind_groups: Counter[str] = field(default_factory=Counter)
    kind_held: dict[int, dict[str, float]] = field(default_factory=dict)
    """Held-out success per call kind at step 0 and at T (keys: the step)."""
    seconds: float = 0.0


def spearman(pred: list[float], real: list[float]) -> float:
    """Spearman correlation, NaN when either side is constant or there are fewer than 3 points."""
    if len(pred) < 3 or np.ptp(pred) == 0 or np.ptp(real) == 0:
        return float("nan")
    return float(spearmanr(pred, real).statistic)


def first_reach(curve: list[float], target: float) -> int | None:
    """First step at which ``curve`` reaches ``target`` (None: never)."""
    hits = np.flatnonzero(np.asarray(curve) >= target - 1e-12)
    return int(hits[0]) if hits.size else None


def fresh_calibration(run: Run, values: list[float] | None = None) -> float:
    """Spearman of ``values`` (default: the scheduler's predictions) with the realised variance, on never-seen tasks' groups."""
    values = run.predicted if values is None else values
    pairs = [(p, v) for p, v, f in zip(values, run.realised, run.fresh, strict=True) if f]
    return spearman([p for p, _ in pairs], [v for _, v in pairs])


def reach(runs: dict[str, list[Run]], name: str) -> tuple[list[int | None], list[int | None]]:
    """Per seed: the step at which ``name`` reaches the best score random reached, and random's own step."""
    targets = [max(r.curve) for r in runs["random"]]
    mine = [first_reach(r.curve, t) for r, t in zip(runs[name], targets, strict=True)]
    return mine, [first_reach(r.curve, t) for r, t in zip(runs["random"], targets, strict=True)]


def summarise(runs: dict[str, list[Run]], steps: int, step_cost: int) -> list[str]:
    """The results table (one row per scheduler, means over seeds; [min, max] over seeds for the held-out score)."""
    header = (f"{'scheduler':<20} {'held@0':>6} {'held@T [min, max]':>21} {'held@3T [min, max]':>21} {'to-target':>12} {'x random':>8}"
              f" {'eff.ratio':>9} {'calib':>6} {'calib-new':>9} {'ceiling':>7} {'probe':>6} {'p-ceil':>6} {'s/run':>6}")  # fmt: skip
    lines = [header, "-" * len(header)]
    for name, rs in runs.items():
        mine, base = reach(runs, name)
        done = [(k, b) for k, b in zip(mine, base, strict=True) if k is not None]
        to_target = f"{np.mean([k for k, _ in done]) * step_cost:,.0f}" if done else "never"
        ratio = f"{np.mean([k for k, _ in done]) / np.mean([b for _, b in done]):.2f}" if done else "-"
        if len(done) < len(rs):
            to_target += f" ({len(done)}/{len(rs)})"
        per_task = name not in ("random", "dapo")
        calib = _nanmean([spearman(r.predicted, r.realised) for r in rs]) if per_task else float("nan")
        calib_new = _nanmean([fresh_calibration(r) for r in rs]) if per_task else float("nan")
        ceiling = _nanmean([fresh_calibration(r, r.ceiling) for r in rs])
        probe = _nanmean([spearman(r.probe_predicted, r.probe_realised) for r in rs]) if per_task else float("nan")
        probe_ceiling = _nanmean([spearman(r.probe_ceiling, r.probe_realised) for r in rs])
        lines.append(
            f"{name:<20} {np.mean([r.curve[0] for r in rs]):6.3f} {_spread([r.curve[steps] for r in rs]):>21} "
            f"{_spread([r.curve[3 * steps] for r in rs]):>21} {to_target:>12} {ratio:>8} {np.mean([r.varied / r.groups for r in rs]):9.3f} "
            f"{_fmt(calib):>6} {_fmt(calib_new):>9} {_fmt(ceiling):>7} {_fmt(probe):>6} {_fmt(probe_ceiling):>6} {np.mean([r.seconds for r in rs]):6.1f}"
        )  # fmt: skip
    return lines


def family_shares(runs: dict[str, list[Run]], train: Suite) -> tuple[Mixture, dict[str, np.ndarray]]:
    """The suite's mixture and, per scheduler, each family's share of all its groups (steps and seeds pooled)."""
    mix = Mixture(train)
    shares = {
        name: np.array([sum(r.family_groups[f] for r in rs) / sum(r.groups for r in rs) for f in mix.families]) for name, rs in runs.items()
    }
    return mix, shares


def family_table(runs: dict[str, list[Run]], train: Suite) -> list[str]:
    """Each family's share of the groups (all steps and seeds) per scheduler, next to the target mix."""
    mix, shares = family_shares(runs, train)
    names = list(runs)
    short = [n.removeprefix("envsched-")[:10] for n in names]  # variants by their label
    header = f"{'family':<10} {'pool':>6} {'target':>7} " + " ".join(f"{n:>10}" for n in short)
    lines = [header, "-" * len(header)]
    for f, family in enumerate(mix.families):
        cells = " ".join(f"{shares[n][f]:10.3f}" for n in names)
        lines.append(f"{family:<10} {mix.sizes[f] / mix.sizes.sum():6.3f} {mix.target[f]:7.3f} {cells}")
    lines.append(f"{'max |share - target|':<25} " + " ".join(f"{np.abs(shares[n] - mix.target).max():10.3f}" for n in names))
    return lines


def kind_table(runs: dict[str, list[Run]], steps: int, kinds: tuple[str, ...] = ("writes", "reads", "no_call")) -> list[str]:
    """Per scheduler: each call kind's share of the groups and its held-out change from step 0 to T (means over seeds).

    The kinds are EnvSched's (``features.CALL_KINDS``); the change is a mean over seeds with the
    per-seed minimum and maximum, since the interference between kinds (learner C) can make one
    kind fall while the total rises.
    """
    header = f"{'scheduler':<20} " + " ".join(f"{k + ' groups':>14}" for k in kinds) + " " + " ".join(f"{k + ' gain@T':>24}" for k in kinds)
    lines = [header, "-" * len(header)]
    for name, rs in runs.items():
        shares = [sum(r.kind_groups[k] for r in rs) / sum(r.groups for r in rs) for k in kinds]
        gains = [[r.kind_held[steps][k] - r.kind_held[0][k] for r in rs if k in r.kind_held.get(steps, {})] for k in kinds]
        cells = " ".join(f"{_spread(g) if g else '-':>24}" for g in gains)
        lines.append(f"{name:<20} " + " ".join(f"{s:14.3f}" for s in shares) + f" {cells}")
    return lines


def acceptance(runs: dict[str, list[Run]], train: Suite, steps: int, name: str = "envsched") -> list[str]:
    """Issue 15's acceptance targets for ``name``, each as measured with met / missed."""
    at_t = {n: [r.curve[steps] for r in runs[n]] for n in runs}
    best = max((n for n in BASELINES if n in runs), key=lambda n: np.mean(at_t[n]))
    gain = np.mean(at_t[name]) - np.mean(at_t[best])
    mine, base = reach(runs, name)
    ratio = np.mean([k for k in mine if k is not None]) / np.mean(base) if all(k is not None for k in mine) else float("inf")
    calib_new = _nanmean([fresh_calibration(r) for r in runs[name]])
    probe = _nanmean([spearman(r.probe_predicted, r.probe_realised) for r in runs[name]])
    mix, shares = family_shares(runs, train)
    worst_share = float(np.abs(shares[name] - mix.target).max())
    rows = [
        (f"{name} at T - best baseline ({best}) >= 0.10", f"{np.mean(at_t[name]):.3f} - {np.mean(at_t[best]):.3f} = {gain:+.3f}", gain >= 0.10),
        (f"{name}'s worst seed at T > random's best seed at T", f"{min(at_t[name]):.3f} vs {max(at_t['random']):.3f}",
         min(at_t[name]) > max(at_t["random"])),
        (f"{name} reaches random's best in <= 0.5x its rollouts", f"{ratio:.2f}x" if np.isfinite(ratio) else "not on every seed", ratio <= 0.5),
        ("never-seen calibration >= 0.3 (on the groups it rolled)", f"{calib_new:.3f}", calib_new >= 0.3),
        ("never-seen calibration >= 0.3 (on a uniform probe of never-seen tasks)", f"{probe:.3f}", probe >= 0.3),
        ("every family within 5 points of the target", f"max |share - target| = {worst_share:.3f}", worst_share <= 0.05),
    ]  # fmt: skip
    return [f"  {'met   ' if ok else 'MISSED'} {target}: {value}" for target, value, ok in rows]


def _spread(values: list[float]) -> str:
    return f"{np.mean(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def _nanmean(values: list[float]) -> float:
    return float("nan") if np.isnan(values).all() else float(np.nanmean(values))


def _fmt(value: float) -> str:
    return "n/a" if np.isnan(value) else f"{value:.2f}"
