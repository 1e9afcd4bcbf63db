"""Environment throughput on ToolWorld: ``ToolUseEnv`` versus the same work done by hand.

All sides replay the same pre-rendered assistant messages (every task's gold solution, in
Qwen3's wire format) on one CPU core and do the same work per message: parse the tool calls,
validate each against its JSON schema, execute it on a fresh world, render the results, and,
at the end of the episode, score it with the task's verifier.

* ``direct`` calls those parts itself (``parse_tool_calls``, ``ToolBox.check``, the world, the
  scripted user, the verifier) and keeps only the episode record the verifier reads (assistant
  messages and call records). It is the floor: the work without a transcript to prompt the
  model with.
* ``loop`` is ``direct`` plus what a hand-written rollout loop needs to give the same outputs
  as the env: the chat transcript (system, user and tool messages) and the episode and
  per-turn step caps. A test checks that its transcripts and call records are the env's,
  message for message.
* ``env`` goes through ``gym.make`` / ``reset`` / ``step``, which keeps the transcript, applies
  the limits and returns an ``info`` dict (new messages, tool schemas, parse result, outcome)
  at every step.

The wrapper overhead is ``env`` over ``loop``: the same outputs with and without
``ToolUseEnv``. ``env`` over ``direct`` is printed beside it: that adds the cost of keeping
the transcript at all.

A step is one assistant message. Gold end states are computed in a warm-up pass (the adapter
caches one per task, as a GRPO group of rollouts shares it). Times are the process's CPU time
(``time.process_time``). The tasks are cut into chunks; every chunk is timed on each side back
to back, in an order that cycles through all permutations of the sides, so that slow spells
of a shared machine fall on all sides; an overhead is the median over chunks of the per-chunk
time ratio.

Run: ``python benchmarks/env_throughput.py [--tasks 2000 --repeats 5 --chunk 100 --cpu 0]``.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
    """The same work without ``ToolUseEnv``; return (steps, mean reward).

    It keeps the messages a verifier reads (the system prompt, the user's messages and the tool
    results: ToolWorld's ``grounded`` block checks the answer's numbers against them), not the
    step caps."""
    steps, total = 0, 0.0
    for task, actions in episodes:
        world, verifier, user, episode, toolbox, signatures = _start(adapter, index, task)
        episode.messages += [{"role": "system", "content": episode.env.system_prompt}, {"role": "user", "content": user.start(task)}]
        world.begin_turn(0)
        for n, action in enumerate(actions, 1):
            steps += 1
            parsed = parse_tool_calls(action, signatures=signatures)
            episode.messages.append(Message.assistant(parsed.content, calls=parsed.calls))
            if parsed.calls:
                outputs = [_run_call(world, toolbox, call, episode, n) for call in parsed.calls]
                episode.messages += [{"role": "tool", "content": o, "name": c.name} for o, c in zip(outputs, parsed.calls, strict=True)]
                render_tool_results(outputs)
                continue
            verifier.on_turn_end(episode, world)
            reply = user.reply(episode)
            if reply.stop:
                episode.termination = "agent"
                total += verifier.score(episode, world).reward
                break
            episode.turn += 1
            world.begin_turn(episode.turn)
            episode.messages.append({"role": "user", "content": reply.content})
    return steps, total / len(episodes)


def run_loop(
    adapter: envsched_gym.Adapter, index: object, episodes: list[tuple[TaskSpec, list[str]]], keep: list[Episode] | None = None
) -> tuple[int, float]:
    """``run_direct`` plus what a hand-written rollout loop needs to give the env's outputs: the
    episode and per-turn step caps (the transcript, which the model is prompted with, ``run_direct``
    keeps too: the verifier reads it). ``keep`` collects the episodes (a test compares them with the env's)."""
    steps, total = 0, 0.0
    for task, actions in episodes:
        world, verifier, user, episode, toolbox, signatures = _start(adapter, index, task)
        spec, transcript = episode.env, episode.messages
        transcript += [{"role": "system", "content": spec.system_prompt}, {"role": "user", "content": user.start(task)}]
        world.begin_turn(0)
        in_turn = 0
        for n, action in enumerate(actions, 1):
            steps += 1
            in_turn += 1
            parsed = parse_tool_calls(action, signatures=signatures)
            transcript.append(Message.assistant(parsed.content, calls=parsed.calls))
            if parsed.calls:
                outputs = [_run_call(world, toolbox, call, episode, n) for call in parsed.calls]
                transcript += [{"role": "tool", "content": o, "name": c.name} for o, c in zip(outputs, parsed.calls, strict=True)]
                render_tool_results(outputs)
            else:
                verifier.on_turn_end(episode, world)
                reply = user.reply(episode)
                if reply.stop:
                    episode.termination = "agent"
                    total += verifier.score(episode, world).reward
                    break
                episode.turn += 1
                in_turn = 0
                world.begin_turn(episode.turn)
                transcript.append({"role": "user", "content": reply.content})
            if n >= spec.max_steps or (spec.max_steps_per_turn is not None and in_turn >= spec.max_steps_per_turn):
                episode.termination = "max_steps"
                total += verifier.score(episode, world).reward
                break
        if keep is not None:
            keep.append(episode)
    return steps, total / len(episodes)


def _start(adapter: envsched_gym.Adapter, index: object, task: TaskSpec) -> tuple[Any, ...]:
    """A by-hand episode of ``task``: world, verifier, user, episode record, validators, signatures."""
    world = adapter.make_world(task)
    tools = world.tools()
    episode = Episode(task=task, env=index.envs[task.env_id])  # type: ignore[attr-defined]
    return world, adapter.make_verifier(task), adapter.make_user(task), episode, index.toolbox(tools), index.signatures(tools)  # type: ignore[attr-defined]


def replay_inputs(index: object, ids: list[str]) -> tuple[list[tuple[str, list[str]]], list[tuple[TaskSpec, list[str]]]]:
    """The gold turns of tasks ``ids`` in Qwen3 wire format, keyed by task id (for the env) and
    by task (for the by-hand sides)."""
    tasks = [index.get(i)[0] for i in ids]  # type: ignore[attr-defined]
    rendered = [[render_turn(t) for t in task.solution] for task in tasks]
    return list(zip(ids, rendered, strict=True)), list(zip(tasks, rendered, strict=True))


def _run_call(world: envsched_gym.World, toolbox: object, call: envsched_gym.ToolCall, episode: Episode, step: int) -> str:
    error = toolbox.check(call)  # type: ignore[attr-defined]
    output = error if error is not None else execute(world, call)
    spec = toolbox.specs.get(call.name)  # type: ignore[attr-defined]
    episode.calls.append(CallRecord(episode.turn, step, call, output, error is None and not output.startswith("Error:"), bool(spec and spec.write)))
    return output


def _timed(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _paired_chunks(config: ThroughputConfig, sides: dict[str, Callable[[int, int], object]], n: int) -> dict[str, list[float]]:
    """CPU seconds of every side on every chunk of episodes, every pass.

    A chunk runs on all sides back to back, so slow spells of a shared machine fall on all of
    them, and callers compare chunk by chunk. The order cycles through every permutation of
    the sides: each side comes first, and comes right after each other side, equally often
    (the side that runs second on a chunk finds its data in cache; with a mere rotation, one
    side would always follow the same other side).
    """
    orders = list(itertools.permutations(sides))
    times: dict[str, list[float]] = {name: [] for name in sides}
    chunks = range(0, n, config.chunk)
    for repeat in range(config.repeats):
        for k, lo in enumerate(chunks):
            hi = min(lo + config.chunk, n)
            for name in orders[(repeat * len(chunks) + k) % len(orders)]:
                times[name].append(_timed(lambda: sides[name](lo, hi)))  # noqa: B023
    return times


def _overhead(over: list[float], base: list[float]) -> tuple[float, float, float]:
    """Median and quartiles over chunks of ``over / base - 1``."""
    ratios = sorted(a / b for a, b in zip(over, base, strict=True))
    q1, q3 = (ratios[int(q * (len(ratios) - 1))] - 1 for q in (0.25, 0.75))
    return statistics.median(ratios) - 1, q1, q3


def main(config: ThroughputConfig) -> dict[str, float]:
    """Run the benchmark, print the table and return the figures."""
    if config.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {config.cpu})
    env = gym.make(GYM_ID)
    core = env.unwrapped
    adapter, index = core.adapter, core.index
    ids = index.ids("all")[: config.tasks or None]
    env_episodes, direct_episodes = replay_inputs(index, ids)
    runs: dict[str, Callable[[int, int], tuple[int, float]]] = {
        "env": lambda lo, hi: run_env(env, env_episodes[lo:hi]),
        "loop": lambda lo, hi: run_loop(adapter, index, direct_episodes[lo:hi]),
        "direct": lambda lo, hi: run_direct(adapter, index, direct_episodes[lo:hi]),
    }
    # Warm-up pass: fills the per-task gold-state cache and checks that all sides score alike.
    checks = {name: run(0, len(ids)) for name, run in runs.items()}
    # The suite and the caches are long-lived: keep them out of the cyclic collector, so that a
    # full collection over them does not land on one side's chunk at random.
    gc.collect()
    gc.freeze()
    try:
        times = _paired_chunks(config, runs, len(ids))
    finally:
        gc.unfreeze()
    labels = {"env": "ToolUseEnv (gym.make)", "loop": "loop (env's outputs, by hand)", "direct": "direct (bare: no step caps)"}
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "n/a"
    print(f"ToolWorld throughput: {len(ids)} episodes, {config.repeats} passes in chunks of {config.chunk}, CPU affinity {affinity}")
    print(f"{'path':<34} {'steps':>7} {'cpu s':>8} {'steps/s':>9} {'us/step':>8} {'episodes/s':>10} {'reward':>7}")
    figures: dict[str, float] = {}
    for name, (n_steps, reward) in checks.items():
        seconds = sum(times[name]) / config.repeats
        figures[f"{name}_steps_per_s"], figures[f"{name}_reward"] = n_steps / seconds, reward
        print(
            f"{labels[name]:<34} {n_steps:>7} {seconds:>8.3f} {n_steps / seconds:>9.0f} {1e6 * seconds / n_steps:>8.1f} {len(ids) / seconds:>10.0f} {reward:>7.3f}"
        )
    n_chunks = len(times["env"])
    print(f"env time / by-hand time - 1, median over {n_chunks} chunks [quartiles]:")
    for name, base, what in (("overhead", "loop", "wrapper overhead (vs loop, same outputs)"), ("overhead_vs_direct", "direct", "env over direct (caps + wrapper)")):
        mid, q1, q3 = _overhead(times["env"], times[base])
        figures[name], figures[f"{name}_q1"], figures[f"{name}_q3"] = mid, q1, q3
        print(f"  {what:<42} {100 * mid:+6.1f}%  [{100 * q1:+.1f}% .. {100 * q3:+.1f}%]")
    return figures


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
