"""Scheduler overhead against pool size: graph build time and memory, select + update per batch.

For each pool size (10^3 .. 10^6 synthetic nodes from
:func:`envsched_gym.curriculum.synthetic.synthetic_suite`, about ``sqrt(n)`` environments) a
fresh process builds the node features and the dual graph, then EnvSched (``setup``: its
declaration model's design matrix, unit statistics and first scores), then runs it for
``warmup + batches`` steps of 64 tasks with G = 8 Bernoulli(p) rewards each (``p`` drawn per
task from U(0, 1)), timing ``next_batch(64)`` plus the 64 ``update`` calls plus the refit of
the declaration model (``model ms``, part of ``sel+upd``). ``build`` = features + graph +
setup. Peak memory is the process's maximum resident set (the synthetic declarations
included), graph memory the two sparse matrices; ``load`` is the machine's 1-minute load
average when the size started and when it finished (timings on a shared machine scale with it).

Run: ``python benchmarks/scheduler_scale.py [--sizes 1000 10000 100000 1000000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from envsched_gym.curriculum import EnvSchedScheduler, build_features, parse_options
from envsched_gym.curriculum.graph import DualGraph
from envsched_gym.curriculum.synthetic import synthetic_suite


@dataclass
class ScaleConfig:
    """Benchmark settings.

    Attributes:
        sizes: Pool sizes, each measured in its own process.
        batch: Tasks per batch.
        group: Rollouts per task.
        warmup: Untimed batches first (statistics exist before timing).
        batches: Timed batches.
        options: EnvSched options as ``key=value,...`` (e.g. ``repeat_discount=0``), to time a variant.
    """

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    batch: int = 64
    group: int = 8
    warmup: int = 10
    batches: int = 50
    options: str = ""


def measure(n: int, cfg: ScaleConfig) -> dict[str, float]:
    """All figures for one pool size (run inside a fresh process)."""
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    suite = synthetic_suite(n, seed=0)
    declared = time.perf_counter() - started
    started = time.perf_counter()
    features = build_features(suite.nodes)
    featured = time.perf_counter() - started
    started = time.perf_counter()
    graph = DualGraph.build(features)
    graphed = time.perf_counter() - started
    started = time.perf_counter()
    scheduler = EnvSchedScheduler(suite, seed=0, features=features, graph=graph, **parse_options(cfg.options))
    setup = time.perf_counter() - started
    rng = np.random.default_rng(0)
    times, fits = [], []
    p = rng.beta(1.0, 1.0, n)  # per-task success rates, so groups vary by task and the model has something to fit
    for step in range(cfg.warmup + cfg.batches):
        started = time.perf_counter()
        batch = scheduler.next_batch(cfg.batch)
        rewards = (rng.random((len(batch), cfg.group)) < p[scheduler.positions(batch)][:, None]).astype(float)
        for task_id, group in zip(batch, rewards, strict=False):
            scheduler.update(task_id, group)
        fit_started = time.perf_counter()
        scheduler.predictor.model.fit(scheduler.predictor.step)  # timed apart as well; the next batch would do it
        if step >= cfg.warmup:
            times.append(time.perf_counter() - started)
            fits.append(time.perf_counter() - fit_started)
    return {
        "nodes": n, "envs": len(suite.envs), "declare_s": declared, "features_s": featured, "graph_s": graphed,
        "edges": graph.within.nnz + graph.cross.nnz, "graph_mb": graph.nbytes / 2**20,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "select_update_ms": 1000 * float(np.mean(times)), "p95_ms": 1000 * float(np.percentile(times, 95)),
        "setup_s": setup, "model_ms": 1000 * float(np.mean(fits)), "load_start": load_start, "load": os.getloadavg()[0],
    }  # fmt: skip


def main(cfg: ScaleConfig) -> list[dict[str, float]]:
    """Measure every size in its own process and print the table."""
    rows = []
    header = (f"{'nodes':>9} {'envs':>6} {'declare s':>9} {'features s':>10} {'graph s':>8} {'setup s':>8} {'build s':>8} {'edges':>10}"
              f" {'graph MB':>9} {'peak RSS MB':>11} {'sel+upd ms':>10} {'p95 ms':>7} {'model ms':>8} {'load':>9}")  # fmt: skip
    print(header)
    print("-" * len(header))
    for n in cfg.sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(n), "--options", cfg.options], capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        build = row["features_s"] + row["graph_s"] + row["setup_s"]
        print(
            f"{row['nodes']:>9,} {row['envs']:>6} {row['declare_s']:9.1f} {row['features_s']:10.1f} {row['graph_s']:8.1f} {row['setup_s']:8.1f} "
            f"{build:8.1f} {row['edges']:>10,} {row['graph_mb']:9.1f} {row['peak_rss_mb']:11.0f} "
            f"{row['select_update_ms']:10.1f} {row['p95_ms']:7.1f} {row['model_ms']:8.1f} {row['load_start']:4.1f}-{row['load']:<4.1f}",
            flush=True,
        )  # fmt: skip
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(ScaleConfig.sizes))
    parser.add_argument("--one", type=int, help="measure one size and print JSON (used internally)")
    parser.add_argument("--options", default="", help="EnvSched options key=value,..., e.g. repeat_discount=0")
    args = parser.parse_args()
    parse_options(args.options)  # a malformed option fails before the first size is built
    config = ScaleConfig(sizes=tuple(args.sizes), options=args.options)
    if args.one:
        print(json.dumps(measure(args.one, config)))
    else:
        main(config)
