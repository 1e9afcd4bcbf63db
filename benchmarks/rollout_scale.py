"""Rollout throughput: episodes/s in this process against Ray env workers (1, 2, 4 actors).

Every side runs the same ``run_rollouts`` calls: ``--episodes`` episodes at once (``--group``
rollouts of each task), played by an oracle that answers each context with its task's next gold
turn (``Done.`` once the gold runs out). The oracle and a byte-level tokenizer stand in for the
model, so the times are those of the environments, the user simulators and the rollout driver;
``--gen-latency-ms`` adds a fixed wait per ``generate`` call (a batched decoding step).

Table 1: ToolWorld, BFCL multi-turn and Tau with the scripted user (CPU-bound steps). Table 2:
Tau with an LLM user whose endpoint (a local OpenAI-compatible server started here) sleeps
``--user-latency-ms`` before each reply and ends the conversation after ``--user-turns``
replies. ``serial`` is the in-process default, which steps one environment at a time; a ratio
is a side's episodes/s over ``serial``. Each side is timed over ``--rounds`` batches after one
untimed warm-up batch (data loading and gold caches, in every worker).

Run: ``python benchmarks/rollout_scale.py [--episodes 64 --workers 1,2,4 --user-latency-ms 200]``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from transformers import HfArgumentParser

import envsched_gym
from envsched_gym.registry import family_of
from envsched_gym.rendering import render_turn
from envsched_gym.rl.env_backend import EnvBackend, EnvPool
from envsched_gym.rl.env_workers import RayEnvWorkers, init_ray
from envsched_gym.rl.generation import Generated
from envsched_gym.rl.rollout import run_rollouts
from envsched_gym.suite import Suite

END = "<|im_end|>"


@dataclass
class ScaleConfig:
    """Benchmark options."""

    episodes: int = field(default=64, metadata={"help": "Episodes per run_rollouts call (all concurrent)."})
    group: int = field(default=2, metadata={"help": "Rollouts per task (a GRPO group)."})
    workers: str = field(default="1,2,4", metadata={"help": "Comma-separated Ray worker counts."})
    concurrency: int = field(default=16, metadata={"help": "Episodes one worker steps at once (threads)."})
    worker_cpus: float = field(default=0.5, metadata={"help": "Ray CPUs each worker reserves."})
    rounds: int = field(default=2, metadata={"help": "Timed batches per side (after one warm-up batch)."})
    user_latency_ms: float = field(default=200.0, metadata={"help": "Sleep of the LLM user's endpoint before each reply."})
    user_turns: int = field(default=2, metadata={"help": "LLM user replies before it sends ###STOP###."})
    gen_latency_ms: float = field(default=0.0, metadata={"help": "Fixed wait per generate call (a stand-in for the model)."})
    families: str = field(default="toolworld,bfcl,tau", metadata={"help": "Table-1 rows: any of toolworld, bfcl, tau."})
    seed: int = field(default=0, metadata={"help": "Seed of the task sample and of every reset."})


class ByteTokenizer:
    """One token per UTF-8 byte, ``<|im_end|>`` as id 256: the chat layout at almost no cost."""

    eos_token_id, pad_token_id = 256, 257

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        ids: list[int] = []
        for i, chunk in enumerate(text.split(END)):
            ids += ([self.eos_token_id] if i else []) + list(chunk.encode())
        return {"input_ids": ids}

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        arr = np.asarray(ids, dtype=np.int64)
        cuts = np.flatnonzero(arr >= 256)
        out, start = [], 0
        for cut in cuts.tolist():
            special = END if arr[cut] == self.eos_token_id else ""
            out.append(arr[start:cut].astype(np.uint8).tobytes().decode("utf-8", "replace") + special)
            start = cut + 1
        return "".join(out) + arr[start:].astype(np.uint8).tobytes().decode("utf-8", "replace")

    def apply_chat_template(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                            add_generation_prompt: bool = False, tokenize: bool = True, **kwargs: Any) -> Any:  # fmt: skip
        parts = [f"<|im_start|>system\n{json.dumps(tools)}{END}\n"] if tools else []
        for m in messages:
            calls = json.dumps(m["tool_calls"], default=str) if m.get("tool_calls") else ""
            parts.append(f"<|im_start|>{m['role']}\n{m.get('content') or ''}{calls}{END}\n")
        text = "".join(parts) + ("<|im_start|>assistant\n" if add_generation_prompt else "")
        return self(text)["input_ids"] if tokenize else text


class Oracle:
    """Answers each context with the next gold turn of its task, found by its first user message."""

    def __init__(self, tokenizer: ByteTokenizer, first_user: dict[str, Any], latency_s: float = 0.0) -> None:
        self.tokenizer, self.first_user, self.latency_s = tokenizer, first_user, latency_s

    def generate(self, contexts: list[list[int]]) -> list[Generated]:
        if self.latency_s:
            time.sleep(self.latency_s)
        out = []
        for ctx in contexts:
            text = self.tokenizer.decode(ctx)
            start = text.index("<|im_start|>user\n") + len("<|im_start|>user\n")
            node = self.first_user.get(text[start : text.index(END, start)])  # None: the user simulator failed to start
            turns = node.task.solution or [] if node is not None else []
            n = text.count("<|im_start|>assistant") - 1
            reply = render_turn(turns[n]) if n < len(turns) else "Done."
            out.append(Generated([*self.tokenizer(reply)["input_ids"], self.tokenizer.eos_token_id]))
        return out


class UserServer(ThreadingHTTPServer):
    """A threaded HTTP server whose listen queue holds every concurrent episode's request."""

    request_queue_size, daemon_threads = 1024, True


class SleepyUser(BaseHTTPRequestHandler):
    """A chat endpoint playing the customer: it sleeps, opens with a line naming its scenario, then stops."""

    latency_s, turns = 0.2, 2

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(SleepyUser.latency_s)
        replies = sum(m["role"] == "assistant" for m in body["messages"])
        if replies == 0:
            text = f"Hello, I need help (case {hashlib.sha1(body['messages'][0]['content'].encode()).hexdigest()[:12]})."
        else:
            text = "Yes, please go ahead." if replies < SleepyUser.turns else "Thanks, that is all. ###STOP###"
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def pick_tasks(benchmark: str, count: int, seed: int, options: dict[str, dict[str, Any]] | None = None) -> Suite:
    """``count`` tasks with a gold solution (a seeded pick) of a family or gym id."""
    family = family_of(benchmark) if "/" in benchmark else benchmark
    nodes = envsched_gym.suite(family, split="all", options=options)
    nodes = [n for n in nodes if n.task.solution and ("/" not in benchmark or n.env.gym_id == benchmark)]
    step = max(1, len(nodes) // count)
    return Suite(nodes[seed % step :: step][:count], options)


def first_user_messages(suite: Suite, seed: int) -> dict[str, Any]:
    """Each task's node by the first user message its reset shows (what the oracle reads)."""
    pool, out = EnvPool(suite), {}
    for node in suite:
        env = pool.take(node.task_id)
        _, info = env.reset(seed=seed, options={"task_id": node.task_id})
        out[next(m["content"] for m in info["messages"] if m["role"] == "user")] = node
        pool.give(env)
    return out


def measure(pool: EnvBackend, ids: list[str], oracle: Oracle, cfg: ScaleConfig, warm_up: bool = True) -> tuple[float, float]:
    """Episodes/s over ``cfg.rounds`` timed batches, and the mean reward.

    Raises:
        RuntimeError: An episode's user simulator failed (the rates would time failures).
    """
    if warm_up:
        run_rollouts(ids, pool, oracle.tokenizer, oracle, 1 << 20, seed=cfg.seed)  # type: ignore[arg-type]
    start, rollouts = time.perf_counter(), []
    for _ in range(cfg.rounds):
        rollouts += run_rollouts(ids, pool, oracle.tokenizer, oracle, 1 << 20, seed=cfg.seed)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    broken = [r for r in rollouts if r.termination == "user_error"]
    if broken:
        raise RuntimeError(f"{len(broken)} episodes lost their user simulator, e.g. {broken[0].error}; lower --episodes or --concurrency")
    return cfg.rounds * len(ids) / elapsed, sum(r.reward for r in rollouts) / len(rollouts)


def scale_row(label: str, suite: Suite, cfg: ScaleConfig, warm_serial: bool = True) -> dict[str, Any]:
    """Episodes/s of one workload: serial (in-process), then each Ray worker count."""
    oracle = Oracle(ByteTokenizer(), first_user_messages(suite, cfg.seed), cfg.gen_latency_ms / 1000)
    ids = [n.task_id for n in suite for _ in range(cfg.group)]
    row: dict[str, Any] = {"workload": label, "episodes": len(ids)}
    row["serial"], row["reward"] = measure(EnvPool(suite), ids, oracle, cfg, warm_serial)
    for n in [int(w) for w in cfg.workers.split(",") if w]:
        workers = RayEnvWorkers(suite, n, max_concurrency=cfg.concurrency, cpus_per_worker=cfg.worker_cpus, timeout_s=600)
        try:
            row[f"ray-{n}"], reward = measure(workers, ids, oracle, cfg)
        finally:
            workers.shutdown()
        if abs(reward - row["reward"]) > 1e-9:
            raise RuntimeError(f"{label}: mean reward {reward:.3f} on {n} Ray workers but {row['reward']:.3f} in-process")
        print(f"  {label}: ray-{n} {row[f'ray-{n}']:.1f} episodes/s", file=sys.stderr, flush=True)
    return row


def print_table(title: str, rows: list[dict[str, Any]], cfg: ScaleConfig) -> None:
    """Episodes/s per side and each side's ratio to serial."""
    sides = ["serial", *[f"ray-{w}" for w in cfg.workers.split(",") if w]]
    print(f"\n{title}\n")
    header = ["workload", "episodes", "reward", *[f"{s} ep/s" for s in sides], *[f"{s} / serial" for s in sides[1:]]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        rates = " | ".join(f"{row[s]:.1f}" for s in sides)
        ratios = " | ".join(f"{row[s] / row['serial']:.1f}x" for s in sides[1:])
        print(f"| {row['workload']} | {row['episodes']} | {row['reward']:.2f} | {rates} | {ratios} |")


WORKLOADS = {"toolworld": ("ToolWorld", "ToolWorld"), "bfcl": ("BFCL multi_turn_base", "envsched/BFCL-multi_turn_base-v0"),
             "tau": ("Tau retail, scripted user", "envsched/Tau-retail-v0")}  # fmt: skip


def main(cfg: ScaleConfig) -> list[dict[str, Any]]:
    """Print both tables as Markdown; returns their rows (Table 2's last)."""
    init_ray(num_cpus=max(int(w) for w in cfg.workers.split(",") if w))
    tasks = max(1, cfg.episodes // cfg.group)
    chosen = [(label, name) for key, (label, name) in WORKLOADS.items() if key in cfg.families.split(",")]
    rows = [scale_row(label, pick_tasks(name, tasks, cfg.seed), cfg) for label, name in chosen]
    print_table(f"Table 1. {cfg.episodes} concurrent episodes, oracle policy, CPU-bound environments", rows, cfg)
    server = UserServer(("127.0.0.1", 0), SleepyUser)
    SleepyUser.latency_s, SleepyUser.turns = cfg.user_latency_ms / 1000, cfg.user_turns
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        user = {"user": "llm", "user_options": {"base_url": f"http://127.0.0.1:{server.server_port}/v1", "model": "sleepy", "retries": 0}}
        suite = pick_tasks("envsched/Tau-retail-v0", tasks, cfg.seed, {"Tau": user})
        row = scale_row(f"Tau retail, LLM user {cfg.user_latency_ms:g} ms", suite, cfg, warm_serial=False)
    finally:
        server.shutdown()
    print_table(f"Table 2. {cfg.episodes} concurrent episodes, LLM user at {cfg.user_latency_ms:g} ms per reply, "
                f"{cfg.user_turns + 1} replies per episode", [row], cfg)  # fmt: skip
    return [*rows, row]


if __name__ == "__main__":
    main(HfArgumentParser(ScaleConfig).parse_args_into_dataclasses()[0])
