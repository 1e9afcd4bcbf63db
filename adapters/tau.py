"""τ-bench (τ2) retail and airline as ``envsched/Tau-retail-v0`` and ``envsched/Tau-airline-v0``.

Tasks come from τ2's ``tasks.json`` (``task_set="current"``: the τ³-era files at a2c0247;
``"pre_tau3"``: the first τ2 release), with train/test from ``split_tasks.json``, or from the
original τ-bench (``"tau1"``: 500 retail training tasks, 115 + 20 retail and 50 airline test
tasks). Task ids are ``retail/0``, ``retail@pre/0`` and ``retail@tau1/train/0``. The system prompt is τ2's agent instruction plus the domain
policy. The customer is the deterministic :class:`ScriptedTauUser` by default, or an LLM
(``user="llm"`` with ``user_options``, see :func:`envsched_gym.llm_user.backend_from_options`)
prompted with τ2's simulation guidelines::

    env = gym.make("envsched/Tau-airline-v0", adapter_options={"task_set": "pre_tau3", "user": "llm",
                   "user_options": {"base_url": "http://127.0.0.1:8000/v1", "model": "Qwen/Qwen3-8B"}})
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from envsched_gym.envs.tau.airline import AirlineWorld
from envsched_gym.envs.tau.db import BaseDB, load_base, require_tables
from envsched_gym.envs.tau.judge import judge_from_option
from envsched_gym.envs.tau.retail import RetailWorld
from envsched_gym.envs.tau.scripted_user import ScriptedTauUser
from envsched_gym.envs.tau.tasks import AGENT_GREETING, TASK_SETS, TaskSource, load_tasks, scenario_text
from envsched_gym.envs.tau.verifier import NLJudge, TauVerifier, gold_calls, replay
from envsched_gym.envs.tau.world import TauWorld

from envsched_gym import Adapter, EnvSpec, StateComponent, TaskSpec, UserSimulator, Verifier
from envsched_gym.data import benchmark_path
from envsched_gym.llm_user import ChatBackend, LLMUser, backend_from_options

WORLDS: dict[str, type[TauWorld]] = {"retail": RetailWorld, "airline": AirlineWorld}
TABLES = {"retail": ("products", "users", "orders"), "airline": ("flights", "users", "reservations")}
AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n- Send a message to the user.\n- Make a tool call.\n"
    "You cannot do both at the same time.\n\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)
DATA_HINT = (
    "Get tau2-bench's data/tau2 folder (plus the first-release tasks for task_set='pre_tau3' and the original tau-bench tasks for "
    "task_set='tau1') as the README's 'Benchmark data' section and docs/tau.md say."
)


class TauAdapter(Adapter):
    """The τ-bench family (see the module docstring).

    Args:
        task_set: ``current``, ``pre_tau3`` or ``tau1`` (the original τ-bench tasks).
        user: ``scripted`` (deterministic, CPU) or ``llm``.
        user_options: For ``user="llm"``: endpoint fields (``base_url``, ``model``, ``api_key_env``,
            ``timeout_s``, ``retries``, ...) or ``{"local_model": path}``.
        nl_judge: Judge for NL assertions: a callable, endpoint options as for ``user_options``,
            or ``None`` to skip NL assertions (flagged in the breakdown).
        data_dir: Benchmark data root (default: ``$ENVSCHED_BENCHMARKS`` or ``../shared/benchmarks``).
        max_steps: Assistant messages per episode before truncation.
    """

    family = "Tau"
    gold_calls_may_fail = True  # τ2's gold actions include lookups that fail by design (the e-mail a user first gives)

    def __init__(
        self,
        task_set: str = "current",
        user: str = "scripted",
        user_options: dict[str, Any] | None = None,
        nl_judge: NLJudge | dict[str, Any] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        max_steps: int = 100,
    ) -> None:
        if task_set not in TASK_SETS:
            raise ValueError(f"unknown task_set '{task_set}'; use one of {sorted(TASK_SETS)}")
        if user not in ("scripted", "llm"):
            raise ValueError(f"unknown user '{user}'; use 'scripted' or 'llm' (with user_options)")
        self.task_set = task_set
        self.user = user
        self.data_dir = data_dir
        self.episode_steps = max_steps
        self._backend: ChatBackend | None = backend_from_options(user_options) if user == "llm" else None
        self._judge = judge_from_option(nl_judge)
        self._tasks: dict[str, list[TaskSpec]] = {}
        self._gold_hashes: dict[str, str] = {}
        self._specs: list[EnvSpec] | None = None
        self._db_paths: dict[str, str] = {}
        self._guidelines: str | None = None

    # --------------------------------------------------------------- declarations
    def _path(self, *parts: str) -> Path:
        return benchmark_path(*parts, data_dir=self.data_dir, hint=DATA_HINT)

    def _domain_file(self, domain: str, name: str, task_set: str = "current") -> Path:
        return self._path(*TASK_SETS[task_set], "tau2", "domains", domain, name)

    def env_specs(self) -> list[EnvSpec]:
        if self._specs is None:
            self._specs = [self._env_spec(domain) for domain in WORLDS]
        return self._specs

    def _env_spec(self, domain: str) -> EnvSpec:
        policy = self._domain_file(domain, "policy.md").read_text(encoding="utf-8")
        return EnvSpec(
            env_id=f"Tau/{domain}",
            family=self.family,
            gym_id=f"envsched/Tau-{domain}-v0",
            tools=WORLDS[domain].tool_specs(),
            state_components=[StateComponent(name=t, description=f"{domain} DB table '{t}'") for t in TABLES[domain]],
            verifier_kind="tau",
            user_simulator=self.user,
            max_steps=self.episode_steps,
            system_prompt=f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy.strip()}\n</policy>",
        )

    def tasks(self, split: str = "all") -> Iterable[TaskSpec]:
        for domain in WORLDS:
            for task in self._domain_tasks(domain):
                if split == "all" or task.split == split:
                    yield task

    def _domain_tasks(self, domain: str) -> list[TaskSpec]:
        if domain not in self._tasks:
            source = self._source(domain)
            tools = WORLDS[domain].tool_specs()
            self._tasks[domain] = load_tasks(source, f"Tau/{domain}", {t.name for t in tools}, {t.name for t in tools if t.write})
        return self._tasks[domain]

    def _source(self, domain: str) -> TaskSource:
        split_file = self._domain_file(domain, "split_tasks.json")
        if self.task_set == "tau1":
            return TaskSource(domain, self.task_set, self._path(*TASK_SETS["tau1"], domain), split_file)
        return TaskSource(domain, self.task_set, self._domain_file(domain, "tasks.json", self.task_set), split_file)

    # ------------------------------------------------------------------ episodes
    def make_world(self, task: TaskSpec) -> TauWorld:
        domain = task.metadata["domain"]
        world = WORLDS[domain](self._base(domain))
        if task.initial_state:
            world.load_state(task.initial_state)
        return world

    def _base(self, domain: str) -> BaseDB:
        """The domain's DB (read once per process), checked to hold the tables its tools use."""
        if domain not in self._db_paths:
            path = str(self._domain_file(domain, "db.json"))
            require_tables(load_base(path), path, TABLES[domain])
            self._db_paths[domain] = path
        return load_base(self._db_paths[domain])

    def gold_hash(self, task: TaskSpec) -> str:
        """DB hash after the task's gold actions (computed once per task)."""
        if task.task_id not in self._gold_hashes:
            self._gold_hashes[task.task_id] = replay(self.make_world(task), gold_calls(task), validate=False).sha256()
        return self._gold_hashes[task.task_id]

    def make_verifier(self, task: TaskSpec) -> Verifier:
        return TauVerifier(task, self.make_world, self.gold_hash(task), self._judge)

    def make_user(self, task: TaskSpec) -> UserSimulator:
        if self._backend is None:
            return ScriptedTauUser()
        if self._guidelines is None:
            self._guidelines = self._path("tau2", "data", "tau2", "user_simulator", "simulation_guidelines.md").read_text(encoding="utf-8")
        return LLMUser(
            self._backend, self._guidelines, scenario=lambda t: scenario_text(t.metadata["user_scenario"]), greeting=AGENT_GREETING
        )
