"""Registration of adapters and their gymnasium ids.

Built-in families are listed here as string entry points with their ids, so ``import
envsched_gym`` registers every ``envsched/*`` id without importing any adapter or reading any
data; the adapter loads on the first ``gym.make``. User adapters register with
:func:`register_adapter`.
"""

from __future__ import annotations

import difflib
import importlib
import json
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from envsched_gym.adapter import Adapter

ENTRY_POINT = "envsched_gym.registry:make_env"
HOW_TO_REGISTER = (
    "To make a family visible: import the module that calls envsched_gym.register_adapter (the training scripts take "
    "--import MODULE), name an id as 'module:envsched/Name-v0', or declare an entry point in the group "
    "'envsched_gym.adapters' of your package's metadata (see envsched_gym/plugins.py)."
)


@dataclass
class Family:
    """A registered family: where its adapter lives and which gymnasium ids it serves."""

    name: str
    entry_point: str | None
    gym_ids: list[str]
    instance: Adapter | None = field(default=None, repr=False)
    variants: dict[str, Adapter] = field(default_factory=dict, repr=False)


BFCL_CATEGORIES = [
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
    "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_relevance", "live_irrelevance", "multi_turn_base", "multi_turn_miss_func",
    "multi_turn_miss_param", "multi_turn_long_context",
]  # fmt: skip

BUILTIN: dict[str, tuple[str, list[str]]] = {
    "ToolWorld": ("envsched_gym.adapters.toolworld:ToolWorldAdapter", ["envsched/ToolWorld-v0"]),
    "Tau": ("envsched_gym.adapters.tau:TauAdapter", ["envsched/Tau-retail-v0", "envsched/Tau-airline-v0"]),
    "BFCL": ("envsched_gym.adapters.bfcl:BFCLAdapter", [f"envsched/BFCL-{c}-v0" for c in BFCL_CATEGORIES]),
    "ACE": ("envsched_gym.adapters.acebench:ACEBenchAdapter", [f"envsched/ACE-{g}-v0" for g in ("normal", "special", "agent")]),
}

_FAMILIES: dict[str, Family] = {}


def register_builtin() -> None:
    """Register every built-in family's ids with gymnasium (idempotent, imports nothing)."""
    for name, (entry_point, ids) in BUILTIN.items():
        if name not in _FAMILIES:
            _FAMILIES[name] = Family(name, entry_point, ids)
            _register_ids(name, ids)


def register_adapter(adapter: Adapter, *, replace: bool = False, validate: bool = True) -> list[str]:
    """Validate and register a user adapter; returns the gymnasium ids it can now be made with.

    Args:
        adapter: The adapter.
        replace: Replace a family registered under the same name.
        validate: Run :func:`~envsched_gym.validate.validate_family` with gold replay first
            (its cost: ``benchmarks/validation_cost.py``). With ``False`` only the static
            checks run, when the adapter is first used.

    Raises:
        ValueError: The family name is empty, or taken and ``replace`` is false.
        FamilyValidationError: The family failed validation; nothing was registered.
    """
    name = adapter.family
    if not name:
        raise ValueError(f"{type(adapter).__name__}.family is empty; set a class attribute such as family = 'Thermostat'")
    if name in _FAMILIES and not replace:
        raise ValueError(f"family '{name}' is already registered; pass replace=True to replace it")
    from envsched_gym.validate import validate_family

    validate_family(adapter, replay=validate)
    ids = adapter.gym_ids()
    for gym_id in _FAMILIES[name].gym_ids if name in _FAMILIES else []:
        gym.registry.pop(gym_id, None)
    _FAMILIES[name] = Family(name, None, ids, adapter)
    _register_ids(name, ids)
    return ids


def _register_ids(family: str, ids: list[str]) -> None:
    for gym_id in ids:
        gym.registry.pop(gym_id, None)
        gym.register(
            id=gym_id, entry_point=ENTRY_POINT, kwargs={"family": family, "gym_id": gym_id},
            disable_env_checker=True, order_enforce=False,  # ToolUseEnv checks reset-before-step itself
        )


def families() -> list[str]:
    """Names of every registered family."""
    return sorted(_FAMILIES)


def registered_ids(family: str | None = None) -> list[str]:
    """Every registered ``envsched/*`` id (of one family if given)."""
    return sorted(i for f in _FAMILIES.values() if family in (None, f.name) for i in f.gym_ids)


def get_adapter(family: str, options: dict[str, Any] | None = None) -> Adapter:
    """The family's adapter instance, imported and built on first use.

    Args:
        family: Registered family name.
        options: Adapter constructor options (for example ``{"task_set": "pre_tau3"}`` or
            ``{"language": "zh"}``); each distinct set of options gets its own cached instance.
    """
    entry = _FAMILIES.get(family)
    if entry is None:
        close = difflib.get_close_matches(family, list(_FAMILIES), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"unknown family '{family}'.{hint} Registered: {families()}. {HOW_TO_REGISTER}")
    if options:
        key = json.dumps(options, sort_keys=True, default=repr)
        if key not in entry.variants:
            entry.variants[key] = _build(entry, options)
        return entry.variants[key]
    if entry.instance is None:
        entry.instance = _build(entry, {})
    return entry.instance


def _build(entry: Family, options: dict[str, Any]) -> Adapter:
    """A new adapter of ``entry`` with ``options``, after the static checks of ``validate_family``."""
    from envsched_gym.validate import validate_family

    if entry.entry_point is None:
        assert entry.instance is not None
        adapter = entry.instance.with_options(**options)
    else:
        module_name, _, class_name = entry.entry_point.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        try:
            adapter = cls(**options)
        except TypeError as exc:
            raise TypeError(f"adapter options {options} are not accepted by {class_name}: {exc}") from exc
    validate_family(adapter, replay=False)
    return adapter


def family_of(gym_id: str) -> str:
    """The family serving ``gym_id``, with a did-you-mean error for unknown ids."""
    for entry in _FAMILIES.values():
        if gym_id in entry.gym_ids:
            return entry.name
    close = difflib.get_close_matches(gym_id, registered_ids(), n=3)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise gym.error.UnregisteredEnv(f"unknown env id '{gym_id}'.{hint} See envsched_gym.registered_ids() for all ids. {HOW_TO_REGISTER}")


def make_env(family: str, gym_id: str, adapter_options: dict[str, Any] | None = None, **kwargs: Any) -> gym.Env:
    """Gymnasium entry point: a :class:`~envsched_gym.env.ToolUseEnv` for ``gym_id``.

    ``gym.make(id, adapter_options={...})`` selects adapter options such as a task set or a
    language; other keyword arguments go to :class:`~envsched_gym.env.ToolUseEnv`.
    """
    from envsched_gym.env import ToolUseEnv

    return ToolUseEnv(get_adapter(family, adapter_options), gym_id, **kwargs)


def make(gym_id: str, **kwargs: Any) -> gym.Env:
    """``gym.make`` with a did-you-mean error for unknown ``envsched/*`` ids."""
    family_of(gym_id)
    return gym.make(gym_id, **kwargs)
