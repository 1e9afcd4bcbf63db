"""Reliability report: hostile actions on every registered id, and the bad-data matrix.

Prints the two tables of ``docs/reliability.md``. Per family, the first sums
:func:`envsched_gym.fuzz.fuzz_env` over the family's ids: actions, exceptions out of ``step``,
stalled steps (over 1 s of CPU time, or 5 s of wall time), the slowest step, whether any injected code ran, and the largest peak-RSS growth
after the first fifth of an id's actions. The second runs every case of
``tests/fuzz/corruptions.py`` on a scratch copy of the data: ``named`` is a DataError naming file,
entry, field and a fix; ``obscure`` an error missing one of them; ``silent`` a load that went
through. Usage::

    python benchmarks/fuzz_report.py --actions-per-family 10000 --seed 0
"""

from __future__ import annotations

import math
import sys
import tempfile
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from transformers import HfArgumentParser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import envsched_gym  # noqa: E402
from envsched_gym.data import benchmark_root  # noqa: E402
from envsched_gym.fuzz import STEP_BUDGET_S, FuzzResult, fuzz_env  # noqa: E402
from tests.fuzz.corruptions import CASES, FAMILIES, run_case  # noqa: E402


@dataclass
class ReportConfig:
    """What to run."""

    actions_per_family: int = 10_000
    seed: int = 0
    skip_bad_data: bool = False


def family(gym_id: str) -> str:
    return gym_id.removeprefix("envsched/").split("-")[0]


def fuzz_all(config: ReportConfig) -> dict[str, list[FuzzResult]]:
    """``{family: [one result per id]}``, each id with its share of the family's actions."""
    ids = envsched_gym.registered_ids()
    out: dict[str, list[FuzzResult]] = defaultdict(list)
    for gym_id in ids:
        share = math.ceil(config.actions_per_family / sum(family(i) == family(gym_id) for i in ids))
        result = fuzz_env(gym_id, actions=share, seed=config.seed)
        print(result.summary(), file=sys.stderr, flush=True)
        out[family(gym_id)].append(result)
    return out


def print_actions_table(results: dict[str, list[FuzzResult]]) -> None:
    print(
        f"| family | ids | actions | exceptions | steps over {STEP_BUDGET_S:g} CPU s | slowest step (CPU, kind) | slowest step (wall) | "
        "code executed | peak RSS growth | kinds played |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, rs in results.items():
        kinds: Counter = sum((r.by_kind for r in rs), Counter())
        slowest = max(rs, key=lambda r: r.max_step_s)
        worst_kind = slowest.slowest[0][1] if slowest.slowest else "-"
        print(
            f"| {name} | {len(rs)} | {sum(r.actions for r in rs):,} | {sum(len(r.exceptions) for r in rs)} | "
            f"{sum(len(r.stalls) for r in rs)} | {slowest.max_step_s:.3f} s ({worst_kind}) | {max(r.max_step_wall_s for r in rs):.3f} s | "
            f"{any(r.code_executed for r in rs)} | "
            f"{max(r.peak_rss_growth_mb for r in rs):.1f} MB | {len(kinds)} |"
        )


def print_bad_data_table(source: Path) -> list[str]:
    """The matrix per family; returns the ids of cases that were not ``named``."""
    counts: dict[str, Counter] = {f: Counter() for f in FAMILIES}
    misses = []
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="envsched-bad-data-") as scratch:
            outcome = run_case(case, source, Path(scratch))
        counts[case.family][outcome.kind] += 1
        if outcome.kind != "named":
            misses.append(f"{case.id}: {outcome.kind} {outcome.message[:200]}")
    print("\n| family | corruptions | named error (file, entry, field, fix) | obscure error | silent |")
    print("|---|---|---|---|---|")
    for name, c in counts.items():
        print(f"| {name} | {sum(c.values())} | {c['named']} | {c['obscure']} | {c['silent']} |")
    return misses


def main() -> None:
    (config,) = HfArgumentParser(ReportConfig).parse_args_into_dataclasses()
    warnings.simplefilter("ignore")  # third-party deprecation notices; the tables are the output
    results = fuzz_all(config)
    print(f"seed {config.seed}; {config.actions_per_family:,} hostile actions per family, split over its ids\n")
    print_actions_table(results)
    misses = [] if config.skip_bad_data else print_bad_data_table(benchmark_root())
    for miss in misses:
        print(f"- {miss}")
    for rs in results.values():
        for r in rs:
            if not r.clean:
                print(f"- {r.summary()}")


if __name__ == "__main__":
    main()
