"""Hostile-input fuzzing of registered environments.

:func:`fuzz_env` plays seeded episodes of actions a careless or adversarial policy can emit
(token soups, integers too long to print, floods of tags and calls, nesting, code injection,
schema-typed edge values for every tool of the task) and records, per step, any exception out
of ``step`` and its wall time. The code-injection payloads would create a sentinel file if any of
them ran; :class:`FuzzResult` says whether it exists. Use it on your own family before training::

    from envsched_gym.fuzz import fuzz_env
    result = fuzz_env("envsched/BugTracker-v0", actions=2000, seed=0)
    assert result.clean, result.summary()

``benchmarks/fuzz_report.py`` runs it over every registered id and prints the table of
``docs/reliability.md``; ``tests/fuzz`` runs it in the test suite.
"""

from __future__ import annotations

import gc
import json
import random
import resource
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

STEP_BUDGET_S = 1.0
"""A step that computes for longer than this (CPU seconds) counts as a stall."""
WALL_FACTOR = 5.0
"""A step whose wall time exceeds ``WALL_FACTOR`` budgets counts too, computing or not (a hang).
CPU time is the main measure because it does not grow when the machine is busy with other work."""

_TOKENS = [
    "<tool_call>", "</tool_call>", "<think>", "</think>", "{", "}", "[", "]", "(", ")", '"name"', '"arguments"', ":", ",",
    "=", '"', "'", "\\", "\n", " ", "null", "true", "1e999", "NaN", "-", "0x", "9" * 50, "tool_calls", "function", "```",
    "transferred", "human agent", "?", "\ud800", "\x00", "\u202e",
]  # fmt: skip


def _strings(sentinel: str) -> list[str]:
    """String arguments that break naive tools: sizes, encodings, paths, injections."""
    return [
        "", " ", "x" * 100_000, "\ud800", "\udfff\ud800", "\x00", "\u202e" * 50, "../../../../etc/passwd", "/" * 4096,
        "'; DROP TABLE users; --", "${jndi:ldap://x}", "{{7*7}}", "%s%s%s%n", "NaN", "Infinity", "-1", "9" * 5000,
        f"__import__('os').system('touch {sentinel}')", f"open('{sentinel}', 'w')", "é" * 1000,
        # what BFCL's Java/JavaScript literal readers and ACE's checkers match with regexes
        "new ArrayList<>(Arrays.asList(" * 2_000, "new HashMap<" * 2_000, "new int[]{" * 2_000, "[[" * 5_000, "{a:" * 5_000,
        "Missing necessary parameters(" * 2_000, "There is incorrect value(" * 2_000,
    ]  # fmt: skip


_INTS = [0, -1, 1, -(2**63), 2**63, 10**300, -(10**300), 10**4299, -(10**7), 10**6, 10**9]
_FLOATS = [0.0, -0.0, 1e308, -1e308, 5e-324, 1e-300, 123.456]


def _edge_value(rng: random.Random, schema: dict[str, Any], sentinel: str, depth: int = 0) -> Any:
    """A hostile value for a parameter of ``schema`` (right type or deliberately wrong)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if rng.random() < 0.2 or depth > 2:  # wrong type on purpose
        return rng.choice([None, True, [], {}, "", 10**400, [[[[]]]], {"a": {"b": {"c": None}}}])
    if kind == "integer":
        return rng.choice(_INTS)
    if kind == "number":
        return rng.choice(_FLOATS + _INTS)
    if kind == "boolean":
        return rng.choice([True, False, "true", 0])
    if kind == "array":
        item = _edge_value(rng, schema.get("items", {}), sentinel, depth + 1)
        return rng.choice([[], [item], [item] * 3, [rng.choice([0, "", None])] * 10_000])
    if kind == "object":
        props = schema.get("properties") or {"k": {"type": "string"}}
        return {k: _edge_value(rng, v, sentinel, depth + 1) for k, v in props.items()}
    return rng.choice(_strings(sentinel))


def _call_text(name: str, arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "</tool_call>"


def _functions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [t.get("function", t) for t in tools if isinstance(t, dict)]
    return out or [{"name": "missing_tool", "parameters": {"properties": {"x": {"type": "string"}}}}]


def _edge_call(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    function = rng.choice(_functions(tools))
    props = (function.get("parameters") or {}).get("properties") or {}
    args = {k: _edge_value(rng, v, sentinel) for k, v in props.items() if rng.random() < 0.9}
    if rng.random() < 0.2:
        args["unexpected_" + str(rng.randint(0, 9))] = rng.choice(_strings(sentinel))
    return _call_text(str(function.get("name")), args)


def _huge_int(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    name = str(rng.choice(_functions(tools)).get("name"))
    digits = "9" * rng.choice([4301, 5000, 50_000])
    return rng.choice([
        f'<tool_call>{{"name": "{name}", "arguments": {{"x": {digits}}}}}</tool_call>',
        f'{{"tool_calls": [{{"function": {{"name": "{name}", "arguments": "{{\\"x\\": {digits}}}"}}}}]}}',
        f"[{name}(x={digits})]", f"[{name}(x=0x{'f' * 20_000})]",
    ])  # fmt: skip


def _injection(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    name = str(rng.choice(_functions(tools)).get("name"))
    touch = f"__import__('os').system('touch {sentinel}')"
    return rng.choice([
        f"[{touch}]", f"[{name}(x={touch})]", f"[{name}(x=open('{sentinel}', 'w'))]", f"[{name}(x=(lambda: 1)())]",
        f"[{name}(x=exec(\"open('{sentinel}', 'w')\"))]", f"[{name}(**{{'x': 1}})]", f"[{name}(x=[i for i in range(10**9)])]",
        f"[{name}(x=eval('1'))]", f"[{name}.__class__.__bases__[0].__subclasses__()]",
        '<tool_call>{"name": "__import__", "arguments": {"name": "os"}}</tool_call>',
        f'<tool_call>{{"name": "{name}.__globals__", "arguments": {{}}}}</tool_call>',
    ])  # fmt: skip


def _soup(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    names = [str(f.get("name")) for f in _functions(tools)]
    return "".join(rng.choice(_TOKENS + names) for _ in range(rng.randint(1, 200)))


def _flood(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    name = str(rng.choice(_functions(tools)).get("name"))
    return rng.choice([
        "<think>" * 20_000, "<think>x" * 20_000, "transferred " * 8_000 + "?", "transferring to a human agent " * 1_000,
        _call_text(name, {}) * rng.choice([65, 1_000, 10_000]), "<tool_call>" * 20_000, "x" * 1_000_000,
        "Missing necessary parameters(" * 5_000, "new ArrayList<>(Arrays.asList(" * 5_000,
    ])  # fmt: skip


def _nesting(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    name = str(rng.choice(_functions(tools)).get("name"))
    depth = rng.choice([1_000, 100_000])
    lists, objects = "[" * depth + "1" + "]" * depth, '{"a": ' * depth + "1" + "}" * depth
    return rng.choice([
        f'<tool_call>{{"name": "{name}", "arguments": {{"x": {lists}}}}}</tool_call>',
        f'<tool_call>{{"name": "{name}", "arguments": {objects}}}</tool_call>',
        f"[{name}(x={lists})]", "(" * depth, "[" * depth,
    ])  # fmt: skip


def _wrong_shape(rng: random.Random, tools: list[dict[str, Any]], sentinel: str) -> str:
    name = str(rng.choice(_functions(tools)).get("name"))
    return rng.choice([
        '{"tool_calls": "x"}', '{"tool_calls": [1, 2]}', '{"function": {"name": 5}}', '[{"function": null}]',
        f'<tool_call>{{"name": "{name}", "arguments": [1, 2]}}</tool_call>', f'<tool_call>{{"name": "{name}", "arguments": "not json"}}</tool_call>',
        f'<tool_call>["{name}"]</tool_call>', '<tool_call>{"name": ""}</tool_call>', f"[{name}(1, 2, 3, 4, 5, 6, 7, 8, 9)]",
        f"```python\n[{name}(x=1)]\n```", f"{name}(x=1", "</think>" * 100 + "answer",
    ])  # fmt: skip


Generator = Callable[[random.Random, list[dict[str, Any]], str], str]
KINDS: dict[str, Generator] = {
    "edge_arguments": _edge_call, "huge_integer": _huge_int, "code_injection": _injection, "token_soup": _soup,
    "flood": _flood, "nesting": _nesting, "wrong_shape": _wrong_shape,
}  # fmt: skip
"""Kinds of hostile action, each a generator ``(rng, tool schemas, sentinel path) -> text``."""
_WEIGHTS = {"edge_arguments": 5, "huge_integer": 1, "code_injection": 1, "token_soup": 2, "flood": 1, "nesting": 1, "wrong_shape": 1}


@dataclass
class StepFailure:
    """One step that raised or ran over the budget."""

    task_id: str
    kind: str
    action: str
    seconds: float
    error: str = ""
    full_action: str = field(default="", repr=False)


@dataclass
class FuzzResult:
    """What :func:`fuzz_env` saw on one gymnasium id."""

    gym_id: str
    seed: int
    actions: int = 0
    episodes: int = 0
    exceptions: list[StepFailure] = field(default_factory=list)
    stalls: list[StepFailure] = field(default_factory=list)
    max_step_s: float = 0.0
    """The largest CPU time of one step."""
    max_step_wall_s: float = 0.0
    total_s: float = 0.0
    code_executed: bool = False
    peak_rss_growth_mb: float = 0.0
    warm_rss_mb: float | None = None
    """Peak RSS after the first fifth of the actions (the baseline of ``peak_rss_growth_mb``)."""
    by_kind: Counter = field(default_factory=Counter)
    slowest: list[tuple[float, str, str]] = field(default_factory=list)
    """The five slowest steps: ``(seconds, kind, task id)``."""
    task_ids: list[str] = field(default_factory=list)
    """Every task an episode was played on, in first-visit order."""

    @property
    def clean(self) -> bool:
        """No exception, no stall, no injected code run."""
        return not self.exceptions and not self.stalls and not self.code_executed

    def summary(self) -> str:
        """One line, plus the first failures."""
        line = (
            f"{self.gym_id}: {self.actions} actions in {self.episodes} episodes, {len(self.exceptions)} exceptions, "
            f"{len(self.stalls)} stalled steps (max {self.max_step_s:.3f} CPU s, {self.max_step_wall_s:.3f} s wall), code executed: {self.code_executed}, "
            f"peak RSS growth {self.peak_rss_growth_mb:.1f} MB"
        )
        worst = [f"  {f.kind} on {f.task_id} ({f.seconds:.2f} s): {f.error or f.action}" for f in (self.exceptions + self.stalls)[:5]]
        return "\n".join([line, *worst])


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def fuzz_env(
    gym_id: str,
    actions: int = 1000,
    seed: int = 0,
    steps_per_episode: int = 6,
    step_budget_s: float = STEP_BUDGET_S,
    make_kwargs: dict[str, Any] | None = None,
) -> FuzzResult:
    """Play ``actions`` hostile actions on ``gym_id`` in seeded episodes of up to ``steps_per_episode``.

    Args:
        gym_id: A registered id.
        actions: How many actions to play in total.
        seed: Seeds the task draws and the actions.
        steps_per_episode: Hostile steps before the next reset (an episode may end sooner).
        step_budget_s: A step computing longer than this (CPU seconds), or taking five times as long
            on the wall clock, is recorded as a stall.
        make_kwargs: Extra ``gym.make`` arguments.

    Everything alive once the environment is made (the benchmark data, and whatever else the
    process holds) is frozen out of the garbage collector while the actions run (``gc.freeze``):
    a full collection walks that heap in about 0.4 CPU s with every family loaded, and that walk
    is not the action's cost. What an action allocates is still collected and timed.
    """
    rng = random.Random(seed)
    result = FuzzResult(gym_id, seed)
    env = gym.make(gym_id, **(make_kwargs or {}))
    env.reset(seed=seed)  # loads the family's data before the heap is frozen
    gc.collect()
    gc.freeze()
    try:
        _play(env, result, rng, actions, steps_per_episode, step_budget_s)
    finally:
        gc.unfreeze()
    env.close()
    result.peak_rss_growth_mb = max(0.0, _peak_rss_mb() - (result.warm_rss_mb or _peak_rss_mb()))
    return result


def _play(env: gym.Env, result: FuzzResult, rng: random.Random, actions: int, steps_per_episode: int, step_budget_s: float) -> None:
    """The seeded episodes of hostile actions (see :func:`fuzz_env`)."""
    kinds, weights = list(_WEIGHTS), list(_WEIGHTS.values())
    with tempfile.TemporaryDirectory(prefix="envsched-fuzz-") as scratch:
        sentinel = str(Path(scratch) / "INJECTED")
        start = time.perf_counter()
        while result.actions < actions:
            _, info = env.reset(seed=rng.randrange(2**31))
            result.episodes += 1
            tools, task_id = info.get("tools") or [], str(info.get("task_id"))
            if task_id not in result.task_ids:
                result.task_ids.append(task_id)
            for _ in range(steps_per_episode):
                kind = rng.choices(kinds, weights)[0]
                action = KINDS[kind](rng, tools, sentinel)
                done = _step(env, result, task_id, kind, action, step_budget_s)
                if result.warm_rss_mb is None and result.actions >= max(1, actions // 5):
                    result.warm_rss_mb = _peak_rss_mb()
                if done or result.actions >= actions:
                    break
        result.total_s = time.perf_counter() - start
        result.code_executed = Path(sentinel).exists()


def _step(env: gym.Env, result: FuzzResult, task_id: str, kind: str, action: str, budget: float) -> bool:
    """One timed step; returns whether the episode is over (or broken by an exception)."""
    result.actions += 1
    result.by_kind[kind] += 1
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        _, _, terminated, truncated, _ = env.step(action)
    except Exception as exc:
        seconds = time.perf_counter() - start
        where = traceback.extract_tb(exc.__traceback__)[-1]
        error = f"{type(exc).__name__}: {str(exc)[:200]} at {Path(where.filename).name}:{where.lineno}"
        result.exceptions.append(StepFailure(task_id, kind, action[:120], seconds, error, action))
        return True
    wall, seconds = time.perf_counter() - start, time.process_time() - cpu_start
    result.max_step_s = max(result.max_step_s, seconds)
    result.max_step_wall_s = max(result.max_step_wall_s, wall)
    if len(result.slowest) < 5 or seconds > result.slowest[-1][0]:
        result.slowest = sorted([*result.slowest, (seconds, kind, task_id)], reverse=True)[:5]
    if seconds > budget or wall > WALL_FACTOR * budget:
        result.stalls.append(StepFailure(task_id, kind, action[:120], seconds, full_action=action))
    return bool(terminated or truncated)
