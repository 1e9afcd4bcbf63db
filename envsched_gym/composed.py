"""Verifiers composed from blocks: kind ``blocks`` (any list) and kind ``gold_state`` (the default).

The reward is the product of the blocks' scores, and 0 when the episode ended abnormally (a
step limit, a failed user simulator). ``Outcome.breakdown`` has one entry per block, under its
name (``facts``, ``facts#2`` for a second one), plus ``completed``; ``Outcome.details["blocks"]``
says why each block scored what it did.

In a task::

    VerifierConfig("blocks", {"blocks": [
        {"block": "state_match"},
        {"block": "refusal"},
        {"block": "forbidden_calls", "calls": [{"name": "assign", "arguments": {"user": "bob"}}]},
    ]})
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, field_validator

from envsched_gym.blocks import Block, Context, FactsInAnswer, StateMatch, block_class
from envsched_gym.declarations import TaskSpec
from envsched_gym.episode import Episode, Outcome
from envsched_gym.verifier import Verifier, VerifierParams, describe, register_verifier
from envsched_gym.world import World

if TYPE_CHECKING:
    from envsched_gym.adapter import Adapter


class BlocksParams(VerifierParams):
    """Parameters of kind ``blocks``: the blocks, each ``{"block": name, **its parameters}``."""

    blocks: list[Block] = Field(min_length=1)

    @field_validator("blocks", mode="before")
    @classmethod
    def _typed(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [item if isinstance(item, Block) else _block_from_config(index, item) for index, item in enumerate(value)]


def _block_from_config(index: int, item: Any) -> Block:
    if not isinstance(item, dict) or "block" not in item:
        raise ValueError(
            f"blocks[{index}] must be a dict with a 'block' name, e.g. {{'block': 'facts', 'facts': ['42']}}; got {item!r:.80}"
        )
    config = dict(item)
    try:
        cls = block_class(config.pop("block"))
    except KeyError as exc:
        raise ValueError(f"blocks[{index}]: {exc.args[0]}") from None
    try:
        return cls.model_validate(config)
    except ValidationError as exc:
        raise ValueError(f"blocks[{index}] ({cls.name}): {describe(exc, cls)}") from None


class BlockVerifier(Verifier):
    """Scores an episode as the product of its blocks (see the module docstring).

    Args:
        task: The task scored.
        blocks: The checks, in report order.
        adapter: Gives the gold end state (:meth:`Adapter.gold_state`, cached per task) to
            blocks that compare with it; only needed when a block does.
    """

    kinds = ("blocks",)
    Params = BlocksParams

    def __init__(self, task: TaskSpec, blocks: Sequence[Block], adapter: Adapter | None = None) -> None:
        if not blocks:
            raise ValueError(f"task '{task.task_id}': a BlockVerifier needs at least one block")
        self.task = task
        self.blocks = list(blocks)
        self.adapter = adapter
        self.context = Context(self._gold_state)

    @classmethod
    def from_task(cls, task: TaskSpec, params: BlocksParams, adapter: Adapter) -> BlockVerifier:
        return cls(task, params.blocks, adapter)

    @classmethod
    def check_task(cls, task: TaskSpec, params: BlocksParams) -> None:
        for index, block in enumerate(params.blocks):
            try:
                block.check_task(task)
            except ValueError as exc:
                raise ValueError(f"blocks[{index}] ({block.name}): {exc}") from None

    def on_turn_end(self, episode: Episode, world: World) -> None:
        """Record the reply that ended the turn (``ask_clarification`` reads it)."""
        self.context.replies.append(episode.final_answer())

    def score(self, episode: Episode, world: World) -> Outcome:
        breakdown: dict[str, float] = {}
        why: dict[str, str] = {}
        reward = 0.0 if episode.abnormal else 1.0
        for block in self.blocks:
            check = block.check(episode, world, self.context)
            key = _key(block.name, breakdown)
            breakdown[key], why[key] = check.score, check.why
            reward *= check.score
        breakdown["completed"] = float(not episode.abnormal)
        return Outcome(
            reward=reward, success=reward == 1.0, breakdown=breakdown, details={"blocks": why, "termination": episode.termination}
        )

    def _gold_state(self) -> Any:
        if self.adapter is None:
            raise ValueError(f"task '{self.task.task_id}': a block compares with the gold state; build the BlockVerifier with adapter=")
        return self.adapter.gold_state(self.task)


def _key(name: str, taken: dict[str, float]) -> str:
    if name not in taken:
        return name
    count = 2
    while f"{name}#{count}" in taken:
        count += 1
    return f"{name}#{count}"


class GoldStateParams(VerifierParams):
    """Parameters of kind ``gold_state``: facts the final answer must state (case-insensitive, whole tokens; see ``fact_match``)."""

    facts: list[str] = Field(default_factory=list)


class GoldStateVerifier(BlockVerifier):
    """The default: ``state_match`` plus, when the task lists facts, ``facts``."""

    kinds = ("gold_state",)
    Params = GoldStateParams  # type: ignore[assignment]

    @classmethod
    def from_task(cls, task: TaskSpec, params: GoldStateParams, adapter: Adapter) -> GoldStateVerifier:  # type: ignore[override]
        blocks: list[Block] = [StateMatch()]
        if params.facts:
            blocks.append(FactsInAnswer(facts=params.facts))
        return cls(task, blocks, adapter)

    @classmethod
    def check_task(cls, task: TaskSpec, params: GoldStateParams) -> None:  # type: ignore[override]
        StateMatch().check_task(task)


register_verifier(BlockVerifier)
register_verifier(GoldStateVerifier)
