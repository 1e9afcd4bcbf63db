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
import gc
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym

import envsched_gym
from envsched_gym.declarations import TaskSpec
from envsched_gym.env import execute
from envsched_gym.episode import CallRecord, Episode, Message
from envsched_gym.parsing import parse_tool_calls
from envsched_gym.rendering import render_tool_results, render_turn

GYM_ID = "envsched/ToolWorld-v0"


@dataclass
class ThroughputConfig:
    """Benchmark options.

    Attributes:
        tasks: Number of ToolWorld tasks to replay (``0``: all of them).
        repeats: Timed passes over the tasks.
        chunk: Episodes per chunk; each chunk is timed on both sides back to back.
        cpu: Core to pin the process to (``-1``: do not pin).
    """

    tasks: int = 0
    repeats: int = 3
    chunk: int = 100
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
        world.begin_turn(0)
        for action in actions:
            steps += 1
            parsed = parse_tool_calls(action, signatures=signatures)
            episode.messages.append(Message.assistant(parsed.content, tool_calls=parsed.calls))
            if parsed.calls:
                render_tool_results([_run_call(world, toolbox, call, episode) for call in parsed.calls])
                continue
            verifier.on_turn_end(episode, world)
            if user.reply(episode).stop:
                episode.termination = "agent"
                total += verifier.score(episode, world).reward
                break
            episode.turn += 1
            world.begin_turn(episode.turn)
    return steps, total / len(episodes)


def _run_call(world: envsched_gym.World, toolbox: object, call: envsched_gym.ToolCall, episode: Episode) -> str:
    error = toolbox.check(call)  # type: ignore[attr-defined]
    output = error if error is not None else execute(world, call)
    spec = toolbox.specs.get(call.name)  # type: ignore[attr-defined]
    episode.calls.append(
        CallRecord(
            episode.turn, len(episode.messages), call, output, error is None and not output.startswith("Error:"), bool(spec and spec.write)
        )
    )
    return output


def _timed(fn: Callable[[], tuple[int, float]]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _paired_passes(config: ThroughputConfig, env_side: Callable[[int, int], object], direct_side: Callable[[int, int], object], n: int) -> tuple[list[float], list[float]]:
    """CPU seconds of each side on each chunk of episodes, chunk by chunk, every pass.

    The two sides of a chunk run back to back, first one then the other in alternation, so
    slow spells of a shared machine fall on both; the caller compares them chunk by chunk.
    """
    env_times, direct_times = [], []
    for repeat in range(config.repeats):
        for k, lo in enumerate(range(0, n, config.chunk)):
            hi = min(lo + config.chunk, n)
            if (repeat + k) % 2 == 0:
                e, d = _timed(lambda: env_side(lo, hi)), _timed(lambda: direct_side(lo, hi))  # noqa: B023
            else:
                d, e = _timed(lambda: direct_side(lo, hi)), _timed(lambda: env_side(lo, hi))  # noqa: B023
            env_times.append(e)
            direct_times.append(d)
    return env_times, direct_times


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
    env_episodes, direct_episodes = list(zip(ids, rendered, strict=True)), list(zip(tasks, rendered, strict=True))
    # Warm-up pass: fills the per-task gold-state cache and checks that both sides score alike.
    steps, env_reward = run_env(env, env_episodes)
    direct_steps, direct_reward = run_direct(adapter, index, direct_episodes)
    # The suite and the caches are long-lived: keep them out of the cyclic collector, so that a
    # full collection over them does not land on one side's chunk at random.
    gc.collect()
    gc.freeze()
    try:
        env_times, direct_times = _paired_passes(
            config,
            lambda lo, hi: run_env(env, env_episodes[lo:hi]),
            lambda lo, hi: run_direct(adapter, index, direct_episodes[lo:hi]),
            len(ids),
        )
    finally:
        gc.unfreeze()
    ratios = sorted(e / d for e, d in zip(env_times, direct_times, strict=True))
    overhead = statistics.median(ratios) - 1
    low, high = (ratios[int(q * (len(ratios) - 1))] - 1 for q in (0.25, 0.75))
    env_time, direct_time = sum(env_times) / config.repeats, sum(direct_times) / config.repeats
    rows = [
        ("ToolUseEnv (gym.make)", steps, env_time, env_reward),
        ("direct (parse+check+call+verify)", direct_steps, direct_time, direct_reward),
    ]
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "n/a"
    print(f"ToolWorld throughput: {len(ids)} episodes, {config.repeats} passes in chunks of {config.chunk}, CPU affinity {affinity}")
    print(f"{'path':<34} {'steps':>7} {'cpu s':>8} {'steps/s':>9} {'us/step':>8} {'episodes/s':>10} {'reward':>7}")
    for name, n_steps, seconds, reward in rows:
        print(
            f"{name:<34} {n_steps:>7} {seconds:>8.3f} {n_steps / seconds:>9.0f} {1e6 * seconds / n_steps:>8.1f} {len(ids) / seconds:>10.0f} {reward:>7.3f}"
        )
    print(
        f"wrapper overhead: {100 * overhead:+.1f}% (median over {len(ratios)} paired chunks of env time / direct time - 1;"
        f" quartiles {100 * low:+.1f}% .. {100 * high:+.1f}%; ratio of totals {100 * (env_time / direct_time - 1):+.1f}%)"
    )
    return {
        "env_steps_per_s": steps / env_time,
        "direct_steps_per_s": direct_steps / direct_time,
        "overhead": overhead,
        "overhead_q1": low,
        "overhead_q3": high,
        "env_reward": env_reward,
        "direct_reward": direct_reward,
    }


def _parse_args() -> ThroughputConfig:
    defaults = ThroughputConfig()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=defaults.tasks, help="tasks to replay (0: all)")
    parser.add_argument("--repeats", type=int, default=defaults.repeats, help="timed passes over the tasks")
    parser.add_argument("--chunk", type=int, default=defaults.chunk, help="episodes per paired chunk")
    parser.add_argument("--cpu", type=int, default=defaults.cpu, help="core to pin to (-1: no pinning)")
    args = parser.parse_args()
    return ThroughputConfig(tasks=args.tasks, repeats=args.repeats, chunk=args.chunk, cpu=args.cpu)


if __name__ == "__main__":
    main(_parse_args())
