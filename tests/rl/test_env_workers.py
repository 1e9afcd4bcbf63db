"""Ray env workers: the same rollouts as in-process, failures retried and counted, never scored.

One local Ray with 2 CPUs serves the module (each actor reserves half a CPU, so two worker sets fit);
its workers find the Toy family through PYTHONPATH.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
from pathlib import Path

import pytest
import ray
import torch
from safetensors.torch import load_file
from toy import TINY, Store, register_toy
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym import render_turn
from envsched_gym.rl.env_workers import RayEnvWorkers, import_ray
from envsched_gym.rl.generation import Generated, HFGenerator, SamplingConfig
from envsched_gym.rl.micro import build_micro_qwen3
from envsched_gym.rl.rollout import WORKER_ERROR, EnvPool, EpisodeFailed, run_rollouts
from envsched_gym.rl.trajectories import gold_conversations

HERE = Path(__file__).parent


START_S = 600.0
"""Actor start-up bound of these tests: generous, since a shared 2-core machine under load takes minutes."""


def slow_toy(seconds: float = 3.0) -> None:
    """Actor setup: the Toy family with a ``put`` tool that takes ``seconds`` (a slow or hung backend)."""
    register_toy()
    slow = Store.put

    def put(self, key: str, value: int) -> str:
        time.sleep(seconds)
        return slow(self, key, value)

    Store.put = put


class Oracle:
    """Plays each context's task gold turns; a context's output depends on it alone (batch-invariant)."""

    def __init__(self, tokenizer, suite, on_call=None):
        self.tokenizer, self.nodes, self.on_call, self.calls, self.turns = tokenizer, list(suite), on_call, 0, []
        self.marker = tokenizer("<|im_start|>assistant", add_special_tokens=False)["input_ids"]

    def generate(self, contexts):
        if self.on_call:
            self.on_call(self.calls)
        self.calls += 1
        out, turns = [], []
        for ctx in contexts:
            text = self.tokenizer.decode(ctx)
            node = next(n for n in self.nodes if n.task.instruction in text)
            turn = sum(ctx[i : i + len(self.marker)] == self.marker for i in range(len(ctx))) - 1
            turns.append(turn)
            ids = self.tokenizer(render_turn(node.task.solution[turn]), add_special_tokens=False)["input_ids"]
            out.append(Generated([*ids, self.tokenizer.eos_token_id]))
        self.turns.append((time.monotonic(), turns))
        return out


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(HERE)}})  # fmt: skip
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def workers(local_ray, toy_suite):
    w = RayEnvWorkers(toy_suite, 2, max_concurrency=4, cpus_per_worker=0.5, start_timeout_s=START_S)  # the Toy adapter travels to the actors
    yield w
    w.shutdown()


@pytest.fixture(scope="module")
def tokenizer(micro_dir):
    return AutoTokenizer.from_pretrained(micro_dir, padding_side="left")


def _tasks(toy_suite, group=2):
    return [n.task_id for n in toy_suite for _ in range(group)]


def _same(a, b):
    assert [r.task_id for r in a] == [r.task_id for r in b]
    for x, y in zip(a, b, strict=True):
        assert (x.reward, x.success, x.termination, x.error) == (y.reward, y.success, y.termination, y.error)
        assert (x.prompt_ids, x.completion_ids, x.env_mask, x.logprobs) == (y.prompt_ids, y.completion_ids, y.env_mask, y.logprobs)
        assert x.messages == y.messages


def test_async_ray_rollouts_equal_in_process(workers, toy_suite, tokenizer):
    ids = _tasks(toy_suite)
    local = run_rollouts(ids, EnvPool(toy_suite), tokenizer, Oracle(tokenizer, toy_suite), 1000, seed=3)
    remote = run_rollouts(ids, workers, tokenizer, Oracle(tokenizer, toy_suite), 1000, seed=3)
    _same(local, remote)
    assert all(r.reward == 1.0 for r in remote) and all(r.retries == 0 for r in remote)
    assert workers.stats.resets >= len(ids) and workers.stats.timeouts == workers.stats.worker_deaths == 0


def test_lockstep_ray_rollouts_equal_in_process_when_sampling(workers, toy_suite, tokenizer, micro_dir):
    model = AutoModelForCausalLM.from_pretrained(micro_dir)
    ids, results = _tasks(toy_suite)[:12], []
    workers.lockstep = True
    try:
        for pool in (EnvPool(toy_suite), workers):
            torch.manual_seed(7)
            generator = HFGenerator(model, tokenizer, SamplingConfig(max_new_tokens=24, temperature=1.0), batch_size=8)
            results.append(run_rollouts(ids, pool, tokenizer, generator, 160, seed=1))
    finally:
        workers.lockstep = False
    _same(*results)
    assert len({tuple(r.completion_ids) for r in results[0]}) > 1  # sampled, not a constant policy


def test_an_episode_on_a_dead_worker_is_restarted_and_counted(workers, toy_suite, tokenizer):
    ids = _tasks(toy_suite, group=1)
    deaths = workers.stats.worker_deaths

    def kill_first_worker(call: int) -> None:
        if call == 1:
            ray.kill(workers.actors[0], no_restart=True)

    remote = run_rollouts(ids, workers, tokenizer, Oracle(tokenizer, toy_suite, kill_first_worker), 1000)
    local = run_rollouts(ids, EnvPool(toy_suite), tokenizer, Oracle(tokenizer, toy_suite), 1000)
    assert [r.reward for r in remote] == [r.reward for r in local] == [1.0] * len(ids)
    assert [r.completion_ids for r in remote] == [r.completion_ids for r in local]
    assert workers.stats.worker_deaths > deaths and sum(r.retries for r in remote) > 0
    assert ray.get([a.ping.remote() for a in workers.actors])  # the dead actor was replaced


def test_timed_out_episodes_are_retried_then_reported_never_scored(local_ray, toy_suite, tokenizer):
    nodes = [n for n in toy_suite if n.env.env_id == "Toy-put"][:2] + [n for n in toy_suite if n.env.env_id == "Toy-ask"][:2]
    ids = [n.task_id for n in nodes]
    options = {"max_concurrency": 16, "timeout_s": 1.0, "retries": 1, "on_failure": "mark", "cpus_per_worker": 0.5, "start_timeout_s": START_S}
    slow = RayEnvWorkers(toy_suite, 2, setup=slow_toy, **options)
    try:
        rollouts = run_rollouts(ids, slow, tokenizer, Oracle(tokenizer, toy_suite), 1000)
        assert [r.termination for r in rollouts[:2]] == [WORKER_ERROR] * 2
        assert all("timeout_s=1" in r.error and r.retries == 1 for r in rollouts[:2])
        assert [(r.reward, r.success) for r in rollouts[2:]] == [(1.0, True)] * 2
        assert slow.stats.timeouts == 4 and slow.stats.restarts == 2
        slow.on_failure = "raise"
        with pytest.raises(EpisodeFailed, match=r"2 of 4 episodes failed on every attempt \(2\)"):
            run_rollouts(ids, slow, tokenizer, Oracle(tokenizer, toy_suite), 1000)
    finally:
        slow.shutdown()


def test_the_model_generates_for_ready_episodes_while_others_step(local_ray, toy_suite, tokenizer):
    copy = [n.task_id for n in toy_suite if n.env.env_id == "Toy-copy"][:2]  # get (fast), put (2 s), done
    put = [n.task_id for n in toy_suite if n.env.env_id == "Toy-put"][:2]  # put (2 s), done
    slow = RayEnvWorkers(toy_suite, 2, max_concurrency=8, cpus_per_worker=0.5, setup=functools.partial(slow_toy, 2.0), start_timeout_s=START_S)
    try:
        second_turn_after = {}  # seconds from the first generate call to the first second-turn context
        for slow.lockstep in (False, True):
            oracle = Oracle(tokenizer, toy_suite)
            rollouts = run_rollouts(copy + put, slow, tokenizer, oracle, 1000)
            assert [r.reward for r in rollouts] == [1.0] * 4
            assert sum(len(turns) for _, turns in oracle.turns) == 2 * 3 + 2 * 2  # every agent turn generated once
            second_turn_after[slow.lockstep] = next(t for t, turns in oracle.turns if 1 in turns) - oracle.turns[0][0]
    finally:
        slow.shutdown()
    assert second_turn_after[False] < 1.0  # the copy tasks' put is generated while the put tasks' puts run
    assert second_turn_after[True] >= 2.0  # lockstep waits for every observation


def test_missing_ray_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'envsched-gym\[ray\]'"):
        import_ray()


def test_evaluate_with_env_workers_writes_the_in_process_episodes(local_ray, toy_suite, micro_dir, tmp_path):
    from training.evaluate import EvalConfig, main

    runs = {}
    for n in (0, 2):
        config = EvalConfig(output_dir=str(tmp_path / f"w{n}"), model=str(micro_dir), benchmarks="Toy", split="train", max_difficulty=0,
                            max_tasks=8, max_new_tokens=12, max_completion_length=80, batch_size=4, env_workers=n, env_worker_cpus=0.5,
                            env_worker_start_s=START_S)  # fmt: skip
        rows = main(config)
        summary = json.loads((tmp_path / f"w{n}" / "evaluation" / "summary.json").read_text())
        runs[n] = (rows, (tmp_path / f"w{n}" / "evaluation" / "episodes.jsonl").read_text(), summary["env_workers"])
    assert runs[0][:2] == runs[2][:2] and runs[0][0][-1]["n"] == 8 and runs[0][0][-1]["infra"] == 0
    assert runs[0][2] is None
    assert runs[2][2]["resets"] == 8 and runs[2][2]["failed_episodes"] == runs[2][2]["timeouts"] == 0


@pytest.mark.slow
def test_train_grpo_on_lockstep_env_workers_trains_on_the_in_process_rollouts(local_ray, toy_suite, tmp_path):
    from training.train_grpo import TrainConfig, main

    model = build_micro_qwen3(list(gold_conversations(toy_suite)), tmp_path / "micro", TINY, sft_steps=30, seed=0)
    rounds, weights = {}, {}
    for n in (0, 2):
        config = TrainConfig(output_dir=str(tmp_path / f"w{n}"), model=str(model), families="Toy", max_difficulty=0, steps=2, tasks_per_step=2,
                             num_generations=4, max_new_tokens=40, max_completion_length=200, eval_every=0, save_steps=2, temperature=1.2,
                             env_workers=n, env_lockstep=True, env_worker_cpus=0.5, env_worker_start_s=START_S)  # fmt: skip
        run = main(config)
        lines = (run / "metrics.jsonl").read_text().splitlines()
        rounds[n] = [{k: r[k] for k in ("round", "tasks", "group_rewards")} for r in map(json.loads, lines)]
        weights[n] = load_file(run / "adapter" / "adapter_model.safetensors")
    assert rounds[2] == rounds[0] and len(rounds[0]) == 2
    assert weights[2].keys() == weights[0].keys() and all(torch.equal(weights[2][k], weights[0][k]) for k in weights[0])
