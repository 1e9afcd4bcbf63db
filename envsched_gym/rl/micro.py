"""The micro Qwen3: Qwen3's architecture at toy size, for end-to-end training on a CPU.

Random weights, a byte-level BPE tokenizer trained here on the suite's own text, and the
project's Qwen3 chat template with tools (:mod:`envsched_gym.rl.chat_template`). It is saved
with ``save_pretrained`` so trainers and evaluators load it through the same
``from_pretrained`` path as ``Qwen/Qwen3-8B``; nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

from envsched_gym.rl.chat_template import QWEN3_TOOL_TEMPLATE
from envsched_gym.rl.sft import sft_warm_start
from envsched_gym.rl.trajectories import Conversation

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
"""Control tokens, as in Qwen3 (never produced by splitting text)."""
MARKUP_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
"""Wire-format tags kept whole (added tokens that still decode as text, as in Qwen3)."""


@dataclass
class MicroSize:
    """Shape of the micro model (defaults: about 0.5M parameters, fast on two CPU cores).

    Attributes:
        vocab_size: Target BPE vocabulary (the trained tokenizer may come out smaller).
        hidden_size: Model width.
        num_hidden_layers: Decoder layers.
        num_attention_heads: Query heads.
        num_key_value_heads: Key/value heads (grouped-query attention, as in Qwen3).
        intermediate_size: MLP width.
        max_position_embeddings: Longest context in tokens.
    """

    vocab_size: int = 2048
    hidden_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    intermediate_size: int = 384
    max_position_embeddings: int = 8192


def render_corpus(conversations: Iterable[Conversation], tokenizer: PreTrainedTokenizerFast) -> list[str]:
    """Every conversation rendered with the chat template (the tokenizer's training text)."""
    return [tokenizer.apply_chat_template(c.messages, tools=c.tools or None, tokenize=False) for c in conversations]


def _template_only_tokenizer() -> PreTrainedTokenizerFast:
    """A tokenizer that only renders text with the chat template (used before BPE is trained)."""
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<|endoftext|>": 0}, unk_token="<|endoftext|>")))
    tok.chat_template = QWEN3_TOOL_TEMPLATE
    return tok


def train_tokenizer(conversations: list[Conversation], vocab_size: int = 2048) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on the rendered ``conversations``, with the chat template.

    Byte-level BPE covers every string, so text outside the training corpus still tokenizes.
    """
    texts = render_corpus(conversations, _template_only_tokenizer())
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(texts, trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", additional_special_tokens=SPECIAL_TOKENS[1:]
    )
    tok.add_tokens(MARKUP_TOKENS)
    tok.chat_template = QWEN3_TOOL_TEMPLATE
    tok.padding_side = "left"
    return tok


def build_model(tokenizer: PreTrainedTokenizerFast, size: MicroSize | None = None, seed: int = 0) -> Qwen3ForCausalLM:
    """A randomly initialised ``Qwen3ForCausalLM`` sized by ``size`` for ``tokenizer``."""
    size = size or MicroSize()
    fields = {k: v for k, v in asdict(size).items() if k != "vocab_size"}
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        head_dim=size.hidden_size // size.num_attention_heads,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        **fields,
    )
    torch.manual_seed(seed)
    return Qwen3ForCausalLM(config)


def save_micro(model: Qwen3ForCausalLM, tokenizer: PreTrainedTokenizerFast, out_dir: str | Path) -> Path:
    """``save_pretrained`` the model, its tokenizer and its generation defaults to ``out_dir``."""
    out = Path(out_dir)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_micro_qwen3(
    conversations: list[Conversation], out_dir: str | Path, size: MicroSize | None = None, sft_steps: int = 0, seed: int = 0
) -> Path:
    """Train the tokenizer, build the model, optionally warm-start it by SFT, and save it.

    Args:
        conversations: Gold conversations of the training split (tokenizer text and SFT data).
        out_dir: Where ``save_pretrained`` writes; load it back with ``AutoModelForCausalLM.from_pretrained``.
        size: Model shape.
        sft_steps: Supervised steps on ``conversations`` (0: random weights).
        seed: Seed of the weights and of the SFT batches.
    """
    if not conversations:
        raise ValueError("no gold conversations to train the micro model's tokenizer on; use a split whose tasks have gold solutions")
    size = size or MicroSize()
    tokenizer = train_tokenizer(conversations, size.vocab_size)
    model = build_model(tokenizer, size, seed)
    if sft_steps:
        sft_warm_start(model, tokenizer, conversations, sft_steps, seed=seed)
    return save_micro(model, tokenizer, out_dir)
