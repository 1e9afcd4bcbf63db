"""Verifier building blocks: small typed checks that a verifier multiplies into its reward.

Each block is a typed config (unknown keys are an error) with a :meth:`Block.check` that reads the
finished episode and returns a score in [0, 1] and a reason. :class:`~envsched_gym.composed.BlockVerifier`
runs a list of them and reports each in the reward breakdown under the block's name.

The blocks, by config name:

* ``state_match``: the final world state equals the gold state (the gold calls replayed);
* ``facts``: the final answer states every listed fact (as a whole token; a number by value);
* ``grounded``: every number the final answer states appears in a system or user message, a
  successful call's result or a tool's declaration;
* ``sourced``: every fact was in a successful call's result or the system prompt, and the answer
  states no other value of an asked field that the agent was not given;
* ``required_calls``: calls matching each pattern were made (in order, or in any order);
* ``forbidden_calls``: no call matching a pattern was made (or attempted);
* ``ask_clarification``: the reply that ends a user turn asks a question, with no write before it;
* ``refusal``: no more successful writes than allowed, and the final answer declines;
* ``milestones``: calls and statements (whole tokens, as for ``facts``) happen in order (optionally
  scored by the fraction reached).

A call pattern matches a call of the same name whose arguments include every listed argument
with an equal value (numbers by value, so ``2`` matches ``2.0``; ``True`` never matches ``1``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import networkx as nx
from pydantic import Field, model_validator

from envsched_gym.declarations import TaskSpec, ToolCall
from envsched_gym.episode import CallRecord, Episode
from envsched_gym.fact_match import numbers_in, states_fact
from envsched_gym.provenance import Source, alternatives, given_texts
from envsched_gym.verifier import VerifierParams, canonical
from envsched_gym.world import World

REFUSAL_MARKERS: tuple[str, ...] = (
    "cannot", "can't", "can not", "unable", "not able", "won't", "will not", "not possible", "not allowed",
    "not permitted", "decline", "refuse", "sorry",
)  # fmt: skip
"""Phrases of which a refusal must contain one (case-insensitive), unless a task lists its own."""


@dataclass
class Context:
    """What a block may read besides the episode and the world.

    Attributes:
        gold_state: Returns the gold end state (computed once per task, cached by the adapter).
        replies: The agent's reply that ended each user turn so far, in turn order (recorded by
            the verifier's ``on_turn_end``).
    """

    gold_state: Callable[[], Any]
    replies: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    """One block's verdict: ``score`` in [0, 1] and why."""

    score: float
    why: str = "ok"


class Block(VerifierParams):
    """Base of every block. Subclasses set ``name`` and implement :meth:`check`."""

    name: ClassVar[str] = ""

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        """Score the finished ``episode``."""
        raise NotImplementedError(f"{type(self).__name__} must implement check(episode, world, context)")

    def check_task(self, task: TaskSpec) -> None:
        """Raise ``ValueError`` when this block cannot score ``task`` (checked at registration)."""


class CallPattern(VerifierParams):
    """A call of ``name`` whose arguments include these (a subset match)."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)

    def matches(self, call: ToolCall) -> bool:
        """True when ``call`` has this name and every listed argument, with an equal value."""
        return call.name == self.name and all(k in call.arguments and same_value(call.arguments[k], v) for k, v in self.arguments.items())

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


def same_value(got: Any, want: Any) -> bool:
    """Equal as data: numbers by value (not bools), lists and dicts element by element."""
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, int | float) and isinstance(want, int | float):
        return got == want
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(same_value(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(same_value(got[k], want[k]) for k in got)
    return type(got) is type(want) and got == want


class StateMatch(Block):
    """The final world state equals the state after the gold calls (top-level ``ignore`` keys aside)."""

    name: ClassVar[str] = "state_match"
    ignore: list[str] = Field(default_factory=list)

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        got, want = self._view(world.state()), self._view(context.gold_state())
        if canonical(got) == canonical(want):
            return Check(1.0)
        if isinstance(got, dict) and isinstance(want, dict):
            differ = sorted(k for k in got.keys() | want.keys() if canonical(got.get(k)) != canonical(want.get(k)))
            return Check(0.0, f"state differs from the gold state in {differ[:5]}")
        return Check(0.0, "state differs from the gold state")

    def check_task(self, task: TaskSpec) -> None:
        if task.solution is None:
            raise ValueError("state_match needs the task's gold solution (TaskSpec.solution) to compute the gold state")

    def _view(self, state: Any) -> Any:
        if self.ignore and isinstance(state, dict):
            return {k: v for k, v in state.items() if k not in self.ignore}
        return state


class FactsInAnswer(Block):
    """The final answer (or, with ``anywhere``, any assistant message) states every fact.

    ``match="token"`` (the default) finds each fact as a whole token and a numeric fact by value
    (:mod:`envsched_gym.fact_match`: ``21`` does not state ``1``, ``unlocked`` does not state
    ``locked``); ``"substring"`` is the plain containment test, for a benchmark whose official
    checker uses it.
    """

    name: ClassVar[str] = "facts"
    facts: list[str] = Field(min_length=1)
    case_sensitive: bool = False
    anywhere: bool = False
    match: Literal["token", "substring"] = "token"

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        texts = [m.content for m in episode.assistant_messages()] if self.anywhere else [episode.final_answer()]
        missing = [f for f in self.facts if not self._states(" ".join(texts), f)]
        return Check(0.0, f"the answer lacks {missing}") if missing else Check(1.0)

    def _states(self, text: str, fact: str) -> bool:
        if self.match == "token":
            return states_fact(text, fact, self.case_sensitive)
        return fact in text if self.case_sensitive else fact.lower() in text.lower()


class GroundedNumbers(Block):
    """Every number the final answer states appears in something the agent was given.

    The sources (:func:`envsched_gym.provenance.given_texts`) are the system prompt, the tools'
    declarations (a limit a tool enforces is written there), the user's messages and the results
    of the calls that succeeded; never the agent's own messages (a policy could otherwise ground a
    guess by writing it twice), nor an error observation, which echoes the agent's own call. An
    answer that lists numbers to hit whichever one a ``facts`` block asks for (``1 2 3 5 8 12``)
    fails, as does a made-up figure; a number that needs arithmetic the conversation does not show
    (``3 records`` counted by the agent) fails too, so use the block where the answers quote
    values, as ToolWorld's do (every gold answer passes; a test replays them all).
    """

    name: ClassVar[str] = "grounded"

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        given = {n for text in given_texts(episode) for n in numbers_in(text)}
        extra = sorted({n for n in numbers_in(episode.final_answer()) if n not in given})
        if extra:
            return Check(0.0, f"the answer states {[_plain(n) for n in extra[:6]]}, which nothing the agent was given says")
        return Check(1.0)


class SourcedFacts(Block):
    """The agent was given every fact it states, and states no competing value it was not given.

    Two checks, against what an answer can state without knowing:

    * each fact appears (as ``facts`` matches it) in one of ``sources``: by default the result of
      a call that succeeded or the system prompt, so a fact guessed before any lookup, or copied
      from an error message, fails (``suite`` for a room type, ``1`` from ``line 1``);
    * the final answer states no *alternative* of a fact (:func:`envsched_gym.provenance.alternatives`:
      another value of the record field that holds it in the task's initial state) unless the
      system prompt, a user message or a successful call's result states it too, so listing
      ``Monday, Thursday, Friday`` for "which day" fails where the agent looked up only Thursday.
      A declaration's example values (``e.g. "Monday"``) do not count here: they name the field's
      domain, which is what a list of guesses draws on.

    It reads the task's ``initial_state``; a task without one has no alternatives to refuse.
    """

    name: ClassVar[str] = "sourced"
    facts: list[str] = Field(min_length=1)
    sources: list[Source] = Field(default_factory=lambda: ["tool_results", "system"], min_length=1)
    alternatives: bool = True
    """Refuse alternatives the agent was not given. Matched as written (case-sensitive), since a
    value is data (``done``, ``Thursday``) and the same word may open a sentence (``Done: ...``).
    Turn it off where an answer must name another value to explain itself (a refusal's "only a
    pending order can be cancelled")."""

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        seen = " \n".join(given_texts(episode, self.sources))
        unseen = [f for f in self.facts if not states_fact(seen, f)]
        if unseen:
            return Check(0.0, f"the answer's facts {unseen} are in no {' or '.join(self.sources)} the agent received")
        if not self.alternatives:
            return Check(1.0)
        answer, given = episode.final_answer(), " \n".join(given_texts(episode, ("system", "user", "tool_results")))
        rivals = {a for f in self.facts for a in alternatives(episode.task.initial_state, f)}
        listed = sorted(a for a in rivals if states_fact(answer, a, case_sensitive=True) and not states_fact(given, a))
        if listed:
            return Check(0.0, f"the answer also states {listed[:6]}, other values of an asked field that the agent was not given")
        return Check(1.0)


def _plain(number: float) -> int | float:
    return int(number) if number.is_integer() else number


class RequiredCalls(Block):
    """Calls matching every pattern were made, each by a distinct call (``ordered``: in this order)."""

    name: ClassVar[str] = "required_calls"
    calls: list[CallPattern] = Field(min_length=1)
    ordered: bool = False
    successful: bool = True
    """Count only calls that succeeded (no validation or tool error)."""

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        made = [r.call for r in episode.calls if r.ok or not self.successful]
        missing = _missing_in_order(self.calls, made) if self.ordered else _missing_any_order(self.calls, made)
        if not missing:
            return Check(1.0)
        how = "in order " if self.ordered else ""
        return Check(0.0, f"no {'successful ' if self.successful else ''}call {how}matches {[str(p) for p in missing]}")


def _matched_in_order(count: int, events: list[Any], hit: Callable[[int, Any], bool]) -> int:
    """How many of ``count`` items, in order, ``events`` reach as a subsequence (``hit(i, event)``);
    matching each item at its earliest event is optimal."""
    position = 0
    for index in range(count):
        while position < len(events) and not hit(index, events[position]):
            position += 1
        if position == len(events):
            return index
        position += 1
    return count


def _missing_in_order(patterns: list[CallPattern], made: list[ToolCall]) -> list[CallPattern]:
    """Patterns not matched by a subsequence of ``made``."""
    return patterns[_matched_in_order(len(patterns), made, lambda i, call: patterns[i].matches(call)) :]


def _missing_any_order(patterns: list[CallPattern], made: list[ToolCall]) -> list[CallPattern]:
    """Patterns left unmatched by a maximum matching of patterns to distinct calls."""
    graph = nx.Graph()
    graph.add_nodes_from(("p", i) for i in range(len(patterns)))
    graph.add_edges_from((("p", i), ("c", j)) for i, p in enumerate(patterns) for j, c in enumerate(made) if p.matches(c))
    matching = nx.bipartite.maximum_matching(graph, top_nodes=[("p", i) for i in range(len(patterns))])
    return [p for i, p in enumerate(patterns) if ("p", i) not in matching]


class ForbiddenCalls(Block):
    """No call matching a pattern was made (``attempted``: not even one that failed)."""

    name: ClassVar[str] = "forbidden_calls"
    calls: list[CallPattern] = Field(min_length=1)
    attempted: bool = True

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        bad = [r.call for r in episode.calls if (r.ok or self.attempted) and any(p.matches(r.call) for p in self.calls)]
        return Check(0.0, f"forbidden call(s) made: {[f'{c.name}({c.arguments})' for c in bad[:3]]}") if bad else Check(1.0)


class AskClarification(Block):
    """The reply that ends user turn ``turn`` asks a question, and no write (or, with
    ``before="call"``, no call at all) was made in that turn before it."""

    name: ClassVar[str] = "ask_clarification"
    turn: int = Field(default=0, ge=0)
    before: Literal["write", "call"] = "write"

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        replies = context.replies
        if len(replies) <= self.turn:
            return Check(0.0, f"the agent never ended user turn {self.turn} with a reply")
        early = [r for r in episode.calls if r.turn == self.turn and (r.write or self.before == "call")]
        if early:
            return Check(0.0, f"{len(early)} {'write ' if self.before == 'write' else ''}call(s) before asking")
        if "?" not in replies[self.turn]:
            return Check(0.0, f"the reply ending user turn {self.turn} did not ask a question")
        return Check(1.0)


class Refusal(Block):
    """At most ``max_writes`` successful writes, and the final answer declines (contains a marker)."""

    name: ClassVar[str] = "refusal"
    max_writes: int = Field(default=0, ge=0)
    markers: list[str] = Field(default_factory=lambda: list(REFUSAL_MARKERS), min_length=1)

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        done = sum(1 for r in episode.calls if r.write and r.ok)
        if done > self.max_writes:
            return Check(0.0, f"{done} successful write(s); at most {self.max_writes} allowed")
        answer = episode.final_answer().lower()
        if not any(m.lower() in answer for m in self.markers):
            return Check(0.0, f"the final answer does not decline (it contains none of {self.markers[:4]}...)")
        return Check(1.0)


class Milestone(VerifierParams):
    """One milestone: a successful call matching ``call``, or an assistant message containing ``says``."""

    call: CallPattern | None = None
    says: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_of(self) -> Milestone:
        if (self.call is None) == (self.says is None):
            raise ValueError("a milestone sets exactly one of 'call' and 'says'")
        return self

    def reached_by(self, event: ToolCall | str) -> bool:
        """True when ``event`` (a successful call or an assistant text) reaches this milestone."""
        if self.call is not None:
            return isinstance(event, ToolCall) and self.call.matches(event)
        return isinstance(event, str) and states_fact(event, str(self.says))

    def __str__(self) -> str:
        return f"call {self.call}" if self.call is not None else f"says {self.says!r}"


class Milestones(Block):
    """Milestones reached in order (``ordered``) or at all; ``partial`` scores the fraction reached."""

    name: ClassVar[str] = "milestones"
    steps: list[Milestone] = Field(min_length=1)
    ordered: bool = True
    partial: bool = False

    def check(self, episode: Episode, world: World, context: Context) -> Check:
        events = _events(episode)
        if self.ordered:
            missing = self.steps[_matched_in_order(len(self.steps), events, lambda i, event: self.steps[i].reached_by(event)) :]
        else:
            missing = [s for s in self.steps if not any(s.reached_by(e) for e in events)]
        fraction = 1.0 - len(missing) / len(self.steps)
        if not missing:
            return Check(1.0)
        score = round(fraction, 6) if self.partial else 0.0
        return Check(score, f"{len(self.steps) - len(missing)}/{len(self.steps)} milestones reached; next: {missing[0]}")


def _events(episode: Episode) -> list[ToolCall | str]:
    """Assistant texts and successful calls, in the order they happened.

    The env records one assistant message per step, so the last ``episode.steps`` assistant
    messages are steps 1..n (an opening greeting comes before them).
    """
    by_step: dict[int, list[CallRecord]] = {}
    for record in episode.calls:
        by_step.setdefault(record.step, []).append(record)
    messages = episode.assistant_messages()
    offset = len(messages) - episode.steps
    events: list[ToolCall | str] = []
    for index, message in enumerate(messages):
        if message.content:
            events.append(message.content)
        events.extend(r.call for r in by_step.get(index - offset + 1, ()) if r.ok)
    return events


BLOCKS: dict[str, type[Block]] = {
    cls.name: cls for cls in (StateMatch, FactsInAnswer, GroundedNumbers, SourcedFacts, RequiredCalls, ForbiddenCalls, AskClarification, Refusal, Milestones)
}


def register_block(cls: type[Block], *, replace: bool = False) -> type[Block]:
    """Make a user block usable by name in ``{"block": name, ...}`` configs (a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__}.name is empty; set name: ClassVar[str] = 'my_block'")
    if cls.name in BLOCKS and BLOCKS[cls.name] is not cls and not replace:
        raise ValueError(f"block '{cls.name}' is already registered by {BLOCKS[cls.name].__name__}; pass replace=True")
    BLOCKS[cls.name] = cls
    return cls


def block_class(name: str) -> type[Block]:
    """The block registered as ``name``, with a did-you-mean error."""
    try:
        return BLOCKS[name]
    except KeyError:
        close = difflib.get_close_matches(str(name), list(BLOCKS), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"unknown verifier block '{name}'.{hint} Known blocks: {sorted(BLOCKS)}") from None
