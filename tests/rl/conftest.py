"""Fixtures of the RL tests: the Toy family and a micro Qwen3 trained on its gold conversations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from toy import TINY, register_toy

import envsched_gym
from envsched_gym.rl.micro import build_micro_qwen3
from envsched_gym.rl.trajectories import gold_conversations
from envsched_gym.suite import Suite


@pytest.fixture(scope="session")
def toy_suite() -> Suite:
    """The Toy family's training split."""
    register_toy()
    return envsched_gym.suite("Toy", split="train")


@pytest.fixture(scope="session")
def micro_dir(toy_suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight micro Qwen3 saved with save_pretrained (no SFT: fast)."""
    return build_micro_qwen3(list(gold_conversations(toy_suite)), tmp_path_factory.mktemp("micro"), TINY, sft_steps=0, seed=0)
