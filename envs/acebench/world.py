"""``ScenarioWorld``: the scenario classes a task involves, driven as ACEBench's harness drives them.

The harness builds one instance per involved class, loads it with
``_load_scenario(initial_config.get(cls, {}))`` and then ``_load_scenario(initial_config["BaseApi"])``,
and dispatches a call by method name to *every* involved instance that has the method
(so ``turn_on_wifi`` turns Wi-Fi on in each app); the result is the last instance's.
"""

from __future__ import annotations

from typing import Any

from envsched_gym.envs.acebench.food import FoodPlatform
from envsched_gym.envs.acebench.phone import BaseApi, MessageApi, ReminderApi, Scenario
from envsched_gym.envs.acebench.travel import Travel, TravelZh

from envsched_gym import ToolError, ToolSpec, World

SCENARIO_CLASSES: dict[str, type[Scenario]] = {
    "BaseApi": BaseApi,
    "MessageApi": MessageApi,
    "ReminderApi": ReminderApi,
    "FoodPlatform": FoodPlatform,
    "Travel": Travel,
}
LANGUAGE_CLASSES: dict[str, dict[str, type[Scenario]]] = {"en": SCENARIO_CLASSES, "zh": {**SCENARIO_CLASSES, "Travel": TravelZh}}


class ScenarioWorld(World):
    """Several ACEBench scenario instances behind one tool namespace.

    Args:
        involved_classes: Class names in the task's order, e.g. ``["BaseApi", "MessageApi"]``.
        initial_states: Each class's state right after ``__init__`` (the extracted initial states).
        initial_config: The task's ``initial_config`` (``{"BaseApi": {"wifi": ..., "logged_in": ...}}``).
        language: ``en`` or ``zh``: the language of return messages (and of the Travel cabin names).
    """

    def __init__(
        self, involved_classes: list[str], initial_states: dict[str, dict[str, Any]], initial_config: dict[str, Any], language: str = "en"
    ) -> None:
        classes = LANGUAGE_CLASSES[language]
        unknown = [c for c in involved_classes if c not in SCENARIO_CLASSES]
        if unknown:
            raise ValueError(f"unknown ACEBench scenario classes {unknown}; known: {sorted(SCENARIO_CLASSES)}")
        self._instances: dict[str, Scenario] = {}
        for name in involved_classes:
            instance = classes[name]()
            instance.set_language(language)
            instance.load_initial(initial_states.get(name, {}))
            instance.load_scenario(dict(initial_config.get(name, {})))
            instance.load_scenario(dict(initial_config.get("BaseApi", {})))
            self._instances[name] = instance
        self._tools = self._collect_tools()

    @property
    def instances(self) -> dict[str, Scenario]:
        """The scenario instances by class name."""
        return self._instances

    def _collect_tools(self) -> list[ToolSpec]:
        seen: dict[str, ToolSpec] = {}
        for instance in self._instances.values():
            for spec in instance.tool_specs():
                seen.setdefault(spec.name, spec)
        return list(seen.values())

    def tools(self) -> list[ToolSpec]:
        return self._tools

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        targets = [i for i in self._instances.values() if name in i._declared()[1]]
        if not targets:
            raise ToolError(f"{name} is not available: none of {list(self._instances)} provides it")
        result: Any = None
        for instance in targets:
            result = instance.call(name, dict(arguments))
        return result

    def saved_state(self) -> list[dict[str, dict[str, Any]]]:
        """The end state as ACEBench saves it: ``[{class: {saved attribute: value}}, ...]``."""
        return [{name: inst.saved_state()} for name, inst in self._instances.items()]

    def state(self) -> dict[str, Any]:
        return {name: {k: v for k, v in inst.state().items()} for name, inst in self._instances.items()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Overwrite attributes per class: ``{class: {attribute: value}}`` (string keys allowed)."""
        for name, attributes in state.items():
            if name not in self._instances:
                raise KeyError(f"class {name!r} is not involved in this task; involved: {list(self._instances)}")
            self._instances[name].load_initial(attributes)
