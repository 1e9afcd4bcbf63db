"""A short supervised warm start on gold conversations (loss on assistant tokens only).

A randomly initialised policy never produces a well-formed tool call, so every GRPO group
would score 0 and nothing would be learned. A few hundred SFT steps make the micro model
succeed on some tasks some of the time: the regime where the curriculum matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from peft import PeftModel
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from envsched_gym.rl.trajectories import Conversation


@dataclass
class Example:
    """One tokenized conversation and its loss mask (1 on assistant tokens)."""

    input_ids: list[int]
    assistant_mask: list[int]


def tokenize_conversations(tokenizer: PreTrainedTokenizerBase, conversations: list[Conversation], max_length: int) -> list[Example]:
    """Tokenize with the chat template's ``{% generation %}`` mask; longer ones are cut at ``max_length``."""
    out = []
    for conv in conversations:
        enc = tokenizer.apply_chat_template(
            conv.messages, tools=conv.tools or None, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        ids, mask = list(enc["input_ids"]), list(enc["assistant_masks"])
        if not any(mask):
            raise ValueError("the chat template marks no assistant tokens; it needs {% generation %} blocks for SFT")
        out.append(Example(ids[:max_length], mask[:max_length]))
    return out


def collate(examples: list[Example], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ``(input_ids, attention_mask, labels)``; labels are -100 outside assistant tokens and padding."""
    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    for row, e in enumerate(examples):
        n = len(e.input_ids)
        ids[row, :n] = torch.tensor(e.input_ids)
        attention[row, :n] = 1
        labels[row, :n] = torch.where(torch.tensor(e.assistant_mask) == 1, torch.tensor(e.input_ids), -100)
    return ids, attention, labels


PLAIN_HEAD_MODELS = frozenset({"llama", "mistral", "qwen2", "qwen3"})
"""Model types whose logits are the LM head's projection of the last hidden state, nothing more
(no soft-capping or logit scale): :func:`assistant_loss` may project only the labelled positions."""


def assistant_loss(model: PreTrainedModel, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The model's mean next-token cross-entropy over the labelled positions (``labels`` as for ``model(labels=...)``).

    For :data:`PLAIN_HEAD_MODELS` only the labelled positions go through the LM head. The model's
    own ``labels=`` loss projects every position onto the vocabulary, though only the assistant's
    tokens (a fifth of a ToolWorld conversation; the rest is the system prompt and tool results)
    are scored: SmolLM2's 49k-word head over a whole batch is a fifth of the step's FLOPs and
    most of its memory. Same loss and gradients up to float rounding (``tests/rl/test_sft.py``).
    """
    base = model.get_base_model() if isinstance(model, PeftModel) else model
    if base.config.model_type not in PLAIN_HEAD_MODELS:
        return model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
    hidden = base.get_decoder()(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    targets = labels[:, 1:]
    scored = targets != -100
    logits = base.get_output_embeddings()(hidden[:, :-1][scored])
    return F.cross_entropy(logits.float(), targets[scored])


def sft_warm_start(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    conversations: list[Conversation],
    steps: int,
    lr: float = 3e-3,
    batch_size: int = 8,
    max_length: int = 2048,
    seed: int = 0,
    bf16: bool = False,
) -> list[float]:
    """Train ``model``'s trainable parameters in place for ``steps`` AdamW steps; returns every step's loss.

    ``bf16`` runs the forward and backward passes under bfloat16 autocast (about twice the speed
    on a CPU with AMX or AVX512-BF16; the weights and optimizer stay fp32).
    """
    examples = tokenize_conversations(tokenizer, conversations, max_length)
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    device = next(model.parameters()).device
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10) * max(0.05, 1 - s / max(steps, 1)))
    model.train()
    losses = []
    for _ in tqdm(range(steps), desc="SFT warm start", unit="step", leave=False):
        chosen = rng.choice(len(examples), size=min(batch_size, len(examples)), replace=False)
        ids, attention, labels = collate([examples[i] for i in chosen], tokenizer.pad_token_id)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = assistant_loss(model, ids.to(device), attention.to(device), labels.to(device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses
