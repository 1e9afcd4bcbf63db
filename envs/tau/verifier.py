"""τ2's scoring: the product of the components a task's ``reward_basis`` names.

* ``DB``: the agent's write calls are replayed on a fresh DB, the gold actions on another;
  1 iff the SHA-256 of their canonical dumps are equal.
* ``ENV_ASSERTION``: each assertion calls a world method and compares its result.
* ``COMMUNICATE``: every ``communicate_info`` string occurs, case-insensitively, in some
  assistant text with its commas removed (τ2's normalisation).
* ``ACTION``: the fraction of gold actions matched by some agent call (same name; equal
  arguments on ``compare_args``, all the gold's arguments when it is absent).
* ``NL_ASSERTION``: a pluggable judge; with none configured the component is skipped, and
  ``breakdown["nl_assertion_skipped"]`` and ``details["nl_assertion"]`` say so.

An episode that ended abnormally (a step limit, a failed user simulator) scores 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

from envsched_gym.envs.tau.world import TauWorld
from pydantic import Field

from envsched_gym import ChatMessage, Episode, Outcome, TaskSpec, ToolCall, Verifier, World
from envsched_gym.validation import ToolBox
from envsched_gym.verifier import VerifierParams, register_verifier

_TOOLBOXES: dict[type, ToolBox] = {}


class NLJudge(Protocol):
    """Decides τ2's natural-language assertions about a conversation."""

    def __call__(self, assertions: list[str], messages: list[ChatMessage]) -> list[bool]:
        """One verdict per assertion, in order."""
        ...


def replay(world: TauWorld, calls: list[ToolCall], *, validate: bool) -> TauWorld:
    """Run ``calls`` on ``world`` in order; failing calls change nothing further.

    Args:
        world: A fresh world.
        calls: The calls to replay.
        validate: Skip calls the environment would have rejected before running them
            (unknown tool, arguments not matching the schema), as it did for the agent.
    """
    toolbox = None
    if validate:
        if type(world) not in _TOOLBOXES:
            _TOOLBOXES[type(world)] = ToolBox(world.tools())
        toolbox = _TOOLBOXES[type(world)]
    for call in calls:
        if toolbox is not None and toolbox.check(call) is not None:
            continue
        try:
            world.call(call.name, call.arguments)
        except Exception:  # a failing call is part of the trajectory, as in τ2's replay
            continue
    return world


def gold_calls(task: TaskSpec) -> list[ToolCall]:
    """The task's gold actions as calls."""
    return [ToolCall(a["name"], dict(a.get("arguments") or {})) for a in task.verifier.params.get("actions", [])]


def communicated(info: str, messages: list[ChatMessage]) -> bool:
    """τ2's COMMUNICATE check of one string against the assistant's text messages."""
    needle = info.lower()
    return any(m["role"] == "assistant" and needle in (m.get("content") or "").lower().replace(",", "") for m in messages)


def action_matched(action: dict[str, Any], calls: list[ToolCall]) -> bool:
    """Whether some agent call matches a gold action (name, then the compared arguments)."""
    keys = action.get("compare_args")
    gold = action.get("arguments") or {}
    keys = list(gold) if keys is None else list(keys)
    wanted = {k: gold.get(k) for k in keys}
    return any(c.name == action["name"] and {k: c.arguments.get(k) for k in keys} == wanted for c in calls)


RewardBasis = Literal["DB", "COMMUNICATE", "ACTION", "ENV_ASSERTION", "NL_ASSERTION"]


class TauParams(VerifierParams):
    """Kind ``tau``: τ2's evaluation criteria."""

    actions: list[dict[str, Any]] = Field(default_factory=list)
    communicate_info: list[str] = Field(default_factory=list)
    nl_assertions: list[str] = Field(default_factory=list)
    env_assertions: list[dict[str, Any]] = Field(default_factory=list)
    reward_basis: list[RewardBasis] = Field(min_length=1)


class TauVerifier(Verifier):
    """Scores one episode of a τ-bench task (see the module docstring).

    Args:
        task: The task.
        make_world: Builds a fresh world for the task.
        gold_hash: The DB hash after the gold actions (the adapter caches it per task).
        nl_judge: Judge for ``NL_ASSERTION``; ``None`` skips that component.
    """

    kinds = ("tau",)
    Params = TauParams

    def __init__(self, task: TaskSpec, make_world: Callable[[TaskSpec], World], gold_hash: str, nl_judge: NLJudge | None = None) -> None:
        self.task = task
        self.make_world = make_world
        self.gold_hash = gold_hash
        self.nl_judge = nl_judge

    def score(self, episode: Episode, world: World) -> Outcome:
        params = self.task.verifier.params
        basis = list(params.get("reward_basis") or ["DB", "COMMUNICATE"])
        if episode.abnormal:
            return Outcome(0.0, False, {}, {"note": f"terminated abnormally: {episode.termination}", "reward_basis": basis})
        writes = [c.call for c in episode.calls if c.write]
        replayed = replay(self.make_world(self.task), writes, validate=True)  # type: ignore[arg-type]
        components, details = self._components(episode, replayed, params)
        details["reward_basis"] = basis
        reward = 1.0
        breakdown: dict[str, float] = {}
        for name in basis:
            if name not in components:
                details.setdefault("skipped", []).append(name)
                breakdown[f"{name.lower()}_skipped"] = 1.0
                continue
            breakdown[name.lower()] = components[name]
            reward *= components[name]
        return Outcome(reward, reward == 1.0, breakdown, details)

    def _components(self, episode: Episode, replayed: TauWorld, params: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
        agent_hash = replayed.sha256()
        infos = [str(i) for i in params.get("communicate_info", [])]
        comm = {info: communicated(info, episode.messages) for info in infos}
        calls = [c for m in episode.assistant_messages() for c in m.calls]
        actions = params.get("actions", [])
        matched = [action_matched(a, calls) for a in actions]
        env_checks = [self._env_assertion(replayed, a) for a in params.get("env_assertions", [])]
        components = {
            "DB": float(agent_hash == self.gold_hash),
            "COMMUNICATE": float(all(comm.values())),
            "ACTION": sum(matched) / len(matched) if matched else 1.0,
            "ENV_ASSERTION": float(all(env_checks)),
        }
        details: dict[str, Any] = {
            "db_hash": agent_hash, "gold_db_hash": self.gold_hash, "communicate": comm,
            "actions": {a.get("action_id", a["name"]): ok for a, ok in zip(actions, matched, strict=True)}, "env_assertions": env_checks,
        }  # fmt: skip
        nl = params.get("nl_assertions", [])
        if not nl:
            components["NL_ASSERTION"] = 1.0
        elif self.nl_judge is None:
            details["nl_assertion"] = "skipped: no judge configured (pass nl_judge=... to the Tau adapter)"
        else:
            try:
                verdicts = [bool(v) for v in self.nl_judge(list(nl), episode.messages)]
            except Exception as exc:  # a failed judge fails the component, not the rollout
                details["nl_assertion"] = f"judge failed: {type(exc).__name__}: {exc}"
                verdicts = []
            else:
                details["nl_assertion"] = dict(zip(nl, verdicts, strict=False))
            components["NL_ASSERTION"] = float(len(verdicts) == len(nl) and all(verdicts))
        return components, details

    @staticmethod
    def _env_assertion(world: TauWorld, assertion: dict[str, Any]) -> bool:
        """Call the world method an assertion names and compare with ``assert_value``."""
        method = getattr(world, str(assertion.get("func_name")), None)
        if not callable(method):
            return False
        return method(**(assertion.get("arguments") or {})) == assertion.get("assert_value", True)


register_verifier(TauVerifier)
