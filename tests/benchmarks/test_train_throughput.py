"""train_throughput.py's generation rows: under autocast, storing the frozen weights in bf16 plays the same greedy episodes."""

from __future__ import annotations

import pytest

from benchmarks.train_throughput import ThroughputConfig, measure_generation
from envsched_gym.rl.micro import MicroSize, build_micro_qwen3
from envsched_gym.rl.tasks import select_tasks
from envsched_gym.rl.trajectories import gold_conversations


@pytest.fixture(scope="module")
def toolworld_micro(tmp_path_factory: pytest.TempPathFactory) -> str:
    tasks = select_tasks("ToolWorld", "train", 1, 8, 0)
    size = MicroSize(vocab_size=800, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128)
    return str(build_micro_qwen3(list(gold_conversations(tasks)), tmp_path_factory.mktemp("micro"), size, sft_steps=0, seed=0))


def test_frozen_bf16_rollouts_equal_casting_at_each_forward(toolworld_micro: str):
    cfg = ThroughputConfig(model=toolworld_micro, tasks=2, num_generations=2, max_new_tokens=12, temperature=0.0)
    cast = measure_generation(cfg, True, "compact", "autocast")
    stored = measure_generation(cfg, True, "compact", "autocast-frozen-bf16")
    keys = ("generated_tokens", "tokens", "agent_steps", "params")
    assert {k: cast[k] for k in keys} == {k: stored[k] for k in keys}
    assert stored["generated_tokens"] > 0


def test_an_unknown_precision_names_the_choices(toolworld_micro: str):
    with pytest.raises(SystemExit, match="unknown precision 'fp16'; choose one of"):
        measure_generation(ThroughputConfig(model=toolworld_micro, tasks=1, num_generations=1), True, "compact", "fp16")
