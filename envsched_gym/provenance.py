"""What the agent was given in an episode, and which values compete with a fact.

The ``grounded`` and ``sourced`` blocks (:mod:`envsched_gym.blocks`) ask where an answer's
values came from. An agent can be *given* a value by the system prompt, a user message, a tool's
declaration or the result of a tool call that succeeded. Three things never count:

* its own messages (it could ground a guess by writing it twice);
* the result of a failed call, since errors echo the agent's own arguments: ``'suite' is not of
  type 'integer'`` would ground the guess ``suite``;
* the observation of a call that did not parse: ``invalid syntax (line 1)`` once grounded the fact
  ``1`` for the SmolLM2 policy of the real comparison (docs/training.md, session 41).

:func:`alternatives` finds the values a fact competes with: the other values of the record field
that holds it, in the task's initial state. An answer that lists ``Monday, Thursday, Friday`` for
"which day" states the right day and two alternatives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from envsched_gym.episode import Episode
from envsched_gym.fact_match import NUMBER

Source = Literal["system", "user", "tool_results", "declarations"]
SOURCES: tuple[Source, ...] = ("system", "user", "tool_results", "declarations")


def given_texts(episode: Episode, sources: Sequence[Source] = SOURCES) -> list[str]:
    """The texts of ``sources`` that the agent received in ``episode`` (see the module docstring)."""
    texts: list[str] = []
    for role in ("system", "user"):
        if role in sources:
            texts += [str(m.get("content") or "") for m in episode.messages if m.get("role") == role]
    if "tool_results" in sources:
        texts += [record.result for record in episode.calls if record.ok]
    if "declarations" in sources:
        texts += [json.dumps(t.openai_schema()) for t in episode.task.tools or episode.env.tools]
    return texts


def alternatives(state: Any, fact: str) -> set[str]:
    """The other values of every record field holding ``fact`` in ``state`` (``fact`` excluded).

    A *table* is a dict or list whose items are dicts (records); a field holds the fact when its
    value equals it (numbers by value, text case-insensitively). Nested tables are searched too.
    """
    fields, holding = _index(state)
    key = _norm(fact.strip())
    return {text for field in holding.get(key, ()) for text, norm in fields[field] if norm != key}


Norm = tuple[str, float | str]
_INDEXES: dict[int, tuple[Any, list[set[tuple[str, Norm]]], dict[Norm, set[int]]]] = {}


def _index(state: Any) -> tuple[list[set[tuple[str, Norm]]], dict[Norm, set[int]]]:
    """Every field's values (as text and normalised) and, per normalised value, the fields holding it.

    Built once per state object: a verifier asks at every episode's end, and walking the state each
    time cost more than the rest of a ToolWorld episode (``benchmarks/env_instructions.py``).
    """
    cached = _INDEXES.get(id(state))
    if cached is not None and cached[0] is state:
        return cached[1], cached[2]
    fields: list[set[tuple[str, Norm]]] = []
    holding: dict[Norm, set[int]] = {}
    for rows in _tables(state):
        for key in {k for row in rows for k in row}:
            values = {(_text(row[key]), _norm(row[key])) for row in rows if key in row and _scalar(row[key])}
            for _, norm in values:
                holding.setdefault(norm, set()).add(len(fields))
            fields.append(values)
    if len(_INDEXES) >= 4096:
        _INDEXES.clear()
    _INDEXES[id(state)] = (state, fields, holding)
    return fields, holding


def _tables(node: Any) -> Iterator[list[dict[str, Any]]]:
    items = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
    rows = [item for item in items if isinstance(item, dict)]
    if rows:
        yield rows
    for item in items:
        yield from _tables(item)


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _text(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _norm(value: str | int | float) -> Norm:
    """A value as a fact compares to it: a number (also one written as text) by value, other text lower-cased."""
    if isinstance(value, int | float):
        return ("n", float(value))
    text = value.strip()
    return ("n", float(text)) if NUMBER.fullmatch(text) else ("t", text.lower())
