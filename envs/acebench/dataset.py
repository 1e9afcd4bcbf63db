"""Reading ACEBench's files: entries, possible answers, prompts and scenario initial states.

Layout (see the benchmark data README): ``acebench/data_all/data_<lang>/data_<category>.json``,
``.../possible_answer/data_<category>.json`` (JSON Lines), and ``acebench/extracted/`` with
``prompts.json`` and ``scenario_initial_states/<multi_turn|multi_step>_<lang>.json``.

Each category's two files are checked as they load (see :mod:`envsched_gym.data_files`): the
fields every entry of its group needs, unique ids, and exactly one answer per entry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from envsched_gym.data import benchmark_path
from envsched_gym.data_files import DataError, Row, read_json, read_jsonl, require, require_unique

LANGUAGES = ("en", "zh")
NORMAL = (
    "normal_single_turn_single_function", "normal_single_turn_parallel_function", "normal_multi_turn_user_adjust",
    "normal_multi_turn_user_switch", "normal_similar_api", "normal_preference", "normal_atom_bool", "normal_atom_enum",
    "normal_atom_number", "normal_atom_list", "normal_atom_object_deep", "normal_atom_object_short",
)  # fmt: skip
SPECIAL = ("special_incomplete", "special_error_param", "special_irrelevant")
AGENT = ("agent_multi_turn", "agent_multi_step")
GROUPS: dict[str, tuple[str, ...]] = {"normal": NORMAL, "special": SPECIAL, "agent": AGENT}
HINT = "Get ACEBench's data_all/ folder and the extracted/ folder as the README's 'Benchmark data' section says."


ENTRY_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "normal": {"question": str, "function": list},
    "special": {"question": str, "function": list},
    "agent": {"question": str, "function": list, "initial_config": dict, "involved_classes": list},
}
ANSWER_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "normal": {"ground_truth": (dict, list)},
    "special": {"ground_truth": (dict, list, str)},
    "agent": {"ground_truth": list, "mile_stone": list},
}
"""The fields (and their JSON types) that each group's entries and possible answers must have."""


@dataclass
class Entry:
    """One ACEBench entry joined with its possible answer.

    Attributes:
        category: The category name.
        language: ``en`` or ``zh``.
        row: The entry's line of the data file.
        answer_row: Its line of the possible-answer file.
    """

    category: str
    language: str
    row: Row
    answer_row: Row

    @property
    def data(self) -> dict[str, Any]:
        return self.row.data

    @property
    def answer(self) -> dict[str, Any]:
        return self.answer_row.data

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def group(self) -> str:
        return self.category.split("_", 1)[0]


def group_of(category: str) -> str:
    """``normal``, ``special`` or ``agent`` for a category name."""
    for group, categories in GROUPS.items():
        if category in categories:
            return group
    raise ValueError(f"unknown ACEBench category {category!r}; known: {[c for cs in GROUPS.values() for c in cs]}")


def _root(data_dir: str | os.PathLike[str] | None) -> Path:
    return benchmark_path("acebench", data_dir=data_dir, hint=HINT)


def _checked(path: Path, fields: dict[str, type | tuple[type, ...]], what: str) -> dict[str, Row]:
    rows = require_unique(read_jsonl(path, what))
    for row in rows.values():
        for field, kind in fields.items():
            require(row, field, kind)
        for index, function in enumerate(row.data.get("function", [])):
            require(row.child(f"function[{index}]", function), "name", str)
    return rows


@lru_cache(maxsize=64)
def _load_entries(root: str, language: str, category: str) -> tuple[Entry, ...]:
    base = Path(root) / "data_all" / f"data_{language}"
    data_file, answer_file = base / f"data_{category}.json", base / "possible_answer" / f"data_{category}.json"
    group = group_of(category)
    data = _checked(data_file, ENTRY_FIELDS[group], "entries")
    answers = _checked(answer_file, ANSWER_FIELDS[group], "possible answers")
    for key, row in data.items():
        if key not in answers:
            raise row.error("id", f"has no possible answer in {answer_file}", "restore the answer line, or delete the entry")
    for key, row in answers.items():
        if key not in data:
            raise row.error("id", f"answers no entry of {data_file}", "restore the entry, or delete the answer line")
    return tuple(Entry(category, language, row, answers[key]) for key, row in data.items())


def load_entries(language: str, category: str, data_dir: str | os.PathLike[str] | None = None) -> tuple[Entry, ...]:
    """Every entry of a category in a language, with its possible answer (cached)."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown ACEBench language {language!r}; use one of {LANGUAGES}")
    group_of(category)
    return _load_entries(str(_root(data_dir)), language, category)


@lru_cache(maxsize=8)
def _load_json(path: str) -> Any:
    value = read_json(path)
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise DataError(path, "must hold a JSON object of objects")
    return value


def _prompts_file(data_dir: str | os.PathLike[str] | None) -> str:
    return str(_root(data_dir) / "extracted" / "prompts.json")


@lru_cache(maxsize=8)
def _constants(path: str) -> dict[str, Any]:
    return {name: text for per_file in _load_json(path).values() for name, text in per_file.items()}


def prompt(name: str, data_dir: str | os.PathLike[str] | None = None) -> str:
    """One extracted prompt constant by name (when several source files define it, the last one's)."""
    constants = _constants(_prompts_file(data_dir))
    if name not in constants:
        raise DataError(_prompts_file(data_dir), "is not defined in any source file", entry=f"prompt {name!r}")
    return str(constants[name])


def prompt_in(source: str, name: str, data_dir: str | os.PathLike[str] | None = None) -> str:
    """One prompt constant from one source file of ``prompts.json`` (e.g. ``multi_step/APIModel_agent.py``)."""
    per_file = _load_json(_prompts_file(data_dir)).get(f"model_inference/{source}", {})
    if name not in per_file:
        raise DataError(_prompts_file(data_dir), f"is not defined in model_inference/{source}", entry=f"prompt {name!r}")
    return str(per_file[name])


def initial_states(language: str, kind: str = "multi_turn", data_dir: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """Each scenario class's state right after ``__init__`` (``kind``: multi_turn or multi_step); do not mutate it."""
    return _initial_states(str(_root(data_dir) / "extracted" / "scenario_initial_states" / f"{kind}_{language}.json"))


@lru_cache(maxsize=8)
def _initial_states(path: str) -> dict[str, dict[str, Any]]:
    return {name: require(Row(Path(path), f"class {name!r}", info), "initial_state", dict) for name, info in _load_json(path).items()}
