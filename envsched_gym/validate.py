"""``validate_family``: the checks a family passes once, when it is registered, so that a
misconfiguration is an error instead of a reward.

Static checks (cheap, run whenever an adapter is built):

* environment ids are unique and each names the adapter's family;
* task ids are unique, every task's ``env_id`` names one of the environments and its split is known;
* every task's verifier kind is registered, its parameters parse into the kind's typed config,
  and the verifier accepts the task (:meth:`Verifier.check_task`);
* per environment, a fresh world builds, a world with write tools has a non-empty ``state()``,
  ``EnvSpec.tools`` lists the world's tools, and ``make_verifier`` builds.

Gold replay (``replay=True``; :func:`~envsched_gym.registry.register_adapter` runs it): every gold
solution is played through the environment by the oracle; a gold call that fails, an episode that
ends at a limit, or a reward below 1.0 is an error, as is a family whose gold writes never change
``state()``.
"""

from __future__ import annotations

import difflib
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from envsched_gym.adapter import SPLITS, Adapter
from envsched_gym.declarations import EnvSpec, TaskSpec
from envsched_gym.verifier import parse_params, verifier_class

MAX_LISTED = 20


@dataclass(frozen=True)
class Problem:
    """One failed check: which task (or environment), which check, and what to do."""

    where: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.where} [{self.check}]: {self.message}"


class FamilyValidationError(ValueError):
    """A family failed validation; ``problems`` lists every failed check."""

    def __init__(self, family: str, problems: list[Problem]) -> None:
        self.family = family
        self.problems = problems
        counts = Counter(p.check for p in problems)
        listed = "\n".join(f"  - {p}" for p in problems[:MAX_LISTED])
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        super().__init__(f"family '{family}' failed validation ({dict(counts)}):\n{listed}{more}")


@dataclass
class ValidationReport:
    """What :func:`validate_family` checked and what each part cost, in CPU seconds of this
    process (``time.process_time``: the checks are single-threaded, and CPU time does not grow
    when other work shares the machine)."""

    family: str
    envs: int = 0
    tasks: int = 0
    replayed: int = 0
    without_gold: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        """One line: counts and CPU seconds per check."""
        cost = ", ".join(f"{k} {v:.2f} cpu s" for k, v in self.seconds.items())
        return f"{self.family}: {self.envs} envs, {self.tasks} tasks, {self.replayed} gold replays ({self.without_gold} without gold); {cost}"


def validate_family(adapter: Adapter | str, *, replay: bool = True, options: dict[str, Any] | None = None) -> ValidationReport:
    """Check a family (an adapter, or a registered family's name) and report what it cost.

    Args:
        adapter: The adapter, or the name of a registered family.
        replay: Also play every gold solution through the environment (the expensive part).
        options: Adapter options when ``adapter`` is a name.

    Raises:
        FamilyValidationError: Any check failed; the message lists each problem with its task.
    """
    if isinstance(adapter, str):
        from envsched_gym.registry import get_adapter

        adapter = get_adapter(adapter, options)
    report = ValidationReport(adapter.family)
    problems: list[Problem] = []
    clock = time.process_time()
    envs = _check_envs(adapter, problems)
    tasks = list(adapter.tasks("all"))
    report.envs, report.tasks = len(envs), len(tasks)
    report.seconds["load"] = time.process_time() - clock
    clock = time.process_time()
    _check_tasks(adapter, envs, tasks, problems)
    report.seconds["tasks"] = time.process_time() - clock
    clock = time.process_time()
    flawed = {p.where for p in problems}
    _check_worlds(adapter, envs, [t for t in tasks if f"task '{t.task_id}'" not in flawed], problems)
    report.seconds["worlds"] = time.process_time() - clock
    if replay and not problems:
        from envsched_gym.gold_replay import check_gold

        clock = time.process_time()
        report.replayed, report.without_gold = check_gold(adapter, envs, tasks, problems)
        report.seconds["gold replay"] = time.process_time() - clock
    if problems:
        raise FamilyValidationError(adapter.family, problems)
    return report


def _check_envs(adapter: Adapter, problems: list[Problem]) -> dict[str, EnvSpec]:
    envs: dict[str, EnvSpec] = {}
    for env in adapter.env_specs():
        if env.env_id in envs:
            problems.append(Problem(f"env '{env.env_id}'", "env_id", "two EnvSpecs share this env_id; make env ids unique"))
        if env.family != adapter.family:
            problems.append(Problem(f"env '{env.env_id}'", "family", f"EnvSpec.family is '{env.family}'; set it to '{adapter.family}'"))
        envs[env.env_id] = env
    if not envs:
        problems.append(Problem(f"family '{adapter.family}'", "env_specs", "the adapter declares no environments"))
    return envs


def _check_tasks(adapter: Adapter, envs: dict[str, EnvSpec], tasks: list[TaskSpec], problems: list[Problem]) -> None:
    seen: set[str] = set()
    for task in tasks:
        where = f"task '{task.task_id}'"
        if task.task_id in seen:
            problems.append(Problem(where, "task_id", "two tasks share this id; make task ids unique"))
        seen.add(task.task_id)
        if task.env_id not in envs:
            close = difflib.get_close_matches(task.env_id, list(envs), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            problems.append(Problem(where, "env_id", f"env_id '{task.env_id}' names no environment.{hint} Environments: {sorted(envs)[:8]}"))
        if task.split not in SPLITS:
            problems.append(Problem(where, "split", f"split '{task.split}' is not one of {SPLITS}"))
        problem = _verifier_problem(task)
        if problem is not None:
            problems.append(Problem(where, "verifier", problem))


def _verifier_problem(task: TaskSpec) -> str | None:
    try:
        cls = verifier_class(task.verifier.kind)
        params = parse_params(task.verifier)
        cls.check_task(task, params)
    except KeyError as exc:
        default = " (the TaskSpec default: set verifier=VerifierConfig(...))" if task.verifier.kind == "none" else ""
        return f"{exc.args[0]}{default}"
    except ValueError as exc:
        return str(exc)
    return None


def _check_worlds(adapter: Adapter, envs: dict[str, EnvSpec], tasks: list[TaskSpec], problems: list[Problem]) -> None:
    """Per environment (and per verifier kind in it), build a world and a verifier for its first task."""
    firsts: dict[tuple[str, str], TaskSpec] = {}
    for task in tasks:
        firsts.setdefault((task.env_id, task.verifier.kind), task)
    checked: set[str] = set()
    for (env_id, _), task in firsts.items():
        where = f"env '{env_id}' (task '{task.task_id}')"
        try:
            world = adapter.make_world(task)
            adapter.make_verifier(task)
        except Exception as exc:  # a user's world or verifier that cannot be built is the finding
            problems.append(Problem(where, "build", f"{type(exc).__name__}: {exc}"))
            continue
        if env_id in checked:
            continue
        checked.add(env_id)
        tools = task.tools if task.tools is not None else world.tools()
        writes = sorted(t.name for t in tools if t.write)
        if writes and not world.state():
            problems.append(Problem(where, "state", (
                f"the world has write tools {writes[:5]} but {type(world).__name__}.state() is empty, so no write could change "
                "the reward; keep the state in public attributes or override state() to return it (e.g. the database rows)"
            )))  # fmt: skip
        if world.tools() and not envs[env_id].tools:
            problems.append(Problem(where, "tools", (
                f"EnvSpec.tools is empty but {type(world).__name__}.tools() lists {[t.name for t in world.tools()][:5]}; "
                "declare them in the EnvSpec (the curriculum reads EnvSpec.tools)"
            )))  # fmt: skip
