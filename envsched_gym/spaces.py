"""Gymnasium spaces for free text (observations and actions are strings)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Text

_SAMPLE_CHARSET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,?!'\"{}[]():<>/_-"


class UnicodeText(Text):
    """A :class:`~gymnasium.spaces.Text` that contains any string up to ``max_length``.

    Gymnasium's ``Text`` only contains strings over a fixed character set; tool-use text
    (Chinese ACEBench prompts, JSON, emoji) needs every Unicode character. Sampling draws
    from a printable ASCII set that includes JSON and tag punctuation.
    """

    def __init__(self, max_length: int = 1_000_000, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        """Any ``str`` no longer than ``max_length``."""
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length
