"""The multi-turn world: BFCL's executable backends behind the :class:`World` interface.

Backends are the classes of the installed ``bfcl-eval`` package (GorillaFileSystem, MathAPI,
TwitterAPI, ...), instantiated per episode and loaded with
``_load_scenario(deepcopy(initial_config[cls]), long_context=...)`` exactly as BFCL's harness
does. Calls are dispatched to backend methods by name with ``getattr`` (only names declared in
the function docs); nothing is ``eval``-ed and BFCL's global instance cache is never used, so
every episode's backends are garbage once the episode is gone.

Isolation. The backends' modules hold mutable globals that the long-context filler aliases into
instances (``CREDIT_CARD_EXTENSION``'s cards, whose balances a booking lowers) or writes at call
time (``LONG_WEATHER_EXTENSION``). A long-context world therefore binds its own deep copies of
those globals while its backends load and run (:class:`PrivateGlobals`). Without long context no
backend touches them (each deep-copies its ``DEFAULT_STATE`` itself), so no copy is made: it would
cost 8 ms per TradingBot world. Process-wide settings a call changes (``decimal``'s context,
``mpmath.mp.dps``) are restored after it, and its result is rendered before that, at the precision
it asked for, as BFCL records it.
"""

from __future__ import annotations

import copy
import decimal
import importlib
import inspect
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from envsched_gym.envs.bfcl.guards import refusal

from envsched_gym.declarations import ToolCall, ToolSpec
from envsched_gym.validation import jsonable
from envsched_gym.world import ToolError, World

BACKEND_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BACKEND_MODULES = {
    "GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api", "MessageAPI": "message_api",
    "TwitterAPI": "posting_api", "TicketAPI": "ticket_api", "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking", "VehicleControlAPI": "vehicle_control",
}  # fmt: skip
STATELESS = frozenset({"MathAPI"})
"""Backends BFCL builds without loading a scenario."""


@cache
def backend_module(name: str) -> ModuleType:
    """The ``bfcl-eval`` module of backend class ``name``, with a fix-it error if absent."""
    try:
        return importlib.import_module(f"{BACKEND_PACKAGE}.{BACKEND_MODULES[name]}")
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"BFCL multi-turn backends need the bfcl-eval package ({exc}); install it with "
            "`pip install --no-deps bfcl-eval==2026.3.23 mpmath` (or `pip install envsched-gym[bfcl]`)"
        ) from exc


@cache
def backend_class(name: str) -> type:
    """A backend class from the installed ``bfcl-eval`` package."""
    return getattr(backend_module(name), name)


@cache
def mutable_globals(name: str) -> tuple[str, ...]:
    """Names of the mutable module-level values (dicts, lists, sets) backend ``name`` can reach."""
    return tuple(k for k, v in vars(backend_module(name)).items() if not k.startswith("__") and isinstance(v, (dict, list, set)))


class PrivateGlobals:
    """One world's deep copies of its backends' mutable module globals, bound while its code runs.

    Binding swaps each module attribute for the world's copy and puts the shared original back
    afterwards, so no world ever writes into what another world (or the next episode) reads.
    Rollout workers run one world's call at a time in a thread, as BFCL's backends require.
    """

    def __init__(self, classes: list[str]) -> None:
        self._copies = {name: copy.deepcopy({k: getattr(backend_module(name), k) for k in mutable_globals(name)}) for name in classes}

    @contextmanager
    def bound(self) -> Iterator[None]:
        originals = {name: {k: getattr(backend_module(name), k) for k in mine} for name, mine in self._copies.items()}
        try:
            for name, mine in self._copies.items():
                for k, v in mine.items():
                    setattr(backend_module(name), k, v)
            yield
        finally:
            for name, shared in originals.items():
                for k, v in shared.items():
                    setattr(backend_module(name), k, v)


@contextmanager
def process_settings_restored() -> Iterator[None]:
    """Run a backend call, then undo what it set process-wide: MathAPI's ``getcontext().prec``
    (square_root) and ``mpmath.mp.dps`` (logarithm)."""
    mpmath = sys.modules.get("mpmath")
    prec = mpmath.mp.prec if mpmath is not None else None
    try:
        with decimal.localcontext():
            yield
    finally:
        if mpmath is not None and prec is not None:
            mpmath.mp.prec = prec


@cache
def positional_names(class_name: str, method: str) -> tuple[str, ...]:
    """Parameter names of a backend method in order (to name positional gold arguments)."""
    params = inspect.signature(getattr(backend_class(class_name), method)).parameters
    return tuple(p for p in params if p != "self")


def new_backend(class_name: str, initial_config: dict[str, Any], long_context: bool) -> Any:
    """A fresh backend instance loaded the way BFCL's harness loads it."""
    instance = backend_class(class_name)()
    if class_name not in STATELESS:
        instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
    return instance


def result_text(value: Any) -> str:
    """A backend result as BFCL's harness records it (strings as is, dicts as JSON, else ``str``)."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


@dataclass
class BackendSetup:
    """What a multi-turn episode's world is built from.

    Attributes:
        classes: Involved backend classes, in the entry's order.
        initial_config: ``{class name: scenario}`` from the entry.
        long_context: Load BFCL's long-context filler.
        tools: Tools available from the first turn.
        added_tools: ``{turn: tools}`` held out until that turn (miss_func).
    """

    classes: list[str]
    initial_config: dict[str, Any]
    long_context: bool
    tools: list[ToolSpec]
    added_tools: dict[int, list[ToolSpec]] = field(default_factory=dict)
    _stages: dict[int, list[ToolSpec]] = field(default_factory=dict, init=False, repr=False)

    def tools_after(self, turn: int, current: list[ToolSpec]) -> list[ToolSpec]:
        """``current`` plus the tools added at ``turn``: one list object per turn for every episode,
        so compiled validators are reused."""
        if turn not in self._stages:
            self._stages[turn] = current + self.added_tools[turn]
        return self._stages[turn]


class BFCLWorld(World):
    """One episode's backends; records every executed call's BFCL-format result per turn."""

    def __init__(self, setup: BackendSetup) -> None:
        self.setup = setup
        self._globals = PrivateGlobals(setup.classes) if setup.long_context else None
        with self._isolated():
            self.instances = {name: new_backend(name, setup.initial_config, setup.long_context) for name in setup.classes}
        self._tools = setup.tools
        declared = [t.name for t in setup.tools] + [t.name for ts in setup.added_tools.values() for t in ts]
        self._owner = {name: owner for name in declared if (owner := self._owner_of(name)) is not None}
        self.results: list[list[str]] = [[]]

    def _owner_of(self, method: str) -> str | None:
        """The class BFCL routes ``method`` to: the last involved class that has it."""
        owners = [c for c in self.setup.classes if callable(getattr(self.instances[c], method, None))]
        return owners[-1] if owners and not method.startswith("_") else None

    def tools(self) -> list[ToolSpec]:
        return self._tools

    def begin_turn(self, index: int) -> None:
        while len(self.results) <= index:
            self.results.append([])
        if index in self.setup.added_tools:
            self._tools = self.setup.tools_after(index, self._tools)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run a validated agent call; a backend exception becomes a :class:`ToolError`.

        Returns the result as JSON data (rendered while the call's own precision was set)."""
        ok, value, text = self._invoke(name, arguments)
        self.results[-1].append(text if ok else f"Error during execution: {text}")
        if not ok:
            raise ToolError(text)
        return value

    def execute(self, call: ToolCall) -> str:
        """Run a call (gold or replayed) and return BFCL's record of its result."""
        ok, _, text = self._invoke(call.name, call.arguments)
        return text if ok else f"Error during execution: {text}"

    @contextmanager
    def _isolated(self) -> Iterator[None]:
        with process_settings_restored():
            if self._globals is None:
                yield
            else:
                with self._globals.bound():
                    yield

    def _invoke(self, name: str, arguments: dict[str, Any]) -> tuple[bool, Any, str]:
        """``(ok, result as JSON data, BFCL's text of it)``; on failure the error and its text."""
        owner = self._owner.get(name)
        if owner is None:
            return False, None, f"name '{name}' is not defined"
        if (refused := refusal(name, arguments)) is not None:
            return False, refused, str(refused)
        with self._isolated():
            try:
                value = getattr(self.instances[owner], name)(**arguments)
                return True, jsonable(value), result_text(value)
            except Exception as exc:  # a backend's own failure is the call's result, as in BFCL
                return False, exc, str(exc)

    def all_results(self) -> list[str]:
        """Every recorded result of the episode so far, turn after turn."""
        return [r for turn in self.results for r in turn]

    def state(self) -> dict[str, Any]:
        """Public attributes of every backend (what BFCL's state check compares), as JSON data."""
        return {name: jsonable(public_attributes(inst)) for name, inst in self.instances.items()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Rebuild the backends from ``{class name: scenario}`` (an ``initial_config``)."""
        self._globals = PrivateGlobals(self.setup.classes) if self.setup.long_context else None
        with self._isolated():
            self.instances = {name: new_backend(name, state, self.setup.long_context) for name in self.setup.classes}


def public_attributes(instance: Any) -> dict[str, Any]:
    """An instance's attributes that do not start with ``_``."""
    return {k: v for k, v in vars(instance).items() if not k.startswith("_")}


def state_differences(model: BFCLWorld, gold: BFCLWorld) -> dict[str, list[str]]:
    """``{class: [attribute, ...]}`` where the model's backends differ from the gold ones."""
    missing = object()
    out: dict[str, list[str]] = {}
    for name, gold_instance in gold.instances.items():
        mine = model.instances[name]
        diff = [a for a, v in public_attributes(gold_instance).items() if getattr(mine, a, missing) != v]
        if diff:
            out[name] = diff
    return out
