"""What a finished real comparison (``train_compare.py``) says beyond its target check.

    python benchmarks/compare_report.py runs/compare36                       # every finished run in the folder
    python benchmarks/compare_report.py runs/compare36 --reference random    # differences against another row
    python benchmarks/compare_report.py runs/compare36 docs/results/compare36  # with the seeds archived by compare_archive.py
    python benchmarks/compare_report.py docs/results/compare43-s2 docs/results/compare44r36-s2 \
        --reference "random [--pg-weight 0 --sft-replay 0.25]"   # against a control run later from the same start

A seed may come from several folders when they started from the same policy (identical step-0
evaluations); where runs differ in ``--train-args``, each row with flags is labelled
``<scheduler> [<flags>]``.

Reads each finished run's ``metrics.jsonl`` (the tasks, group means and variances of every step),
``eval.jsonl`` (per-task held-out results) and, for tables 8 and 9, its answer logs, and prints
nine tables:

1. **Held-out gains** over the seed's starting policy at every evaluated step, paired over the
   same tasks (bootstrap 95% intervals), per run and, for a scheduler with several seeds, pooled
   with the seeds resampled (does it end above where it began?), and each scheduler minus the reference at the same
   step, per seed and with the seeds pooled (the per-task differences of every seed together).
   Each pooled row comes twice: with the pooled tasks resampled (the held-out sample's noise
   only), and with the seeds resampled and then each seed's tasks (``seeds resampled``: the
   spread between training runs too, the interval to judge a scheduler by).
2. **The paper's target**: each scheduler at step T minus the reference at step 3T, per seed and
   pooled both ways (only when the folder has both evaluations); and the same at step 2T when it
   was evaluated (``--eval-2t``): the issue's rollout target read where there is an evaluation,
   a scheduler at 2T at least the reference at 3T in two thirds of the reference's rollouts.
3. **Training signal** before each evaluation: the groups whose rewards varied and their summed
   ``variance / 0.25``. A scheduler at T can only match the reference at 3T with less signal if
   its groups teach more per unit of signal.
4. **Rollout reward** per window of T steps, with the distinct tasks and groups trained: a rising
   rollout reward on few tasks can be memorisation, the same rise on many is transfer.
5. **Reward by visit**: the mean group reward of a task's 1st, 2nd, 3rd and later groups, and of
   first visits per window of T steps (tasks the policy has never trained on, like held-out
   ones: their rise is what training taught the pool as a whole).
6. **Held-out gain by domain**: the held-out tasks split by whether the run trained with signal
   (a group whose rewards varied) on any environment of their domain, the environment id
   without its trailing instance number (``ToolWorld/gym-1`` and ``ToolWorld/gym-5`` are both
   ``ToolWorld/gym``). Held-out environments are never trained on, so this asks whether what
   transfers is specific to a domain.
7. **Held-out gain by task kind**: the call kinds EnvSched covers
   (:data:`envsched_gym.curriculum.features.CALL_KINDS`): tasks whose gold solution calls a tool
   declared ``write`` (``writes``), calls only read tools (``reads``), makes no call
   (``no_call``), or that have no gold (``open``), with the groups each run trained on each kind.
   A policy trained only on look-ups can learn to look up where it was asked to change something
   (session 42, docs/training.md). Tasks of unregistered families are ``undeclared``.
8. **Malformed turns** (from ``eval_answers.jsonl`` and ``answers.jsonl``): held-out episodes
   with a turn the environment cannot read cleanly at each evaluation, how many of them failed,
   and training rollouts with one per window of T steps. GRPO can teach the policy to open its
   turns with the environment's ``<tool_response>`` tag or to repeat tags until the token budget
   runs out; a held-out loss that this table accounts for is format drift, not what the
   scheduler's picks taught (session 47, docs/training.md "What the held-out losses are made of").
9. **Argument drift** (from ``eval_answers.jsonl`` and the tasks' gold calls): held-out episodes
   that call a tool of their gold with an argument no gold call of it passes, or without one
   that every gold call of it passes. GRPO from a converged start swings between the two
   (:mod:`benchmarks.answer_tables`).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import envsched_gym  # noqa: E402
from benchmarks.answer_tables import argument_table, markup_table  # noqa: E402
from envsched_gym.curriculum.features import CALL_KINDS, node_call_kinds  # noqa: E402
from envsched_gym.registry import families as registered_families  # noqa: E402
from envsched_gym.rl.plots import read_jsonl  # noqa: E402
from envsched_gym.rl.summary import Interval, paired_gain, seeds_and_tasks_gain, success_interval  # noqa: E402

VISIT_BINS = 4
"""Reward-by-visit columns: 1st, 2nd, 3rd, then every later visit together."""

ARCHIVE_MARKER = "archived.json"
"""Marks a run copied by ``compare_archive.py`` (logs only) as finished, like a live run's ``scheduler_state.pt``."""


@dataclass
class RunLog:
    """One finished run: its per-step rows and its held-out evaluations by step (step 0 included)."""

    seed: int
    label: str
    rounds: list[dict[str, Any]]
    heldout: dict[int, list[float]]
    task_ids: list[str]
    folder: Path | None = None
    train_args: str | None = None
    """``train_compare.py --train-args`` of the run; None where neither its ``archived.json`` nor the folder's ``summary.json`` says."""
    path: Path | None = None
    """The run's own folder (``seed<N>/<scheduler>``), where its answer logs are."""


def domain_of(env_id: str) -> str:
    """The environment id without its trailing instance number (``-<digits>``)."""
    return re.sub(r"-\d+$", "", env_id)


def env_of(task_id: str) -> str:
    """The environment id of a task id ``<family>/<environment>/<task>``."""
    return task_id.rsplit("/", 1)[0]


def finished_runs(folder: Path) -> list[Path]:
    """The ``seed*/<label>`` folders of a comparison with ``scheduler_state.pt`` or an ``archived.json``."""
    marks = ("scheduler_state.pt", ARCHIVE_MARKER)
    return sorted(p for p in folder.glob("seed*/*") if p.parent.name[4:].isdigit() and any((p / m).exists() for m in marks))


def train_args_of(run: Path) -> str | None:
    """The train_grpo.py flags a finished run was given beyond the comparison's own: its ``archived.json`` records them, a live run's folder its ``summary.json``.

    That is its ``--train-args``, then ``--beta B`` when ``train_compare.py --beta`` was above 0
    (an option since session 48; before it a KL anchor was passed in ``--train-args``, and runs
    without either were unanchored), so a run labelled ``[--warm-start-steps 64 --beta 0.04]``
    means the same whichever way it was asked for.
    """
    stamp, summary = run / ARCHIVE_MARKER, run.parents[1] / "summary.json"
    if stamp.exists():
        config = json.loads(stamp.read_text()).get("train_compare_config")
    else:
        config = json.loads(summary.read_text()).get("config") if summary.exists() else None
    if not isinstance(config, dict) or config.get("train_args") is None:
        return None
    beta = config.get("beta", 0.0)
    return " ".join(filter(None, (config["train_args"], f"--beta {beta:g}" if beta else "")))


def load_runs(folder: Path) -> list[RunLog]:
    """Every finished run (see :func:`finished_runs`) of a comparison folder.

    Step 0 comes from whichever run of the seed evaluated the shared starting policy.

    Raises:
        SystemExit: No finished run, or a seed without a step-0 evaluation, or runs of one seed
            evaluated on different held-out tasks.
    """
    logs: list[RunLog] = []
    runs = finished_runs(folder)
    for seed in sorted({int(p.parent.name[4:]) for p in runs}):
        seed_dir = folder / f"seed{seed}"
        finished = [p for p in runs if p.parent == seed_dir]
        evals = {p.name: read_jsonl(p / "eval.jsonl") for p in finished}
        start = next((e for rows in evals.values() for e in rows if int(e["step"]) == 0), None)
        if finished and start is None:
            raise SystemExit(f"no run of {seed_dir} has a step-0 evaluation; run train_compare.py on {folder} to finish it")
        for run in finished:
            heldout = {0: list(start["successes"])}
            for e in evals[run.name]:
                if e["task_ids"] != start["task_ids"]:
                    raise SystemExit(
                        f"{run}/eval.jsonl step {e['step']} is on other held-out tasks than the seed's step 0; it cannot be paired"
                    )
                heldout[int(e["step"])] = list(e["successes"])
            logs.append(RunLog(seed, run.name, read_jsonl(run / "metrics.jsonl"), heldout, list(start["task_ids"]), folder, train_args_of(run), run))
    if not logs:
        raise SystemExit(
            f"{folder} has no finished run (seed*/<scheduler>/scheduler_state.pt); run train_compare.py --output-dir {folder} first"
        )
    return logs


def load_folders(folders: list[Path]) -> list[RunLog]:
    """The finished runs of several comparison folders (live ones and archives), labelled apart where their flags differ.

    A seed may come from several folders, e.g. a control run later from the same copied start:
    their step-0 evaluations must then be identical (the held-out evaluation is greedy, so the
    same starting policy gives the same per-task results), or nothing of that seed could be
    paired. Where the runs were made with different ``--train-args``, each run whose flags are
    not empty is labelled ``<scheduler> [<flags>]``, so that ``--reference`` can name it.

    Raises:
        SystemExit: A seed whose folders start from different policies; one run (seed, label)
            in two folders; flags that differ where a run's cannot be read.
    """
    logs: list[RunLog] = []
    for folder in folders:
        logs += load_runs(folder)
    _check_starts(logs)
    if len({log.train_args for log in logs}) > 1:
        for log in logs:
            if log.train_args is None:
                raise SystemExit(f"{log.folder}/seed{log.seed}/{log.label}: its --train-args are unknown (no summary.json) and the other runs' differ; "
                                 "let train_compare.py finish there, or archive it with compare_archive.py")  # fmt: skip
            log.label = f"{log.label} [{log.train_args}]" if log.train_args else log.label
    origin: dict[tuple[int, str], Path | None] = {}
    for log in logs:
        if (log.seed, log.label) in origin:
            raise SystemExit(f"seed {log.seed}'s {log.label} run is in both {origin[log.seed, log.label]} and {log.folder}; pass one of them")
        origin[log.seed, log.label] = log.folder
    return sorted(logs, key=lambda log: (log.seed, log.label))


def _check_starts(logs: list[RunLog]) -> None:
    """Refuse a seed whose folders evaluated different step-0 policies."""
    starts: dict[int, RunLog] = {}
    for log in logs:
        first = starts.setdefault(log.seed, log)
        if (first.task_ids, first.heldout[0]) != (log.task_ids, log.heldout[0]):
            raise SystemExit(f"seed {log.seed} starts from another policy in {log.folder} than in {first.folder} (their step-0 held-out results differ), "
                             "so their runs cannot be paired; report them separately, or copy one start-seed folder into the other comparison")  # fmt: skip


def window_of(folders: list[Path]) -> int:
    """T from the folders' ``summary.json`` files, which must agree."""
    windows: dict[int, Path] = {}
    for folder in folders:
        summary = folder / "summary.json"
        if not summary.exists():
            raise SystemExit(f"{summary} is missing: pass --window T, or let train_compare.py finish so it writes the file")
        windows.setdefault(int(json.loads(summary.read_text())["T"]), summary)
    if len(windows) > 1:
        raise SystemExit(f"the folders have different T ({', '.join(f'{t} in {p}' for t, p in windows.items())}); report them separately")
    return next(iter(windows))


def visit_rewards(rounds: list[dict[str, Any]]) -> list[list[float]]:
    """Group mean rewards by the visit they were (1st, 2nd, 3rd, 4th and later) of their task."""
    visits: Counter[str] = Counter()
    bins: list[list[float]] = [[] for _ in range(VISIT_BINS)]
    for row in rounds:
        for task, mean in zip(row["tasks"], row["group_mean"], strict=True):
            bins[min(visits[task], VISIT_BINS - 1)].append(float(mean))
            visits[task] += 1
    return bins


def first_visits_by_window(rounds: list[dict[str, Any]], window: int) -> list[list[float]]:
    """Group mean rewards of first visits, per window of ``window`` steps."""
    seen: set[str] = set()
    out: list[list[float]] = [[] for _ in range(-(-len(rounds) // window))]
    for i, row in enumerate(rounds):
        for task, mean in zip(row["tasks"], row["group_mean"], strict=True):
            if task not in seen:
                out[i // window].append(float(mean))
                seen.add(task)
    return out


def trained_domains(rounds: list[dict[str, Any]]) -> set[str]:
    """Domains with at least one group whose rewards varied (GRPO signal)."""
    return {domain_of(env_of(t)) for row in rounds for t, v in zip(row["tasks"], row["group_variance"], strict=True) if v > 0}


_REPLAY_FLAG = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
_REPLAY_FLAG.add_argument("--sft-replay", type=float, default=0.0)


def replays(train_args: str | None) -> bool:
    """Whether ``--train-args`` turn the supervised replay on (``--sft-replay W``, W != 0): its gradient is never zero."""
    return _REPLAY_FLAG.parse_known_args(shlex.split(train_args or ""))[0].sft_replay != 0


def signal_before(rounds: list[dict[str, Any]], step: int, replay: bool = False) -> tuple[int, int, float]:
    """Weight updates, groups with varied rewards, and their summed GRPO signal ``variance / 0.25``, in the first ``step`` steps.

    A group of all-equal rewards has zero advantage and moves nothing; 0.25 is the variance of a
    group split evenly between success and failure. Under the optimizer's signal gate
    (``train_grpo.py --skip-empty-steps``) a step without a varied group moves nothing, and with
    ``--signal-groups-per-update N`` (each record's ``groups_per_update``; 1 in records without
    it) the gradients wait until N varied groups have contributed, so the updates are replayed
    from the per-round counts. Adam's step has about the same size however weak its batch's
    signal, so runs with equal signal but more updates moved their weights further. With
    ``replay`` (``--sft-replay``) every round's gradient has the supervised part, so every
    round updates.
    """
    updates, pending, varied, signal = 0, 0, 0, 0.0
    for row in rounds[:step]:
        counts = [float(v) for v in row["group_variance"]]
        groups = sum(v > 0 for v in counts)
        varied, signal, pending = varied + groups, signal + sum(counts) / 0.25, pending + groups
        if replay or (groups and pending >= int(row.get("groups_per_update", 1))):
            updates, pending = updates + 1, 0
    return updates, varied, signal


def domain_split(log: RunLog, step: int) -> tuple[tuple[int, Interval | None], tuple[int, Interval | None]]:
    """Held-out gain from step 0 to ``step`` on tasks of trained domains, then of untrained ones (count, paired gain)."""
    trained = trained_domains(log.rounds)
    mask = np.array([domain_of(env_of(t)) in trained for t in log.task_ids])
    before, after = np.asarray(log.heldout[0]), np.asarray(log.heldout[step])
    return tuple((int(m.sum()), paired_gain(before[m], after[m]) if m.any() else None) for m in (mask, ~mask))  # type: ignore[return-value]


def _mean(values: list[float]) -> str:
    return f"{np.mean(values):.2f} ({len(values)})" if values else "- (0)"


def _interval(item: tuple[int, Interval | None]) -> str:
    count, gain = item
    return f"{gain} ({count})" if gain is not None else "- (0)"


def _pairs(logs: list[RunLog], reference: str) -> dict[str, list[tuple[RunLog, RunLog]]]:
    """Each non-reference label's runs, each with the reference run of its seed (seeds without one left out)."""
    refs = {log.seed: log for log in logs if log.label == reference}
    pairs: dict[str, list[tuple[RunLog, RunLog]]] = {}
    for log in logs:
        if log.label != reference and log.seed in refs:
            pairs.setdefault(log.label, []).append((log, refs[log.seed]))
    return dict(sorted(pairs.items()))


def _pooled(pairs: list[tuple[RunLog, RunLog]], step: int, ref_step: int) -> Interval:
    """Every seed's per-task ``run at step - reference at ref_step`` in one paired bootstrap."""
    return paired_gain(np.concatenate([r.heldout[ref_step] for _, r in pairs]), np.concatenate([o.heldout[step] for o, _ in pairs]))


def _across_seeds(pairs: list[tuple[RunLog, RunLog]], step: int, ref_step: int) -> Interval:
    """The pooled difference with its interval from resampling the seeds, then each seed's tasks."""
    return seeds_and_tasks_gain([r.heldout[ref_step] for _, r in pairs], [o.heldout[step] for o, _ in pairs])


def _seeds(pairs: list[tuple[RunLog, RunLog]]) -> str:
    return ",".join(str(log.seed) for log, _ in pairs)


def _pooled_gains(logs: list[RunLog], steps: list[int]) -> list[str]:
    """Each label's gain over its starts with the seeds pooled and resampled: does a scheduler end above where it began?"""
    by_label: dict[str, list[RunLog]] = {}
    for log in logs:
        by_label.setdefault(log.label, []).append(log)
    lines = []
    for label, runs in sorted(by_label.items()):
        if len(runs) > 1:
            gains = (seeds_and_tasks_gain([r.heldout[0] for r in runs], [r.heldout[s] for r in runs]) for s in steps)
            lines.append(f"| {label} | seeds {','.join(str(r.seed) for r in runs)} pooled, seeds resampled | " + " | ".join(map(str, gains)) + " |")
    return lines


def gains_table(logs: list[RunLog], reference: str) -> list[str]:
    """Table 1: gains over step 0 per run, then differences to ``reference`` per seed and pooled."""
    steps = sorted(set.intersection(*(set(log.heldout) for log in logs)) - {0})
    lines = ["| run | seed | " + " | ".join(f"step {s} - step 0" for s in steps) + " |", "|---|---|" + "---|" * len(steps)]
    for log in logs:
        lines.append(f"| {log.label} | {log.seed} | " + " | ".join(str(paired_gain(log.heldout[0], log.heldout[s])) for s in steps) + " |")
    lines += _pooled_gains(logs, steps)
    pairs = _pairs(logs, reference)
    if not pairs:
        return lines
    lines += [
        "",
        f"| minus {reference} at the same step | seed | " + " | ".join(f"step {s}" for s in steps) + " |",
        "|---|---|" + "---|" * len(steps),
    ]
    for label, runs in pairs.items():
        for log, ref in runs:
            lines.append(f"| {label} | {log.seed} | " + " | ".join(str(paired_gain(ref.heldout[s], log.heldout[s])) for s in steps) + " |")
        if len(runs) > 1:
            lines.append(f"| {label} | pooled {_seeds(runs)} | " + " | ".join(str(_pooled(runs, s, s)) for s in steps) + " |")
            lines.append(f"| {label} | pooled {_seeds(runs)}, seeds resampled | " + " | ".join(str(_across_seeds(runs, s, s)) for s in steps) + " |")
    return lines


def target_table(logs: list[RunLog], reference: str, window: int, short: int | None = None) -> list[str]:
    """Table 2, the paper's target: each scheduler at step ``short`` (default T) minus ``reference`` at step 3T.

    With ``short = 2T`` it is the rollout target read at the evaluations there are: a scheduler
    at or above the reference's 3T score by 2T got there in two thirds of the reference's
    rollouts. Empty when no run of the reference has an evaluation at 3T and a partner with one
    at ``short``.
    """
    short, long = window if short is None else short, 3 * window
    pairs = {label: kept for label, runs in _pairs(logs, reference).items()
             if (kept := [(log, ref) for log, ref in runs if short in log.heldout and long in ref.heldout])}  # fmt: skip
    if not pairs:
        return []
    lines = [f"| at step {short} minus {reference} at step {long} | seeds | difference [95% CI] |", "|---|---|---|"]
    for label, runs in pairs.items():
        for log, ref in runs:
            lines.append(f"| {label} | {log.seed} | {paired_gain(ref.heldout[long], log.heldout[short])} |")
        if len(runs) > 1:
            lines.append(f"| {label} | pooled {_seeds(runs)} | {_pooled(runs, short, long)} |")
            lines.append(f"| {label} | pooled {_seeds(runs)}, seeds resampled | {_across_seeds(runs, short, long)} |")
    return lines


def signal_table(logs: list[RunLog]) -> list[str]:
    """Table 3: the training signal each run had before each evaluation (what its gain was bought with)."""
    steps = sorted(set.intersection(*(set(log.heldout) for log in logs)) - {0})
    lines = ["| run | seed | " + " | ".join(f"by step {s}" for s in steps) + " |", "|---|---|" + "---|" * len(steps)]
    for log in logs:
        cells = [f"{updates} updates, {varied} groups, {signal:.1f}" for updates, varied, signal in (signal_before(log.rounds, s, replays(log.train_args)) for s in steps)]
        lines.append(f"| {log.label} | {log.seed} | " + " | ".join(cells) + " |")
    return lines


def rollout_table(logs: list[RunLog], window: int) -> list[str]:
    """Tables 4 and 5: rollout reward, first-visit reward and reward by visit."""
    width = max(-(-len(log.rounds) // window) for log in logs)
    head = " | ".join(f"steps {i * window + 1}-{(i + 1) * window}" for i in range(width))
    lines = [f"| run | seed | rollout reward: {head} | distinct tasks | groups |", "|---|---|" + "---|" * (width + 2)]
    for log in logs:
        rewards = [r["reward"] for r in log.rounds]
        windows = " | ".join(f"{np.mean(rewards[i * window : (i + 1) * window]):.2f}" for i in range(-(-len(rewards) // window)))
        groups = sum(len(r["tasks"]) for r in log.rounds)
        lines.append(f"| {log.label} | {log.seed} | {windows} | {len({t for r in log.rounds for t in r['tasks']})} | {groups} |")
    lines += [
        "",
        f"| run | seed | first visits (groups): {head} | 1st visit | 2nd | 3rd | later |",
        "|---|---|" + "---|" * (width + VISIT_BINS),
    ]
    for log in logs:
        first = " | ".join(_mean(w) for w in first_visits_by_window(log.rounds, window))
        lines.append(f"| {log.label} | {log.seed} | {first} | " + " | ".join(_mean(b) for b in visit_rewards(log.rounds)) + " |")
    return lines


def domain_table(logs: list[RunLog]) -> list[str]:
    """Table 6: held-out gain at each run's last evaluation, split by trained and untrained domains."""
    lines = [
        "| run | seed | step | gain, held-out tasks of trained domains (tasks) | of untrained domains (tasks) |",
        "|---|---|---|---|---|",
    ]
    for log in logs:
        last = max(log.heldout)
        trained, untrained = domain_split(log, last)
        lines.append(f"| {log.label} | {log.seed} | {last} | {_interval(trained)} | {_interval(untrained)} |")
    return lines


KINDS = (*CALL_KINDS, "undeclared")
"""Task kinds of table 7, in column order."""


def task_kinds(task_ids: set[str]) -> dict[str, str]:
    """Each task's kind (see :data:`KINDS`): its call kind, from its declarations as EnvSched reads them.

    Tasks are looked up in their registered family (the id's first part); a task of a family
    that is not registered, or not found there, is ``undeclared``.
    """
    kinds = dict.fromkeys(task_ids, "undeclared")
    for family in sorted({t.split("/", 1)[0] for t in task_ids} & set(registered_families())):
        nodes = [n for n in envsched_gym.suite(family) if n.task_id in kinds]
        if nodes:
            kinds.update((n.task_id, CALL_KINDS[c]) for n, c in zip(nodes, node_call_kinds(nodes), strict=True))
    return kinds


def kind_table(logs: list[RunLog]) -> list[str]:
    """Table 7: held-out gain at each run's last evaluation by task kind, and the groups trained on each kind."""
    kinds = task_kinds({t for log in logs for t in log.task_ids} | {t for log in logs for row in log.rounds for t in row["tasks"]})
    shown = [k for k in KINDS if any(v == k for v in kinds.values())]
    lines = ["| run | seed | step | " + " | ".join(f"gain on {k} (held-out tasks)" for k in shown) + " | "
             + " | ".join(f"groups on {k}" for k in shown) + " |", "|---|---|---|" + "---|" * 2 * len(shown)]  # fmt: skip
    for log in logs:
        last, of = max(log.heldout), np.array([kinds[t] for t in log.task_ids])
        before, after = np.asarray(log.heldout[0]), np.asarray(log.heldout[last])
        gains = [_interval((int((of == k).sum()), paired_gain(before[of == k], after[of == k]) if (of == k).any() else None)) for k in shown]
        groups = Counter(kinds[t] for row in log.rounds for t in row["tasks"])
        lines.append(f"| {log.label} | {log.seed} | {last} | " + " | ".join(gains) + " | " + " | ".join(str(groups[k]) for k in shown) + " |")
    return lines


def report(folders: Path | list[Path], reference: str = "random", window: int | None = None) -> str:
    """The nine tables of one or more comparison folders; ``window`` defaults to T from their ``summary.json``."""
    folders = [folders] if isinstance(folders, Path) else folders
    folder = ", ".join(map(str, folders))
    logs = load_folders(folders)
    labels = sorted({log.label for log in logs})
    if reference not in labels:
        raise SystemExit(f"--reference {reference!r} is not a finished run of {folder}; use one of {labels}")
    window = window_of(folders) if window is None else window
    overall = {log.label: success_interval(log.heldout[max(log.heldout)]) for log in logs}
    target = target_table(logs, reference, window)
    if target:
        target = ["", f"The paper's target (a scheduler at T at least {reference} at 3T), paired over the same tasks:", *target]
    if two_thirds := target_table(logs, reference, window, short=2 * window):
        target += ["", f"The rollout target read at 2T (a scheduler at 2T at least {reference} at 3T: two thirds of its rollouts), paired:", *two_thirds]
    parts = [f"{folder}: {len(logs)} finished runs, seeds {sorted({log.seed for log in logs})}, window T = {window} steps",
             "last evaluation per run: " + ", ".join(f"{k} {v}" for k, v in overall.items()),
             "", "Held-out gains (paired over the same tasks, bootstrap 95% intervals):", *gains_table(logs, reference),
             *target,
             "", "Training signal before each evaluation (weight updates under the signal gate, replayed from the varied groups per step; groups with varied rewards; sum of variance / 0.25):", *signal_table(logs),
             "", "Rollouts:", *rollout_table(logs, window),
             "", "Held-out gain by domain (trained: some group of the domain had varied rewards):", *domain_table(logs),
             "", "Held-out gain by task kind (writes: the gold solution calls a tool that changes the state; no_call: it makes no call):", *kind_table(logs),
             "", f"Malformed turns (a call that does not parse, or tool-call tags left outside the calls), held-out episodes per evaluation and training rollouts per window of {window} steps:",
             *markup_table(logs, window),
             "", "Argument drift (held-out episodes that call a tool of their gold: with an argument no gold call of it passes / without one every gold call of it passes):",
             *argument_table(logs)]  # fmt: skip
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    """Command line: ``compare_report.py FOLDER [FOLDER ...] [--reference random] [--window T]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="train_compare.py --output-dir folders or compare_archive.py archives.")
    parser.add_argument("--reference", default="random", help="The row the others are compared with at the same step.")
    parser.add_argument("--window", type=int, default=None, help="Steps per rollout window (default: T from summary.json).")
    args = parser.parse_args(argv)
    for folder in args.folders:
        if not folder.is_dir():
            raise SystemExit(f"{folder} is not a folder; pass a train_compare.py --output-dir or a compare_archive.py archive")
    print(report(args.folders, args.reference, args.window))


if __name__ == "__main__":
    main()
