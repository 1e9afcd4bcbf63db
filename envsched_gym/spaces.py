"""Gymnasium spaces for free text (observations and actions are strings)."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

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


# AsyncVectorEnv passes observations through shared memory. Gymnasium stores Text as indices
# into the space's character set, which fails on any other character, and reads it back once, as
# a snapshot. A UnicodeText slot holds the string's length and then its UTF-32 code units, and
# reading gives a live view that decodes on access (a deep copy, which AsyncVectorEnv returns by
# default, is a plain tuple of str, as SyncVectorEnv returns).


class SharedText(Sequence[str]):
    """The strings in a UnicodeText shared-memory buffer, decoded when read."""

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        row = self._rows[index]
        return row[1 : 1 + row[0]].tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedText({tuple(self)!r})"


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    if not space.contains(value):
        raise ValueError(f"observation must be a str of at most {space.max_length} characters, got {type(value).__name__} {str(value)[:80]!r}")
    slot = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * (space.max_length + 1) :]
    codes = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    slot[0] = len(codes)
    slot[1 : 1 + len(codes)] = codes


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedText:
    return SharedText(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length + 1)))
