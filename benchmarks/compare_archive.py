"""Keep a finished real comparison's logs in the repository, so that later sessions can pool its seeds.

    python benchmarks/compare_archive.py runs/compare36 docs/results/compare36
    python benchmarks/compare_report.py runs/compare36 docs/results/compare36   # the seeds of both, pooled

A run folder of ``train_compare.py`` holds its adapter and scheduler state (tens of MB, and
``runs/`` is not committed) next to the two text logs that every table of ``compare_report.py``
is computed from: ``metrics.jsonl`` (the tasks, group means and variances of each step) and
``eval.jsonl`` (the per-task held-out successes of each evaluation). A new machine starts without
``runs/``, so a seed run in one session cannot be paired with a seed run in the next unless those
logs are kept. This copies them for every finished run and marks each copied run finished with
an ``archived.json`` that records where it came from; the archive's own ``summary.json`` keeps
only T. ``compare_report.py`` reads an archived run like a live one.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.compare_report import ARCHIVE_MARKER, finished_runs  # noqa: E402

LOGS = ("metrics.jsonl", "eval.jsonl")
"""The files of a run that the report reads; everything else of a run stays behind."""

ANSWERS = ("answers.jsonl", "eval_answers.jsonl")
"""Every training rollout's and held-out episode's verdict, final answer and actions
(train_grpo.py --log-answers: training answers since session 40, actions and held-out episodes
since session 41), kept so that what the reward paid for can be read, and re-scored by a later
verifier (training/rescore.py); older runs lack some or all of them."""


def _commit() -> str:
    """The repository's HEAD, or ``"unknown"`` outside a git checkout."""
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def _archived(run: Path, target: Path) -> bool:
    """Whether ``target`` holds ``run``'s logs already (False: not archived yet).

    Raises:
        SystemExit: ``target`` exists with other logs.
    """
    if not target.exists():
        return False
    if all((target / name).exists() and filecmp.cmp(run / name, target / name, shallow=False) for name in LOGS):
        return True
    raise SystemExit(f"{target} exists already with other logs than {run}; remove it first to archive {run} again")


def archive(source: Path, dest: Path) -> list[Path]:
    """Copy the logs of every finished run of ``source`` into ``dest`` (same ``seed*/<label>`` layout).

    Returns:
        The archived run folders, in ``dest``.

    ``dest/summary.json`` keeps only T (all the report reads of it); each run's
    ``archived.json`` keeps the source, the commit archived at and ``train_compare.py``'s config.

    A run that ``dest`` already holds with the same logs is skipped, so a run added to a
    finished folder later (``train_compare.py --schedulers "" --variants ...``) is archived
    beside the seed's earlier runs by the same command.

    Raises:
        SystemExit: ``source`` has no finished run or no ``summary.json``, a run lacks one of
            its logs, ``dest`` holds one of the runs with other logs, every run is archived
            already, or ``dest`` holds runs of another T. Nothing is copied then.
    """
    runs = finished_runs(source)
    if not runs:
        raise SystemExit(
            f"{source} has no finished run (seed*/<scheduler>/scheduler_state.pt); run train_compare.py --output-dir {source} first"
        )
    summary = source / "summary.json"
    if not summary.exists():
        raise SystemExit(f"{summary} is missing: let train_compare.py finish the folder before archiving it")
    written = json.loads(summary.read_text())
    kept = dest / "summary.json"
    if kept.exists() and (old := json.loads(kept.read_text())["T"]) != written["T"]:
        raise SystemExit(f"{kept} has T = {old}, {summary} has T = {written['T']}: archive into another folder")
    for run in runs:
        if missing := [name for name in LOGS if not (run / name).exists()]:
            raise SystemExit(f"{run} has no {', '.join(missing)}; it cannot be archived")
    runs = [run for run in runs if not _archived(run, dest / run.relative_to(source))]
    if not runs:
        raise SystemExit(f"every finished run of {source} is in {dest} already; nothing to archive")
    stamp = {"source": str(source), "archived_at_commit": _commit(), "archived_on": datetime.now(UTC).date().isoformat(),
             "train_compare_config": written.get("config")}  # fmt: skip
    copied = []
    for run in runs:
        target = dest / run.relative_to(source)
        target.mkdir(parents=True)
        for name in LOGS:
            shutil.copy2(run / name, target / name)
        for name in ANSWERS:
            if (run / name).exists():
                shutil.copy2(run / name, target / name)
        (target / ARCHIVE_MARKER).write_text(json.dumps(stamp, indent=2) + "\n")
        copied.append(target)
    kept.write_text(
        json.dumps({"T": written["T"], "written_by": "compare_archive.py; each run's archived.json has its config"}, indent=2) + "\n"
    )
    return copied


def main(argv: list[str] | None = None) -> None:
    """Command line: ``compare_archive.py SOURCE DEST``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="A train_compare.py --output-dir.")
    parser.add_argument("dest", type=Path, help="The archive folder (created if missing), e.g. docs/results/compare36.")
    args = parser.parse_args(argv)
    if not args.source.is_dir():
        raise SystemExit(f"{args.source} is not a folder; pass a train_compare.py --output-dir")
    for run in archive(args.source, args.dest):
        print(f"archived {run}")


if __name__ == "__main__":
    main()
