"""ToolWorld's verifier (kind ``toolworld``): the core blocks, chosen by the task's pattern.

Reward is 1 iff every block scores 1 and the episode ended normally, else 0:

* ``state_match``: the final world state equals the gold state (the gold calls replayed on a fresh
  world), compared as data (tools store numbers normalised, so equality is exact here);
* ``facts``: every required fact (values the user asked for, or the number or status a refusal
  must quote) appears in the final answer, case-insensitively, as a whole token and a number by
  value (``envsched_gym.fact_match``: an answer of ``21`` does not state 1 night);
* ``sourced`` (tasks with facts): every fact was in the result of a call that succeeded (or, in
  ``refuse`` tasks, the system prompt, whose policies state limits), so a guess made before
  looking, a number copied from an error message, or a policy's number offered for an unrelated
  question fails; outside refusals, the answer also states no other value of an asked field that
  the agent did not read (listing days to hit the asked one fails);
* ``grounded`` (tasks with facts): every number of the final answer appears in the system prompt,
  a tool declaration, a user message or a successful call's result, so listing numbers to hit the
  asked one fails;
* ``ask_clarification`` (``ask`` tasks): the first reply asks (contains ``?``) and no write was
  attempted before it;
* ``refusal`` (``refuse`` tasks): no more successful writes than the gold makes, and the final
  answer declines (contains a refusal phrase such as "cannot"; the gold's says "I cannot ...").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from envsched_gym.blocks import AskClarification, Block, FactsInAnswer, GroundedNumbers, Refusal, SourcedFacts, StateMatch
from envsched_gym.composed import BlockVerifier
from envsched_gym.declarations import TaskSpec
from envsched_gym.provenance import Source
from envsched_gym.verifier import VerifierParams, register_verifier

if TYPE_CHECKING:
    from envsched_gym.adapter import Adapter

Pattern = Literal["single", "chain", "parallel", "refuse", "ask"]


class ToolWorldParams(VerifierParams):
    """What a ToolWorld task's verifier checks (written by the generator)."""

    facts: list[str] = Field(default_factory=list)
    pattern: Pattern
    max_writes: int | None = Field(default=None, ge=0)
    """``refuse`` tasks: the successful writes the gold makes before declining."""
    ask_first: bool = False


class ToolWorldVerifier(BlockVerifier):
    """Scores one episode of a ToolWorld task from the blocks its parameters select."""

    kinds = ("toolworld",)
    Params = ToolWorldParams  # type: ignore[assignment]

    @classmethod
    def from_task(cls, task: TaskSpec, params: ToolWorldParams, adapter: Adapter) -> ToolWorldVerifier:  # type: ignore[override]
        return cls(task, blocks_for(params), adapter)

    @classmethod
    def check_task(cls, task: TaskSpec, params: ToolWorldParams) -> None:  # type: ignore[override]
        for block in blocks_for(params):
            block.check_task(task)
        if (params.pattern == "refuse") != (params.max_writes is not None):
            raise ValueError("max_writes is set exactly for 'refuse' tasks")
        if (params.pattern == "ask") != params.ask_first:
            raise ValueError("ask_first is set exactly for 'ask' tasks")


def blocks_for(params: ToolWorldParams) -> list[Block]:
    """The blocks of one task, in breakdown order."""
    blocks: list[Block] = [StateMatch()]
    if params.facts:
        refuse = params.pattern == "refuse"  # a policy's limit is quoted from the system prompt; no other fact is
        sources: list[Source] = ["tool_results", "system"] if refuse else ["tool_results"]
        blocks += [FactsInAnswer(facts=params.facts), SourcedFacts(facts=params.facts, sources=sources, alternatives=not refuse), GroundedNumbers()]
    if params.ask_first:
        blocks.append(AskClarification(turn=0, before="write"))
    if params.max_writes is not None:
        blocks.append(Refusal(max_writes=params.max_writes))
    return blocks


register_verifier(ToolWorldVerifier)
