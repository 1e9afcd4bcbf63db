"""How a user's family becomes visible to ``gym.make``, the suite and the training scripts.

A family exists once its adapter is registered (:func:`envsched_gym.register_adapter`). Three
ways get that registration to run without a launcher script:

* **an entry point** in the group ``envsched_gym.adapters`` of an installed package's metadata,
  loaded when ``envsched_gym`` is imported. Its value is an :class:`Adapter` subclass (built with
  no arguments), an adapter instance, or a function returning one::

      [project.entry-points."envsched_gym.adapters"]
      BugTracker = "bugtracker.adapter:BugTrackerAdapter"

* **``--import MODULE``** (repeatable) on ``training/train_grpo.py`` and ``training/evaluate.py``:
  the module is imported first, and its import registers the family (:func:`import_modules`);
* **gymnasium's ``module:id`` form**, ``bugtracker:envsched/BugTracker-v0``, wherever an id is
  accepted (``--families``, ``--benchmarks``, :func:`resolve`).
"""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points

from envsched_gym.adapter import Adapter

ENTRY_POINT_GROUP = "envsched_gym.adapters"


class PluginError(ImportError):
    """A module or entry point meant to register a family could not do so."""


def load_entry_points() -> list[str]:
    """Register the adapter of every installed ``envsched_gym.adapters`` entry point; their families.

    A family that is already registered under the same name is left alone (importing twice is
    harmless); an entry point that fails to load is an error naming it and its package.
    """
    from envsched_gym.registry import families, register_adapter

    registered = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in families():
            continue
        adapter = _adapter_of(ep)
        if adapter.family not in families():  # loading may have imported a module that registers it itself
            register_adapter(adapter)
        registered.append(adapter.family)
    return registered


def _adapter_of(ep: EntryPoint) -> Adapter:
    where = f"entry point '{ep.name} = {ep.value}' (group '{ENTRY_POINT_GROUP}'" + (f", package {ep.dist.name}" if ep.dist else "") + ")"
    try:
        target = ep.load()
        adapter = target if isinstance(target, Adapter) else target()
    except Exception as exc:
        raise PluginError(f"{where} failed to load: {type(exc).__name__}: {exc}. Fix the package, or uninstall it.") from exc
    if not isinstance(adapter, Adapter):
        raise PluginError(f"{where} gave {type(adapter).__name__}, not an envsched_gym.Adapter; point it at an Adapter subclass.")
    if adapter.family != ep.name:
        raise PluginError(f"{where} registers family '{adapter.family}'; name the entry point '{adapter.family}' to match.")
    return adapter


def import_modules(modules: list[str]) -> None:
    """Import each module (its import registers families); a module that fails is named with the fix."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise PluginError(f"--import {module}: {exc}. Install the package or put its folder on PYTHONPATH.") from exc


def resolve(name: str) -> str:
    """A family name or gym id with any ``module:`` prefix imported and removed."""
    if ":" not in name:
        return name
    module, _, rest = name.partition(":")
    import_modules([module])
    return rest


def split_imports(argv: list[str]) -> tuple[list[str], list[str]]:
    """``(modules, other arguments)``: every ``--import MODULE`` / ``--import=MODULE`` taken out."""
    modules, rest, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--import":
            if i + 1 >= len(argv):
                raise SystemExit("--import needs a module name: --import MODULE")
            modules.append(argv[i + 1])
            i += 2
            continue
        if arg.startswith("--import="):
            modules.append(arg.partition("=")[2])
        else:
            rest.append(arg)
        i += 1
    return modules, rest
