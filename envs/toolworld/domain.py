"""Domains and their seeded variants.

A :class:`Domain` bundles a world class with what the generator needs to know about it:
how to make a record, which fields a user may ask about, and its write actions. Every domain's
world has ``find_<noun>(name)`` and ``get_<noun>(<noun>_id)``. A :class:`Variant` is one
environment: the domain with seeded records, a tool subset and policy limits, all derived
from ``(domain, index, seed)`` so generation is deterministic.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envsched_gym.envs.toolworld.actions import Action, Record
from envsched_gym.envs.toolworld.records import RecordWorld

from envsched_gym.declarations import ToolSpec


@dataclass(frozen=True)
class Domain:
    """One ToolWorld domain.

    Attributes:
        name: Short name used in env ids (``inventory``).
        world: The world class whose ``@tool`` methods are the domain's tools.
        description: First line of the system prompt.
        words: Two word lists; record names are distinct pairs ``"<first> <second>"``.
        make_record: Builds a record's fields (``status`` included where actions need it).
        fields: ``(field, phrase)`` pairs a user may ask about.
        actions: The write tools the generator uses.
        extras: Read tools only some variants have (searches, listings).
        limits: Policy name -> inclusive range the variant's limit is drawn from.
    """

    name: str
    world: type[RecordWorld]
    description: str
    words: tuple[Sequence[str], Sequence[str]]
    make_record: Callable[[random.Random], Record]
    fields: tuple[tuple[str, str], ...]
    actions: tuple[Action, ...]
    extras: tuple[str, ...] = ()
    limits: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def noun(self) -> str:
        """Singular noun of a record (from the world class)."""
        return self.world.noun

    @property
    def find_tool(self) -> str:
        """Name of the look-up-by-name tool."""
        return f"find_{self.noun}"

    @property
    def get_tool(self) -> str:
        """Name of the read-a-record tool."""
        return f"get_{self.noun}"


@dataclass
class Variant:
    """One environment of a domain.

    Attributes:
        domain: The domain.
        index: Variant number within the domain (``ToolWorld/<domain>-<index>``).
        records: Initial records (id -> fields).
        actions: Write actions enabled in this variant.
        enabled: Names of every enabled tool.
        limits: Policy limits by action tool name.
        heldout: Whether the whole variant is held out of training.
    """

    domain: Domain
    index: int
    records: dict[str, Record]
    actions: tuple[Action, ...]
    enabled: tuple[str, ...]
    limits: dict[str, int]
    heldout: bool

    @property
    def env_id(self) -> str:
        """The environment id, ``ToolWorld/<domain>-<index>``."""
        return f"ToolWorld/{self.domain.name}-{self.index}"

    @property
    def state(self) -> dict[str, Any]:
        """The initial world state."""
        return {"records": self.records}

    def new_world(self) -> RecordWorld:
        """A fresh world in the initial state with the variant's tools."""
        world = self.domain.world(self.enabled)
        world.load_state(self.state)
        return world

    def tools(self) -> list[ToolSpec]:
        """The variant's tool list (the same object the world returns)."""
        return self.domain.world(self.enabled).tools()

    def system_prompt(self) -> str:
        """Domain description plus the variant's policies."""
        noun = self.domain.noun
        rules = [a.policy_text(self.limits[a.tool]) for a in self.actions if a.tool in self.limits]
        rules += [
            f"If a request does not say which {noun} it is about, ask the user which one before doing anything.",
            "Refuse a request that breaks a policy or a rule the tools enforce, and say why, quoting the relevant number or status.",
            "In your final reply, state every value the user asked for.",
        ]
        return self.domain.description + "\nPolicies:\n" + "\n".join(f"- {r}" for r in rules)


def build_variant(domain: Domain, index: int, seed: int, heldout: bool) -> Variant:
    """Variant ``index`` of ``domain``: 12 to 16 records, a tool subset and policy limits.

    Odd variants add the domain's extra read tools; every third variant (index 2, 5, ...)
    drops the domain's last write action when it has three or more.
    """
    rng = random.Random(zlib.crc32(f"{domain.name}/{index}/{seed}".encode()))
    first, second = domain.words
    pairs = [f"{a} {b}" for a in first for b in second]
    names = rng.sample(pairs, rng.randint(12, 16))
    prefix = domain.world.id_prefix
    records = {f"{prefix}-{i + 1:03d}": {"name": name, **domain.make_record(rng)} for i, name in enumerate(names)}
    actions = domain.actions[:-1] if index % 3 == 2 and len(domain.actions) >= 3 else domain.actions
    extras = domain.extras if index % 2 == 1 else ()
    enabled = (domain.find_tool, domain.get_tool, *extras, *(a.tool for a in actions))
    limits = {a.tool: _limit(rng, domain.limits[a.policy]) for a in actions if a.policy is not None}
    return Variant(domain, index, records, actions, enabled, limits, heldout)


def _limit(rng: random.Random, bounds: tuple[int, int]) -> int:
    step = 5 if bounds[1] <= 100 else 50
    return max(step, rng.randint(bounds[0], bounds[1]) // step * step)
