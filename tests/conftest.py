"""Shared fixtures: a small adapter ("Notes") that exercises every core code path, and the benchmark data.

The benchmark data root is resolved as the library resolves it (``$ENVSCHED_BENCHMARKS``, then
``../shared/benchmarks``). Tests that need the data ask for the ``benchmarks`` fixture, so missing data
fails them with the fix, never skips them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import pytest

import envsched_gym
from envsched_gym import Adapter, AssistantTurn, EnvSpec, TaskSpec, ToolCall, ToolError, VerifierConfig, World, tool
from envsched_gym.data import ENV_VAR, DataNotFoundError, benchmark_root
from envsched_gym.registry import _FAMILIES

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


class Notes(World):
    """A notebook: notes by title, tagged."""

    def __init__(self) -> None:
        self.notes: dict[str, dict[str, object]] = {"todo": {"text": "buy milk", "tag": "home"}}

    @tool
    def read_note(self, title: str) -> dict:
        """Read a note.

        Args:
            title: Note title.
        """
        if title not in self.notes:
            raise ToolError(f"no note titled '{title}'")
        return self.notes[title]

    @tool(write=True)
    def write_note(self, title: str, text: str, tag: Literal["home", "work"] = "home", pinned: bool | None = None) -> str:
        """Create or replace a note.

        Args:
            title: Note title.
            text: Body.
            tag: Category.
            pinned: Pin it to the top.
        """
        self.notes[title] = {"text": text, "tag": tag}
        return "ok"

    @tool
    def crash(self, n: int) -> int:
        """Raise a non-tool exception (a buggy backend).

        Args:
            n: Anything.
        """
        raise RuntimeError("backend bug")


def _tasks() -> list[TaskSpec]:
    write = ToolCall("write_note", {"title": "call", "text": "call mum", "tag": "home"})
    return [
        TaskSpec(
            task_id="notes/0", env_id="Notes", instruction="Add a note 'call' saying 'call mum'.",
            solution=[AssistantTurn(tool_calls=[write]), AssistantTurn("Saved the note 'call'.")],
            verifier=VerifierConfig("gold_state", {"facts": ["call"]}), split="train",
        ),
        TaskSpec(
            task_id="notes/1", env_id="Notes", instruction="What does my todo note say?",
            user_turns=["What does my todo note say?", "Now tag a note 'x' with text 'y' as work."],
            solution=[
                AssistantTurn(tool_calls=[ToolCall("read_note", {"title": "todo"})]),
                AssistantTurn("It says: buy milk."),
                AssistantTurn(tool_calls=[ToolCall("write_note", {"title": "x", "text": "y", "tag": "work"})]),
                AssistantTurn("Done."),
            ],
            verifier=VerifierConfig("gold_state", {"facts": ["done"]}), split="test",
        ),
        TaskSpec(
            task_id="notes/2", env_id="Notes-single", instruction="Read the todo note.",
            solution=[AssistantTurn(tool_calls=[ToolCall("read_note", {"title": "todo"})])],
            verifier=VerifierConfig("gold_state"), split="train",
        ),
    ]  # fmt: skip


class NotesAdapter(Adapter):
    """Two environments: a multi-step one and a single-response one."""

    family = "Notes"
    world = Notes
    max_steps = 6

    def __init__(self, max_steps_per_turn: int | None = None) -> None:
        self.max_steps_per_turn = max_steps_per_turn

    def env_specs(self) -> list[EnvSpec]:
        base = super().env_specs()[0]
        base.max_steps_per_turn = self.max_steps_per_turn
        single = EnvSpec.from_dict({**base.to_dict(), "env_id": "Notes-single", "interaction": "single_response"})
        return [base, single]

    def tasks(self, split: str = "all") -> list[TaskSpec]:
        return [t for t in _tasks() if split == "all" or t.split == split]

    def with_options(self, **options: object) -> NotesAdapter:
        return NotesAdapter(**options)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def notes_adapter() -> NotesAdapter:
    """The Notes adapter, registered as envsched/Notes-v0 for the whole session."""
    if "Notes" not in _FAMILIES:
        envsched_gym.register_adapter(NotesAdapter())
    return envsched_gym.get_adapter("Notes")  # type: ignore[return-value]


NEED_DATA = f"These tests need the benchmark data: set {ENV_VAR}=/path/to/benchmarks (the README's 'Benchmark data' section)."


def benchmark_data() -> Path:
    """The benchmark data root, resolved as the library resolves it; fails the calling test if it is absent."""
    try:
        return benchmark_root()
    except DataNotFoundError as exc:
        why = str(exc)
    pytest.fail(f"{why}\n{NEED_DATA}", pytrace=False)  # outside the except: the message once, without the chained error


@pytest.fixture(scope="session")
def benchmarks() -> Path:
    """The benchmark data root (see :func:`benchmark_data`)."""
    return benchmark_data()
