"""Re-score a finished run's logged episodes with the current verifiers, without the model.

    python training/rescore.py runs/smol-cpu                          # held-out episodes, by step
    python training/rescore.py runs/smol-cpu --log answers.jsonl      # training rollouts, by round
    python training/rescore.py runs/cmp/seed3/envsched --write rescored/eval.jsonl

``train_grpo.py --log-answers`` (the default) logs every episode with the reset seed and the texts
the model generated. An environment is a function of its task, its seed and the agent's actions
(ToolWorld's worlds and scripted users are), so feeding the same actions to a fresh environment
replays the episode, and the verifier of *this* checkout scores it. When a verifier is found to pay
for something it should not (docs/verifiers.md), this says what a finished run's rewards and
held-out success were worth under the fix, instead of training again.

A replay is checked against its log: it must end exactly where the logged episode ended (at its
last action; or, for an episode the token budget cut, not before its last action, scoring 0 as
the budget did). An episode that ends elsewhere has *diverged* (an LLM-simulated user, an
environment that changed between the two checkouts) and is counted and refused, never scored.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envsched_gym.plugins import import_modules  # noqa: E402
from envsched_gym.rl.grpo import EVAL_ANSWERS  # noqa: E402
from envsched_gym.rl.plots import read_jsonl  # noqa: E402
from envsched_gym.rl.summary import success_interval  # noqa: E402
from envsched_gym.rl.tasks import select_tasks  # noqa: E402
from envsched_gym.suite import Suite  # noqa: E402

BUDGET = "length"
"""The termination of an episode the completion token budget cut (it scores 0)."""


@dataclass
class Replayed:
    """One logged episode, replayed: its logged and its new verdict."""

    record: dict[str, Any]
    success: bool
    reward: float
    diverged: str = ""


def replay(env: gym.Env, record: dict[str, Any]) -> Replayed:
    """Feed ``record``'s actions to ``env`` after a reset with its task and seed, and score the end."""
    actions = record["actions"]
    env.reset(seed=record["seed"], options={"task_id": record["task_id"]})
    for i, action in enumerate(actions, 1):
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            if i < len(actions) or record["termination"] == BUDGET:
                return Replayed(record, False, 0.0, f"ended after action {i} of {len(actions)}")
            outcome = info["outcome"]
            return Replayed(record, bool(outcome["success"]), float(outcome["reward"]))
    if record["termination"] == BUDGET:
        return Replayed(record, False, 0.0)
    return Replayed(record, False, 0.0, f"still running after all {len(actions)} actions")


def suite_of(run: Path) -> Suite:
    """Every task of the run's families (its ``config.json``), with its plugins imported."""
    config_path = run / "config.json"
    if not config_path.exists():
        raise SystemExit(f"{config_path} is missing: pass a train_grpo.py --output-dir")
    config = json.loads(config_path.read_text())
    import_modules([m for m in config.get("imports", "").split(",") if m])
    return select_tasks(config["families"], "all")


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of an answer log; a record without actions (logged before session 41) is an error."""
    if not path.exists():
        raise SystemExit(f"{path} is missing: the run was made with --log-answers False, or before held-out episodes were logged")
    records = read_jsonl(path)
    if old := [i for i, r in enumerate(records, 1) if "actions" not in r or "seed" not in r]:
        raise SystemExit(f"{path}: line {old[0]} (and {len(old) - 1} more) has no actions or seed to replay (logged before session 41)")
    return records


def rescore(run: Path, log: str) -> list[Replayed]:
    """Replay every episode of ``run/log`` (one environment per gym id, reused)."""
    suite = suite_of(run)
    envs: dict[str, gym.Env] = {}
    done = []
    for record in read_log(run / log):
        gym_id = suite.node(record["task_id"]).env.gym_id
        env = envs.get(gym_id) or envs.setdefault(gym_id, suite.make_env(record["task_id"]))
        done.append(replay(env, record))
    return done


def table(replayed: list[Replayed], key: str) -> str:
    """Logged against re-scored success per ``key`` (``step``: per stage and step; ``round``), with flips and divergences."""
    by: dict[Any, list[Replayed]] = defaultdict(list)
    for r in replayed:
        by[(r.record["stage"], r.record["step"]) if key == "step" else r.record[key]].append(r)
    label = "stage, step" if key == "step" else key
    lines = [f"| {label} | episodes | logged success | re-scored success [95% CI] | 1 -> 0 | 0 -> 1 | diverged |", "|---|---|---|---|---|---|---|"]
    for k in sorted(by, key=lambda k: (k[1], k[0] != "base", k[0]) if isinstance(k, tuple) else (k,)):
        group = [r for r in by[k] if not r.diverged]
        flips = Counter((bool(r.record["success"]), r.success) for r in group)
        logged = sum(bool(r.record["success"]) for r in by[k]) / len(by[k])
        new = str(success_interval([float(r.success) for r in group])) if group else "-"
        name = f"{k[0]}, {k[1]}" if isinstance(k, tuple) else k
        lines.append(f"| {name} | {len(by[k])} | {logged:.3f} | {new} | {flips[(True, False)]} | {flips[(False, True)]} | {len(by[k]) - len(group)} |")
    return "\n".join(lines)


def eval_records(replayed: list[Replayed]) -> list[dict[str, Any]]:
    """The re-scored held-out episodes as ``eval.jsonl`` records (one per step and stage), for compare_report.py."""
    by: dict[tuple[int, str], list[Replayed]] = defaultdict(list)
    for r in replayed:
        by[(r.record["step"], r.record["stage"])].append(r)
    if any(r.diverged for r in replayed):
        raise SystemExit("some episodes diverged on replay; an eval.jsonl without them would be a different task sample")
    return [{"step": step, "stage": stage, "split": "rescored", "n": len(group), "success": sum(r.success for r in group) / len(group),
             "reward": sum(r.reward for r in group) / len(group), "task_ids": [r.record["task_id"] for r in group],
             "successes": [float(r.success) for r in group]} for (step, stage), group in sorted(by.items())]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Command line: ``rescore.py RUN [--log FILE] [--write PATH]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="A train_grpo.py --output-dir.")
    parser.add_argument("--log", default=EVAL_ANSWERS, help=f"The answer log to replay: {EVAL_ANSWERS} (held-out, default) or answers.jsonl (training).")
    parser.add_argument("--write", type=Path, help="Write the re-scored held-out episodes here in eval.jsonl's format (held-out log only).")
    args = parser.parse_args(argv)
    key = "step" if args.log == EVAL_ANSWERS else "round"
    if args.write and key != "step":
        raise SystemExit(f"--write takes the held-out log ({EVAL_ANSWERS}), not {args.log}")
    replayed = rescore(args.run, args.log)
    print(table(replayed, key))
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text("".join(json.dumps(r) + "\n" for r in eval_records(replayed)))
        print(f"\nwrote {args.write}")


if __name__ == "__main__":
    main()
