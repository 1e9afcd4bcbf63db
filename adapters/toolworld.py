"""ToolWorld adapter: the built-in procedural suite, served under ``envsched/ToolWorld-v0``.

Every variant of every domain is its own environment (``ToolWorld/<domain>-<k>``) with its own
tools, records and policies; one gymnasium id serves them all (``reset(options={"task_id":
...})`` picks the task and so the environment). Splits: the last ``heldout_variants`` variants
of each domain are held out whole (``heldout``); the tasks of the other variants are split
about 80/20 into ``train`` and ``test``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from envsched_gym.envs.toolworld.domain import Variant, build_variant
from envsched_gym.envs.toolworld.domains import DOMAINS
from envsched_gym.envs.toolworld.generator import variant_tasks
from envsched_gym.envs.toolworld.records import RecordWorld
from envsched_gym.envs.toolworld.verifier import ToolWorldVerifier  # noqa: F401  (registers kind "toolworld")

from envsched_gym.adapter import Adapter
from envsched_gym.declarations import EnvSpec, StateComponent, TaskSpec

GYM_ID = "envsched/ToolWorld-v0"
SPLITS = ("train", "test", "heldout", "all")


class ToolWorldAdapter(Adapter):
    """The ToolWorld family.

    Args:
        seed: Seed of every variant's records, policies and tasks.
        variants_per_domain: Environments generated per domain.
        heldout_variants: How many of each domain's variants (the last ones) are held out.
    """

    family = "ToolWorld"
    max_steps = 20

    def __init__(self, seed: int = 0, variants_per_domain: int = 6, heldout_variants: int = 1) -> None:
        if not 0 <= heldout_variants < variants_per_domain:
            raise ValueError(f"heldout_variants must be in [0, variants_per_domain); got {heldout_variants} of {variants_per_domain}")
        self.options = {"seed": seed, "variants_per_domain": variants_per_domain, "heldout_variants": heldout_variants}
        first_heldout = variants_per_domain - heldout_variants
        self.variants: dict[str, Variant] = {}
        for domain in DOMAINS:
            for k in range(variants_per_domain):
                variant = build_variant(domain, k, seed, heldout=k >= first_heldout)
                self.variants[variant.env_id] = variant
        self._specs: list[EnvSpec] | None = None
        self._tasks: list[TaskSpec] | None = None

    def env_specs(self) -> list[EnvSpec]:
        """One environment per variant."""
        if self._specs is None:
            self._specs = [self._env_spec(v) for v in self.variants.values()]
        return self._specs

    def _env_spec(self, variant: Variant) -> EnvSpec:
        return EnvSpec(
            env_id=variant.env_id,
            family=self.family,
            gym_id=GYM_ID,
            tools=variant.tools(),
            state_components=[StateComponent(f"{variant.domain.name}.{variant.domain.noun}s", f"{variant.domain.noun} records by id")],
            verifier_kind="state+facts+process",
            interaction="multi_step",
            user_simulator="scripted",
            max_steps=self.max_steps,
            max_steps_per_turn=12,
            system_prompt=variant.system_prompt(),
            split="heldout" if variant.heldout else "train",
        )

    def tasks(self, split: str = "all") -> Iterable[TaskSpec]:
        """Tasks of ``split`` (``train``, ``test``, ``heldout`` or ``all``), generated once."""
        if split not in SPLITS:
            raise ValueError(f"unknown split '{split}'; use one of {SPLITS}")
        if self._tasks is None:
            self._tasks = [t for v in self.variants.values() for t in variant_tasks(v, self.options["seed"])]
        return [t for t in self._tasks if split == "all" or t.split == split]

    def make_world(self, task: TaskSpec) -> RecordWorld:
        """A fresh world of the task's variant (its tools), loaded from the task's initial state."""
        variant = self.variant(task.env_id)
        world = variant.domain.world(variant.enabled)
        world.load_state(task.initial_state or variant.state)
        return world

    def variant(self, env_id: str) -> Variant:
        """The variant behind ``env_id``."""
        try:
            return self.variants[env_id]
        except KeyError:
            raise KeyError(f"unknown ToolWorld environment '{env_id}'; ids look like 'ToolWorld/inventory-0'") from None

    def with_options(self, **options: Any) -> ToolWorldAdapter:
        """A copy with other generation options (``seed``, ``variants_per_domain``, ``heldout_variants``)."""
        return ToolWorldAdapter(**{**self.options, **options})
