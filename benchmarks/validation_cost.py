"""What ``validate_family`` costs at 10^4 tasks, next to the floor: one oracle episode per task.

A synthetic family (a thermostat world with ``--rooms`` rooms; each task sets one room, reads
another and must state the value; verifier kind ``blocks`` with four blocks) is validated with
and without gold replay. The floor of the replay is playing the same gold episodes with
``run_episode`` and no checks, so the ratio is validation's own overhead. Figures are CPU
seconds of this process (single-threaded work; robust when the machine is shared). ``--builtins`` also
times the built-in families (their data must be present).

    python benchmarks/validation_cost.py --tasks 10000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator

import envsched_gym
from envsched_gym import Adapter, AssistantTurn, TaskSpec, ToolCall, ToolError, VerifierConfig, World, tool, validate_family
from envsched_gym.env import ToolUseEnv
from envsched_gym.policies import OraclePolicy, run_episode


class Rooms(World):
    """Target temperatures of ``ROOMS`` rooms."""

    ROOMS = 50

    def __init__(self) -> None:
        self.targets = {f"room{i}": 19.0 for i in range(self.ROOMS)}

    @tool(write=True)
    def set_temperature(self, room: str, celsius: float) -> str:
        """Set a room's target.

        Args:
            room: Room name.
            celsius: Target in degrees Celsius.
        """
        if room not in self.targets:
            raise ToolError(f"unknown room '{room}'")
        self.targets[room] = celsius
        return "ok"

    @tool
    def get_temperature(self, room: str) -> float:
        """Read a room's target.

        Args:
            room: Room name.
        """
        if room not in self.targets:
            raise ToolError(f"unknown room '{room}'")
        return self.targets[room]


def blocks(room: str, celsius: float) -> VerifierConfig:
    return VerifierConfig("blocks", {"blocks": [
        {"block": "state_match"},
        {"block": "facts", "facts": [str(celsius)]},
        {"block": "required_calls", "ordered": True, "calls": [{"name": "set_temperature", "arguments": {"room": room}}]},
        {"block": "forbidden_calls", "calls": [{"name": "set_temperature", "arguments": {"room": "room0"}}]},
    ]})  # fmt: skip


class RoomsAdapter(Adapter):
    family = "RoomsBench"
    world = Rooms

    def __init__(self, n_tasks: int) -> None:
        self.n_tasks = n_tasks

    def tasks(self, split: str = "all") -> Iterator[TaskSpec]:
        for i in range(self.n_tasks):
            room, other, celsius = f"room{1 + i % 49}", f"room{1 + (i + 7) % 49}", 15.0 + i % 11
            yield TaskSpec(
                task_id=f"rooms/{i}",
                env_id=self.family,
                instruction=f"Set {room} to {celsius} and tell me what {other} is at.",
                solution=[
                    AssistantTurn(tool_calls=[ToolCall("set_temperature", {"room": room, "celsius": celsius}), ToolCall("get_temperature", {"room": other})]),
                    AssistantTurn(f"{room} is now {celsius}; {other} is at 19.0."),
                ],
                verifier=blocks(room, celsius),
                split="train" if i % 5 else "test",
            )


def floor_seconds(adapter: Adapter, tasks: list[TaskSpec]) -> float:
    """Oracle episodes through the environment with no checks: the floor of the gold replay."""
    env = ToolUseEnv(adapter, f"envsched/{adapter.family}-v0")
    start = time.process_time()
    for task in tasks:
        run_episode(env, OraclePolicy(), task.task_id)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--builtins", action="store_true", help="also time the built-in families")
    args = parser.parse_args()
    adapter = RoomsAdapter(args.tasks)
    static = validate_family(adapter, replay=False)
    full = validate_family(RoomsAdapter(args.tasks))
    floor = floor_seconds(adapter, list(adapter.tasks()))
    replay = full.seconds["gold replay"]
    checks = static.seconds["tasks"] + static.seconds["worlds"]
    print(f"{args.tasks} tasks, verifier kind 'blocks' with 4 blocks, 2 gold calls per task")
    print(f"{'part':<28}{'cpu s':>10}{'us/task':>10}")
    for name, seconds in (("static checks", checks), ("gold replay", replay), ("floor: oracle episodes", floor)):
        print(f"{name:<28}{seconds:>10.2f}{seconds / args.tasks * 1e6:>10.0f}")
    print(f"gold replay / floor: {replay / floor:.2f}x   static checks / floor: {checks / floor:.3f}x")
    if args.builtins:
        print(f"\n{'family':<12}{'tasks':>7}{'static cpu s':>14}{'replay cpu s':>14}")
        for family in ("ToolWorld", "BFCL", "ACE", "Tau"):
            adapter = envsched_gym.get_adapter(family)
            report = validate_family(adapter)
            static_s = report.seconds["tasks"] + report.seconds["worlds"]
            print(f"{family:<12}{report.tasks:>7}{static_s:>14.2f}{report.seconds['gold replay']:>14.2f}")


if __name__ == "__main__":
    main()
