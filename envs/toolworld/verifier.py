"""ToolWorld's verifier: gold end state, required facts, and the right process for refuse/ask.

Reward is 1 iff all of these hold, else 0:

* ``state``: the final world state equals the gold state (the gold calls replayed on a fresh
  world), compared as data (tools store numbers normalised, so ``==`` is exact here);
* ``facts``: every required fact (``params["facts"]``: values the user asked for, or the
  number or status a refusal must quote) appears in the final answer, case-insensitively;
* ``process``: for ``ask`` tasks, no write was attempted before the user said which record,
  and the first reply asked (contains ``?``); for ``refuse`` tasks, no more successful writes
  than the gold makes;
* the episode ended normally (not at a step limit).
"""

from __future__ import annotations

from typing import Any

from envsched_gym.declarations import TaskSpec
from envsched_gym.episode import Episode, Outcome
from envsched_gym.verifier import Verifier
from envsched_gym.world import World


class ToolWorldVerifier(Verifier):
    """Scores one episode of a ToolWorld task.

    Args:
        task: The task (its ``verifier.params`` say what to check).
        gold_state: The world state after the gold solution.
    """

    def __init__(self, task: TaskSpec, gold_state: dict[str, Any]) -> None:
        self.task = task
        self.gold_state = gold_state
        self.first_reply: str | None = None
        self.writes_before_reply = 0

    def on_turn_end(self, episode: Episode, world: World) -> None:
        """Remember the first reply and the writes attempted before it (for ``ask`` tasks)."""
        if self.first_reply is None:
            self.first_reply = episode.final_answer()
            self.writes_before_reply = sum(1 for c in episode.calls if c.write)

    def score(self, episode: Episode, world: World) -> Outcome:
        """Reward 1 iff state, facts and process are right and the episode ended normally."""
        params = self.task.verifier.params
        state_ok = world.state() == self.gold_state
        answer = episode.final_answer().lower()
        missing = [f for f in params.get("facts", []) if f.lower() not in answer]
        process_ok, why = self._process(episode, params)
        success = state_ok and not missing and process_ok and not episode.abnormal
        return Outcome(
            reward=float(success),
            success=success,
            breakdown={"state": float(state_ok), "facts": float(not missing), "process": float(process_ok)},
            details={"missing_facts": missing, "process": why, "termination": episode.termination},
        )

    def _process(self, episode: Episode, params: dict[str, Any]) -> tuple[bool, str]:
        if params.get("ask_first"):
            if self.writes_before_reply:
                return False, f"{self.writes_before_reply} write call(s) before asking which record was meant"
            if "?" not in (self.first_reply or ""):
                return False, "the first reply did not ask which record was meant"
        if "max_writes" in params:
            done = sum(1 for c in episode.calls if c.write and c.ok)
            if done > params["max_writes"]:
                return False, f"{done} successful write(s); at most {params['max_writes']} were allowed"
        return True, "ok"
