"""Malformed and adversarial outputs never execute anything and never raise."""

from __future__ import annotations

import os
import subprocess

import pytest
from envsched_gym.envs.bfcl.backends import BFCLWorld

from envsched_gym.declarations import ToolCall
from envsched_gym.env import ToolUseEnv

ATTACKS = [
    "__import__('os').system('x')",
    "[__import__('os').system('x')]",
    "[ls(a=__import__('os').system('x'))]",
    "[cd(folder=open('/etc/passwd').read())]",
    "[eval('1+1')]",
    "[exec('import os')]",
    "[_load_scenario(scenario={})]",
    "[ls.__globals__(a=1)]",
    '<tool_call>{"name": "ls", "arguments": {"a": tru</tool_call>',
    '<tool_call>{"name": "__import__", "arguments": {"name": "os"}}</tool_call>',
    '<tool_call>{"name": "_load_scenario", "arguments": {"scenario": {}}}</tool_call>',
    '<tool_call>{"name": "__init__", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "cd", "arguments": "{\\"folder\\": \\"__import__(\'os\').system(\'x\')\\"}"}</tool_call>',
    '<tool_call>{"name": "no_such_function", "arguments": {"x": 1}}</tool_call>',
    '<tool_call>["not", "an", "object"]</tool_call>',
    '{"tool_calls": [{"function": {"name": "system", "arguments": "{\\"command\\": \\"x\\"}"}}]}',
    '{"tool_calls": [{"function": "oops"}]}',
    "[" * 5000 + "]" * 5000,
    "[ls(a=" + "[" * 3000 + "]" * 3000 + ")]",
    "<think>" + "x" * 10000,
    "",
]


@pytest.fixture()
def no_exec(monkeypatch):
    """Make any process spawn fail the test."""

    def forbidden(*args, **kwargs):
        raise AssertionError(f"tried to run {args!r}")

    for module, name in ((os, "system"), (os, "popen"), (subprocess, "Popen"), (subprocess, "run")):
        monkeypatch.setattr(module, name, forbidden)


@pytest.mark.parametrize("category", ["simple_python", "live_irrelevance", "parallel_multiple", "multi_turn_base", "multi_turn_miss_func"])
def test_attacks_never_execute_or_raise(bfcl, no_exec, category):
    gym_id = f"envsched/BFCL-{category}-v0"
    env = ToolUseEnv(bfcl, gym_id)
    task_id = next(t.task_id for t in bfcl.tasks("all") if t.metadata["category"] == category)
    for attack in ATTACKS:
        env.reset(seed=0, options={"task_id": task_id})
        before = env.world.state() if isinstance(env.world, BFCLWorld) else None
        _, reward, terminated, truncated, info = env.step(attack)
        assert isinstance(reward, float)
        if before is not None:
            assert env.world.state() == before, attack
        elif category != "live_irrelevance":
            assert reward == 0.0 and terminated


def test_world_dispatches_only_declared_functions(bfcl):
    task = next(t for t in bfcl.tasks("all") if t.metadata["category"] == "multi_turn_base")
    world = bfcl.make_world(task)
    declared = {t.name for t in world.tools()}
    assert set(world._owner) <= declared
    for name in ("_load_scenario", "__init__", "__class__", "eval", "__import__", "system"):
        assert world.execute(ToolCall(name, {})).startswith("Error during execution: name")
