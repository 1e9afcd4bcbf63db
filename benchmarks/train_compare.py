"""The real comparison: GRPO with EnvSched against other task schedulers, at equal rollouts, several seeds.

    python benchmarks/train_compare.py --output-dir runs/compare                        # smol-cpu: SmolLM2-135M, about 2 h on 2 cores
    python benchmarks/train_compare.py --preset tiny-cpu --output-dir runs/compare-micro  # the micro model, minutes
    python benchmarks/train_compare.py --output-dir runs/control --schedulers random --start-from runs/compare \
        --train-args "--pg-weight 0 --sft-replay 0.25"                                  # a control from the same starts

For each seed, one starting policy is built once (the preset's base model and its warm start,
or the micro model) and every scheduler trains from it with the same task pool, the same
rollouts per step (tasks_per_step x G) and the same held-out tasks, evaluated greedily at steps
0, T and 3T (``steps`` = 3T; ``--eval-2t`` adds 2T). Every run's GRPO is anchored to the seed's
starting policy by a KL penalty (``--beta``, 0.04; 0: unanchored, as before session 48). Nothing is simulated: each step is a real GRPO update from
real environment rollouts. The runs go one after another (each uses both cores).

Prints per scheduler and seed the effective ratio per step, held-out success with bootstrap 95%
intervals, the target check (EnvSched at T >= random at 3T; EnvSched's mean effective ratio above
random's), and writes ``compare.png`` and ``summary.json``.
"""

from __future__ import annotations

import filecmp
import json
import multiprocessing
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from transformers import HfArgumentParser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envsched_gym.curriculum import parse_variant  # noqa: E402
from envsched_gym.rl.plots import read_jsonl  # noqa: E402
from envsched_gym.rl.summary import paired_gain, success_interval  # noqa: E402
from envsched_gym.rl.tasks import select_tasks  # noqa: E402
from training.train_grpo import TrainConfig, check_beta, parse_config, resolve_base, warm_started  # noqa: E402

T = TypeVar("T")


@dataclass
class CompareConfig:
    """The shared settings of every run (anything else comes from the preset)."""

    output_dir: str = field(default="runs/compare", metadata={"help": "One sub-directory per seed and scheduler, plus the shared starting models."})
    preset: str = field(default="smol-cpu", metadata={"help": "train_grpo.py preset every run starts from (smol-cpu or tiny-cpu)."})
    schedulers: str = field(default="envsched,random,plr", metadata={"help": "Comma-separated schedulers; 'random' is the reference."})
    variants: str = field(default="", metadata={"help": "Extra EnvSched runs, ';'-separated LABEL:key=value,..., e.g. 'rd0:repeat_discount=0' (run 'envsched-rd0')."})
    seeds: str = field(default="0,1", metadata={"help": "Comma-separated seeds (each: its own warm start, task order and sampling)."})
    steps: int = field(default=12, metadata={"help": "GRPO steps per run (3T)."})
    tasks_per_step: int = field(default=4, metadata={"help": "GRPO groups per step."})
    num_generations: int = field(default=4, metadata={"help": "Rollouts per task (G)."})
    eval_tasks: int = field(default=100, metadata={"help": "Held-out tasks evaluated greedily at steps 0, T and 3T (T = steps // 3)."})
    eval_2t: bool = field(default=False, metadata={"help": "Also evaluate at 2T (one more 100-task evaluation per run)."})
    beta: float = field(default=0.04, metadata={"help": "KL coefficient of every run (train_grpo.py --beta), anchoring GRPO to the seed's starting policy; "
                                                   "0: unanchored, as every comparison before session 48 (docs/training.md, 'A KL anchor to the start')."})  # fmt: skip
    train_args: str = field(default="", metadata={"help": "More train_grpo.py flags for every run and the starting policy, e.g. '--learning-rate 1e-4 --warm-start-steps 6' "
                                                          "(not the ones this script sets: use its own options)."})  # fmt: skip
    start_from: str = field(default="", metadata={"help": "Another comparison folder whose start-seed<S> policies every run starts from, copied here once: a control "
                                                          "run later (other --train-args) then shares the start and compare_report.py pairs it with that folder's runs."})  # fmt: skip


def starting_policy(config: CompareConfig, seed: int, out: Path) -> Path:
    """The policy every scheduler of ``seed`` starts from: train_grpo.py's base and warm start, built once in ``out/start-seed<seed>``.

    It is built in a child process, so that the memory of the conversion and the warm start
    (5.4 GB for SmolLM2 when it ran in this process) is returned before the runs start. With
    ``--start-from``, the other folder's ``start-seed<seed>`` is copied first (:func:`shared_start`),
    and the build finds it made (a warm start made with other settings is refused there).
    """
    if config.start_from:
        shared_start(Path(config.start_from), seed, out)
    return in_child(_build_start, config, seed, out)


def shared_start(source: Path, seed: int, out: Path) -> Path:
    """``source/start-seed<seed>`` copied to ``out`` once; a copy already there must be the same files.

    Raises:
        SystemExit: The source has no start for the seed, or ``out`` holds a different one.
    """
    src, dest = source / f"start-seed{seed}", out / f"start-seed{seed}"
    if not src.is_dir():
        raise SystemExit(f"--start-from {source}: {src} is missing; pass a train_compare.py --output-dir that ran seed {seed}")
    if not dest.exists():
        shutil.copytree(src, dest)
        return dest
    if not _same_tree(filecmp.dircmp(src, dest)):
        raise SystemExit(f"--start-from {source}: {dest} exists and differs from {src}; remove it, or drop --start-from to keep it")
    return dest


def _same_tree(cmp: filecmp.dircmp[str]) -> bool:
    """No file only on one side and none that differs, at any depth (``filecmp``: the same size and time of modification, else the same bytes)."""
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(_same_tree(sub) for sub in cmp.subdirs.values())


def in_child(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a fresh (spawned) process; its memory goes back to the system when it returns."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def _build_start(config: CompareConfig, seed: int, out: Path) -> Path:
    preset = parse_config(["--preset", config.preset, "--seed", str(seed), *extra_args(config)])
    train = select_tasks(preset.families, preset.train_split, preset.max_difficulty, preset.max_tasks, seed)
    start = out / f"start-seed{seed}"
    start.mkdir(parents=True, exist_ok=True)
    return Path(warm_started(preset, resolve_base(preset, train, start), train, start)).resolve()


def eval_steps(config: CompareConfig, first: bool) -> list[int]:
    """Where a run is evaluated: T, (2T,) 3T, and step 0 for the seed's first scheduler only (every
    scheduler of a seed starts from the same policy, and the greedy evaluation is deterministic)."""
    t = max(config.steps // 3, 1)
    return [0] * first + [t] + [2 * t] * config.eval_2t + [3 * t]


def runs(config: CompareConfig) -> dict[str, tuple[str, str]]:
    """Every run of a seed: label -> (scheduler, its train_grpo.py --scheduler-options).

    ``--schedulers ""`` with ``--variants`` runs the variants alone, e.g. to add one to a seed
    whose other runs are archived (:mod:`benchmarks.compare_archive`)."""
    rows = {name: (name, "") for name in filter(None, (n.strip() for n in config.schedulers.split(",")))}
    for text in filter(None, (v.strip() for v in config.variants.split(";"))):
        try:
            label, options = parse_variant(text)  # a malformed option fails here, not after the first run
        except ValueError as exc:
            raise SystemExit(f"--variants: {exc}") from None
        rows[f"envsched-{label}"] = ("envsched", ",".join(f"{k}={v}" for k, v in options.items()))
    if not rows:
        raise SystemExit("nothing to run: give --schedulers (e.g. random,envsched) or --variants")
    return rows


def extra_args(config: CompareConfig) -> list[str]:
    """``--train-args`` as a list, checked once: a flag this script sets itself, or one train_grpo.py lacks, stops the comparison.

    ``--warm-start-*`` flags shape the starting policy; the runs themselves start from it with no warm start of their own.
    """
    extra = shlex.split(config.train_args)
    names = [a[2:].split("=", 1)[0].replace("_", "-") for a in extra if a.startswith("--")]
    unknown = [f"--{n}" for n in names if n.replace("-", "_") not in {f.name for f in fields(TrainConfig)} | {"import"}]
    if unknown:  # exact names only: argparse would take a prefix such as --see for --seed
        raise SystemExit(f"--train-args {config.train_args!r}: train_grpo.py has no flag {', '.join(unknown)}; see python training/train_grpo.py --help")
    taken = [f"--{n}" for n in names if n in set(_RUN_FLAGS) - {"warm-start-steps"}]
    if taken:
        raise SystemExit(f"--train-args {config.train_args!r}: {', '.join(taken)} is set by this script; use its own option (--help) instead")
    try:
        parse_config(["--preset", config.preset, *extra])
    except ValueError as exc:  # HfArgumentParser: flags it does not know
        raise SystemExit(f"--train-args {config.train_args!r}: not valid train_grpo.py flags: {exc}") from None
    except SystemExit as exc:  # argparse has printed which value is wrong
        raise SystemExit(f"--train-args {config.train_args!r}: not valid train_grpo.py flags (see the message above)") from exc
    return extra


_RUN_FLAGS = ("preset", "output-dir", "model", "scheduler", "steps", "tasks-per-step", "num-generations", "eval-steps", "eval-tasks",
              "save-steps", "seed", "warm-start-steps", "eval-base", "scheduler-options", "beta")  # fmt: skip
"""The train_grpo.py flags :func:`train_command` sets for every run."""


def train_command(config: CompareConfig, scheduler: str, seed: int, model: Path, run: Path, first: bool = True, options: str = "") -> list[str]:
    """The train_grpo.py command line of one run: ``--train-args`` first, then the comparison's own flags."""
    args = {
        "preset": config.preset, "output-dir": run, "model": model, "scheduler": scheduler, "steps": config.steps,
        "tasks-per-step": config.tasks_per_step, "num-generations": config.num_generations, "eval-steps": ",".join(map(str, eval_steps(config, first))),
        "eval-tasks": config.eval_tasks, "save-steps": config.steps, "seed": seed, "warm-start-steps": 0, "eval-base": False, "beta": config.beta,
        **({"scheduler-options": options} if options else {}),
    }  # fmt: skip
    assert set(args) <= set(_RUN_FLAGS), "keep _RUN_FLAGS in step with train_command"
    own = [x for k, v in args.items() for x in (f"--{k}", str(v))]
    return [sys.executable, str(REPO / "training" / "train_grpo.py"), *extra_args(config), *own]


def run_all(config: CompareConfig, out: Path) -> None:
    """Train every (seed, run) pair, one after another; logs go to <run>/train.log. Finished runs are kept.

    The first run of a seed without a step-0 evaluation evaluates the shared starting policy.
    """
    env = {**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"}
    for seed in _ints(config.seeds):
        model = starting_policy(config, seed, out)
        for label, (scheduler, options) in runs(config).items():
            run = out / f"seed{seed}" / label
            if (run / "scheduler_state.pt").exists():
                continue
            first = start_evaluation(out, seed) is None
            run.mkdir(parents=True, exist_ok=True)
            with (run / "train.log").open("w") as log:
                command = train_command(config, scheduler, seed, model, run, first=first, options=options)
                code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
            if code:
                raise SystemExit(f"run {run} failed (exit {code}); see {run}/train.log")


def start_evaluation(out: Path, seed: int) -> list[float] | None:
    """The step-0 held-out successes of ``seed``'s starting policy, from whichever of its finished runs made them (None: none did)."""
    for log in sorted((out / f"seed{seed}").glob("*/eval.jsonl")):
        if (log.parent / "scheduler_state.pt").exists():
            for row in read_jsonl(log):
                if int(row["step"]) == 0:
                    return list(row["successes"])
    return None


def collect(config: CompareConfig, out: Path) -> dict[str, dict[int, dict[str, Any]]]:
    """Per run label and seed: effective ratio per step, and every held-out evaluation with its per-task results."""
    results: dict[str, dict[int, dict[str, Any]]] = {}
    for name in runs(config):
        for seed in _ints(config.seeds):
            run = out / f"seed{seed}" / name
            rounds, evals = read_jsonl(run / "metrics.jsonl"), read_jsonl(run / "eval.jsonl")
            results.setdefault(name, {})[seed] = {
                "effective_ratio": [r["effective_ratio"] for r in rounds], "reward": [r["reward"] for r in rounds],
                "heldout": {int(e["step"]): e["successes"] for e in evals}, "distinct_tasks": len({t for r in rounds for t in r["tasks"]}),
            }  # fmt: skip
    for seed in _ints(config.seeds):  # the seed's shared starting policy, evaluated once by one of its runs
        start = start_evaluation(out, seed)
        if start is None:
            raise SystemExit(f"no run of {out}/seed{seed} has a step-0 evaluation; delete that seed's runs and run the comparison again")
        for name in results:
            results[name][seed]["heldout"].setdefault(0, start)
    return results


def report(config: CompareConfig, results: dict[str, dict[int, dict[str, Any]]], out: Path) -> dict[str, Any]:
    """Print the tables and the target check; write compare.png and summary.json."""
    t = max(config.steps // 3, 1)
    names, seeds = list(results), _ints(config.seeds)
    print(f"preset {config.preset}; {config.tasks_per_step} tasks x G={config.num_generations} rollouts per step; T = {t}, 3T = {3 * t}; "
          f"{config.eval_tasks} held-out tasks; seeds {seeds}\n")  # fmt: skip
    print("| scheduler | seed | held-out success at " + " | ".join(f"step {s}" for s in (0, t, 2 * t, 3 * t)) + " | mean effective ratio | distinct tasks |")
    print("|---|---|" + "---|" * 4 + "---|---|")
    for n in names:
        for s in seeds:
            r = results[n][s]
            cells = [str(success_interval(r["heldout"][k])) if k in r["heldout"] else "-" for k in (0, t, 2 * t, 3 * t)]
            print(f"| {n} | {s} | " + " | ".join(cells) + f" | {_mean(r['effective_ratio']):.3f} | {r['distinct_tasks']} |")
    summary: dict[str, Any] = {"config": asdict(config), "T": t, "results": {n: {str(s): v for s, v in r.items()} for n, r in results.items()}}
    if "envsched" in results and "random" in results:
        summary["target"] = _targets(results, seeds, t)
        for row in summary["target"]["per_seed"]:
            print(f"\nseed {row['seed']}: EnvSched at T={t} minus random at 3T={3 * t}: {row['envsched_T_minus_random_3T']} (paired bootstrap); "
                  f"effective ratio EnvSched {row['envsched_effective_ratio']:.3f} vs random {row['random_effective_ratio']:.3f}")  # fmt: skip
        print("target: " + json.dumps({k: v for k, v in summary["target"].items() if k != "per_seed"}))
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    _plot(results, seeds, out / "compare.png")
    return summary


def _targets(results: dict[str, dict[int, dict[str, Any]]], seeds: list[int], t: int) -> dict[str, Any]:
    rows = []
    for s in seeds:
        env, rand = results["envsched"][s], results["random"][s]
        gain = paired_gain(rand["heldout"][3 * t], env["heldout"][t]) if t in env["heldout"] and 3 * t in rand["heldout"] else None
        rows.append({"seed": s, "envsched_T_minus_random_3T": str(gain) if gain else None, "gain": gain.mean if gain else None,
                     "envsched_effective_ratio": _mean(env["effective_ratio"]), "random_effective_ratio": _mean(rand["effective_ratio"])})  # fmt: skip
    return {
        "per_seed": rows,
        "envsched_at_T_ge_random_at_3T_every_seed": all(r["gain"] is not None and r["gain"] >= 0 for r in rows),
        "effective_ratio_envsched_gt_random_every_seed": all(r["envsched_effective_ratio"] > r["random_effective_ratio"] for r in rows),
    }


def _mean(xs: list[float]) -> float:
    return float(np.mean(xs)) if xs else float("nan")


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _plot(results: dict[str, dict[int, dict[str, Any]]], seeds: list[int], path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for k, (name, per_seed) in enumerate(results.items()):
        color = f"C{k}"
        ratios = [per_seed[s]["effective_ratio"] for s in seeds]
        width = min(len(r) for r in ratios)
        left.plot(range(1, width + 1), np.mean([r[:width] for r in ratios], axis=0), marker=".", color=color, label=f"{name} (mean of {len(seeds)} seeds)")
        steps = sorted(set.intersection(*(set(per_seed[s]["heldout"]) for s in seeds)))
        pooled = [success_interval([v for s in seeds for v in per_seed[s]["heldout"][x]]) for x in steps]
        right.errorbar(steps, [p.mean for p in pooled], yerr=[[p.mean - p.low for p in pooled], [p.high - p.mean for p in pooled]],
                       marker="o", capsize=3, color=color, label=name)  # fmt: skip
    left.set(xlabel="step", ylabel="effective ratio", title="Groups with reward std > 0", ylim=(-0.05, 1.05))
    right.set(xlabel="step", ylabel="success", title="Held-out success (greedy), seeds pooled, 95% CI")
    left.legend()
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(config: CompareConfig) -> dict[str, Any]:
    """Build the starting policies, train every run, report."""
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs(config)  # malformed --variants or --train-args fail before the first warm start
    extra_args(config)
    check_beta(config.beta)
    run_all(config, out)
    return report(config, collect(config, out), out)


if __name__ == "__main__":
    (cfg,) = HfArgumentParser(CompareConfig).parse_args_into_dataclasses(args=sys.argv[1:])
    main(cfg)
