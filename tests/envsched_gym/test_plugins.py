"""A user's family reaches gym.make, the suite and the scripts: --import, module:id, entry points."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import pytest

import envsched_gym
from envsched_gym import registry
from envsched_gym.plugins import PluginError, import_modules, load_entry_points, resolve, split_imports
from envsched_gym.rl.tasks import select_tasks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lampworld"


@pytest.fixture
def lampworld_path(monkeypatch: pytest.MonkeyPatch):
    """The fixture package importable, and LampWorld unregistered before and after."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    _forget()
    yield
    _forget()


def _forget() -> None:
    entry = registry._FAMILIES.pop("LampWorld", None)
    for gym_id in entry.gym_ids if entry else []:
        gym.registry.pop(gym_id, None)
    sys.modules.pop("lampworld", None)


def test_an_unknown_family_says_how_to_make_it_visible() -> None:
    with pytest.raises(KeyError, match=r"--import MODULE.*module:envsched/Name-v0.*envsched_gym\.adapters"):
        envsched_gym.get_adapter("LampWorld")
    with pytest.raises(gym.error.UnregisteredEnv, match="--import MODULE"):
        registry.family_of("envsched/LampWorld-v0")


def test_import_registers_the_family_for_the_suite(lampworld_path) -> None:
    import_modules(["lampworld"])
    assert "LampWorld" in envsched_gym.families()
    assert len(select_tasks("LampWorld", "train")) == 9 and len(select_tasks("LampWorld", "heldout")) == 3


def test_the_module_id_form_imports_then_resolves(lampworld_path) -> None:
    assert resolve("lampworld:envsched/LampWorld-v0") == "envsched/LampWorld-v0"
    assert len(select_tasks("lampworld:envsched/LampWorld-v0", "heldout")) == 3
    env = gym.make("envsched/LampWorld-v0")
    env.reset(options={"task_id": "lamp/3"})
    assert "switch" in {t["function"]["name"] for t in env.unwrapped._schemas}


def test_a_module_that_cannot_be_imported_is_named_with_the_fix() -> None:
    with pytest.raises(PluginError, match=r"--import no_such_family_module: .*PYTHONPATH"):
        import_modules(["no_such_family_module"])
    with pytest.raises(PluginError, match="no_such_family_module"):
        select_tasks("no_such_family_module:envsched/X-v0", "train")


def _dist(root: Path, value: str, name: str = "LampWorld") -> None:
    """An installed distribution's metadata with one entry point (what pip writes)."""
    info = root / "lampworld_family-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lampworld-family\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[envsched_gym.adapters]\n{name} = {value}\n")


def test_an_installed_entry_point_registers_its_family(lampworld_path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dist(tmp_path, "lampworld:LampAdapter")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_entry_points() == ["LampWorld"]
    assert "envsched/LampWorld-v0" in envsched_gym.registered_ids()
    assert load_entry_points() == []  # already registered: loading again is harmless


BROKEN = [
    ("lampworld:NoSuchAdapter", "LampWorld", "failed to load"),
    ("lampworld:ROOMS", "LampWorld", "failed to load"),
    ("lampworld:Lamps", "LampWorld", "not an envsched_gym.Adapter"),
    ("lampworld:LampAdapter", "Lamps", "name the entry point 'LampWorld'"),
]


@pytest.mark.parametrize(("value", "name", "message"), BROKEN)
def test_a_broken_entry_point_is_named(
    lampworld_path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, name: str, message: str
) -> None:
    _dist(tmp_path, value, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._FAMILIES.pop("LampWorld", None)  # the module registers itself on import; the entry point is what is checked
    with pytest.raises(PluginError, match=message) as raised:
        load_entry_points()
    assert "lampworld-family" in str(raised.value) and value in str(raised.value)


def test_repeated_import_flags_are_collected() -> None:
    assert split_imports(["--import", "a", "--steps", "2", "--import=b"]) == (["a", "b"], ["--steps", "2"])
    with pytest.raises(SystemExit, match="--import needs a module"):
        split_imports(["--import"])
