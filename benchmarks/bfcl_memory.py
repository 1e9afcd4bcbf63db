"""Memory over many BFCL multi-turn episodes: resident set size printed at intervals.

Each episode replays a task's gold turns through ``ToolUseEnv`` (fresh backends for the agent
and for the verifier's gold run). Memory must stay flat: nothing per episode may outlive it.

    python benchmarks/bfcl_memory.py --episodes 10000 --interval 1000
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from dataclasses import dataclass, fields

from envsched_gym.adapters.bfcl import BFCLAdapter
from envsched_gym.envs.bfcl.data import MULTI_TURN

from envsched_gym.env import ToolUseEnv
from envsched_gym.rendering import render_turn


@dataclass
class Config:
    """Benchmark settings (each is also a ``--flag``)."""

    episodes: int = 10_000  # episodes to run, cycling over every multi-turn task
    interval: int = 1_000  # print a row every this many episodes
    data_dir: str | None = None  # BFCL data directory or benchmark root (default: auto)


def rss_mib() -> float:
    """Resident set size of this process in MiB (Linux ``/proc``)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run(config: Config) -> list[tuple[int, float, float]]:
    """Run the episodes; return ``(episodes done, RSS MiB, seconds)`` rows."""
    adapter = BFCLAdapter(data_dir=config.data_dir, categories=list(MULTI_TURN))
    tasks = [t for t in adapter.tasks("all") if t.solution]
    envs = {c: ToolUseEnv(adapter, f"envsched/BFCL-{c}-v0") for c in MULTI_TURN}
    messages = {t.task_id: [render_turn(turn) for turn in t.solution] for t in tasks}
    rows, start = [], time.perf_counter()
    for done in range(1, config.episodes + 1):
        task = tasks[(done - 1) % len(tasks)]
        env = envs[task.metadata["category"]]
        env.reset(options={"task_id": task.task_id})
        for message in messages[task.task_id]:
            if env.step(message)[2]:
                break
        if done % config.interval == 0:
            gc.collect()
            rows.append((done, rss_mib(), time.perf_counter() - start))
            print(f"{done:>8} episodes  RSS {rows[-1][1]:8.1f} MiB  {rows[-1][2]:7.1f} s", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Config):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=int if f.type == "int" else str, default=f.default)
    rows = run(Config(**vars(parser.parse_args())))
    print(f"RSS growth after the first pass over every task: {growth_after_warmup(rows, n_tasks()):+.1f} MiB")


def n_tasks(data_dir: str | None = None) -> int:
    """Multi-turn tasks with a gold solution (one pass over them fills the per-task caches)."""
    return sum(1 for t in BFCLAdapter(data_dir=data_dir, categories=list(MULTI_TURN)).tasks("all") if t.solution)


def growth_after_warmup(rows: list[tuple[int, float, float]], warmup: int) -> float:
    """RSS change from the first row at or after ``warmup`` episodes to the last row."""
    warm = [rss for done, rss, _ in rows if done >= warmup]
    return warm[-1] - warm[0] if warm else float("nan")


if __name__ == "__main__":
    main()
