"""Per-episode cost of a fresh τ-bench DB: deep copy, pickle, JSON, and the copy-on-write world.

Run: ``python benchmarks/tau_world_copy.py`` (needs the tau2 data). Prints one row per domain
with the median milliseconds of each way to give an episode its own database, plus the
copy-on-write world's first-write and DB-hash costs.
"""

from __future__ import annotations

import argparse
import copy
import json
import pickle
import statistics
import time
from collections.abc import Callable

from envsched_gym.envs.tau.airline import AirlineWorld
from envsched_gym.envs.tau.db import BaseDB, load_base
from envsched_gym.envs.tau.retail import RetailWorld

from envsched_gym.data import benchmark_path

WORLDS = {
    "retail": (RetailWorld, "get_user_details", {"user_id": "omar_khan_2363"}),
    "airline": (AirlineWorld, "get_user_details", {"user_id": "mia_li_3668"}),
}


def median_ms(fn: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time of ``fn`` in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(world_cls: type, base: BaseDB, tool: str, args: dict, text: str, blob: bytes, repeat: int = 7) -> list[float]:
    """Milliseconds for: deep copy, unpickle, JSON parse, COW world, COW world + one lookup, DB hash."""
    return [
        median_ms(lambda: copy.deepcopy(base.tables), repeat),
        median_ms(lambda: pickle.loads(blob), repeat),
        median_ms(lambda: json.loads(text), repeat),
        median_ms(lambda: world_cls(base), repeat),
        median_ms(lambda: world_cls(base).call(tool, args), repeat),
        median_ms(lambda: world_cls(base).sha256(), repeat),
    ]


def main(argv: list[str] | None = None) -> None:
    """Print the table (``--repeat``: timed calls per cell, the median is printed)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed calls per cell; the median is printed (default: 7)")
    repeat = parser.parse_args(argv).repeat
    if repeat < 1:
        parser.error(f"--repeat must be at least 1, got {repeat}")
    print(
        f"{'domain':8} {'MB':>5} " + " ".join(f"{c:>9}" for c in ("deepcopy", "pickle", "json", "cow make", "cow+get", "sha256")) + "  (ms)"
    )
    for domain, (world_cls, tool, args) in WORLDS.items():
        path = str(benchmark_path("tau2", "data", "tau2", "domains", domain, "db.json"))
        base = load_base(path)
        text = json.dumps(base.tables)
        blob = pickle.dumps(base.tables)
        world_cls(base).sha256()  # warm the per-record dump cache, as the first episode of a process does
        row = measure(world_cls, base, tool, args, text, blob, repeat)
        print(f"{domain:8} {len(text) / 1e6:5.1f} " + " ".join(f"{v:9.3f}" for v in row))


if __name__ == "__main__":
    main()
