"""Verifier base class and the generic gold-state verifier custom environments get by default."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from envsched_gym.declarations import TaskSpec
from envsched_gym.episode import Episode, Outcome
from envsched_gym.world import ToolError, World


class Verifier:
    """Scores an episode. One instance per episode, so it may keep per-turn notes.

    Override :meth:`score`; override :meth:`on_turn_end` to inspect the world after each user
    turn (BFCL's multi-turn checker compares state turn by turn).
    """

    def on_turn_end(self, episode: Episode, world: World) -> None:
        """Called after the agent ends each user turn, before the next user message."""

    def score(self, episode: Episode, world: World) -> Outcome:
        """Return the outcome of a finished episode."""
        raise NotImplementedError(f"{type(self).__name__} must implement score(episode, world)")


class GoldStateVerifier(Verifier):
    """Reward 1 iff the final world state equals the gold state and the answer has the facts.

    The gold state is made by replaying the task's gold tool calls on a fresh world.
    ``task.verifier.params["facts"]`` lists strings the final answer must contain
    (case-insensitive). An abnormal end (a limit, a failed user) scores 0.
    """

    def __init__(self, task: TaskSpec, make_world: Callable[[TaskSpec], World]) -> None:
        self.task = task
        self.make_world = make_world

    def gold_state(self) -> Any:
        """World state after the gold solution's calls."""
        world = self.make_world(self.task)
        for turn in self.task.solution or []:
            for call in turn.tool_calls:
                try:
                    world.call(call.name, call.arguments)
                except ToolError:
                    pass
        return world.state()

    def score(self, episode: Episode, world: World) -> Outcome:
        state_ok = canonical(world.state()) == canonical(self.gold_state())
        facts = [str(f) for f in self.task.verifier.params.get("facts", [])]
        answer = episode.final_answer().lower()
        missing = [f for f in facts if f.lower() not in answer]
        facts_ok = not missing
        success = state_ok and facts_ok and not episode.abnormal
        return Outcome(
            reward=float(success),
            success=success,
            breakdown={"state": float(state_ok), "facts": float(facts_ok)},
            details={"missing_facts": missing, "termination": episode.termination},
        )


def canonical(state: Any) -> str:
    """Sorted-key JSON of a state, the form states are compared and hashed in."""
    return json.dumps(state, sort_keys=True, ensure_ascii=False, default=repr)
