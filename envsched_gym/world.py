"""``World``: the stateful backend behind an environment's tools.

A world is an ordinary Python object whose ``@tool`` methods are the tools. The environment
builds a fresh world per episode, so rollouts of a GRPO group never share state.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from envsched_gym.declarations import ToolSpec
from envsched_gym.tool import TOOL_ATTR, spec_from_function


class ToolError(Exception):
    """A tool's user-facing failure; the agent sees ``Error: <message>`` as the result."""


class World:
    """Base class of tool backends.

    Subclasses declare tools with :func:`~envsched_gym.tool` and keep their state in public
    attributes; :meth:`state` returns those for verification. Worlds whose tools are not
    Python methods (for example a wrapper around BFCL's backends) override :meth:`tools`
    and :meth:`call` instead.
    """

    _tool_cache: ClassVar[dict[type, tuple[list[ToolSpec], dict[str, str]]]] = {}

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        """The tools declared with ``@tool`` on this class and its bases, in definition order."""
        return cls._declared()[0]

    @classmethod
    def _declared(cls) -> tuple[list[ToolSpec], dict[str, str]]:
        if cls not in World._tool_cache:
            specs: list[ToolSpec] = []
            methods: dict[str, str] = {}
            for klass in reversed(cls.__mro__):
                for attr, fn in vars(klass).items():
                    mark = getattr(fn, TOOL_ATTR, None)
                    if mark is None or mark["name"] in methods:
                        continue
                    specs.append(spec_from_function(fn, write=mark["write"], name=mark["name"]))
                    methods[mark["name"]] = attr
            World._tool_cache[cls] = (specs, methods)
        return World._tool_cache[cls]

    def tools(self) -> list[ToolSpec]:
        """Tools available now. ``ToolUseEnv`` reads this at reset and when each user turn
        starts (after :meth:`begin_turn`), so override it for tools that appear at a turn."""
        return self.tool_specs()

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run tool ``name`` with validated ``arguments`` and return its JSON-able result.

        Raises:
            ToolError: The tool refused (unknown item, policy violation, ...).
            KeyError: No tool of that name (the environment checks names first).
        """
        method = getattr(self, self._declared()[1][name])
        return method(**arguments)

    def state(self) -> Any:
        """JSON-able snapshot of the public state (attributes not starting with ``_``)."""
        return copy.deepcopy({k: v for k, v in vars(self).items() if not k.startswith("_")})

    def load_state(self, state: dict[str, Any]) -> None:
        """Set public attributes from a (deep-copied) state dict; the inverse of :meth:`state`."""
        for key, value in copy.deepcopy(state).items():
            setattr(self, key, value)

    def begin_turn(self, index: int) -> None:
        """Called when user turn ``index`` (0-based) starts; default does nothing."""
