"""Round bookkeeping and the TRL rollout function: grouping, effective ratio, reward reporting."""

from __future__ import annotations

import json
from collections import defaultdict
from types import SimpleNamespace

import pytest
from toy import GoldGenerator
from transformers import AutoTokenizer

from envsched_gym.curriculum import make_scheduler
from envsched_gym.rl.feedback import RoundLogger, group_rollouts, round_record
from envsched_gym.rl.generation import Generated, SamplingConfig
from envsched_gym.rl.grpo import EnvironmentRollouts, env_reward
from envsched_gym.rl.rollout import EnvPool, run_rollouts
from envsched_gym.rl.sampler import CurriculumSampler


def test_groups_must_be_one_task_each():
    groups = group_rollouts(["a", "a", "b", "b"], ["E", "E", "F", "F"], [1, 0, 1, 1], [True, False, True, True], 2)
    assert [(g.task_id, g.rewards) for g in groups] == [("a", [1, 0]), ("b", [1, 1])]
    with pytest.raises(ValueError, match="mix tasks"):
        group_rollouts(["a", "b", "b", "b"], ["E"] * 4, [0] * 4, [False] * 4, 2)
    with pytest.raises(ValueError, match="do not split"):
        group_rollouts(["a"] * 3, ["E"] * 3, [0] * 3, [False] * 3, 2)
    with pytest.raises(ValueError, match="3 malformed flags for 4 rollouts"):
        group_rollouts(["a"] * 4, ["E"] * 4, [0] * 4, [False] * 4, 2, [False] * 3)


def test_round_record_effective_ratio_shares_and_calibration():
    groups = group_rollouts(["a"] * 2 + ["b"] * 2 + ["c"] * 2, ["E", "E", "E", "E", "F", "F"], [1, 0, 1, 1, 0, 0], [1, 0, 1, 1, 0, 0], 2)
    record = round_record(3, groups, {"variance": [0.3, 0.1, 0.0], "mean": [0.5, 0.9, 0.1]})
    assert record.effective_ratio == pytest.approx(1 / 3)
    assert record.env_share == {"E": pytest.approx(2 / 3), "F": pytest.approx(1 / 3)}
    assert record.group_variance == [0.25, 0.0, 0.0] and record.reward == pytest.approx(0.5)
    assert record.spearman_variance == pytest.approx(0.866, abs=1e-3)


def test_reward_function_reports_the_environment_reward():
    assert env_reward(["0", "1"], ["x", "y"], env_reward=[1.0, 0.0], env_success=[1.0, 0.0], trainer_state=None) == [1.0, 0.0]


def _trainer() -> SimpleNamespace:
    """The parts of a TRL trainer the rollout function touches, on one process."""
    accelerator = SimpleNamespace(is_main_process=True, num_processes=1, process_index=0)
    return SimpleNamespace(model=SimpleNamespace(training=True), use_vllm=False, accelerator=accelerator, _metrics={"train": defaultdict(list)})


def test_rollout_func_binds_rolls_out_and_feeds_back(toy_suite, micro_dir, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    sampler = CurriculumSampler(make_scheduler("random", toy_suite, seed=0), 2, 2, repeat_count=1, num_rounds=3)
    node = next(n for n in toy_suite if n.env.env_id == "Toy-copy")  # its gold turns: a success there, a failure elsewhere
    rollouts = EnvironmentRollouts(EnvPool(toy_suite), tokenizer, SamplingConfig(), 1000, RoundLogger(sampler, tmp_path / "m.jsonl"), 2,
                                   generator=GoldGenerator(tokenizer, node.task.solution))  # fmt: skip
    trainer = _trainer()
    out = rollouts(["0", "0", "1", "1"], trainer)
    tasks = sampler.decisions[0]
    assert set(out) >= {"prompt_ids", "completion_ids", "logprobs", "env_mask", "env_reward"}
    assert [len(m) for m in out["env_mask"]] == [len(c) for c in out["completion_ids"]]
    assert all(0 in m and 1 in m for m in out["env_mask"])
    direct = run_rollouts([t for t in tasks for _ in range(2)], EnvPool(toy_suite), tokenizer, GoldGenerator(tokenizer, node.task.solution), 1000)
    assert out["env_reward"] == [r.reward for r in direct]
    assert out["completion_ids"] == [r.completion_ids for r in direct]
    assert sampler.pending[0] == [(t, [out["env_reward"][2 * i]] * 2) for i, t in enumerate(tasks)]
    record = json.loads((tmp_path / "m.jsonl").read_text())
    assert record["round"] == 0 and record["tasks"] == tasks and record["group_rewards"] == [[r] * 2 for r in out["env_reward"][::2]]
    assert rollouts.round == 1


def test_every_rollouts_final_answer_is_logged_with_its_reward(toy_suite, micro_dir, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    sampler = CurriculumSampler(make_scheduler("random", toy_suite, seed=0), 2, 2, repeat_count=1, num_rounds=3)
    node = next(n for n in toy_suite if n.env.env_id == "Toy-copy")
    rollouts = EnvironmentRollouts(EnvPool(toy_suite), tokenizer, SamplingConfig(), 1000, RoundLogger(sampler, tmp_path / "m.jsonl"), 2,
                                   generator=GoldGenerator(tokenizer, node.task.solution), answers_path=tmp_path / "answers.jsonl")  # fmt: skip
    trainer = _trainer()
    out = [rollouts(["0", "0", "1", "1"], trainer) for _ in range(2)]
    lines = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert [r["round"] for r in lines] == [0] * 4 + [1] * 4
    assert [r["task_id"] for r in lines] == [t for r in (0, 1) for t in sampler.decisions[r] for _ in range(2)]
    assert [r["reward"] for r in lines] == out[0]["env_reward"] + out[1]["env_reward"]
    assert {r["answer"] for r in lines} == {node.task.solution[-1].content}  # the gold's last turn, as generated
    assert all(r["seed"] == r["round"] for r in lines)  # a round's episodes reset with the round's index
    assert all(len(r["actions"]) == len(node.task.solution) and r["actions"][-1] == r["answer"] for r in lines)


@pytest.mark.parametrize("merge_lora", [True, False])
def test_local_generation_gets_the_merge_switch_and_the_trainers_autocast_dtype(toy_suite, micro_dir, tmp_path, merge_lora):
    import torch

    from envsched_gym.rl.generation import HFGenerator

    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    sampler = CurriculumSampler(make_scheduler("random", toy_suite, seed=0), 2, 2, repeat_count=1, num_rounds=3)
    rollouts = EnvironmentRollouts(EnvPool(toy_suite), tokenizer, SamplingConfig(), 1000, RoundLogger(sampler, tmp_path / "m.jsonl"), 2, merge_lora=merge_lora)
    model = object()
    for bf16, dtype in ((True, torch.bfloat16), (False, None)):
        trainer = SimpleNamespace(model=model, use_vllm=False, args=SimpleNamespace(bf16=bf16), accelerator=SimpleNamespace(unwrap_model=lambda m: m))
        generator = rollouts._generator(trainer)
        assert isinstance(generator, HFGenerator) and generator.model is model
        assert (generator.merge_lora, generator.compute_dtype) == (merge_lora, dtype)


class ScriptedAnswers:
    """Answers the i-th context of each call with ``texts[i % len(texts)]``: a final answer that ends the episode."""

    def __init__(self, tokenizer, texts: list[str]) -> None:
        self.tokenizer, self.texts = tokenizer, texts

    def generate(self, contexts):
        ids = [self.tokenizer(self.texts[i % len(self.texts)], add_special_tokens=False)["input_ids"] for i in range(len(contexts))]
        return [Generated([*x, self.tokenizer.eos_token_id]) for x in ids]


def test_malformed_turns_are_counted_in_the_round_record_and_the_steps_log(toy_suite, micro_dir, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    sampler = CurriculumSampler(make_scheduler("random", toy_suite, seed=0), 2, 2, repeat_count=1, num_rounds=3)
    texts = ["Done.", "<tool_response>\nDone.", "<tool_call>\n<tool_call>\n<tool_call>", "Done."]
    rollouts = EnvironmentRollouts(EnvPool(toy_suite), tokenizer, SamplingConfig(), 1000, RoundLogger(sampler, tmp_path / "m.jsonl"), 2,
                                   generator=ScriptedAnswers(tokenizer, texts))  # fmt: skip
    trainer = _trainer()
    rollouts(["0", "0", "1", "1"], trainer)
    assert json.loads((tmp_path / "m.jsonl").read_text())["malformed"] == 2
    assert trainer._metrics["train"]["malformed"] == [0.5]
    groups = group_rollouts(["a", "a"], ["E", "E"], [0, 0], [False, False], 2)  # no flags given: not known, not zero
    assert round_record(0, groups, None).malformed is None


def test_a_format_penalty_shapes_the_training_reward_and_leaves_the_curriculums(toy_suite, micro_dir, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    texts = ["Done.", "<tool_response>\nDone.", "<tool_call>\n<tool_call>\n<tool_call>", "Done."]
    outs, logs, samplers, varied = [], [], [], []
    for penalty in (0.0, 0.5):
        sampler = CurriculumSampler(make_scheduler("random", toy_suite, seed=0), 2, 2, repeat_count=1, num_rounds=3)
        log = tmp_path / f"m{penalty}.jsonl"
        rollouts = EnvironmentRollouts(EnvPool(toy_suite), tokenizer, SamplingConfig(), 1000, RoundLogger(sampler, log), 2,
                                       generator=ScriptedAnswers(tokenizer, texts), format_penalty=penalty)  # fmt: skip
        outs.append(rollouts(["0", "0", "1", "1"], _trainer())["env_reward"])
        logs.append(json.loads(log.read_text()))
        samplers.append(sampler.pending[0])
        varied.append(rollouts.varied_groups)
    verifier, trained = outs
    assert trained == [r - 0.5 * (i in (1, 2)) for i, r in enumerate(verifier)]  # rollouts 1 and 2 are the malformed ones
    assert logs[0]["group_rewards"] == logs[1]["group_rewards"] == [verifier[:2], verifier[2:]]
    assert samplers[0] == samplers[1]  # the curriculum sees the verifier's rewards either way
    assert verifier == [1.0, 1.0, 0.0, 0.0]  # a malformed success beside a clean one, a malformed failure beside a clean one
    assert (varied[0], varied[1]) == (0, 2)  # only the penalty tells them apart
    with pytest.raises(ValueError, match="format penalty must be a finite number >= 0"):
        EnvironmentRollouts(EnvPool(toy_suite), tokenizer, SamplingConfig(), 1000, RoundLogger(sampler, tmp_path / "x.jsonl"), 2, format_penalty=-0.1)
