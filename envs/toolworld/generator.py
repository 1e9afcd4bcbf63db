"""The task generator: seeded tasks of graded difficulty for one ToolWorld variant.

Every task is built from :mod:`units <envsched_gym.envs.toolworld.units>` in one of five
interaction patterns, and its gold solution is executed on a fresh world while it is built, so
answers quote real tool results and a gold call that fails is a generator bug, not a bad task:

* ``single``: one call on a record given by id (difficulty 1);
* ``chain``: 2 to 6 calls, one per message, where ids come from earlier look-ups by name;
* ``parallel``: 2 to 6 independent calls, several per message;
* ``refuse``: a request breaking a tool-enforced rule or a stated policy, possibly after
  valid requests; the gold reads what it needs and declines, quoting the reason;
* ``ask``: the first message does not say which record; the gold asks, and the scripted
  user names it in the next turn.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from envsched_gym.envs.toolworld.actions import Act, Action, Refusal
from envsched_gym.envs.toolworld.domain import Variant
from envsched_gym.envs.toolworld.units import Unit, read_unit, ref, refusal_unit, write_unit

from envsched_gym.declarations import AssistantTurn, TaskSpec, ToolCall, VerifierConfig

PLAN: tuple[tuple[str, int], ...] = (
    (("single", 1),) * 8
    + tuple(("chain", k) for k in range(2, 7) for _ in range(2))
    + tuple(("parallel", k) for k in range(2, 7) for _ in range(2))
    + (("refuse", 0),) * 8
    + (("ask", 0),) * 8
)
"""Pattern and call count of each task of a variant, in order (44 tasks)."""

CHAIN_SIZES = {2: [[2]], 3: [[3], [2, 1]], 4: [[2, 2], [3, 1]], 5: [[3, 2], [2, 2, 1]], 6: [[2, 2, 2], [3, 3]]}
PARALLEL_SIZES = {2: [[1, 1]], 3: [[1, 1, 1]], 4: [[2, 2], [1, 1, 1, 1]], 5: [[2, 2, 1]], 6: [[2, 2, 2]]}
REFUSE_PREFIXES = ([], [], [1], [2], [2, 1], [2, 2])
TEST_FRACTION = 0.2
T = TypeVar("T")
ASK_QUESTION = "Which {noun} do you mean? Please tell me its name or id."
AMOUNT_QUESTION = "How many {unit} should it be?"


@dataclass
class Draft:
    """A task's text, gold turns and verification facts, before it becomes a :class:`TaskSpec`."""

    pattern: str
    user_turns: list[str]
    solution: list[AssistantTurn]
    facts: list[str]
    n_calls: int
    writes: int
    extra: dict[str, Any] = field(default_factory=dict)


class Generator:
    """Draws the units of a variant's tasks; each task uses distinct records."""

    def __init__(self, variant: Variant, rng: random.Random) -> None:
        self.variant = variant
        self.rng = rng

    # ------------------------------------------------------------ units
    def _free(self, used: set[str]) -> list[str]:
        ids = [rid for rid in self.variant.records if rid not in used]
        self.rng.shuffle(ids)
        return ids

    def _first(self, used: set[str], attempt: Callable[[Action, str, list[str]], T | None]) -> T | None:
        """The first non-``None`` ``attempt(action, record_id, other_ids)`` over shuffled actions and free records."""
        actions = list(self.variant.actions)
        self.rng.shuffle(actions)
        free = self._free(used)
        for rid in free:
            others = [o for o in free if o != rid]
            for action in actions:
                found = attempt(action, rid, others)
                if found is not None:
                    return found
        return None

    def _act(self, used: set[str]) -> Act:
        records, limits = self.variant.records, self.variant.limits
        act = self._first(used, lambda action, rid, others: action.make(self.rng, rid, records[rid], others, limits.get(action.tool)))
        if act is None:
            raise LookupError(f"{self.variant.env_id}: no valid write left for a task")
        used.update(act.touches)
        return act

    def _read(self, used: set[str], by_name: bool) -> Unit:
        rid = self._free(used)[0]
        used.add(rid)
        return read_unit(self.variant, rid, by_name, self.rng.choice(self.variant.domain.fields)[0])

    def unit(self, used: set[str], size: int) -> Unit:
        """A unit of ``size`` calls: 1 by id, 2 by name, 3 by name with a read-back."""
        if size == 3:
            return write_unit(self.variant, self._act(used), True, True, True)
        by_name = size == 2
        if self.rng.random() < 0.4:
            return self._read(used, by_name)
        return write_unit(self.variant, self._act(used), by_name, self.rng.random() < 0.5, False)

    def refusal(self, used: set[str]) -> tuple[Unit, Refusal]:
        """A unit to decline, and the refused request."""
        records, limits = self.variant.records, self.variant.limits

        def violate(action: Action, rid: str, others: list[str]) -> tuple[str, Refusal] | None:
            refused = action.violate(self.rng, rid, records[rid], others, limits.get(action.tool))
            return None if refused is None else (rid, refused)

        found = self._first(used, violate)
        if found is None:
            raise LookupError(f"{self.variant.env_id}: no record allows a request to refuse")
        rid, refusal = found
        used.update(v for v in refusal.call.arguments.values() if v in records)
        return refusal_unit(self.variant, rid, self.rng.random() < 0.5, refusal), refusal

    # ---------------------------------------------------------- patterns
    def draft(self, pattern: str, k: int) -> Draft:
        """A task of ``pattern`` with ``k`` calls (``k`` is ignored by refuse and ask)."""
        used: set[str] = set()
        if pattern == "single":
            return self._sequential("single", [self.unit(used, 1)])
        if pattern == "chain":
            return self._sequential("chain", [self.unit(used, s) for s in self.rng.choice(CHAIN_SIZES[k])])
        if pattern == "parallel":
            return self._parallel([self.unit(used, s) for s in self.rng.choice(PARALLEL_SIZES[k])])
        if pattern == "refuse":
            units = [self.unit(used, s) for s in self.rng.choice(REFUSE_PREFIXES)]
            bad, refusal = self.refusal(used)
            draft = self._sequential("refuse", [*units, bad])
            draft.extra.update(refusal=refusal.kind, refused_call=refusal.call.to_dict())
            return draft
        if pattern == "ask":
            return self._ask(used)
        raise ValueError(f"unknown pattern {pattern!r}; use single, chain, parallel, refuse or ask")

    def _sequential(self, pattern: str, units: list[Unit]) -> Draft:
        schedule = [[(u, c)] for u, unit in enumerate(units) for c in range(len(unit.all_calls(self.variant)))]
        text = "Please " + ", then ".join(u.request for u in units) + "."
        return self._assemble(pattern, units, schedule, [text], [])

    def _parallel(self, units: list[Unit]) -> Draft:
        depth = max(len(u.all_calls(self.variant)) for u in units)
        schedule = [[(u, c) for u, unit in enumerate(units) if c < len(unit.all_calls(self.variant))] for c in range(depth)]
        text = "Please do all of the following: " + "; ".join(u.request for u in units) + "."
        return self._assemble("parallel", units, schedule, [text], [])

    def _ask(self, used: set[str]) -> Draft:
        """The user leaves out which record (or, for amounts, how much) and says it when asked."""
        by_name = self.rng.random() < 0.6
        noun = self.variant.domain.noun
        act = self._act(used)
        if act.vague is not None and self.rng.random() < 0.5:
            unit = write_unit(self.variant, act, by_name, False, False)
            first = f"Please {act.vague.replace('{ref}', ref(self.variant, unit.rid, by_name))}."
            turns, question, missing = [first, f"{act.amount}."], AMOUNT_QUESTION.format(unit=act.amount.split(" ", 1)[1]), "amount"
        else:
            unit = write_unit(self.variant, act, by_name, self.rng.random() < 0.5, False, who=f"one of the {noun}s")
            reply = f"It's {ref(self.variant, unit.rid, by_name)}."
            turns, question, missing = [f"Please {unit.request}.", reply], ASK_QUESTION.format(noun=noun), "record"
        schedule = [[(0, c)] for c in range(len(unit.all_calls(self.variant)))]
        draft = self._assemble("ask", [unit], schedule, turns, [AssistantTurn(question)])
        draft.extra["missing"] = missing
        return draft

    def _assemble(
        self, pattern: str, units: list[Unit], schedule: list[list[tuple[int, int]]], turns: list[str], opening: list[AssistantTurn]
    ) -> Draft:
        calls = [unit.all_calls(self.variant) for unit in units]
        results = _execute(self.variant, [[calls[u][c] for u, c in stage] for stage in schedule])
        by_unit: list[list[Any]] = [[] for _ in units]
        for stage, stage_results in zip(schedule, results, strict=True):
            for (u, _), result in zip(stage, stage_results, strict=True):
                by_unit[u].append(result)
        sentences, facts = [], []
        for unit, unit_results in zip(units, by_unit, strict=True):
            sentence, unit_facts = unit.finish(unit_results[1:] if unit.by_name else unit_results)
            sentences.append(sentence)
            facts.extend(f for f in unit_facts if f not in facts)
        steps = [AssistantTurn("", [calls[u][c] for u, c in stage]) for stage in schedule]
        solution = [*opening, *steps, AssistantTurn(" ".join(sentences))]
        return Draft(pattern, turns, solution, facts, sum(map(len, calls)), sum(u.writes for u in units))


def _execute(variant: Variant, stages: Sequence[Sequence[ToolCall]]) -> list[list[Any]]:
    """Run gold calls on a fresh world; a failing gold call is a generator bug."""
    world = variant.new_world()
    out = []
    for stage in stages:
        out.append([world.call(call.name, call.arguments) for call in stage])
    return out


def difficulty(pattern: str, n_calls: int) -> int:
    """1 to 6: the number of calls, plus one for deciding to refuse or to ask."""
    return max(1, min(6, n_calls + (1 if pattern in ("refuse", "ask") else 0)))


def variant_tasks(variant: Variant, seed: int) -> list[TaskSpec]:
    """Every task of ``variant`` (see :data:`PLAN`), deterministic given ``seed``."""
    rng = random.Random(zlib.crc32(f"{variant.env_id}/tasks/{seed}".encode()))
    generator = Generator(variant, rng)
    tasks = []
    for i, (pattern, k) in enumerate(PLAN):
        draft = generator.draft(pattern, k)
        split = "heldout" if variant.heldout else ("test" if rng.random() < TEST_FRACTION else "train")
        tasks.append(_task_spec(variant, f"{variant.env_id}/{i:03d}", draft, split))
    return tasks


def _task_spec(variant: Variant, task_id: str, draft: Draft, split: str) -> TaskSpec:
    params: dict[str, Any] = {"facts": draft.facts, "pattern": draft.pattern}
    if draft.pattern == "refuse":
        params["max_writes"] = draft.writes
    if draft.pattern == "ask":
        params["ask_first"] = True
    metadata = {
        "difficulty": difficulty(draft.pattern, draft.n_calls),
        "pattern": draft.pattern,
        "n_calls": draft.n_calls,
        "n_writes": draft.writes,
        "n_turns": len(draft.user_turns),
        "domain": variant.domain.name,
        "variant": variant.index,
        "tools_used": sorted({c.name for t in draft.solution for c in t.tool_calls}),
        **draft.extra,
    }
    return TaskSpec(
        task_id=task_id,
        env_id=variant.env_id,
        instruction=draft.user_turns[0],
        user_turns=draft.user_turns,
        initial_state=variant.state,
        solution=draft.solution,
        verifier=VerifierConfig(kind="toolworld", params=params),
        split=split,
        metadata=metadata,
    )
