"""Agreement with the official ``bfcl_eval`` checkers on generated outputs (gold and perturbed).

Outputs go through the environment (random wire format) and through BFCL's own checker; the
verdicts must be identical on at least 99.9% of the gold and structurally perturbed outputs.
Outputs with a retyped argument are measured too: BFCL runs multi-turn calls unchecked while the
environment checks them against the schema first, which is the only allowed cause of a
disagreement there. Every disagreement is printed (run with ``-s`` to see them).
"""

from __future__ import annotations

import keyword
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from envsched_gym.rendering import render_calls
from envsched_gym.validation import ToolBox

sys.path.insert(0, str(Path(__file__).parent))
from agreement import Output, call_string, outputs_for
from bfcl_official import official_ast, official_multi_turn

pytest.importorskip("bfcl_eval")
FORMATS = ("qwen3", "openai", "python")
AST_ENTRIES_PER_CATEGORY = 50
MULTI_TURN_ENTRIES_PER_CATEGORY = 30


def _format(calls, rng: random.Random) -> str:
    """A random wire format that can express ``calls`` (``from=`` is not Python call syntax)."""
    if any(keyword.iskeyword(k) for c in calls for k in c.arguments):
        return rng.choice(FORMATS[:2])
    return rng.choice(FORMATS)


def _ours_single(play, task, output: Output, rng: random.Random) -> bool:
    calls = output.turns[0]
    message = render_calls(calls, _format(calls, rng)) if calls else "I cannot help with that."
    return play(task, [message])[0] == 1.0


def _ours_multi(play, task, output: Output, rng: random.Random) -> bool:
    messages = []
    for calls in output.turns:
        if calls:
            messages.append(render_calls(calls, _format(calls, rng)))
        messages.append("Done.")
    return play(task, messages)[0] == 1.0


def _sample(tasks, kind: str, per_category: int, rng: random.Random):
    by_category: dict[str, list] = {}
    for task in tasks:
        if task.verifier.kind == kind:
            by_category.setdefault(task.metadata["category"], []).append(task)
    return [t for group in by_category.values() for t in rng.sample(group, min(per_category, len(group)))]


@dataclass
class Verdict:
    """Both checkers' verdicts on one generated output."""

    task_id: str
    kind: str
    ours: bool
    official: bool
    refused: bool = False  # a multi-turn call the environment's schema check refuses (BFCL runs it)


def _verdicts(bfcl, play, ast_per_category: int, multi_turn_per_category: int) -> list[Verdict]:
    """Our and the official verdict for every generated output."""
    rng = random.Random(0)
    tasks = list(bfcl.tasks("all"))
    verdicts = []
    for task in _sample(tasks, "bfcl_ast", ast_per_category, rng):
        params = task.verifier.params
        names = [f["name"] for f in params["functions"]]
        for output in outputs_for([task.solution[0].tool_calls], names, rng):
            official = official_ast(params["functions"], [{c.name: c.arguments} for c in output.turns[0]], params["ground_truth"], params["category"])
            verdicts.append(Verdict(task.task_id, output.kind, _ours_single(play, task, output, rng), official))
    for task in _sample(tasks, "bfcl_multi_turn", multi_turn_per_category, rng):
        gold = [list(turn.tool_calls) for turn in task.solution if turn.tool_calls or not turn.content.startswith("Done")]
        tools = [t for c in task.metadata["involved_classes"] for t in bfcl.class_tools(c)]
        box = ToolBox(tools)
        entry = {"id": task.task_id, "initial_config": task.initial_state, "involved_classes": task.metadata["involved_classes"]}
        for output in outputs_for(gold, [t.name for t in tools], rng):
            # The official checker evals these strings: they are made here from BFCL's gold data.
            decoded = [[[call_string(c) for c in calls]] if calls else [] for calls in output.turns]
            official = official_multi_turn(decoded, task.verifier.params["ground_truth"], entry)
            refused = any(box.check(c) is not None for calls in output.turns for c in calls)
            verdicts.append(Verdict(task.task_id, output.kind, _ours_multi(play, task, output, rng), official, refused))
    return verdicts


def _agreement(verdicts: list[Verdict]) -> float:
    disagreements = [v for v in verdicts if v.ours != v.official]
    for v in disagreements:
        print(f"DISAGREE {v.task_id} {v.kind}: ours={v.ours} official={v.official} refused_by_schema={v.refused}")
    kinds = sorted({v.kind for v in verdicts})
    print(f"{len(verdicts)} outputs; by kind: " + ", ".join(f"{k} {sum(v.kind == k for v in verdicts)}" for k in kinds))
    print(f"official valid {sum(v.official for v in verdicts)}; disagreements {len(disagreements)}")
    return 1 - len(disagreements) / len(verdicts)


def _check(verdicts: list[Verdict]) -> None:
    """>= 99.9% agreement on gold and the five structural perturbations; retyped arguments may
    disagree only where the environment's schema check refuses a call BFCL runs unchecked."""
    structural = [v for v in verdicts if v.kind != "retype"]
    assert _agreement(structural) >= 0.999
    retyped = [v for v in verdicts if v.kind == "retype"]
    print(f"retype: {_agreement(retyped):.4%} agreement on {len(retyped)} outputs")
    assert all(v.refused for v in retyped if v.ours != v.official)


def test_agreement_with_official_checkers(bfcl, play):
    verdicts = _verdicts(bfcl, play, AST_ENTRIES_PER_CATEGORY, MULTI_TURN_ENTRIES_PER_CATEGORY)
    assert sum(v.kind != "retype" for v in verdicts) >= 2000
    _check(verdicts)


@pytest.mark.slow
def test_agreement_on_every_entry(bfcl, play):
    _check(_verdicts(bfcl, play, 10_000, 10_000))
