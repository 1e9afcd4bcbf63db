"""``RAY_ADDRESS``: env workers in a separately started Ray cluster (``ray start --head``) give the
in-process rollouts. The driver runs in its own process, so it joins the cluster instead of
starting a local Ray. ``ray start`` (Ray 2.60) turns on token authentication and writes the token
to ``~/.ray/auth_token``; a driver joins with ``RAY_AUTH_MODE=token``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DRIVER = """
import json, sys
sys.path.insert(0, {bench!r})
from rollout_scale import ByteTokenizer, Oracle, first_user_messages, pick_tasks
from envsched_gym.rl.env_backend import EnvPool
from envsched_gym.rl.env_workers import RayEnvWorkers, init_ray
from envsched_gym.rl.rollout import run_rollouts

suite = pick_tasks("ToolWorld", 8, seed=0)
tok = ByteTokenizer()
oracle = Oracle(tok, first_user_messages(suite, 0))
ids = [n.task_id for n in suite] * 2
local = run_rollouts(ids, EnvPool(suite), tok, oracle, 1 << 20, seed=0)
ray = init_ray()
workers = RayEnvWorkers(suite, 2)
remote = run_rollouts(ids, workers, tok, oracle, 1 << 20, seed=0)
print(json.dumps({{
    "nodes": len(ray.nodes()), "cluster_cpus": ray.cluster_resources().get("CPU", 0),
    "same": [(a.completion_ids, a.reward) == (b.completion_ids, b.reward) for a, b in zip(local, remote)],
    "rewards": [r.reward for r in remote], "resets": workers.stats.resets,
}}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_env_workers_join_the_cluster_at_ray_address(tmp_path: Path) -> None:
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray_cli, "the ray extra installs the `ray` command next to python"
    port = _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    started = subprocess.run(
        [ray_cli, "start", "--head", f"--port={port}", "--num-cpus=3", "--node-ip-address=127.0.0.1", "--include-dashboard=false"],
        env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    try:
        assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-2000:]
        script = DRIVER.format(bench=str(REPO / "benchmarks"))
        done = subprocess.run([sys.executable, "-c", script], env={**env, "RAY_ADDRESS": f"127.0.0.1:{port}", "RAY_AUTH_MODE": "token"},
                              cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run([ray_cli, "stop", "--force"], env=env, capture_output=True, timeout=120)
    assert result["cluster_cpus"] == 3  # the cluster's CPUs, not a fresh local Ray's
    assert all(result["same"]) and len(result["same"]) == 16 and result["rewards"] == [1.0] * 16
    assert result["resets"] == 16
