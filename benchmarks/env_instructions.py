"""Instructions per ToolWorld episode through ``ToolUseEnv`` and by hand, counted by callgrind.

CPU time on a shared machine moves by several percent from run to run; instruction counts do
not. This runs each side of ``env_throughput.py`` (``env``, ``loop``, ``direct``) in its own
process under ``valgrind --tool=callgrind`` with instrumentation switched on only around the
timed replay (``callgrind_control -i on/off``), and prints instructions per episode and the
ratios. Instructions are not time: the env's extra work is allocation-heavy and runs at a
lower rate than the shared work, so its time overhead is larger than its instruction overhead.

Needs valgrind (``apt install valgrind``). Run:
``python benchmarks/env_instructions.py [--tasks 500]`` (about a minute per side).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SIDES = ("env", "loop", "direct")


def replay(side: str, tasks: int) -> None:
    """Child mode: warm up, then replay ``tasks`` evenly spread tasks with instrumentation on."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import gc

    from benchmarks.env_throughput import GYM_ID, replay_inputs, run_direct, run_env, run_loop
    from envsched_gym.registry import make

    env = make(GYM_ID)
    core = env.unwrapped
    ids = core.index.ids("all")
    ids = ids[:: max(1, len(ids) // tasks)][:tasks]
    env_episodes, direct_episodes = replay_inputs(core.index, ids)
    runs = {
        "env": lambda: run_env(env, env_episodes),
        "loop": lambda: run_loop(core.adapter, core.index, direct_episodes),
        "direct": lambda: run_direct(core.adapter, core.index, direct_episodes),
    }
    runs[side]()  # warm-up: gold states, caches, specialised bytecode
    gc.collect()
    gc.freeze()
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    runs[side]()
    subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)


def count(side: str, tasks: int) -> int:
    """Instructions callgrind collected for one side's replay."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={tmp}/out", sys.executable, __file__, "--child", side, "--tasks", str(tasks)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    match = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or match is None:
        raise RuntimeError(f"callgrind run of side '{side}' failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(match.group(1))


def main(tasks: int) -> dict[str, float]:
    """Count every side, print the table and return instructions per episode."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind is not installed; install it (apt install valgrind) to count instructions")
    per_episode = {side: count(side, tasks) / tasks for side in SIDES}
    print(f"ToolWorld instructions per episode, {tasks} tasks (callgrind)")
    for side in SIDES:
        print(f"{side:<8} {per_episode[side]:>12,.0f}")
    print(f"wrapper (env over loop, same outputs): {100 * (per_episode['env'] / per_episode['loop'] - 1):+.1f}%   env over direct (caps + wrapper): {100 * (per_episode['env'] / per_episode['direct'] - 1):+.1f}%")
    return per_episode


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500, help="tasks to replay (spread over the suite)")
    parser.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        replay(args.child, args.tasks)
    else:
        main(args.tasks)
