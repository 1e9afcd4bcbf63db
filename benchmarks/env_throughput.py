"""Environment throughput on ToolWorld: ``ToolUseEnv`` versus the same work done by hand.

Both sides replay the same pre-rendered assistant messages (every task's gold solution, in
Qwen3's wire format) on one CPU core and do the same work per message: parse the tool calls,
validate each against its JSON schema, execute it on a fresh world, render the results, and,
at the end of the episode, score it with the task's verifier. The direct side calls the parts
(``parse_tool_calls``, ``ToolBox.check``, ``world.call``, the scripted user, the verifier)
itself and keeps only the episode record the verifier reads (assistant messages and call
records); the env side goes through ``gym.make`` / ``reset`` / ``step``, which also keeps the
whole transcript (tool and user messages) and returns an ``info`` dict with the new chat
messages and the tool schemas at every step. The overhead is the price of that bookkeeping.

A step is one assistant message. Gold end states are computed in a warm-up pass (the adapter
caches one per task, as a GRPO group of rollouts shares it). Times are the process's CPU time
(``time.process_time``), so other load on the machine does not count; the two sides alternate
and each keeps the best of ``repeats`` passes over the tasks.

Run: ``python benchmarks/env_throughput.py [--tasks 2000 --repeats 3 --cpu 0]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym

import envsched_gym
from envsched_gym.declarations import TaskSpec
from envsched_gym.episode import CallRecord, Episode, Message
from envsched_gym.parsing import parse_tool_calls
from envsched_gym.rendering import render_tool_results, render_turn, result_text
from envsched_gym.validation import jsonable
from envsched_gym.world import ToolError

GYM_ID = "envsched/ToolWorld-v0"


@dataclass
class ThroughputConfig:
    """Benchmark options.

    Attributes:
        tasks: Number of ToolWorld tasks to replay (``0``: all of them).
        repeats: Timed passes per side; the best pass is reported.
        cpu: Core to pin the process to (``-1``: do not pin).
    """

    tasks: int = 0
    repeats: int = 3
    cpu: int = 0


def run_env(env: gym.Env, episodes: list[tuple[str, list[str]]]) -> tuple[int, float]:
    """Replay ``episodes`` through the gymnasium env; return (steps, mean reward)."""
    steps, total = 0, 0.0
    for task_id, actions in episodes:
        env.reset(options={"task_id": task_id})
        for action in actions:
            _, reward, terminated, truncated, _ = env.step(action)
            steps += 1
            if terminated or truncated:
                total += float(reward)
                break
    return steps, total / len(episodes)


def run_direct(adapter: envsched_gym.Adapter, index: object, episodes: list[tuple[TaskSpec, list[str]]]) -> tuple[int, float]:
    """The same work without ``ToolUseEnv``; return (steps, mean reward)."""
    steps, total = 0, 0.0
    for task, actions in episodes:
        env_spec = index.envs[task.env_id]  # type: ignore[attr-defined]
        world, verifier = adapter.make_world(task), adapter.make_verifier(task)
        tools = world.tools()
        toolbox, signatures = index.toolbox(tools), index.signatures(tools)  # type: ignore[attr-defined]
        user, episode = adapter.make_user(task), Episode(task=task, env=env_spec)
        user.start(task)
        for action in actions:
            steps += 1
            parsed = parse_tool_calls(action, signatures=signatures)
            episode.messages.append(Message("assistant", parsed.content, tool_calls=parsed.calls))
            if parsed.calls:
                render_tool_results([_run_call(world, toolbox, call, episode) for call in parsed.calls])
                continue
            verifier.on_turn_end(episode, world)
            if user.reply(episode).stop:
                episode.termination = "agent"
                total += verifier.score(episode, world).reward
                break
            episode.turn += 1
    return steps, total / len(episodes)


def _run_call(world: envsched_gym.World, toolbox: object, call: envsched_gym.ToolCall, episode: Episode) -> str:
    error = toolbox.check(call)  # type: ignore[attr-defined]
    if error is None:
        try:
            output = result_text(jsonable(world.call(call.name, call.arguments)))
        except ToolError as exc:
            output = f"Error: {exc}"
    else:
        output = error
    spec = toolbox.specs.get(call.name)  # type: ignore[attr-defined]
    episode.calls.append(
        CallRecord(
            episode.turn, len(episode.messages), call, output, error is None and not output.startswith("Error:"), bool(spec and spec.write)
        )
    )
    return output


def _timed(fn: Callable[[], tuple[int, float]]) -> tuple[float, int, float]:
    start = time.process_time()
    steps, reward = fn()
    return time.process_time() - start, steps, reward


def main(config: ThroughputConfig) -> dict[str, float]:
    """Run the benchmark, print the table and return the figures."""
    if config.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {config.cpu})
    env = gym.make(GYM_ID)
    core = env.unwrapped
    adapter, index = core.adapter, core.index
    ids = index.ids("all")[: config.tasks or None]
    tasks = [index.get(i)[0] for i in ids]
    rendered = [[render_turn(t) for t in task.solution] for task in tasks]
    for task in tasks:
        adapter.gold_state(task)
    env_runs, direct_runs = [], []
    for _ in range(config.repeats):
        env_runs.append(_timed(lambda: run_env(env, list(zip(ids, rendered, strict=True)))))
        direct_runs.append(_timed(lambda: run_direct(adapter, index, list(zip(tasks, rendered, strict=True)))))
    env_time, env_steps, env_reward = min(env_runs)
    direct_time, direct_steps, direct_reward = min(direct_runs)
    overhead = env_time / direct_time - 1
    rows = [
        ("ToolUseEnv (gym.make)", env_steps, env_time, env_reward),
        ("direct (parse+check+call+verify)", direct_steps, direct_time, direct_reward),
    ]
    print(
        f"ToolWorld throughput: {len(ids)} episodes, best of {config.repeats}, CPU affinity {sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else 'n/a'}"
    )
    print(f"{'path':<34} {'steps':>7} {'cpu s':>8} {'steps/s':>9} {'us/step':>8} {'episodes/s':>10} {'reward':>7}")
    for name, steps, seconds, reward in rows:
        print(
            f"{name:<34} {steps:>7} {seconds:>8.3f} {steps / seconds:>9.0f} {1e6 * seconds / steps:>8.1f} {len(ids) / seconds:>10.0f} {reward:>7.3f}"
        )
    print(f"wrapper overhead: {100 * overhead:+.1f}% (env time / direct time - 1)")
    return {
        "env_steps_per_s": env_steps / env_time,
        "direct_steps_per_s": direct_steps / direct_time,
        "overhead": overhead,
        "env_reward": env_reward,
        "direct_reward": direct_reward,
    }


def _parse_args() -> ThroughputConfig:
    defaults = ThroughputConfig()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=defaults.tasks, help="tasks to replay (0: all)")
    parser.add_argument("--repeats", type=int, default=defaults.repeats, help="timed passes per side (best is kept)")
    parser.add_argument("--cpu", type=int, default=defaults.cpu, help="core to pin to (-1: no pinning)")
    args = parser.parse_args()
    return ThroughputConfig(tasks=args.tasks, repeats=args.repeats, cpu=args.cpu)


if __name__ == "__main__":
    main(_parse_args())
