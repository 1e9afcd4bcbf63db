"""PNG plots of a training run from its ``metrics.jsonl`` and ``eval.jsonl``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSONL file (empty when it does not exist)."""
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def plot_run(run_dir: str | Path) -> list[Path]:
    """Write ``learning_curve.png``, ``effective_ratio.png`` and ``env_coverage.png``; returns their paths."""
    run = Path(run_dir)
    rounds, evals = read_jsonl(run / "metrics.jsonl"), read_jsonl(run / "eval.jsonl")
    if not rounds:
        return []
    return [_learning_curve(run, rounds, evals), _effective_ratio(run, rounds), _coverage(run, rounds)]


def _learning_curve(run: Path, rounds: list[dict[str, Any]], evals: list[dict[str, Any]]) -> Path:
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r["round"] + 1 for r in rounds], [r["reward"] for r in rounds], label="train reward (rollouts)")
    if evals:
        ax.plot([e["step"] for e in evals], [e["success"] for e in evals], marker="o", label=f"{evals[0].get('split', 'eval')} success (greedy)")
    ax.set_xlabel("step")
    ax.set_ylabel("reward / success")
    ax.set_title("Learning curve")
    ax.legend()
    return _save(fig, run / "learning_curve.png")


def _effective_ratio(run: Path, rounds: list[dict[str, Any]]) -> Path:
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r["round"] + 1 for r in rounds], [r["effective_ratio"] for r in rounds], marker=".")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("step")
    ax.set_ylabel("groups with reward std > 0")
    ax.set_title("Effective ratio")
    return _save(fig, run / "effective_ratio.png")


def _coverage(run: Path, rounds: list[dict[str, Any]]) -> Path:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    seen_envs: set[str] = set()
    seen_tasks: set[str] = set()
    env_curve, task_curve = [], []
    share: Counter[str] = Counter()
    for r in rounds:
        seen_envs.update(r["env_share"])
        seen_tasks.update(r["tasks"])
        env_curve.append(len(seen_envs))
        task_curve.append(len(seen_tasks))
        share.update({e: s * len(r["tasks"]) for e, s in r["env_share"].items()})
    steps = [r["round"] + 1 for r in rounds]
    left.plot(steps, env_curve, label="environments")
    left.plot(steps, task_curve, label="tasks")
    left.set_xlabel("step")
    left.set_ylabel("distinct, cumulative")
    left.legend()
    names, counts = zip(*share.most_common(30), strict=True)
    right.barh(range(len(names)), counts)
    right.set_yticks(range(len(names)), labels=names, fontsize=6)
    right.invert_yaxis()
    right.set_xlabel("groups trained on (top 30 environments)")
    fig.suptitle("Per-environment coverage")
    return _save(fig, run / "env_coverage.png")


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
