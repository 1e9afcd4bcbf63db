"""Checked reading of saved scheduler states.

A state comes from a checkpoint file, so it may be torn, edited by hand or saved over another
suite. :class:`StateReader` checks every key (none missing, none unknown) and every value (shape,
numeric dtype, integrality, finiteness, bounds) and raises a ``ValueError`` that names the key,
what it expected and what it found. Schedulers read their whole state through it before they
assign anything, so a refused state leaves the scheduler as it was.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import numpy as np

_FIX = "load a state saved by state_dict() of the same scheduler over the same suite, or start without it"


class StateReader:
    """Typed, checked access to one saved state (a dict).

    Args:
        state: The saved state.
        owner: What the state belongs to, for messages (``"the 'plr' scheduler's state"``).
        keys: Exactly the keys the state must have.
        sizes: What the expected shapes count, for messages (``"400 tasks in 12 environments"``).
        prefix: Dotted path of ``state`` inside the outer state (``"predictor."``).
    """

    def __init__(self, state: Any, owner: str, keys: Iterable[str], sizes: str = "", prefix: str = "") -> None:
        self.owner, self.sizes, self.prefix = owner, sizes, prefix
        if not isinstance(state, Mapping):
            raise ValueError(f"{owner}: '{prefix.rstrip('.') or 'state'}' must be a dict, found {type(state).__name__}; {_FIX}")
        expected = list(keys)
        missing = [k for k in expected if k not in state]
        unknown = sorted(str(k) for k in state if k not in expected)
        if missing or unknown:
            parts = [f"{kind} key(s) {[prefix + k for k in keys]}" for kind, keys in (("missing", missing), ("unknown", unknown)) if keys]
            raise ValueError(f"{owner}: {' and '.join(parts)} (expected {[prefix + k for k in expected]}); {_FIX}")
        self.state = state

    def raw(self, key: str) -> Any:
        """The value of ``key`` unchecked (for values checked by their own consumer)."""
        return self.state[key]

    def nested(self, key: str, keys: Iterable[str]) -> StateReader:
        """A reader of the dict under ``key`` (messages name ``key.inner``)."""
        return StateReader(self.state[key], self.owner, keys, self.sizes, f"{self.prefix}{key}.")

    def integer(self, key: str, minimum: int | None = None) -> int:
        """An integer (not a bool) of at least ``minimum``."""
        value = self.state[key]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            self.fail(key, f"must be an integer, found {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be at least {minimum}, found {value}")
        return int(value)

    def number(self, key: str, minimum: float | None = None, maximum: float | None = None) -> float:
        """A finite real number within ``[minimum, maximum]``."""
        value = self.state[key]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
            self.fail(key, f"must be a finite number, found {value!r}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(key, f"must lie in [{minimum}, {maximum}], found {value}")
        return float(value)

    def array(
        self, key: str, shape: tuple[int, ...], integer: bool = False, nullable: bool = False, minimum: float | None = None, positive: bool = False,
    ) -> np.ndarray:  # fmt: skip
        """A numeric array of exactly ``shape`` (float64, or int64 when ``integer``), finite everywhere.

        Args:
            key: The key of the array.
            shape: Its required shape (``-1``: any length along that axis).
            integer: Entries must be integers.
            nullable: ``None`` entries (1-D only) are allowed and read as NaN.
            minimum: Smallest allowed entry.
            positive: Entries must be greater than zero.
        """
        value = self.state[key]
        nulls: np.ndarray | bool = False
        if nullable and isinstance(value, list | tuple):
            nulls = np.array([v is None for v in value], dtype=bool)
            value = [np.nan if v is None else v for v in value]
        try:
            array = np.asarray(value)
        except ValueError:
            self.fail(key, f"is a ragged sequence, expected a numeric array of shape {shape}")
        if array.ndim != len(shape) or any(want not in (-1, got) for want, got in zip(shape, array.shape, strict=False)):
            self.fail(key, f"has shape {array.shape}, expected {shape}" + (f" (this scheduler has {self.sizes})" if self.sizes else ""))
        if array.size == 0:
            array = np.zeros(array.shape, dtype=np.int64)
        elif array.dtype.kind not in "iuf":
            self.fail(key, f"must hold numbers, found dtype {array.dtype} (first entries: {array.ravel()[:3].tolist()})")
        if integer and array.dtype.kind == "f":
            self.fail(key, "must hold integers, found floating-point entries")
        values = array.astype(np.int64 if integer else np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(values) | nulls)
            if minimum is not None:
                bad |= values < minimum
            if positive:
                bad |= values <= 0
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            rule = "finite" + (f" and at least {minimum}" if minimum is not None else "") + (" and positive" if positive else "")
            self.fail(key, f"must be {rule}; entry {at[0] if len(at) == 1 else list(at)} is {values[at]}")
        return values

    def series(self, key: str, count: int, longest: int, minimum: float | None = None) -> list[list[float]]:
        """``count`` lists of at most ``longest`` finite numbers each (per-environment windows)."""
        value = self.state[key]
        if not isinstance(value, list | tuple) or len(value) != count:
            found = f"length {len(value)}" if isinstance(value, list | tuple) else f"type {type(value).__name__}"
            self.fail(
                key, f"has {found}, expected a list of {count} series" + (f" (this scheduler has {self.sizes})" if self.sizes else "")
            )
        out = []
        for i, item in enumerate(value):
            name = f"{key}[{i}]"
            if not isinstance(item, list | tuple) or len(item) > longest:
                found = f"length {len(item)}" if isinstance(item, list | tuple) else f"type {type(item).__name__}"
                self.fail(name, f"has {found}, expected a list of at most {longest} numbers")
            out.append(StateReader({name: item}, self.owner, [name], self.sizes, self.prefix).array(name, (-1,), minimum=minimum).tolist())
        return out

    def fail(self, key: str, problem: str) -> NoReturn:
        """Raise the ``ValueError`` for ``key``."""
        raise ValueError(f"{self.owner}: '{self.prefix}{key}' {problem}; {_FIX}")
