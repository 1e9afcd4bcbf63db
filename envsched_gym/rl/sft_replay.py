"""Replay of gold conversations during GRPO: a supervised term for skills that give no rollout signal.

GRPO learns only from groups whose rewards vary. A skill that the schedule seldom picks, or that
the policy seldom shows when it samples, gets little or no gradient, and training on the skills
that do vary can unlearn it. On the smol-cpu preset's ToolWorld pool, from the 16-step warm
start, EnvSched gave write tasks 4 and 7 of its 144 groups on seeds 2 and 3, and held-out
write success fell from 0.25 and 0.37 to 0.00 within 24 steps while look-ups rose; random, with
about half its groups on writes, kept 0.24 on seed 2 at step 12 (session 42, docs/training.md).
Adding the supervised loss on gold conversations of the training split to the policy-gradient
loss, as InstructGPT's PPO-ptx adds its pretraining loss, anchors what the warm start taught
whatever the schedule picks.

Each micro-batch of a GRPO step draws its own conversations, seeded by ``(seed, step, micro-batch)``,
so a resumed run draws what the uninterrupted one would have.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from envsched_gym.rl.sft import Example, assistant_loss, collate, tokenize_conversations
from envsched_gym.rl.trajectories import Conversation


def check_settings(weight: float, batch_size: int) -> None:
    """Refuse a weight that is not a finite number above 0 or a batch that is not a whole number >= 1 (``ValueError``)."""
    if not (weight > 0 and np.isfinite(weight)):
        raise ValueError(f"the SFT replay weight must be a finite number above 0, got {weight} (0 turns replay off: do not build it)")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"--sft-replay-batch must be a whole number of conversations >= 1, got {batch_size!r}")


@dataclass
class SFTReplay:
    """The replay term: ``weight`` x the mean assistant-token cross-entropy of ``batch_size`` gold conversations.

    Attributes:
        examples: The tokenized gold conversations to draw from.
        weight: The term's weight against the GRPO loss of the same micro-batch.
        batch_size: Conversations per micro-batch.
        pad_id: The tokenizer's padding id.
        seed: Seed of the draws (with the step and micro-batch index).
    """

    examples: list[Example]
    weight: float
    batch_size: int
    pad_id: int
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.examples:
            raise ValueError("SFT replay needs gold conversations, and the training tasks have none: train on tasks with gold solutions or turn replay off (--sft-replay 0)")
        check_settings(self.weight, self.batch_size)

    def draw(self, step: int, micro: int) -> list[int]:
        """Positions of the conversations that micro-batch ``micro`` of optimizer step ``step`` replays."""
        rng = np.random.default_rng([self.seed, step, micro])
        return rng.choice(len(self.examples), size=min(self.batch_size, len(self.examples)), replace=False).tolist()

    def loss(self, model: PreTrainedModel, step: int, micro: int) -> torch.Tensor:
        """The weighted loss of micro-batch ``micro`` of step ``step`` (call it under the trainer's autocast)."""
        device = next(model.parameters()).device
        ids, attention, labels = collate([self.examples[i] for i in self.draw(step, micro)], self.pad_id)
        return self.weight * assistant_loss(model, ids.to(device), attention.to(device), labels.to(device))


def build_replay(tokenizer: PreTrainedTokenizerBase, conversations: list[Conversation], weight: float, batch_size: int,
                 seed: int = 0, max_length: int = 2048) -> SFTReplay:  # fmt: skip
    """The replay term over ``conversations`` (tokenized once; each cut at ``max_length`` tokens)."""
    return SFTReplay(tokenize_conversations(tokenizer, conversations, max_length), weight, batch_size, tokenizer.pad_token_id, seed)
