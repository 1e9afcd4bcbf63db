"""The replay term of GRPO: seeded draws per step and micro-batch, the weighted warm-start loss, refusals."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.sft import assistant_loss, collate
from envsched_gym.rl.sft_replay import SFTReplay, build_replay
from envsched_gym.rl.trajectories import gold_conversations


@pytest.fixture
def replay(micro_dir, toy_suite) -> SFTReplay:
    tokenizer = AutoTokenizer.from_pretrained(micro_dir)
    return build_replay(tokenizer, list(gold_conversations(toy_suite)), weight=0.5, batch_size=2, seed=3)


def test_draws_depend_on_seed_step_and_micro_batch_only(replay):
    again = SFTReplay(replay.examples, replay.weight, replay.batch_size, replay.pad_id, replay.seed)
    assert again.draw(4, 1) == replay.draw(4, 1)  # a resumed run draws what the uninterrupted one would
    draws = {tuple(replay.draw(step, micro)) for step in range(4) for micro in range(3)}
    assert len(draws) > 6  # not one fixed batch
    assert all(len(set(d)) == 2 for d in draws)


def test_the_loss_is_the_weighted_warm_start_loss_of_the_drawn_conversations(replay, micro_dir):
    model = AutoModelForCausalLM.from_pretrained(micro_dir, dtype=torch.float32)
    ids, attention, labels = collate([replay.examples[i] for i in replay.draw(2, 0)], replay.pad_id)
    expected = assistant_loss(model, ids, attention, labels)
    assert expected.item() > 0
    assert replay.loss(model, 2, 0).item() == pytest.approx(0.5 * expected.item(), rel=1e-6)


@pytest.mark.parametrize(("weight", "batch", "message"), [
    (0.0, 1, "above 0"), (float("nan"), 1, "above 0"), (1.0, 0, "whole number"), (1.0, True, "whole number"),
])  # fmt: skip
def test_a_weight_or_batch_that_cannot_work_is_refused(replay, weight, batch, message):
    with pytest.raises(ValueError, match=message):
        SFTReplay(replay.examples, weight, batch, replay.pad_id)


def test_replay_without_gold_conversations_is_refused(micro_dir):
    with pytest.raises(ValueError, match="have none"):
        build_replay(AutoTokenizer.from_pretrained(micro_dir), [], weight=1.0, batch_size=1)
