"""Ray env workers: a rollout's environments in N Ray actors, stepped while the model generates.

Each actor (:class:`EnvWorker`) holds its own environments, made with the suite's adapter
options, and runs up to ``max_concurrency`` resets and steps at once in threads, so the tool
calls and user-simulator requests of many episodes are in flight together. The rollout driver
(:func:`envsched_gym.rl.rollout.run_rollouts`) submits calls and gets ObjectRefs back; it
generates for the episodes whose observations have arrived while the rest are still stepping::

    workers = RayEnvWorkers(suite, num_workers=4)      # a local Ray, or the cluster at $RAY_ADDRESS
    rollouts = run_rollouts(task_ids, workers, tokenizer, generator, max_completion_length=1024)

Failures outside the environment's code are infrastructure failures: a call that runs past
``timeout_s``, or whose actor died (the actor is replaced). The driver restarts such an episode
from its reset on another actor, ``retries`` times, and then raises
:class:`~envsched_gym.rl.rollout.EpisodeFailed` (``on_failure="raise"``) or returns it with
``termination="worker_error"`` (``on_failure="mark"``) for the caller to count apart; it is
never scored. An exception raised by environment code is a bug and reaches the caller as it is,
as in-process. :class:`WorkerStats` counts calls, timeouts, dead actors and restarts.

Ray is imported only when workers are made; install it with ``pip install 'envsched-gym[ray]'``.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import gymnasium as gym

import envsched_gym  # noqa: F401  (registers the built-in families, in the workers too)
from envsched_gym.adapter import Adapter
from envsched_gym.data import ENV_VAR
from envsched_gym.registry import BUILTIN, get_adapter
from envsched_gym.rl.env_backend import EnvFailure, EnvReply, reset_reply, step_reply
from envsched_gym.suite import Suite

INSTALL_HINT = "pip install 'envsched-gym[ray]'"


def import_ray() -> ModuleType:
    """The ``ray`` module, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"env workers (--env-workers > 0) run on Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


def init_ray(num_cpus: int | None = None) -> ModuleType:
    """Connect to the cluster at ``$RAY_ADDRESS``, or start a local Ray; a no-op when Ray is up.

    The local Ray has ``num_cpus`` CPUs, no dashboard and warnings-only logging; the workers'
    output is not forwarded. ``$ENVSCHED_BENCHMARKS`` travels to the workers, so a cluster's
    nodes need the benchmark data at that path.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    runtime_env = {"env_vars": {ENV_VAR: os.environ[ENV_VAR]}} if os.environ.get(ENV_VAR) else None
    if os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"], runtime_env=runtime_env, logging_level=logging.WARNING, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, runtime_env=runtime_env, logging_level=logging.WARNING, log_to_driver=False)
    return ray


@dataclass
class WorkerStats:
    """What the workers did, over every session (for the run's metrics).

    Attributes:
        resets: Episode starts submitted, restarts included.
        steps: Agent steps submitted.
        restarts: Episodes restarted after a failure (retries).
        timeouts: Calls that ran past ``timeout_s``.
        worker_deaths: Calls lost because their actor died (each dead actor is replaced).
    """

    resets: int = 0
    steps: int = 0
    restarts: int = 0
    timeouts: int = 0
    worker_deaths: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters by name."""
        return dict(vars(self))


class EnvWorker:
    """One actor's environments: live episodes by key, free environments by gymnasium id.

    Args:
        imports: Modules to import first (their import registers families, like ``--import``).
        setup: Called once after the imports (e.g. a function registering a family).
        options: Adapter options per family (``Suite.options``).
        adapters: The driver's adapters of non-built-in families, registered here (without a
            second validation) unless the imports, the setup or an entry point already did.
    """

    def __init__(
        self, imports: Sequence[str], setup: Callable[[], object] | None, options: dict[str, dict[str, Any]], adapters: dict[str, Adapter]
    ) -> None:  # fmt: skip
        from envsched_gym.plugins import import_modules
        from envsched_gym.registry import families, register_adapter

        import_modules(list(imports))
        if setup is not None:
            setup()
        for name, adapter in adapters.items():
            if name not in families():
                register_adapter(adapter, validate=False)
        self.options = options
        self._lock = threading.Lock()
        self._free: dict[str, list[gym.Env]] = {}
        self._live: dict[str, gym.Env] = {}

    def ping(self) -> int:
        """The actor's process id (answers once the actor is up)."""
        return os.getpid()

    def reset(self, key: str, gym_id: str, family: str, task_id: str, seed: int) -> EnvReply:
        """Start episode ``key`` of ``task_id`` in a free (or new) environment."""
        with self._lock:
            free = self._free.setdefault(gym_id, [])
            env = free.pop() if free else None
        if env is None:
            env = gym.make(gym_id, **({"adapter_options": self.options[family]} if family in self.options else {}))
        _, info = env.reset(seed=seed, options={"task_id": task_id})
        with self._lock:
            self._live[key] = env
        return reset_reply(info)

    def step(self, key: str, action: str) -> EnvReply:
        """Step episode ``key``; an episode that ends gives its environment back to the free list."""
        with self._lock:
            env = self._live[key]
        _, reward, terminated, truncated, info = env.step(action)
        reply = step_reply(float(reward), terminated, truncated, info)
        if reply.done:
            self.close([key])
        return reply

    def close(self, keys: Sequence[str]) -> None:
        """Give the environments of episodes ``keys`` back to the free list (unknown keys are ignored)."""
        with self._lock:
            for key in keys:
                env = self._live.pop(key, None)
                if env is not None:
                    self._free.setdefault(env.spec.id, []).append(env)  # type: ignore[union-attr]


class RayEnvWorkers:
    """N Ray actors holding the suite's environments: the scale-out rollout backend.

    Args:
        suite: The nodes the workers serve (their adapter options included).
        num_workers: Actors to start.
        max_concurrency: Resets and steps one actor runs at once (threads); with ``num_workers``
            it bounds the environment and user-simulator calls in flight.
        timeout_s: Longest one reset or step (a user-simulator reply included) may take.
        retries: Restarts of an episode after a timeout or a dead actor.
        on_failure: ``raise`` or ``mark`` an episode that failed on every attempt (module docstring).
        lockstep: Generate only once every running episode's observation is in (the in-process
            order of ``generate`` calls: equal results for a sampling generator too).
        imports: Modules each actor imports first (the run's ``--import`` modules).
        setup: Called once in each actor after the imports (picklable by Ray). Families the
            driver registered itself need neither: their adapters travel to the actors (pickled,
            so their module must be importable there: on ``PYTHONPATH``, or ``__main__``).
        cpus_per_worker: Ray CPUs each actor reserves.
        num_cpus: CPUs of a local Ray (default: enough for every actor, at least the machine's).
        start_timeout_s: Longest wait for the actors to come up.
    """

    def __init__(
        self, suite: Suite, num_workers: int, *, max_concurrency: int = 16, timeout_s: float = 300.0, retries: int = 2,
        on_failure: str = "raise", lockstep: bool = False, imports: Sequence[str] = (), setup: Callable[[], object] | None = None,
        cpus_per_worker: float = 1.0, num_cpus: int | None = None, start_timeout_s: float = 120.0,
    ) -> None:  # fmt: skip
        if num_workers < 1 or max_concurrency < 1 or timeout_s <= 0 or retries < 0 or start_timeout_s <= 0:
            raise ValueError(f"need num_workers >= 1, max_concurrency >= 1, timeout_s > 0, retries >= 0, start_timeout_s > 0; got {num_workers}, "
                             f"{max_concurrency}, {timeout_s}, {retries}, {start_timeout_s}")  # fmt: skip
        if on_failure not in ("raise", "mark"):
            raise ValueError(f"on_failure is 'raise' or 'mark', got {on_failure!r}")
        self.suite, self.timeout_s, self.retries, self.on_failure, self.lockstep = suite, timeout_s, retries, on_failure, lockstep
        self.stats = WorkerStats()
        self.ray = init_ray(num_cpus or max(os.cpu_count() or 1, math.ceil(num_workers * cpus_per_worker)))
        self._actor_class = self.ray.remote(EnvWorker).options(num_cpus=cpus_per_worker, max_concurrency=max_concurrency)
        user_families = {node.family for node in suite} - set(BUILTIN)
        self._actor_args = (list(imports), setup, dict(suite.options), {name: get_adapter(name) for name in sorted(user_families)})
        self.actors = [self._actor_class.remote(*self._actor_args) for _ in range(num_workers)]
        try:
            self.ray.get([a.ping.remote() for a in self.actors], timeout=start_timeout_s)
        except self.ray.exceptions.GetTimeoutError:
            cpus = self.ray.cluster_resources().get("CPU", 0)
            raise RuntimeError(f"{num_workers} env workers did not start within {start_timeout_s:g} s; the Ray cluster has {cpus:g} CPUs "
                               f"for {num_workers} x {cpus_per_worker:g}: lower --env-workers or cpus_per_worker") from None  # fmt: skip
        self._sessions = itertools.count()

    def session(self) -> _RaySession:
        """A session for one ``run_rollouts`` call."""
        return _RaySession(self, next(self._sessions))

    def replace(self, index: int, dead: Any) -> None:
        """Start a new actor in place of ``dead`` at ``index`` (unless that already happened)."""
        if self.actors[index] is dead:
            self.actors[index] = self._actor_class.remote(*self._actor_args)

    def shutdown(self) -> None:
        """Stop the actors (Ray itself stays up)."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


@dataclass
class _Call:
    slot: int
    actor: int
    handle: Any
    key: str
    started: float
    env_id: str
    what: str


class _RaySession:
    """One ``run_rollouts`` call on the workers: each slot's episode lives on one actor."""

    def __init__(self, workers: RayEnvWorkers, number: int) -> None:
        self.w, self.number = workers, number
        self._pending: dict[Any, _Call] = {}
        self._where: dict[int, _Call] = {}  # the slot's latest call: its actor and episode key
        self._attempts: dict[int, int] = {}
        self._load = [0] * len(workers.actors)

    def reset(self, slot: int, task_id: str, seed: int) -> None:
        node = self.w.suite.node(task_id)
        attempt = self._attempts[slot] = self._attempts.get(slot, -1) + 1
        failed_on = self._where[slot].actor if slot in self._where else None
        choices = [i for i in range(len(self._load)) if i != failed_on] or [0]
        actor = min(choices, key=lambda i: (self._load[i], i))
        self._load[actor] += 1
        handle = self.w.actors[actor]
        call = _Call(slot, actor, handle, f"{self.number}:{slot}:{attempt}", time.monotonic(), node.env.env_id, f"reset of {task_id}")
        self._submit(call, handle.reset.remote(call.key, node.env.gym_id, node.family, task_id, seed))
        self.w.stats.resets += 1
        self.w.stats.restarts += attempt > 0

    def step(self, slot: int, action: str) -> None:
        last = self._where[slot]
        call = _Call(slot, last.actor, last.handle, last.key, time.monotonic(), last.env_id, f"step of {last.what.split(' of ', 1)[1]}")
        self._submit(call, last.handle.step.remote(call.key, action))
        self.w.stats.steps += 1

    def _submit(self, call: _Call, ref: Any) -> None:
        self._pending[ref] = call
        self._where[call.slot] = call

    def poll(self, block: bool) -> list[tuple[int, EnvReply | EnvFailure]]:
        ray, out = self.w.ray, []
        while self._pending:
            refs = list(self._pending)
            if block:
                deadline = min(c.started for c in self._pending.values()) + self.w.timeout_s
                ray.wait(refs, num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            out += [self._collect(ref) for ref in ready]
            out += self._expire()
            if out or not block:
                break
        return sorted(out, key=lambda pair: pair[0])

    def _collect(self, ref: Any) -> tuple[int, EnvReply | EnvFailure]:
        """The reply of a finished call; a dead actor is a failure, an environment's exception is raised."""
        call, errors = self._pending.pop(ref), self.w.ray.exceptions
        try:
            reply: EnvReply = self.w.ray.get(ref)
        except (errors.RayActorError, errors.WorkerCrashedError, errors.ObjectLostError) as exc:
            self.w.stats.worker_deaths += 1
            self.w.replace(call.actor, call.handle)
            self._load[call.actor] -= 1
            return call.slot, EnvFailure(call.env_id, f"env worker {call.actor} died during the {call.what}: {type(exc).__name__}: {exc}")
        if reply.done:
            self._load[call.actor] -= 1
            del self._where[call.slot]
        return call.slot, reply

    def _expire(self) -> list[tuple[int, EnvReply | EnvFailure]]:
        """Failures for the calls that ran past the timeout (their episodes are released on the actor)."""
        now, out = time.monotonic(), []
        for ref, call in list(self._pending.items()):
            if now - call.started > self.w.timeout_s:
                del self._pending[ref]
                self.w.stats.timeouts += 1
                self._load[call.actor] -= 1
                call.handle.close.remote([call.key])
                reason = f"the {call.what} on env worker {call.actor} ran past timeout_s={self.w.timeout_s:g}"
                out.append((call.slot, EnvFailure(call.env_id, reason, timeout=True)))
        return out

    def close(self) -> None:
        live: dict[int, list[str]] = {}
        for call in self._where.values():
            if self.w.actors[call.actor] is call.handle:
                live.setdefault(call.actor, []).append(call.key)
        for actor, keys in live.items():
            self.w.actors[actor].close.remote(keys)
        self._where, self._pending = {}, {}
