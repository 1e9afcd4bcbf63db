"""ACEBench scores of three reference policies, in faithful and strict mode, with the overall score.

Policies (every episode goes through ``gym.make`` / ``reset`` / ``step``):

* ``gold``: the task's gold solution (agent tasks without one reply ``Done.`` at once);
* ``gold+1``: the gold solution with every number in the call arguments increased by 1
  (booleans untouched) — faithful mode only type-checks numbers, strict does not;
* ``silent``: a single text reply that calls nothing.

Per category the table shows ACEBench's accuracy (multi-turn normal categories per
dialogue), then the group scores and the weighted overall score
(0.578 normal + 0.2676 special + 0.1545 agent), and the agent process accuracy.

Run: ``python benchmarks/acebench_scores.py [--language all]``.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from envsched_gym.envs.acebench.dataset import AGENT, NORMAL, SPECIAL
from envsched_gym.envs.acebench.scores import category_accuracy, overall_score

import envsched_gym
from envsched_gym import AssistantTurn, TaskSpec, ToolCall, render_turn

Policy = Callable[[TaskSpec], list[AssistantTurn]]


@dataclass
class ScoresConfig:
    """Benchmark options.

    Attributes:
        language: ``en``, ``zh`` or ``all``.
    """

    language: str = "all"


def bump(value: Any) -> Any:
    """``value`` with every number increased by 1 (booleans and strings unchanged)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list, dict)):
        return value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        return [bump(v) for v in value]
    return {k: bump(v) for k, v in value.items()}


def gold(task: TaskSpec) -> list[AssistantTurn]:
    return task.solution or [AssistantTurn("Done.")]


def gold_plus_one(task: TaskSpec) -> list[AssistantTurn]:
    return [AssistantTurn(t.content, [ToolCall(c.name, bump(c.arguments)) for c in t.tool_calls]) for t in gold(task)]


def silent(task: TaskSpec) -> list[AssistantTurn]:
    return [AssistantTurn("I will not call any function.")]


POLICIES: dict[str, Policy] = {"gold": gold, "gold+1": gold_plus_one, "silent": silent}


def run(policy: Policy, mode: str, language: str) -> tuple[dict[str, float], dict[str, float]]:
    """Per-category accuracy and agent process accuracy of one policy in one mode."""
    options = {"mode": mode, "language": language}
    adapter = envsched_gym.get_adapter("ACE", options)
    envs: dict[str, gym.Env] = {}
    correct: dict[str, dict[str, bool]] = defaultdict(dict)
    process: dict[str, list[float]] = defaultdict(list)
    for task in adapter.tasks():
        category = task.metadata["category"]
        gym_id = f"envsched/ACE-{task.metadata['group']}-v0"
        env = envs.setdefault(gym_id, gym.make(gym_id, adapter_options=options))
        env.reset(options={"task_id": task.task_id})
        info: dict[str, Any] = {}
        for turn in policy(task):
            _, _, terminated, truncated, info = env.step(render_turn(turn))
            if terminated or truncated:
                break
        outcome = info.get("outcome") or {"reward": 0.0, "breakdown": {}}
        correct[category][f"{task.metadata['language']}/{task.metadata['source_id']}"] = outcome["reward"] == 1.0
        if category in AGENT:
            process[category].append(outcome["breakdown"].get("process", 0.0))
    accuracy = {c: _accuracy(c, ids) for c, ids in correct.items()}
    return accuracy, {c: round(sum(v) / len(v), 3) for c, v in process.items()}


def _accuracy(category: str, correct: dict[str, bool]) -> float:
    """Mean over languages of ACEBench's per-language category accuracy."""
    by_language: dict[str, dict[str, bool]] = defaultdict(dict)
    for key, ok in correct.items():
        language, entry_id = key.split("/", 1)
        by_language[language][entry_id] = ok
    return round(sum(category_accuracy(category, ids) for ids in by_language.values()) / len(by_language), 3)


def main(config: ScoresConfig) -> None:
    columns = [(p, m) for p in POLICIES for m in ("faithful", "strict")]
    results = {(p, m): run(POLICIES[p], m, config.language) for p, m in columns}
    header = f"{'category':40s}" + "".join(f"{p + '/' + m:>17s}" for p, m in columns)
    print(f"ACEBench reference policies, language={config.language}\n{header}")
    for category in NORMAL + SPECIAL + AGENT:
        print(f"{category:40s}" + "".join(f"{results[c][0][category]:17.3f}" for c in columns))
    totals = {c: overall_score(results[c][0]) for c in columns}
    for name in ("normal", "special", "agent", "overall"):
        print(f"{'= ' + name:40s}" + "".join(f"{totals[c][name]:17.3f}" for c in columns))
    for category in AGENT:
        print(f"{category + ' process':40s}" + "".join(f"{results[c][1][category]:17.3f}" for c in columns))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--language", default=ScoresConfig.language, choices=["en", "zh", "all"], help="Task language.")
    main(ScoresConfig(language=parser.parse_args().language))
