"""Registration: lazy built-ins, user adapters, did-you-mean errors, adapter options."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest

import envsched_gym
from envsched_gym.registry import BFCL_CATEGORIES, BUILTIN
from tests.conftest import NotesAdapter


def test_builtin_ids_are_registered_with_gymnasium() -> None:
    for _, (entry_point, ids) in BUILTIN.items():
        assert entry_point.startswith("envsched_gym.adapters.")
        for gym_id in ids:
            assert gym_id in gym.registry and gym_id.startswith("envsched/") and gym_id.endswith("-v0")


def test_toolworld_makes_after_import() -> None:
    env = gym.make("envsched/ToolWorld-v0")
    assert env.unwrapped.gym_id == "envsched/ToolWorld-v0"


def test_import_is_lazy() -> None:
    code = "import sys, envsched_gym; print(any(m.startswith('envsched_gym.adapters.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_unknown_id_did_you_mean() -> None:
    with pytest.raises(gym.error.UnregisteredEnv, match="Did you mean 'envsched/ToolWorld-v0'"):
        envsched_gym.make("envsched/ToolWrld-v0")


def test_unknown_family_did_you_mean() -> None:
    with pytest.raises(KeyError, match="Did you mean 'ToolWorld'"):
        envsched_gym.get_adapter("Toolworld")


def test_register_adapter_conflicts_and_replace(notes_adapter: NotesAdapter) -> None:
    with pytest.raises(ValueError, match="already registered; pass replace=True"):
        envsched_gym.register_adapter(NotesAdapter())
    ids = envsched_gym.register_adapter(NotesAdapter(), replace=True)
    assert ids == ["envsched/Notes-v0"] and "Notes" in envsched_gym.families()


def test_empty_family_is_rejected() -> None:
    class Nameless(envsched_gym.Adapter):
        pass

    with pytest.raises(ValueError, match="family is empty"):
        envsched_gym.register_adapter(Nameless())


def test_adapter_options_build_distinct_cached_instances(notes_adapter: NotesAdapter) -> None:
    a = envsched_gym.get_adapter("Notes", {"max_steps_per_turn": 3})
    assert a is envsched_gym.get_adapter("Notes", {"max_steps_per_turn": 3})
    assert a is not envsched_gym.get_adapter("Notes") and a.max_steps_per_turn == 3  # type: ignore[attr-defined]


def test_bfcl_category_list_is_the_v3_set() -> None:
    assert len(BFCL_CATEGORIES) == 17 and len(set(BFCL_CATEGORIES)) == 17
