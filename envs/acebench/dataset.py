"""Reading ACEBench's files: entries, possible answers, prompts and scenario initial states.

Layout (see the benchmark data README): ``acebench/data_all/data_<lang>/data_<category>.json``,
``.../possible_answer/data_<category>.json`` (JSON Lines), and ``acebench/extracted/`` with
``prompts.json`` and ``scenario_initial_states/<multi_turn|multi_step>_<lang>.json``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from envsched_gym.data import benchmark_path

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


@dataclass
class Entry:
    """One ACEBench entry joined with its possible answer."""

    category: str
    language: str
    data: dict[str, Any]
    answer: dict[str, Any]

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


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@lru_cache(maxsize=64)
def _load_entries(root: str, language: str, category: str) -> tuple[Entry, ...]:
    base = Path(root) / "data_all" / f"data_{language}"
    data = _jsonl(base / f"data_{category}.json")
    answers = {a["id"]: a for a in _jsonl(base / "possible_answer" / f"data_{category}.json")}
    missing = [d["id"] for d in data if d["id"] not in answers]
    if missing:
        raise ValueError(f"{base}: entries without a possible answer: {missing[:5]}; the data and possible_answer files disagree")
    return tuple(Entry(category, language, d, answers[d["id"]]) for d in data)


def load_entries(language: str, category: str, data_dir: str | os.PathLike[str] | None = None) -> tuple[Entry, ...]:
    """Every entry of a category in a language, with its possible answer (cached)."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown ACEBench language {language!r}; use one of {LANGUAGES}")
    group_of(category)
    return _load_entries(str(_root(data_dir)), language, category)


@lru_cache(maxsize=8)
def _load_json(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def prompts(data_dir: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Every extracted prompt constant, flattened to ``{NAME: text}`` (later files win on clashes)."""
    raw = _load_json(str(_root(data_dir) / "extracted" / "prompts.json"))
    return {name: text for constants in raw.values() for name, text in constants.items()}


def prompt_in(source: str, name: str, data_dir: str | os.PathLike[str] | None = None) -> str:
    """One prompt constant from one source file of ``prompts.json`` (e.g. ``multi_step/APIModel_agent.py``)."""
    raw = _load_json(str(_root(data_dir) / "extracted" / "prompts.json"))
    return str(raw[f"model_inference/{source}"][name])


def initial_states(language: str, kind: str = "multi_turn", data_dir: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """Each scenario class's state right after ``__init__`` (``kind``: multi_turn or multi_step)."""
    raw = _load_json(str(_root(data_dir) / "extracted" / "scenario_initial_states" / f"{kind}_{language}.json"))
    return {name: info["initial_state"] for name, info in raw.items()}
