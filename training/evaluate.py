"""Evaluate a model on the suite's benchmarks with each benchmark's own scoring (its verifier).

    python training/evaluate.py --output-dir runs/tiny                      # the model trained in runs/tiny
    python training/evaluate.py --model Qwen/Qwen3-8B --benchmarks BFCL,Tau --split test --output-dir runs/q8b-eval
    python training/evaluate.py --model Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1 --benchmarks ACE --output-dir runs/ace

The model is a local path or hub id (batched generation with transformers; a LoRA adapter
directory loads with its base model), or any OpenAI-compatible endpoint through ``--base-url``
(a vLLM server included; episodes run in parallel threads). Writes ``episodes.jsonl`` (every
episode with its transcript and verdict) and ``summary.json`` to ``<output-dir>/evaluation``
and prints a table per benchmark category.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser

from envsched_gym.llm_user import EndpointConfig
from envsched_gym.rl.endpoint import endpoint_episode
from envsched_gym.rl.generation import HFGenerator, SamplingConfig
from envsched_gym.rl.rollout import EnvPool, Rollout, run_rollouts
from envsched_gym.rl.tasks import select_tasks
from envsched_gym.suite import Suite


@dataclass
class EvalConfig:
    """What to evaluate, on which tasks, and how."""

    output_dir: str = field(default="runs/tiny", metadata={"help": "Results go to <output_dir>/evaluation; also the default model's run."})
    model: str = field(default="", metadata={"help": "Local path, hub id or endpoint model name ('': the run in output_dir)."})
    base_url: str = field(default="", metadata={"help": "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 ('': local)."})
    api_key_env: str = field(default="OPENAI_API_KEY", metadata={"help": "Environment variable holding the endpoint's API key."})
    benchmarks: str = field(default="ToolWorld", metadata={"help": "Comma-separated families or gym ids."})
    split: str = field(default="heldout", metadata={"help": "train, test, heldout or all."})
    max_difficulty: int = field(default=1, metadata={"help": "Keep tasks whose metadata difficulty is at most this (0: all)."})
    max_tasks: int = field(default=24, metadata={"help": "Seeded sample of at most this many tasks per benchmark (0: all)."})
    max_new_tokens: int = field(default=128, metadata={"help": "Longest assistant message."})
    max_completion_length: int = field(default=1024, metadata={"help": "Token budget of an episode (local models)."})
    temperature: float = field(default=0.0, metadata={"help": "Sampling temperature (0: greedy)."})
    batch_size: int = field(default=32, metadata={"help": "Episodes generated together (local models)."})
    workers: int = field(default=8, metadata={"help": "Parallel episodes (endpoints)."})
    seed: int = field(default=0, metadata={"help": "Seed of the task sample and of sampling."})


def resolve_model(config: EvalConfig) -> str:
    """The model to load: ``--model``, else the run's LoRA adapter, else its micro model."""
    if config.model:
        return config.model
    run = Path(config.output_dir)
    for candidate in (run / "adapter", run / "micro-model"):
        if (candidate / "adapter_config.json").exists() or (candidate / "config.json").exists():
            return str(candidate)
    raise SystemExit(f"{run} holds no trained model (adapter/ or micro-model/); pass --model PATH_OR_HUB_ID")


def load_local(path: str) -> tuple[Any, Any]:
    """Model and tokenizer via ``from_pretrained``; an adapter directory loads with its base model."""
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    if (Path(path) / "adapter_config.json").exists():
        from peft import AutoPeftModelForCausalLM

        model = AutoPeftModelForCausalLM.from_pretrained(path, dtype=dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    if torch.cuda.is_available():
        model = model.to("cuda")
    return model.eval(), AutoTokenizer.from_pretrained(path, padding_side="left")


def run_local(config: EvalConfig, tasks: Suite, path: str) -> list[Rollout]:
    """Batched greedy (or sampled) episodes with a local model."""
    model, tokenizer = load_local(path)
    torch.manual_seed(config.seed)
    generator = HFGenerator(model, tokenizer, SamplingConfig(config.max_new_tokens, config.temperature), config.batch_size)
    pool, ids = EnvPool(tasks), [n.task_id for n in tasks]
    out: list[Rollout] = []
    for start in range(0, len(ids), config.batch_size):
        out += run_rollouts(ids[start : start + config.batch_size], pool, tokenizer, generator, config.max_completion_length, config.seed)
    return out


def run_endpoint(config: EvalConfig, tasks: Suite, model: str) -> list[Rollout]:
    """Episodes against an OpenAI-compatible endpoint, ``workers`` at a time."""
    endpoint = EndpointConfig(config.base_url, model, config.api_key_env, temperature=config.temperature, max_tokens=config.max_new_tokens)
    with ThreadPoolExecutor(config.workers) as pool:
        return list(pool.map(lambda n: endpoint_episode(endpoint, n.env.gym_id, n.task_id, config.seed), tasks))


def summarise(tasks: Suite, rollouts: list[Rollout]) -> list[dict[str, Any]]:
    """One row per (family, category) and one per family: episodes, success rate, mean reward."""
    cells: dict[tuple[str, str], list[Rollout]] = defaultdict(list)
    for node, r in zip(tasks, rollouts, strict=True):
        category = str(node.task.metadata.get("category") or node.env.env_id)
        cells[(node.family, category)].append(r)
        cells[(node.family, "ALL")].append(r)
    return [
        {"benchmark": fam, "category": cat, "n": len(rs), "success": sum(r.success for r in rs) / len(rs), "reward": sum(r.reward for r in rs) / len(rs)}
        for (fam, cat), rs in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1] == "ALL", kv[0][1]))
    ]  # fmt: skip


def main(config: EvalConfig) -> list[dict[str, Any]]:
    """Evaluate; returns the summary rows."""
    model = resolve_model(config) if not config.base_url else config.model
    tasks = select_tasks(config.benchmarks, config.split, config.max_difficulty, config.max_tasks, config.seed)
    rollouts = run_endpoint(config, tasks, model) if config.base_url else run_local(config, tasks, model)
    out = Path(config.output_dir) / "evaluation"
    out.mkdir(parents=True, exist_ok=True)
    with (out / "episodes.jsonl").open("w", encoding="utf-8", errors="backslashreplace") as f:  # a lone surrogate becomes its JSON escape
        for node, r in zip(tasks, rollouts, strict=True):
            episode = {"benchmark": node.family, "split": node.split, "reward": r.reward, "success": r.success, "task_id": r.task_id,
                       "env_id": r.env_id, "termination": r.termination, "messages": r.messages}  # fmt: skip
            f.write(json.dumps(episode, ensure_ascii=False, default=str) + "\n")
    rows = summarise(tasks, rollouts)
    (out / "summary.json").write_text(json.dumps({"model": model, "config": asdict(config), "rows": rows}, indent=2))
    print(f"model: {model}   split: {config.split}   episodes: {len(rollouts)}")
    print(f"| {'benchmark':<10} | {'category':<32} | {'n':>4} | {'success':>7} | {'reward':>6} |")
    print(f"|{'-' * 12}|{'-' * 34}|{'-' * 6}|{'-' * 9}|{'-' * 8}|")
    for row in rows:
        print(f"| {row['benchmark']:<10} | {row['category']:<32} | {row['n']:>4} | {row['success']:>7.3f} | {row['reward']:>6.3f} |")
    return rows


if __name__ == "__main__":
    (cfg,) = HfArgumentParser(EvalConfig).parse_args_into_dataclasses(args=sys.argv[1:])
    main(cfg)
