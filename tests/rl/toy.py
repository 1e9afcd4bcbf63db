"""A procedural key-value family ("Toy") for the RL tests: three environments of different difficulty."""

from __future__ import annotations

import numpy as np

import envsched_gym
from envsched_gym import Adapter, AssistantTurn, EnvSpec, TaskSpec, ToolCall, ToolError, VerifierConfig, World, render_turn, tool
from envsched_gym.registry import _FAMILIES
from envsched_gym.rl.generation import Generated
from envsched_gym.rl.micro import MicroSize

KEYS = ["apple", "pear", "plum", "fig"]
TINY = MicroSize(vocab_size=600, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, intermediate_size=64)
"""A micro Qwen3 small enough for fast tests."""


class Store(World):
    """Integer counters by name."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {k: 0 for k in KEYS}

    @tool
    def get(self, key: str) -> int:
        """Read a counter.

        Args:
            key: Counter name.
        """
        if key not in self.values:
            raise ToolError(f"no counter '{key}'")
        return self.values[key]

    @tool(write=True)
    def put(self, key: str, value: int) -> str:
        """Set a counter.

        Args:
            key: Counter name.
            value: New value.
        """
        if key not in self.values:
            raise ToolError(f"no counter '{key}'")
        self.values[key] = value
        return "ok"


def make_tasks(n: int = 24, seed: int = 0) -> list[TaskSpec]:
    """``n`` tasks: one put (``Toy-put``), get then put (``Toy-copy``), or a question to answer without acting (``Toy-ask``)."""
    rng = np.random.default_rng(seed)
    tasks = []
    for i in range(n):
        key, other = rng.choice(KEYS, size=2, replace=False).tolist()
        value = int(rng.integers(1, 9))
        split = "heldout" if i % 6 == 5 else "train"
        if i % 4 == 3:
            tasks.append(TaskSpec(f"toy/{i}", "Toy-ask", f"Request {i}: is {key} tracked? Change nothing.", split=split,
                                  solution=[AssistantTurn("Yes.")], verifier=VerifierConfig("gold_state")))
        elif i % 2 == 0:
            calls = [AssistantTurn(tool_calls=[ToolCall("put", {"key": key, "value": value})]), AssistantTurn("Done.")]
            tasks.append(TaskSpec(f"toy/{i}", "Toy-put", f"Request {i}: set {key} to {value}.", solution=calls, split=split,
                                  verifier=VerifierConfig("gold_state")))
        else:
            state = {"values": {k: (value if k == other else 0) for k in KEYS}}
            calls = [AssistantTurn(tool_calls=[ToolCall("get", {"key": other})]),
                     AssistantTurn(tool_calls=[ToolCall("put", {"key": key, "value": value})]), AssistantTurn("Done.")]
            tasks.append(TaskSpec(f"toy/{i}", "Toy-copy", f"Request {i}: copy {other} into {key}.", initial_state=state, solution=calls,
                                  split=split, verifier=VerifierConfig("gold_state")))
    return tasks


class ToyAdapter(Adapter):
    """Three environments over one world: ``Toy-put``, ``Toy-copy`` and ``Toy-ask``."""

    family = "Toy"
    world = Store
    max_steps = 4

    def env_specs(self) -> list[EnvSpec]:
        base = super().env_specs()[0]
        return [EnvSpec.from_dict({**base.to_dict(), "env_id": name, "gym_id": f"envsched/{name}-v0"}) for name in ("Toy-put", "Toy-copy", "Toy-ask")]

    def tasks(self, split: str = "all") -> list[TaskSpec]:
        return [t for t in make_tasks() if split == "all" or t.split == split]


def register_toy() -> None:
    """Register the Toy family once per process."""
    if "Toy" not in _FAMILIES:
        envsched_gym.register_adapter(ToyAdapter())


class GoldGenerator:
    """Plays a task's gold turns: the n-th assistant message of a context is gold turn n."""

    def __init__(self, tokenizer, turns, cut: int | None = None):
        self.tokenizer, self.turns, self.cut = tokenizer, turns, cut
        self.marker = tokenizer("<|im_start|>assistant", add_special_tokens=False)["input_ids"]

    def generate(self, contexts):
        out = []
        for ctx in contexts:
            n = sum(ctx[i : i + len(self.marker)] == self.marker for i in range(len(ctx))) - 1
            ids = self.tokenizer(render_turn(self.turns[n]), add_special_tokens=False)["input_ids"] + [self.tokenizer.eos_token_id]
            out.append(Generated(ids[: self.cut] if self.cut else ids))
        return out
