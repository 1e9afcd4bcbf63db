"""The real comparison: GRPO on the CPU micro Qwen3 with EnvSched, random and MoPPS task selection.

    python benchmarks/train_compare.py --output-dir runs/compare            # tens of minutes on 2 cores

Every scheduler trains from the same SFT-warm-started micro model, with the same seed, the same
task pool, the same rollouts per step (tasks_per_step x num_generations) and the same held-out
evaluation tasks (greedy, every ``steps // 3`` steps). Nothing is simulated: each step is a real
GRPO update from real environment rollouts. Prints a table per step (effective ratio, train
reward, held-out success) and the target check -- EnvSched's effective ratio above random's, and
EnvSched's held-out success at step T at least random's at step 3T -- and writes
``compare.png`` and ``summary.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from transformers import HfArgumentParser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envsched_gym.rl.micro import MicroSize, build_micro_qwen3  # noqa: E402
from envsched_gym.rl.plots import read_jsonl  # noqa: E402
from envsched_gym.rl.tasks import select_tasks  # noqa: E402
from envsched_gym.rl.trajectories import gold_conversations  # noqa: E402


@dataclass
class CompareConfig:
    """The shared settings of every scheduler's run."""

    output_dir: str = field(default="runs/compare", metadata={"help": "One sub-directory per scheduler, plus the shared micro model."})
    schedulers: str = field(default="envsched,random,mopps", metadata={"help": "Comma-separated schedulers; 'random' is the reference."})
    families: str = field(default="ToolWorld", metadata={"help": "Families to train and evaluate on."})
    max_difficulty: int = field(default=1, metadata={"help": "Keep tasks of at most this difficulty."})
    steps: int = field(default=12, metadata={"help": "GRPO steps per run (3T)."})
    tasks_per_step: int = field(default=4, metadata={"help": "GRPO groups per step."})
    num_generations: int = field(default=4, metadata={"help": "Rollouts per task."})
    eval_tasks: int = field(default=32, metadata={"help": "Held-out tasks evaluated greedily every steps // 3 steps."})
    sft_steps: int = field(default=150, metadata={"help": "SFT warm-start steps of the shared micro model."})
    parallel: bool = field(default=True, metadata={"help": "Run the schedulers as parallel processes (one thread each)."})
    seed: int = field(default=0, metadata={"help": "Seed shared by every run."})


def build_shared_model(config: CompareConfig, out: Path) -> Path:
    """The micro model every run starts from (built once; reused when present)."""
    path = out / "micro-model"
    if not (path / "config.json").exists():
        train = select_tasks(config.families, "train", config.max_difficulty, 0, config.seed)
        build_micro_qwen3(list(gold_conversations(train)), path, MicroSize(), sft_steps=config.sft_steps, seed=config.seed)
    return path.resolve()


def train_command(config: CompareConfig, scheduler: str, model: Path, out: Path) -> list[str]:
    """The train_grpo.py command line of one scheduler's run."""
    every = max(config.steps // 3, 1)
    args = {
        "output-dir": out / scheduler, "model": model, "scheduler": scheduler, "families": config.families,
        "max-difficulty": config.max_difficulty, "steps": config.steps, "tasks-per-step": config.tasks_per_step,
        "num-generations": config.num_generations, "eval-every": every, "eval-tasks": config.eval_tasks,
        "save-steps": config.steps, "seed": config.seed,
    }  # fmt: skip
    return [sys.executable, str(REPO / "training" / "train_grpo.py")] + [x for k, v in args.items() for x in (f"--{k}", str(v))]


def run_all(config: CompareConfig, model: Path, out: Path) -> None:
    """Train every scheduler (in parallel processes, or one after another); logs go to <run>/train.log."""
    names = config.schedulers.split(",")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TRL_EXPERIMENTAL_SILENCE": "1"} if config.parallel else dict(os.environ)
    procs = []
    for name in names:
        (out / name).mkdir(parents=True, exist_ok=True)
        log = (out / name / "train.log").open("w")
        proc = subprocess.Popen(train_command(config, name, model, out), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        if not config.parallel:
            proc.wait()
        procs.append((name, proc))
    failed = [name for name, proc in procs if proc.wait() != 0]
    if failed:
        raise SystemExit(f"runs failed: {failed}; see {out}/<scheduler>/train.log")


def collect(config: CompareConfig, out: Path) -> dict[str, dict[str, Any]]:
    """Per scheduler: effective ratio and reward per step, held-out success per evaluated step."""
    results = {}
    for name in config.schedulers.split(","):
        rounds, evals = read_jsonl(out / name / "metrics.jsonl"), read_jsonl(out / name / "eval.jsonl")
        results[name] = {
            "effective_ratio": [r["effective_ratio"] for r in rounds], "reward": [r["reward"] for r in rounds],
            "heldout": {int(e["step"]): e["success"] for e in evals},
            "distinct_tasks": len({t for r in rounds for t in r["tasks"]}),
        }  # fmt: skip
    return results


def report(config: CompareConfig, results: dict[str, dict[str, Any]], out: Path) -> dict[str, Any]:
    """Print the tables and the target check; write compare.png and summary.json."""
    names = list(results)
    print("| step | " + " | ".join(f"{n} eff / reward" for n in names) + " |")
    print("|------|" + "|".join("-" * (len(n) + 16) for n in names) + "|")
    for step in range(config.steps):
        cells = [f"{results[n]['effective_ratio'][step]:.2f} / {results[n]['reward'][step]:.2f}" if step < len(results[n]["reward"]) else "-" for n in names]
        print(f"| {step + 1:>4} | " + " | ".join(f"{c:>{len(n) + 14}}" for c, n in zip(cells, names, strict=True)) + " |")
    eval_steps = sorted({s for n in names for s in results[n]["heldout"]})
    print("\n| held-out success at step | " + " | ".join(names) + " |")
    print("|---|" + "|".join("---" for _ in names) + "|")
    for s in eval_steps:
        print(f"| {s} | " + " | ".join(f"{results[n]['heldout'].get(s, float('nan')):.3f}" for n in names) + " |")
    summary = {"config": asdict(config), "results": results, "mean_effective_ratio": {n: _mean(results[n]["effective_ratio"]) for n in names}}
    if "envsched" in results and "random" in results:
        t = max(config.steps // 3, 1)
        env_t, rand_3t = results["envsched"]["heldout"].get(t), results["random"]["heldout"].get(3 * t)
        summary["target"] = {
            "effective_ratio_envsched_gt_random": summary["mean_effective_ratio"]["envsched"] > summary["mean_effective_ratio"]["random"],
            "T": t, "envsched_success_at_T": env_t, "random_success_at_3T": rand_3t,
            "envsched_at_T_ge_random_at_3T": env_t is not None and rand_3t is not None and env_t >= rand_3t,
        }  # fmt: skip
    print("\nmean effective ratio: " + ", ".join(f"{n} {v:.3f}" for n, v in summary["mean_effective_ratio"].items()))
    print("distinct tasks trained on: " + ", ".join(f"{n} {results[n]['distinct_tasks']}" for n in names))
    if "target" in summary:
        print("target: " + json.dumps(summary["target"]))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    _plot(results, out / "compare.png")
    return summary


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def _plot(results: dict[str, dict[str, Any]], path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, r in results.items():
        left.plot(range(1, len(r["effective_ratio"]) + 1), r["effective_ratio"], marker=".", label=name)
        steps = sorted(r["heldout"])
        right.plot(steps, [r["heldout"][s] for s in steps], marker="o", label=name)
    left.set(xlabel="step", ylabel="effective ratio", title="Groups with reward std > 0", ylim=(-0.05, 1.05))
    right.set(xlabel="step", ylabel="success", title="Held-out success (greedy)")
    left.legend()
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(config: CompareConfig) -> dict[str, Any]:
    """Build the shared model, train every scheduler, report."""
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = build_shared_model(config, out)
    run_all(config, model, out)
    return report(config, collect(config, out), out)


if __name__ == "__main__":
    (cfg,) = HfArgumentParser(CompareConfig).parse_args_into_dataclasses(args=sys.argv[1:])
    main(cfg)
