"""Verifiers for ACEBench tasks: normal, special (one scored reply) and agent (end state + process).

Every verifier takes ``mode``: ``strict`` (default, for RL rewards) or ``faithful`` (the
original evaluator's quirks); ``docs/acebench.md`` lists the differences.
"""

from __future__ import annotations

from typing import Any

from envsched_gym.envs.acebench.agent_check import check_end_state, process_accuracy
from envsched_gym.envs.acebench.normal_check import check_normal
from envsched_gym.envs.acebench.special_check import check_special
from envsched_gym.envs.acebench.world import ScenarioWorld

from envsched_gym import Episode, Outcome, TaskSpec, Verifier, World
from envsched_gym.verifier import VerifierParams, register_verifier

MODES = ("strict", "faithful")


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown ACEBench scoring mode {mode!r}; use one of {MODES}")
    return mode


def _first_reply(episode: Episode) -> tuple[str, list[dict[str, Any]]]:
    replies = episode.assistant_messages()
    if not replies:
        return "", []
    return replies[0].content, [{c.name: dict(c.arguments)} for c in replies[0].calls]


class SingleParams(VerifierParams):
    """Kinds ``ace_normal`` and ``ace_special``: the entry's functions and possible answer."""

    functions: list[dict[str, Any]]
    answer: Any
    category: str


class AgentParams(VerifierParams):
    """Kind ``ace_agent``: the end state and the milestone lists."""

    ground_truth: Any
    mile_stone: Any


class NormalVerifier(Verifier):
    """Scores the first assistant message's calls against the possible answer.

    ``strip_whitespace`` (faithful mode only) deletes whitespace inside string arguments first,
    as the original does to the raw model text.
    """

    kinds = ("ace_normal",)
    Params = SingleParams

    def __init__(self, task: TaskSpec, mode: str = "strict", strip_whitespace: bool = False) -> None:
        self.task, self.mode, self.strip_whitespace = task, _check_mode(mode), strip_whitespace

    def score(self, episode: Episode, world: World) -> Outcome:
        _, calls = _first_reply(episode)
        params = self.task.verifier.params
        result = check_normal(params["functions"], calls, params["answer"], self.mode, self.strip_whitespace)
        return Outcome(
            reward=float(result.valid),
            success=result.valid,
            breakdown={"accuracy": float(result.valid)},
            details={"mode": self.mode, "errors": result.errors, "error_type": result.error_type, "calls": calls},
        )


class SpecialVerifier(Verifier):
    """Scores the first assistant message's text (it must name what is missing or wrong)."""

    kinds = ("ace_special",)
    Params = SingleParams

    def __init__(self, task: TaskSpec, mode: str = "strict") -> None:
        self.task, self.mode = task, _check_mode(mode)

    def score(self, episode: Episode, world: World) -> Outcome:
        text, calls = _first_reply(episode)
        params = self.task.verifier.params
        result = check_special(params["category"], text, len(calls), params["answer"], self.mode)
        return Outcome(
            reward=float(result.valid),
            success=result.valid,
            breakdown={"accuracy": float(result.valid)},
            details={"mode": self.mode, "errors": result.errors, "error_type": result.error_type},
        )


class AgentVerifier(Verifier):
    """End-state accuracy (the reward) and process accuracy (milestones) of an agent episode."""

    kinds = ("ace_agent",)
    Params = AgentParams

    def __init__(self, task: TaskSpec, mode: str = "strict") -> None:
        self.task, self.mode = task, _check_mode(mode)

    def score(self, episode: Episode, world: World) -> Outcome:
        assert isinstance(world, ScenarioWorld), f"ACEBench agent tasks run in a ScenarioWorld, got {type(world).__name__}"
        params = self.task.verifier.params
        executed = any(c.ok for c in episode.calls)
        saved = world.saved_state() if executed or self.mode == "strict" else []
        state = check_end_state(saved, params["ground_truth"], self.mode)
        end_ok = state.valid and not episode.abnormal
        messages = [m.calls for m in episode.assistant_messages() if m.calls]
        process = 1.0 if end_ok else process_accuracy(messages, params["mile_stone"], self.mode)
        return Outcome(
            reward=float(end_ok),
            success=end_ok,
            breakdown={"end_state": float(end_ok), "process": process},
            details={"mode": self.mode, "state_errors": state.errors, "termination": episode.termination},
        )


for _cls in (NormalVerifier, SpecialVerifier, AgentVerifier):
    register_verifier(_cls)
