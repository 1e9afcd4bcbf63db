"""``Adapter``: the extension point that turns a benchmark (or your own world) into environments.

An adapter declares environments (:class:`EnvSpec`) and tasks (:class:`TaskSpec`), builds a
fresh world per episode, and provides the verifier and user simulator. The minimal adapter
sets ``family`` and ``world`` and implements :meth:`Adapter.tasks`; everything else has a
default (one environment, tools from the world's ``@tool`` methods, the gold-state verifier,
a scripted user).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, ClassVar

from envsched_gym.declarations import EnvSpec, StateComponent, TaskSpec
from envsched_gym.users import ScriptedTurns, UserSimulator
from envsched_gym.verifier import GoldStateVerifier, Verifier
from envsched_gym.world import World

SPLITS = ("train", "test", "heldout")


class Adapter:
    """Base class of all adapters (built-in benchmarks and user environments alike).

    Attributes:
        family: Family name; the default environment is registered as ``envsched/<family>-v0``.
        world: World class built for each episode by the default :meth:`make_world`.
        system_prompt: System message of the default environment.
        max_steps: Step limit of the default environment.
    """

    family: ClassVar[str] = ""
    world: ClassVar[type[World] | None] = None
    system_prompt: ClassVar[str] = "You are a helpful assistant that uses tools to complete the user's request."
    max_steps: ClassVar[int] = 30

    def env_specs(self) -> list[EnvSpec]:
        """Environments this adapter serves; the default is one built from :attr:`world`."""
        world = self._world_class()
        return [
            EnvSpec(
                env_id=self.family,
                family=self.family,
                gym_id=f"envsched/{self.family}-v0",
                tools=world.tool_specs(),
                state_components=[StateComponent(name=world.__name__)],
                verifier_kind="gold_state",
                max_steps=self.max_steps,
                system_prompt=self.system_prompt,
            )
        ]

    def tasks(self, split: str = "all") -> Iterable[TaskSpec]:
        """Yield the tasks of ``split`` (``train``, ``test``, ``heldout`` or ``all``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement tasks(split)")

    def make_world(self, task: TaskSpec) -> World:
        """A fresh world for one episode of ``task``, loaded from ``task.initial_state``."""
        world = self._world_class()()
        if task.initial_state:
            world.load_state(copy.deepcopy(task.initial_state))
        return world

    def make_verifier(self, task: TaskSpec) -> Verifier:
        """The verifier for one episode of ``task`` (default: gold state plus facts)."""
        return GoldStateVerifier(task, self.make_world)

    def make_user(self, task: TaskSpec) -> UserSimulator:
        """The user simulator for one episode of ``task`` (default: scripted turns)."""
        return ScriptedTurns()

    def with_options(self, **options: Any) -> Adapter:
        """A copy configured with ``options`` (``gym.make(id, adapter_options=...)``).

        Built-in adapters take options as constructor arguments; override this for a
        registered adapter instance that accepts options.
        """
        raise TypeError(f"{type(self).__name__} takes no adapter options (got {sorted(options)}); override with_options() to accept them")

    def gym_ids(self) -> list[str]:
        """Registered gymnasium ids, one per distinct ``EnvSpec.gym_id``."""
        return sorted({e.gym_id for e in self.env_specs()})

    def _world_class(self) -> type[World]:
        if self.world is None:
            raise TypeError(f"{type(self).__name__}: set the class attribute `world` or override env_specs() and make_world()")
        return self.world
