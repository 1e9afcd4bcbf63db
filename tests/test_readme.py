"""The README's python code blocks run exactly as written, in order, in one namespace."""

from __future__ import annotations

import re

import envsched_gym
from envsched_gym.registry import _FAMILIES
from tests.conftest import REPO

BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_readme_opens_with_the_two_commands() -> None:
    text = (REPO / "README.md").read_text()
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in first_block.strip().splitlines()] == [["make", "run"], ["make", "test"]]


def test_readme_python_blocks_run() -> None:
    blocks = BLOCK.findall((REPO / "README.md").read_text())
    assert len(blocks) >= 3
    _FAMILIES.pop("Thermostat", None)
    namespace: dict[str, object] = {"__name__": "readme"}
    try:
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)  # trusted documentation code, not model output
    finally:
        _FAMILIES.pop("Thermostat", None)
    assert namespace["reward"] == 1.0
    assert "Thermostat" not in envsched_gym.families()
