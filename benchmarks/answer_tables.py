"""Tables 8 and 9 of ``compare_report.py``: how the policy's text went wrong, read from the answer logs.

The held-out score only says whether an episode succeeded. From the 64-step start the runs of
sessions 45-46 lost held-out tasks in two ways that it cannot tell apart (session 47,
docs/training.md "What the held-out losses are made of"):

* **format drift**: turns the environment cannot read cleanly, such as a turn that opens with the
  environment's own ``<tool_response>`` tag, or tags repeated until the token budget runs out;
* **argument drift**: the right tool called with an argument the task's gold call does not pass
  (a ``minutes`` on ``cancel_event``), or without one it does.

Both need ``train_grpo.py --log-answers`` (on in ``train_compare.py`` since session 40) with the
episodes' actions: a run archived without such logs shows ``no answer logs``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import envsched_gym
from envsched_gym.parsing import malformed_episode, parse_tool_calls
from envsched_gym.registry import families as registered_families
from envsched_gym.rl.plots import read_jsonl

if TYPE_CHECKING:
    from benchmarks.compare_report import RunLog

Counts = tuple[int, ...]
NO_LOGS = "no answer logs"
FIELDS = ("task_id", "success", "actions")
"""What an answer log's rows need here; the training logs of sessions 40-41 have no ``actions``."""


def readable(path: Path | None) -> bool:
    """Whether ``path`` is an answer log whose every row has :data:`FIELDS` (a missing or older log is shown as :data:`NO_LOGS`)."""
    return path is not None and path.exists() and all(all(k in row for k in FIELDS) for row in read_jsonl(path))


def count_by(path: Path, key: str, count: Callable[[dict[str, Any]], Counts]) -> dict[int, Counts]:
    """``count`` of each episode of an answer log, summed per ``key`` (``round`` or ``step``)."""
    sums: dict[int, Counts] = {}
    for row in read_jsonl(path):
        add = count(row)
        before = sums.get(int(row[key]), (0,) * len(add))
        sums[int(row[key])] = tuple(a + b for a, b in zip(before, add, strict=True))
    return sums


def _markup(row: dict[str, Any]) -> Counts:
    bad = malformed_episode(row["actions"])
    return 1, int(bad), int(bad and not row["success"])


def heldout_counts(logs: list[RunLog], count: Callable[[dict[str, Any]], Counts]) -> dict[tuple[int, str], dict[int, Counts]]:
    """Per run, ``count`` summed per evaluated step of its ``eval_answers.jsonl``; step 0 from the
    seed's run that evaluated the start. A run without the log maps to ``{}``."""
    out: dict[tuple[int, str], dict[int, Counts]] = {}
    for log in logs:
        path = log.path / "eval_answers.jsonl" if log.path else None
        out[log.seed, log.label] = count_by(path, "step", count) if path is not None and readable(path) else {}
    for (seed, _label), steps in out.items():
        start = next((s[0] for (other, _), s in out.items() if other == seed and 0 in s), None)
        if steps and 0 not in steps and start is not None:
            steps[0] = start
    return out


def markup_table(logs: list[RunLog], window: int) -> list[str]:
    """Table 8: held-out episodes with a malformed turn at each evaluation (and how many of them
    failed), and training rollouts with one per window of ``window`` steps."""
    steps = sorted({s for log in logs for s in log.heldout})
    held = heldout_counts(logs, _markup)
    lines = ["| run | seed | " + " | ".join(f"held-out at step {s}: malformed (failed)" for s in steps) + " | training rollouts malformed per window |",
             "|---|---|" + "---|" * (len(steps) + 1)]  # fmt: skip
    for log in logs:
        answers = log.path / "answers.jsonl" if log.path else None
        if not held[log.seed, log.label] or not readable(answers):
            lines.append(f"| {log.label} | {log.seed} | " + " | ".join([NO_LOGS] * (len(steps) + 1)) + " |")
            continue
        cells = [f"{c[1]} ({c[2]}) of {c[0]}" if c else "-" for c in (held[log.seed, log.label].get(s) for s in steps)]
        rounds = count_by(answers, "round", _markup)
        per = [sum(c[1] for r, c in rounds.items() if r // window == w) for w in range(max(rounds) // window + 1)] if rounds else []
        lines.append(f"| {log.label} | {log.seed} | " + " | ".join(cells) + f" | {', '.join(map(str, per))} |")
    return lines


def gold_arguments(task_ids: set[str]) -> dict[str, dict[str, tuple[frozenset[str], frozenset[str]]]]:
    """Per task of a registered family with gold, per tool its gold calls use: the argument names
    some gold call of it passes, and those every gold call of it passes."""
    out: dict[str, dict[str, tuple[frozenset[str], frozenset[str]]]] = {}
    for family in sorted({t.split("/", 1)[0] for t in task_ids} & set(registered_families())):
        for node in envsched_gym.suite(family):
            if node.task_id not in task_ids or not node.task.solution:
                continue
            names: dict[str, list[frozenset[str]]] = {}
            for call in (c for turn in node.task.solution for c in turn.tool_calls):
                names.setdefault(call.name, []).append(frozenset(call.arguments))
            out[node.task_id] = {tool: (frozenset().union(*sets), frozenset.intersection(*sets)) for tool, sets in names.items()}
    return out


def argument_counter(gold: dict[str, dict[str, tuple[frozenset[str], frozenset[str]]]]) -> Callable[[dict[str, Any]], Counts]:
    """Counts an episode as (calling a gold tool, with an argument no gold call of that tool passes,
    without one every gold call of it passes), over the calls that parse, a malformed turn's
    included: a wrong call followed by a degenerate turn still shows its wrong arguments here."""

    def count(row: dict[str, Any]) -> Counts:
        tools = gold.get(row["task_id"])
        if tools is None:
            return 0, 0, 0
        calls = [c for a in row["actions"] for c in parse_tool_calls(a).calls if c.name in tools]
        extra = any(set(c.arguments) - tools[c.name][0] for c in calls)
        missing = any(tools[c.name][1] - set(c.arguments) for c in calls)
        return int(bool(calls)), int(extra), int(missing)

    return count


def argument_table(logs: list[RunLog]) -> list[str]:
    """Table 9: per evaluation, held-out episodes whose calls of a gold tool pass an argument beyond the gold's, or lack one of it."""
    steps = sorted({s for log in logs for s in log.heldout})
    held = heldout_counts(logs, argument_counter(gold_arguments(set().union(*(log.task_ids for log in logs)))))
    lines = ["| run | seed | " + " | ".join(f"step {s}: extra / missing (of calling)" for s in steps) + " |", "|---|---|" + "---|" * len(steps)]
    for log in logs:
        counts = held[log.seed, log.label]
        cells = [f"{c[1]} / {c[2]} ({c[0]})" if c else "-" for c in (counts.get(s) for s in steps)] if counts else [NO_LOGS] * len(steps)
        lines.append(f"| {log.label} | {log.seed} | " + " | ".join(cells) + " |")
    return lines
