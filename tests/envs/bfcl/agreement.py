"""Generated model outputs for the agreement test: BFCL gold calls and perturbations of them.

Every output is built from BFCL's own ground truth (never from a model), so the official
multi-turn checker may execute the call strings made from it.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envsched_gym import ToolCall

Turns = list[list[ToolCall]]


@dataclass
class Output:
    """One generated output: which perturbation made it, and its calls per turn."""

    kind: str
    turns: Turns


def _changed(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.randint(1, 9)
    if isinstance(value, float):
        return value + 1.5
    if isinstance(value, str):
        return value + rng.choice([" extra", "2", "_x"]) if value else "x"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        return {**value, "extra_key": 1}
    return "changed"


def _drop(turns: Turns, rng: random.Random, names: list[str]) -> bool:
    full = [t for t in turns if t]
    if not full:
        return False
    turn = rng.choice(full)
    turn.pop(rng.randrange(len(turn)))
    return True


def _change_arg(turns: Turns, rng: random.Random, names: list[str]) -> bool:
    calls = [c for t in turns for c in t if c.arguments]
    if not calls:
        return False
    call = rng.choice(calls)
    key = rng.choice(sorted(call.arguments))
    call.arguments[key] = _changed(call.arguments[key], rng)
    return True


def _swap(turns: Turns, rng: random.Random, names: list[str]) -> bool:
    long = [t for t in turns if len(t) >= 2]
    if not long:
        return False
    turn = rng.choice(long)
    i = rng.randrange(len(turn) - 1)
    turn[i], turn[i + 1] = turn[i + 1], turn[i]
    return True


def _extra(turns: Turns, rng: random.Random, names: list[str]) -> bool:
    full = [t for t in turns if t]
    if not full:
        return False
    turn = rng.choice(full)
    turn.insert(rng.randrange(len(turn) + 1), copy.deepcopy(rng.choice(turn)))
    return True


def _wrong_function(turns: Turns, rng: random.Random, names: list[str]) -> bool:
    calls = [c for t in turns for c in t]
    if not calls:
        return False
    call = rng.choice(calls)
    others = [n for n in names if n != call.name]
    call.name = rng.choice(others) if others else call.name + "_v2"
    return True


def _retyped(value: Any) -> Any:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return float(value) if value % 2 else str(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() else str(value)
    if isinstance(value, str):
        return int(value) if value.lstrip("-").isdigit() else [value]
    return str(value)


def _retype(turns: Turns, rng: random.Random, names: list[str]) -> bool:
    calls = [c for t in turns for c in t if c.arguments]
    if not calls:
        return False
    call = rng.choice(calls)
    key = rng.choice(sorted(call.arguments))
    call.arguments[key] = _retyped(call.arguments[key])
    return True


PERTURBATIONS: dict[str, Callable[[Turns, random.Random, list[str]], bool]] = {
    "drop": _drop, "change_arg": _change_arg, "swap": _swap, "extra": _extra, "wrong_function": _wrong_function,
    "retype": _retype,
}  # fmt: skip


def outputs_for(gold: Turns, names: list[str], rng: random.Random) -> list[Output]:
    """The gold output plus every perturbation that applies to it."""
    out = [Output("gold", copy.deepcopy(gold))]
    for kind, perturb in PERTURBATIONS.items():
        turns = copy.deepcopy(gold)
        if perturb(turns, rng, names):
            out.append(Output(kind, turns))
    return out


def call_string(call: ToolCall) -> str:
    """A call in BFCL's python syntax (``repr`` of JSON values is a Python literal)."""
    return f"{call.name}(" + ", ".join(f"{k}={v!r}" for k, v in call.arguments.items()) + ")"
