"""Multi-turn rollouts: the environment's tokens are masked out, the verifier's reward comes back."""

from __future__ import annotations

import pytest
from toy import GoldGenerator
from transformers import AutoTokenizer

from envsched_gym import render_turn
from envsched_gym.rl.rollout import EnvPool, run_rollouts


@pytest.fixture(scope="module")
def tokenizer(micro_dir):
    return AutoTokenizer.from_pretrained(micro_dir)


def _copy_task(toy_suite):
    return next(n for n in toy_suite if n.env.env_id == "Toy-copy")


def test_gold_policy_scores_one_and_masks_tool_results(toy_suite, tokenizer):
    node = _copy_task(toy_suite)
    gold = node.task.solution
    (r,) = run_rollouts([node.task_id], EnvPool(toy_suite), tokenizer, GoldGenerator(tokenizer, gold), max_completion_length=1000)
    assert (r.reward, r.success, r.termination) == (1.0, True, "agent")
    assert len(r.env_mask) == len(r.completion_ids)
    model_text = tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask, strict=True) if m])
    env_text = tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask, strict=True) if not m])
    assert model_text == "<|im_end|>".join(render_turn(t) for t in gold) + "<|im_end|>"
    assert env_text.count("<tool_response>") == 2 and "<tool_call>" not in env_text
    transcript = tokenizer.apply_chat_template(r.messages, tools=[t.openai_schema() for t in node.env.tools], tokenize=False)
    assert tokenizer.decode(r.prompt_ids + r.completion_ids) == transcript.rstrip("\n")


def test_a_group_is_independent_episodes_of_one_task(toy_suite, tokenizer):
    node = _copy_task(toy_suite)
    rs = run_rollouts([node.task_id] * 3, EnvPool(toy_suite), tokenizer, GoldGenerator(tokenizer, node.task.solution), 1000)
    assert [r.reward for r in rs] == [1.0, 1.0, 1.0]
    assert len({tuple(r.completion_ids) for r in rs}) == 1


def test_token_budget_cuts_the_episode_with_zero_reward(toy_suite, tokenizer):
    node = _copy_task(toy_suite)
    (r,) = run_rollouts([node.task_id], EnvPool(toy_suite), tokenizer, GoldGenerator(tokenizer, node.task.solution), 40)
    assert (r.reward, r.success, r.termination) == (0.0, False, "length")


def test_unfinished_message_is_closed_before_the_environment_answers(toy_suite, tokenizer):
    node = _copy_task(toy_suite)
    (r,) = run_rollouts([node.task_id], EnvPool(toy_suite), tokenizer, GoldGenerator(tokenizer, node.task.solution, cut=5), 200)
    first_env = r.env_mask.index(0)
    assert r.completion_ids[first_env] == tokenizer.eos_token_id
    assert r.reward == 0.0


def test_a_progress_bar_counts_finished_episodes_only_when_asked(toy_suite, tokenizer, capsys):
    node = _copy_task(toy_suite)
    gold = GoldGenerator(tokenizer, node.task.solution)
    run_rollouts([node.task_id] * 2, EnvPool(toy_suite), tokenizer, gold, 1000)
    assert capsys.readouterr().err == ""
    run_rollouts([node.task_id] * 2, EnvPool(toy_suite), tokenizer, GoldGenerator(tokenizer, node.task.solution), 1000, progress="held-out")
    err = capsys.readouterr().err
    assert "held-out" in err and "2/2" in err
