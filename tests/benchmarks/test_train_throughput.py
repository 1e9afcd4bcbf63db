"""train_throughput.py: under autocast, storing the frozen weights in bf16 plays the same greedy episodes; fp32 merged decoding
plays the same policy; the bf16 rows run only where bf16 is native."""

from __future__ import annotations

import pytest

from benchmarks import train_throughput
from benchmarks.train_throughput import ThroughputConfig, measure_generation
from envsched_gym.rl import precision
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


def test_fp32_merged_decoding_plays_the_episodes_of_peft_layers_in_fp32(toolworld_micro: str):
    cfg = ThroughputConfig(model=toolworld_micro, tasks=2, num_generations=2, max_new_tokens=12, temperature=0.0)
    plain, merged = measure_generation(cfg, True, "compact", "fp32"), measure_generation(cfg, True, "compact", "fp32-merged")
    assert (merged["generated_tokens"], merged["tokens"], merged["agent_steps"]) == (plain["generated_tokens"], plain["tokens"], plain["agent_steps"])


def _fake_spawn(cfg: ThroughputConfig, spec: dict) -> dict:
    """Canned results of every worker kind (the real ones are minutes each)."""
    if spec["kind"] == "matmul":
        return {"gflops": 100.0 if spec["dtype_name"] == "fp32" else 1.0}
    if spec["kind"] == "generation":
        return {"seconds": 10.0, "generated_tokens": 100, "tokens": 1000, "generated_per_s": 10.0, "agent_steps": 16, "params": 1e8, "peak_gb": 1.0}
    if spec["kind"] == "training" and spec["micro_batch"] == 16:
        return {"failed": "exit -9 (killed, e.g. out of memory)"}
    if spec["kind"] == "training":
        return {"seconds": 5.0, "tokens": 1000, "padded_tokens": 1100, "tokens_per_s": 200.0, "peak_gb": 2.0}
    return {"step_seconds": [50.0], "rollout_seconds": [20.0], "peak_gb": 3.0}


@pytest.mark.parametrize("native", [True, False])
def test_the_bf16_rows_run_only_where_bf16_is_native(native, monkeypatch, capsys):
    specs: list[dict] = []
    monkeypatch.setattr(train_throughput, "spawn", lambda cfg, spec, may_fail=False: specs.append(dict(spec)) or _fake_spawn(cfg, spec))
    monkeypatch.setattr(precision, "native_bf16", lambda: native)
    result = train_throughput.report(ThroughputConfig())
    out = capsys.readouterr().out
    autocast_rows = [s for s in specs if s.get("precision", "").startswith("autocast")]
    bf16_training = [s for s in specs if s["kind"] == "training" and s["bf16"]]
    assert (len(autocast_rows), len(bf16_training)) == ((3, 4) if native else (0, 0))
    assert ("bf16 autocast rows skipped" in out) is not native and result["native_bf16"] is native
    assert "fp32, LoRA merged for decoding" in out and "whole GRPO steps" in out
    assert "| micro-batch 16, " + ("bf16 autocast" if native else "fp32") + ", completion positions scored, sdpa | did not finish: exit -9" in out
