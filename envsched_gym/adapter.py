"""``Adapter``: the extension point that turns a benchmark (or your own world) into environments.

An adapter declares environments (:class:`EnvSpec`) and tasks (:class:`TaskSpec`), builds a
fresh world per episode, and provides the verifier and user simulator. The minimal adapter
sets ``family`` and ``world`` and implements :meth:`Adapter.tasks`; everything else has a
default (one environment, tools from the world's ``tools()``, the verifier registered for each
task's ``verifier.kind``, a scripted user). Registering an adapter validates it
(:func:`envsched_gym.validate.validate_family`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, ClassVar

from envsched_gym.declarations import EnvSpec, StateComponent, TaskSpec
from envsched_gym.users import ScriptedTurns, UserSimulator
from envsched_gym.verifier import Verifier, build_verifier
from envsched_gym.world import World

SPLITS = ("train", "test", "heldout")


class Adapter:
    """Base class of all adapters (built-in benchmarks and user environments alike).

    Attributes:
        family: Family name; the default environment is registered as ``envsched/<family>-v0``.
        gold_defects: Tasks whose gold may fail validation's replay, each with the reason.
        gold_calls_may_fail: Whether gold solutions may contain failing calls.
        world: World class built for each episode by the default :meth:`make_world`.
        system_prompt: System message of the default environment.
        max_steps: Step limit of the default environment.
    """

    family: ClassVar[str] = ""
    world: ClassVar[type[World] | None] = None
    system_prompt: ClassVar[str] = "You are a helpful assistant that uses tools to complete the user's request."
    max_steps: ClassVar[int] = 30
    gold_defects: ClassVar[dict[str, str]] = {}
    """Task id -> why its gold cannot replay cleanly (a documented defect of the source data).
    Validation tolerates these and fails when one replays clean (a stale entry)."""
    gold_calls_may_fail: ClassVar[bool] = False
    """True where gold solutions contain failing calls by design (τ2 records a lookup that fails
    before the one that works); validation then requires only that the gold scores 1.0."""

    def env_specs(self) -> list[EnvSpec]:
        """Environments this adapter serves; the default is one built from :attr:`world`, with the
        tools a fresh world's :meth:`World.tools` lists (so a world that overrides ``tools()``
        declares them too)."""
        world = self._world_class()
        return [
            EnvSpec(
                env_id=self.family,
                family=self.family,
                gym_id=f"envsched/{self.family}-v0",
                tools=world().tools(),
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
        """The verifier for one episode of ``task``: the class registered for
        ``task.verifier.kind`` (see :mod:`envsched_gym.verifier`), built from its parameters."""
        return build_verifier(task, self)

    def gold_state(self, task: TaskSpec) -> Any:
        """The world state after replaying the task's gold calls on a fresh world (cached per task;
        the same object is returned every time, so read it, don't change it).

        Raises:
            ValueError: The task has no gold solution.
            ToolError: A gold call fails (registration validates that none does).
        """
        cache: dict[str, Any] = self.__dict__.setdefault("_gold_states", {})
        if task.task_id not in cache:
            if task.solution is None:
                raise ValueError(f"task '{task.task_id}' has no gold solution, so it has no gold state; give it TaskSpec.solution")
            world = self.make_world(task)
            for turn in task.solution:
                for call in turn.tool_calls:
                    world.call(call.name, call.arguments)
            cache[task.task_id] = world.state()
        return cache[task.task_id]

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
