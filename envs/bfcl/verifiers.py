"""BFCL's verdicts as :class:`Verifier` s: AST, (ir)relevance and multi-turn execution.

Single-turn categories score the first assistant message (``single_response``): a message with
any malformed call counts as "failed to decode", as in BFCL. Multi-turn scoring follows BFCL's
checker turn by turn: the gold calls of the turn run on a separate set of backends; a turn with
non-empty gold passes iff the agent made at least one call in it, every backend's public state
equals the gold backends', and the gold results are contained (as a multiset) in all the agent's
results so far. The entry succeeds iff every such turn passes and the episode was not cut off.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from envsched_gym.envs.bfcl.ast_checker import check_calls
from envsched_gym.envs.bfcl.backends import BackendSetup, BFCLWorld, state_differences
from envsched_gym.envs.bfcl.gold import parse_gold_call

from envsched_gym.declarations import TaskSpec, ToolCall
from envsched_gym.episode import Episode, Outcome
from envsched_gym.verifier import Verifier, VerifierParams, register_verifier
from envsched_gym.world import World


class SingleTurnParams(VerifierParams):
    """Kinds ``bfcl_ast``, ``bfcl_irrelevance``, ``bfcl_relevance``: the entry's functions and answer."""

    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None
    """BFCL's ``[{function: {parameter: [accepted values]}}]``; ``None`` for (ir)relevance."""
    category: str


class MultiTurnParams(VerifierParams):
    """Kind ``bfcl_multi_turn``: the gold call strings per user turn."""

    ground_truth: list[list[str]] | None
    category: str


def first_response(episode: Episode) -> tuple[list[ToolCall], bool]:
    """The first assistant message's calls and whether it decoded (no malformed call).

    Single-response episodes have exactly one assistant message, so the episode's parse-error
    count is that message's.
    """
    replies = episode.assistant_messages()
    if not replies:
        return [], False
    message = replies[0]
    return list(message.calls), episode.parse_errors == 0


class SingleTurnVerifier(Verifier):
    """AST, irrelevance and relevance verdicts on the first assistant message.

    ``task.verifier.kind`` is ``bfcl_ast`` (params: ``functions``, ``ground_truth``,
    ``category``), ``bfcl_irrelevance`` (success iff no call) or ``bfcl_relevance``
    (success iff at least one call).
    """

    kinds = ("bfcl_ast", "bfcl_irrelevance", "bfcl_relevance")
    Params = SingleTurnParams

    def __init__(self, task: TaskSpec) -> None:
        self.task = task

    @classmethod
    def check_task(cls, task: TaskSpec, params: SingleTurnParams) -> None:
        if task.verifier.kind == "bfcl_ast" and params.ground_truth is None:
            raise ValueError("bfcl_ast needs ground_truth")

    def score(self, episode: Episode, world: World) -> Outcome:
        calls, decoded = first_response(episode)
        has_call = decoded and bool(calls)
        kind, params = self.task.verifier.kind, self.task.verifier.params
        if kind == "bfcl_irrelevance":
            success, error = not has_call, "" if not has_call else "made a call where none was due"
        elif kind == "bfcl_relevance":
            success, error = has_call, "" if has_call else "made no (decodable) call"
        elif not decoded:
            success, error = False, "ast_decoder:decoder_failed"
        else:
            verdict = check_calls(params["functions"], calls, params["ground_truth"], params["category"])
            success, error = verdict.valid, f"{verdict.error_type}: {verdict.reason}" if not verdict.valid else ""
        return Outcome(
            reward=float(success),
            success=success,
            breakdown={"n_calls": float(len(calls)), "decoded": float(decoded)},
            details={"error": error},
        )


@dataclass
class TurnCheck:
    """The multi-turn checker's findings for one user turn."""

    turn: int
    checked: bool
    has_call: bool = True
    state_diff: dict[str, list[str]] = field(default_factory=dict)
    missing_results: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when the turn had no gold, or met all three conditions."""
        return not self.checked or (self.has_call and not self.state_diff and not self.missing_results)


class MultiTurnVerifier(Verifier):
    """BFCL's multi-turn checker, run incrementally at the end of every user turn.

    ``task.verifier.params["ground_truth"]`` is BFCL's list (per turn) of gold call strings.
    """

    kinds = ("bfcl_multi_turn",)
    Params = MultiTurnParams

    def __init__(self, task: TaskSpec, setup: BackendSetup, owners: dict[str, str]) -> None:
        self.task = task
        self.gold_world = BFCLWorld(setup)
        self.owners = owners
        self.gold_turns: list[list[str]] = task.verifier.params["ground_truth"]
        self.checks: list[TurnCheck] = []

    def on_turn_end(self, episode: Episode, world: World) -> None:
        assert isinstance(world, BFCLWorld), "BFCL multi-turn episodes run in a BFCLWorld"
        turn = episode.turn
        gold = self.gold_turns[turn] if turn < len(self.gold_turns) else []
        gold_results = [self.gold_world.execute(parse_gold_call(text, self.owners)) for text in gold]
        if not gold:
            self.checks.append(TurnCheck(turn, checked=False))
            return
        missing = Counter(gold_results) - Counter(world.all_results())
        self.checks.append(
            TurnCheck(
                turn,
                checked=True,
                has_call=bool(episode.calls_in_turn(turn)),
                state_diff=state_differences(world, self.gold_world),
                missing_results=list(missing.elements()),
            )
        )

    def score(self, episode: Episode, world: World) -> Outcome:
        complete = not episode.abnormal and len(self.checks) == len(self.gold_turns)
        failed = next((c for c in self.checks if not c.passed), None)
        success = complete and failed is None
        checked = [c for c in self.checks if c.checked]
        dense = sum(c.passed for c in checked) / max(1, sum(bool(g) for g in self.gold_turns))
        return Outcome(
            reward=float(success),
            success=success,
            breakdown={"turn_pass_rate": dense, "turns_completed": float(len(self.checks))},
            details=_failure_details(failed, complete, episode),
        )


def _failure_details(failed: TurnCheck | None, complete: bool, episode: Episode) -> dict[str, Any]:
    if not complete:
        return {"error_type": "multi_turn:force_terminated", "termination": episode.termination}
    if failed is None:
        return {}
    if not failed.has_call:
        return {"error_type": "multi_turn:empty_turn_model_response", "turn": failed.turn}
    if failed.state_diff:
        return {"error_type": "multi_turn:instance_state_mismatch", "turn": failed.turn, "differences": failed.state_diff}
    return {"error_type": "multi_turn:execution_response_mismatch", "turn": failed.turn, "missing": failed.missing_results}


register_verifier(SingleTurnVerifier)
register_verifier(MultiTurnVerifier)
