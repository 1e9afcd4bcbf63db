"""ACEBench's agent scores: end-state accuracy and process (milestone) accuracy.

End state: the saved attributes of each involved class (``[{class: {attr: value}}]``)
against the ground truth. Process: the agent's tool-calling messages, each written as
ACEBench's call string ``[f(a='x'), g()]``, searched in order for the milestone strings;
process accuracy is the fraction found (the best alternative where a task lists several), and
1.0 whenever the end state is correct.

``faithful`` mode keeps the original's quirks: an agent that made no successful call has no
saved state and fails; ground-truth classes whose name is not an involved class
(``ReminderAPI``, ``BaseAPI``, ``Reminderpi``) are skipped; a saved attribute missing from the
ground truth fails; dict-valued attributes are compared only on the ground truth's keys (an
extra message or reminder goes unnoticed); milestones are compared as text (the agent's calls
and the milestone both written in one canonical call syntax, so quoting and spacing do not
matter but argument order and ``1`` versus ``1.0`` do), and a
milestone that is not found ends the search.
``strict`` mode resolves misspelled class names case-insensitively, compares every
ground-truth attribute exactly, compares milestones as parsed calls, and keeps searching
after a milestone that is not found.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from envsched_gym.envs.acebench.normal_check import values_equal

from envsched_gym.declarations import ToolCall

SavedState = list[dict[str, dict[str, Any]]]
_BARE_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")


@dataclass
class StateCheck:
    """End-state verdict with the attribute-level differences."""

    valid: bool
    errors: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ call text
def literal(value: Any) -> str:
    """A value as most ACEBench milestones write it: strings in single quotes, unescaped."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def call_string(calls: list[ToolCall]) -> str:
    """One message's calls as ACEBench's agent writes them: ``[f(a='x'), g()]``."""
    return "[" + ", ".join(f"{c.name}(" + ", ".join(f"{k}={literal(v)}" for k, v in c.arguments.items()) + ")" for c in calls) + "]"


def parse_call_string(text: str) -> list[ToolCall] | None:
    """Parse a milestone string (literal arguments only); unescaped inner apostrophes are repaired.

    Returns ``None`` when the text is not a list of calls with literal arguments.
    """
    for candidate in (text.strip(), _BARE_APOSTROPHE.sub(r"\\'", text.strip())):
        try:
            tree = ast.parse(candidate if candidate.startswith("[") else f"[{candidate}]", mode="eval").body
            elements = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
            calls = []
            for node in elements:
                if not isinstance(node, ast.Call) or node.args:
                    return None
                calls.append(ToolCall(ast.unparse(node.func), {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}))
            return calls
        except (SyntaxError, ValueError):
            continue
    return None


def milestone_alternatives(mile_stone: list[Any]) -> list[list[str]]:
    """The milestone lists of a task (several alternatives for some multi-step tasks)."""
    if mile_stone and isinstance(mile_stone[0], list):
        return [list(m) for m in mile_stone]
    return [list(mile_stone)]


# ------------------------------------------------------------------ end state
def check_end_state(saved: SavedState, ground_truth: SavedState, mode: str = "strict") -> StateCheck:
    """Compare the saved end state with the ground truth (see the module docstring per mode)."""
    if mode == "faithful":
        return _faithful_state(saved, ground_truth)
    return _strict_state(saved, ground_truth)


def _faithful_state(saved: SavedState, ground_truth: SavedState) -> StateCheck:
    if len(saved) != len(ground_truth):
        return StateCheck(False, [f"wrong number of class: {len(saved)} saved, {len(ground_truth)} expected"])
    errors: list[str] = []
    for gold in ground_truth:
        match = next((s for s in saved if set(s) == set(gold)), None)
        if match is None:
            continue  # a class name that is not involved (misspelled) is skipped, as the original does
        name = next(iter(gold))
        want, got = gold[name], match[name]
        for attr, value in got.items():
            if attr not in want:
                errors.append(f"class({name}) attributes({attr}) missing in possible_answer.")
            elif isinstance(want[attr], dict):
                errors += [f"class({name}) attributes({attr}.{k}) wrong" for k, v in want[attr].items() if k not in value or v != value[k]]
            elif want[attr] != value:
                errors.append(f"class({name}) attributes({attr}) wrong, [expected: {want[attr]}, real: {value}]")
    return StateCheck(not errors, errors)


def _strict_state(saved: SavedState, ground_truth: SavedState) -> StateCheck:
    by_name = {next(iter(s)): next(iter(s.values())) for s in saved}
    errors: list[str] = []
    for gold in ground_truth:
        name, want = next(iter(gold.items()))
        resolved = resolve_class(name, list(by_name))
        if resolved is None:
            errors.append(f"class {name!r} is not among the involved classes {list(by_name)}")
            continue
        got = by_name[resolved]
        for attr, value in want.items():
            if attr not in got:
                errors.append(f"{resolved}.{attr}: not saved")
            elif not values_equal(got[attr], value):
                errors.append(f"{resolved}.{attr}: {_difference(got[attr], value)}")
    return StateCheck(not errors, errors)


def resolve_class(name: str, involved: list[str]) -> str | None:
    """An involved class for a ground-truth class name: exact, case-insensitive, or closest spelling."""
    if name in involved:
        return name
    lowered = {c.lower(): c for c in involved}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.8)
    return lowered[close[0]] if close else None


def _difference(got: Any, want: Any) -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        missing = [k for k in want if k not in got]
        extra = [k for k in got if k not in want]
        changed = [k for k in want if k in got and not values_equal(got[k], want[k])]
        return f"missing keys {missing}, unexpected keys {extra}, different values at {changed}"
    return f"got {got!r}, expected {want!r}"


# -------------------------------------------------------------------- process
def process_accuracy(messages: list[list[ToolCall]], mile_stone: list[Any], mode: str = "strict") -> float:
    """Best fraction of a milestone list found, in order, among the agent's calling messages."""
    best = 0.0
    for stones in milestone_alternatives(mile_stone):
        if not stones:
            return 1.0
        found = _in_order(messages, stones, mode)
        best = max(best, round(found / len(stones), 3))
    return best


def _in_order(messages: list[list[ToolCall]], stones: list[str], mode: str) -> int:
    """Milestones found in order. Faithful: a milestone that is not found uses up the rest of the
    messages (the original's scan does not rewind), so no later milestone counts; strict rewinds."""
    found, position = 0, 0
    for stone in stones:
        start = position
        while position < len(messages):
            position += 1
            if _same(messages[position - 1], stone, mode):
                found += 1
                break
        else:
            position = start if mode == "strict" else position
    return found


def _same(calls: list[ToolCall], stone: str, mode: str) -> bool:
    parsed = parse_call_string(stone)
    if mode == "faithful":
        return call_string(calls) == (call_string(parsed) if parsed is not None else stone.strip())
    if parsed is None or len(parsed) != len(calls):
        return False
    return all(a.name == b.name and values_equal(a.arguments, b.arguments) for a, b in zip(calls, parsed, strict=True))
