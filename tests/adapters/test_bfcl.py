"""The BFCL adapter: registration, declarations, splits, data location, multi-turn protocol."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import envsched_gym
from envsched_gym.data import DataNotFoundError
from envsched_gym.declarations import TaskSpec
from envsched_gym.env import ToolUseEnv
from envsched_gym.registry import BFCL_CATEGORIES
from envsched_gym.rendering import render_turn


@pytest.fixture(scope="module")
def bfcl(benchmarks: Path):
    from envsched_gym.adapters.bfcl import BFCLAdapter

    return BFCLAdapter(data_dir=benchmarks)


def test_every_v3_category_is_registered():
    assert envsched_gym.registered_ids("BFCL") == sorted(f"envsched/BFCL-{c}-v0" for c in BFCL_CATEGORIES)
    assert len(BFCL_CATEGORIES) == 17


@pytest.mark.parametrize("category", BFCL_CATEGORIES)
def test_gym_make_and_env_checker(category, benchmarks: Path, monkeypatch):
    monkeypatch.setenv("ENVSCHED_BENCHMARKS", str(benchmarks))
    env = gym.make(f"envsched/BFCL-{category}-v0")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert isinstance(obs, str) and obs and info["tools"]


def test_declarations(bfcl):
    specs = {s.env_id: s for s in bfcl.env_specs()}
    assert len(specs) == 17
    base = specs["BFCL/multi_turn_base"]
    assert base.max_steps_per_turn == 21 and base.verifier_kind == "bfcl_multi_turn"
    assert {c.name for c in base.state_components} == {
        "GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI", "VehicleControlAPI",
    }  # fmt: skip
    assert all(t.parameters["type"] == "object" for t in base.tools)
    assert specs["BFCL/simple_java"].interaction == "single_response"
    assert specs["BFCL/irrelevance"].verifier_kind == "bfcl_irrelevance"
    assert specs["BFCL/live_relevance"].verifier_kind == "bfcl_relevance"


def test_tool_schemas_are_openai_form(bfcl):
    def types(node):
        yield node.get("type")
        for child in list(node.get("properties", {}).values()) + ([node["items"]] if "items" in node else []):
            yield from types(child)

    seen = Counter(t for task in bfcl.tasks("all") for tool in task.tools or [] for t in types(tool.parameters))
    assert set(seen) <= {"object", "string", "integer", "number", "boolean", "array", None}
    java = next(t for t in bfcl.tasks("all") if t.metadata["category"] == "simple_java")
    assert all(p["type"] == "string" for tool in java.tools for p in tool.parameters["properties"].values())


def test_task_counts_ids_and_split(bfcl):
    tasks = list(bfcl.tasks("all"))
    counts = Counter(t.metadata["category"] for t in tasks)
    assert counts["simple_python"] == 400 and counts["live_multiple"] == 1053 and counts["multi_turn_miss_param"] == 200
    assert len({t.task_id for t in tasks}) == len(tasks) == 4441
    test_share = sum(t.split == "test" for t in tasks) / len(tasks)
    assert 0.17 < test_share < 0.23
    assert {t.task_id for t in bfcl.tasks("test")} == {t.task_id for t in tasks if t.split == "test"}
    assert TaskSpec.from_json(tasks[-1].to_json()) == tasks[-1]


def test_missing_data_is_a_clear_error(tmp_path, monkeypatch):
    from envsched_gym.envs.bfcl import data

    monkeypatch.delenv("ENVSCHED_BENCHMARKS", raising=False)
    monkeypatch.setattr(data, "_installed_data_dir", lambda: None)
    monkeypatch.setattr(data, "benchmark_root", lambda: tmp_path)
    with pytest.raises(DataNotFoundError, match="pip install --no-deps bfcl-eval"):
        data.find_data_dir(tmp_path)


def test_data_from_benchmark_root_and_data_dir(bfcl, benchmarks: Path):
    from envsched_gym.envs.bfcl.data import find_data_dir

    assert find_data_dir(benchmarks) == find_data_dir(benchmarks / "bfcl" / "bfcl_eval" / "data") == bfcl.data_dir


def test_miss_func_adds_held_out_functions_at_their_turn(bfcl):
    task = next(t for t in bfcl.tasks("all") if t.task_id == "multi_turn_miss_func_0")
    env = ToolUseEnv(bfcl, "envsched/BFCL-multi_turn_miss_func-v0")
    env.reset(options={"task_id": task.task_id})
    names = lambda: {t.name for t in env.tools()}  # noqa: E731
    assert "sort" not in names()
    messages = [render_turn(turn) for turn in task.solution]
    observations = []
    for message in messages:
        observations.append(env.step(message)[0])
        if env.episode.turn == 3:
            break
    assert "sort" in names()
    assert observations[-1] == "I have updated some more functions you can choose from. What about now?"


def test_turn_step_limit_is_bfcls(bfcl):
    """20 steps with calls, then the reply that ends the turn; a 21st step with calls fails the entry."""
    env = ToolUseEnv(bfcl, "envsched/BFCL-multi_turn_base-v0")
    pwd = '<tool_call>{"name": "pwd", "arguments": {}}</tool_call>'
    env.reset(options={"task_id": "multi_turn_base_0"})
    for _ in range(20):
        env.step(pwd)
    _, _, terminated, truncated, _ = env.step("Done.")
    assert not (terminated or truncated) and env.episode.turn == 1
    env.reset(options={"task_id": "multi_turn_base_0"})
    for _ in range(21):
        _, reward, terminated, truncated, info = env.step(pwd)
    assert truncated and not terminated and reward == 0.0
    assert info["termination"] == "turn_limit"


def test_dense_turn_credit_is_reported_separately(bfcl):
    task = next(t for t in bfcl.tasks("all") if t.task_id == "multi_turn_base_0")
    env = ToolUseEnv(bfcl, "envsched/BFCL-multi_turn_base-v0")
    env.reset(options={"task_id": task.task_id})
    env.step(render_turn(task.solution[0]))
    env.step("Done.")
    for _ in range(len(task.user_turns) - 1):
        _, reward, terminated, _, info = env.step("I cannot do that.")
    assert terminated and reward == 0.0
    assert info["reward_breakdown"]["turn_pass_rate"] == pytest.approx(1 / sum(bool(g) for g in task.verifier.params["ground_truth"]))


def test_write_declarations_match_gold_state_changes(bfcl):
    """Every gold call that changes a backend's public state is declared a write tool (every 4th entry)."""
    import copy

    from envsched_gym.envs.bfcl.backends import BFCLWorld, public_attributes

    spec = next(s for s in bfcl.env_specs() if s.env_id == "BFCL/multi_turn_base")
    writes = {t.name for t in spec.tools if t.write}
    changed = set()
    for task in [t for t in bfcl.tasks("all") if t.metadata["category"] == "multi_turn_base"][::4]:
        world = BFCLWorld(bfcl._setup(task)[0])
        for call in (c for turn in task.solution for c in turn.tool_calls):
            owner = world.instances[world._owner[call.name]]
            before = copy.deepcopy(public_attributes(owner))
            world.execute(call)
            if public_attributes(owner) != before:
                changed.add(call.name)
    assert changed and changed <= writes


def test_installed_package_data_is_found_when_asked_for(monkeypatch):
    from envsched_gym.envs.bfcl import data

    installed = data._installed_data_dir()
    if installed is None:
        pytest.skip("bfcl-eval is not installed")
    monkeypatch.delenv("ENVSCHED_BENCHMARKS", raising=False)
    assert data.find_data_dir(data_source="package") == installed


@pytest.mark.parametrize(
    ("message", "reward"),
    [
        ("[calculate_triangle_area(10, 5)]", 1.0),
        ("[calculate_triangle_area(base=10, height=5, unit='units')]", 1.0),
        ('{"tool_calls": [{"function": {"name": "calculate_triangle_area", "arguments": "{\\"base\\": 10, \\"height\\": 5}"}}]}', 1.0),
        ("[calculate_triangle_area(5, 10)]", 0.0),
        ("The area is 25.", 0.0),
    ],
)
def test_single_turn_wire_formats(bfcl, message, reward):
    env = ToolUseEnv(bfcl, "envsched/BFCL-simple_python-v0")
    env.reset(options={"task_id": "simple_python_0"})
    _, got, terminated, _, _ = env.step(message)
    assert terminated and got == reward
