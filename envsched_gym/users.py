"""User simulators: who answers when the agent replies in text instead of calling a tool."""

from __future__ import annotations

from dataclasses import dataclass

from envsched_gym.declarations import TaskSpec
from envsched_gym.episode import Episode


@dataclass
class UserReply:
    """The user's next message; ``stop`` ends the episode (the user is done or gave up)."""

    content: str = ""
    stop: bool = False


class UserSimulator:
    """Interface every user simulator implements (scripted, LLM-backed, ...).

    ``reply`` may raise; the environment then ends the episode with the error in ``info``.
    """

    def start(self, task: TaskSpec) -> str:
        """Reset for ``task`` and return the first user message."""
        raise NotImplementedError

    def reply(self, episode: Episode) -> UserReply:
        """The user's answer to the agent's latest message."""
        raise NotImplementedError


class ScriptedTurns(UserSimulator):
    """Replays ``task.user_turns`` (or just ``task.instruction``) one per agent turn, then stops."""

    def __init__(self) -> None:
        self._turns: list[str] = []
        self._next = 0

    def start(self, task: TaskSpec) -> str:
        self._turns = list(task.user_turns) or [task.instruction]
        self._next = 1
        return self._turns[0]

    def reply(self, episode: Episode) -> UserReply:
        if self._next >= len(self._turns):
            return UserReply(stop=True)
        self._next += 1
        return UserReply(content=self._turns[self._next - 1])
