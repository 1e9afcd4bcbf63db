"""Fixtures of the RL tests: the Toy family and a micro Qwen3 trained on its gold conversations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from toy import register_toy  # noqa: E402

import envsched_gym  # noqa: E402
from envsched_gym.rl.micro import MicroSize, build_micro_qwen3  # noqa: E402
from envsched_gym.rl.trajectories import gold_conversations  # noqa: E402
from envsched_gym.suite import Suite  # noqa: E402

TINY = MicroSize(vocab_size=600, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, intermediate_size=64)


@pytest.fixture(scope="session")
def toy_suite() -> Suite:
    """The Toy family's training split."""
    register_toy()
    return envsched_gym.suite("Toy", split="train")


@pytest.fixture(scope="session")
def micro_dir(toy_suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight micro Qwen3 saved with save_pretrained (no SFT: fast)."""
    return build_micro_qwen3(list(gold_conversations(toy_suite)), tmp_path_factory.mktemp("micro"), TINY, sft_steps=0, seed=0)
