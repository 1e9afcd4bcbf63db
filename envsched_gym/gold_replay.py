"""Gold replay for :func:`~envsched_gym.validate.validate_family`: every gold solution, played by
the oracle through the environment itself (the same parsing, validation, turns and verifier an
agent meets), must run without a tool error and score 1.0."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envsched_gym.declarations import EnvSpec, TaskSpec
from envsched_gym.episode import Episode
from envsched_gym.verifier import canonical

if TYPE_CHECKING:
    from envsched_gym.adapter import Adapter
    from envsched_gym.env import ToolUseEnv
    from envsched_gym.validate import Problem


def check_gold(adapter: Adapter, envs: dict[str, EnvSpec], tasks: list[TaskSpec], problems: list[Problem]) -> tuple[int, int]:
    """Replay every task's gold; append a problem per failure. Returns (replayed, without gold).

    A family whose gold makes successful writes that never change ``state()`` is a problem too:
    its state does not capture what the tools do, so no reward can see a wrong write.
    """
    from envsched_gym.env import ToolUseEnv
    from envsched_gym.validate import Problem

    pool: dict[str, ToolUseEnv] = {}
    replayed = without = wrote = changed = 0
    for task in tasks:
        if task.solution is None:
            without += 1
            continue
        gym_id = envs[task.env_id].gym_id
        if gym_id not in pool:
            pool[gym_id] = ToolUseEnv(adapter, gym_id)
        env = pool[gym_id]
        try:
            episode, before, after = _replay(env, task)
        except Exception as exc:  # a user's world, user simulator or verifier raising is the finding
            partial = _findings(env.episode, adapter.gold_calls_may_fail) if env.episode is not None else []
            raised = f"replaying the gold raised {type(exc).__name__}: {exc}"
            problems.extend(Problem(f"task '{task.task_id}'", "gold", m) for m in [*partial, raised])
            continue
        replayed += 1
        found = _findings(episode, adapter.gold_calls_may_fail)
        if task.task_id in adapter.gold_defects:
            if not found:
                problems.append(Problem(f"task '{task.task_id}'", "gold_defects", "listed in gold_defects but its gold replays clean; remove it"))
            continue
        problems.extend(Problem(f"task '{task.task_id}'", "gold", m) for m in found)
        if any(c.write and c.ok for c in episode.calls):
            wrote += 1
            changed += before != after
    if unknown := sorted(set(adapter.gold_defects) - {t.task_id for t in tasks}):
        problems.append(Problem(f"family '{adapter.family}'", "gold_defects", f"gold_defects names unknown tasks {unknown[:5]}"))
    if wrote and not changed:
        problems.append(Problem(f"family '{adapter.family}'", "state", (
            f"{wrote} gold solution(s) make successful write calls, but state() was the same before and after every one; "
            "state() must return what the tools change (override World.state())"
        )))  # fmt: skip
    return replayed, without


def _replay(env: ToolUseEnv, task: TaskSpec) -> tuple[Episode, str, str]:
    """The oracle's episode of ``task``, and the canonical world state before and after it."""
    from envsched_gym.policies import OraclePolicy, run_episode

    before = canonical(env.adapter.make_world(task).state())  # the state reset builds
    run_episode(env, OraclePolicy(), task.task_id)
    assert env.world is not None and env.episode is not None
    return env.episode, before, canonical(env.world.state())


def _findings(episode: Episode, calls_may_fail: bool) -> list[str]:
    found = []
    for record in episode.calls:
        if not record.ok and not calls_may_fail:
            found.append(
                f"gold call {record.call.name}({record.call.arguments}) in user turn {record.turn}, step {record.step} "
                f"failed: {record.result[:200]}. Fix the gold solution or the tool"
            )
    if episode.abnormal:
        found.append(f"the gold replay ended by '{episode.termination}'; raise the step limits or shorten the gold")
    outcome = episode.outcome
    if outcome is not None and outcome.reward != 1.0:
        found.append(f"the gold scores {outcome.reward}, not 1.0 (breakdown {outcome.breakdown}, details {outcome.details})"[:600])
    return found
