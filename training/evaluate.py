"""Evaluate a model on the suite's benchmarks with each benchmark's own scoring (its verifier).

    python training/evaluate.py --output-dir runs/tiny                      # the model trained in runs/tiny, on its families
    python training/evaluate.py --model Qwen/Qwen3-8B --benchmarks BFCL,Tau --split test --output-dir runs/q8b-eval
    python training/evaluate.py --model Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1 --benchmarks ACE --output-dir runs/ace

The model is a local path or hub id (batched generation with transformers; a LoRA adapter
directory loads with its base model), or any OpenAI-compatible endpoint through ``--base-url``
(a vLLM server included; episodes run in parallel threads). For a run directory of
``training/train_grpo.py``, the benchmarks, split and difficulty cap not given on the command
line are the run's (its ``config.json``). Writes ``episodes.jsonl`` (every episode with its
transcript, the raw text of each model message, and its verdict) and ``summary.json`` to
``<output-dir>/evaluation`` and prints a table per benchmark category. Episodes that an endpoint
or a user simulator broke are counted apart (``infra``) and scored by nobody; when more of them
than ``--max-infra-failures`` allows, the script exits with status 1 and says what to fix.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser

from envsched_gym.llm_user import EndpointConfig
from envsched_gym.plugins import import_modules, split_imports
from envsched_gym.rl.endpoint import endpoint_episode
from envsched_gym.rl.env_backend import EnvBackend
from envsched_gym.rl.generation import HFGenerator, SamplingConfig
from envsched_gym.rl.rollout import WORKER_ERROR, EnvPool, Rollout, run_rollouts
from envsched_gym.rl.tasks import select_tasks
from envsched_gym.suite import Suite

INFRA = frozenset({"endpoint_error", "user_error", WORKER_ERROR})
"""Terminations that say nothing about the model: its endpoint, the user simulator or an env worker failed."""

STANDALONE = {"benchmarks": "ToolWorld", "split": "heldout", "max_difficulty": 1}
"""What the run-defaulted settings are when ``output_dir`` holds no training run."""


@dataclass
class EvalConfig:
    """What to evaluate, on which tasks, and how."""

    output_dir: str = field(default="runs/tiny", metadata={"help": "Results go to <output_dir>/evaluation; also the default model's run."})
    model: str = field(default="", metadata={"help": "Local path, hub id or endpoint model name ('': the run in output_dir)."})
    base_url: str = field(default="", metadata={"help": "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 ('': local)."})
    api_key_env: str = field(default="OPENAI_API_KEY", metadata={"help": "Environment variable holding the endpoint's API key."})
    timeout_s: float = field(default=60.0, metadata={"help": "Seconds to wait for one endpoint response."})
    retries: int = field(
        default=3, metadata={"help": "Extra attempts after a failed endpoint request (connection errors, timeouts, 429, 5xx)."}
    )
    benchmarks: str = field(default="", metadata={"help": "Comma-separated families or gym ids ('': the run's families, else ToolWorld)."})
    split: str = field(default="", metadata={"help": "train, test, heldout or all ('': the run's eval split, else heldout)."})
    max_difficulty: int = field(
        default=-1, metadata={"help": "Keep tasks whose metadata difficulty is at most this (0: all; -1: the run's, else 1)."}
    )
    max_tasks: int = field(default=24, metadata={"help": "Seeded sample of at most this many tasks per benchmark (0: all)."})
    max_new_tokens: int = field(default=128, metadata={"help": "Longest assistant message."})
    max_completion_length: int = field(default=1024, metadata={"help": "Token budget of an episode (local models)."})
    temperature: float = field(default=0.0, metadata={"help": "Sampling temperature (0: greedy)."})
    batch_size: int = field(default=32, metadata={"help": "Episodes generated together (local models)."})
    workers: int = field(default=8, metadata={"help": "Parallel episodes (endpoints)."})
    env_workers: int = field(default=0, metadata={"help": "Ray actors running the environments (local models; 0: in this process). "
                                                          "A local Ray, or the cluster at $RAY_ADDRESS."})  # fmt: skip
    env_concurrency: int = field(default=16, metadata={"help": "Environment steps one env worker runs at once."})
    env_timeout_s: float = field(default=300.0, metadata={"help": "Longest environment reset or step (user simulator included) "
                                                                  "on an env worker."})  # fmt: skip
    env_retries: int = field(default=2, metadata={"help": "Restarts of an episode whose env worker died or timed out."})
    env_worker_cpus: float = field(default=1.0, metadata={"help": "Ray CPUs each env worker reserves (below 1 for I/O-bound user "
                                                                  "simulators)."})  # fmt: skip
    env_worker_start_s: float = field(default=120.0, metadata={"help": "Longest wait for the env workers to start (a loaded or autoscaling cluster may need more)."})
    max_infra_failures: float = field(default=0.0, metadata={"help": "Largest fraction (0 to 1) of episodes that may fail outside the model "
                                                                     "(endpoint or user-simulator errors); above it the exit status is 1."})  # fmt: skip
    seed: int = field(default=0, metadata={"help": "Seed of the task sample and of sampling."})
    imports: str = field(default="", metadata={"help": "Comma-separated modules imported first (their import registers families; a run's "
                                                       "own imports are added); --import MODULE may be repeated."})  # fmt: skip


def with_run_defaults(config: EvalConfig) -> tuple[EvalConfig, Path | None]:
    """``config`` with the unset ``benchmarks``, ``split`` and ``max_difficulty`` filled in.

    They come from ``<output_dir>/config.json`` when ``training/train_grpo.py`` wrote it (its
    ``families``, ``eval_split`` and ``max_difficulty``), else from :data:`STANDALONE`; values
    given explicitly are kept as they are. Returns the filled config and the run config used.
    """
    unset = {"benchmarks": config.benchmarks == "", "split": config.split == "", "max_difficulty": config.max_difficulty < 0}
    path = Path(config.output_dir) / "config.json"
    run: dict[str, Any] = {}
    if path.is_file():
        try:
            run = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path} is not JSON ({exc}); fix or remove it, or pass --benchmarks, --split and --max-difficulty") from exc
    trained = isinstance(run, dict) and "families" in run and "eval_split" in run
    source = (
        {"benchmarks": run["families"], "split": run["eval_split"], "max_difficulty": run.get("max_difficulty", 1)}
        if trained
        else STANDALONE
    )
    filled = replace(config, **{key: source[key] for key, is_unset in unset.items() if is_unset})
    if trained and run.get("imports"):  # the run's families may need the modules it imported
        mine = [m for m in filled.imports.split(",") if m]
        filled = replace(filled, imports=",".join(mine + [m for m in str(run["imports"]).split(",") if m and m not in mine]))
    return filled, path if trained else None


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


def env_backend(config: EvalConfig, tasks: Suite) -> EnvBackend:
    """Where the episodes' environments run: this process, or ``env_workers`` Ray actors.

    On the workers, an episode that fails on every attempt is marked ``worker_error`` and counted
    as an infrastructure failure (never scored).
    """
    if config.env_workers <= 0:
        return EnvPool(tasks)
    from envsched_gym.rl.env_workers import RayEnvWorkers

    return RayEnvWorkers(tasks, config.env_workers, max_concurrency=config.env_concurrency, timeout_s=config.env_timeout_s,
                         retries=config.env_retries, on_failure="mark", imports=[m for m in config.imports.split(",") if m],
                         cpus_per_worker=config.env_worker_cpus, start_timeout_s=config.env_worker_start_s)  # fmt: skip


def run_local(config: EvalConfig, tasks: Suite, path: str, pool: EnvBackend) -> list[Rollout]:
    """Batched greedy (or sampled) episodes with a local model, the environments in ``pool``."""
    model, tokenizer = load_local(path)
    torch.manual_seed(config.seed)
    generator = HFGenerator(model, tokenizer, SamplingConfig(config.max_new_tokens, config.temperature), config.batch_size)
    ids = [n.task_id for n in tasks]
    out: list[Rollout] = []
    for start in range(0, len(ids), config.batch_size):
        out += run_rollouts(ids[start : start + config.batch_size], pool, tokenizer, generator, config.max_completion_length, config.seed)
    return out


def run_endpoint(config: EvalConfig, tasks: Suite, model: str) -> list[Rollout]:
    """Episodes against an OpenAI-compatible endpoint, ``workers`` at a time."""
    endpoint = EndpointConfig(config.base_url, model, config.api_key_env, config.timeout_s, config.retries,
                              temperature=config.temperature, max_tokens=config.max_new_tokens)  # fmt: skip
    with ThreadPoolExecutor(config.workers) as pool:
        return list(pool.map(lambda n: endpoint_episode(endpoint, n.env.gym_id, n.task_id, config.seed), tasks))


def summarise(tasks: Suite, rollouts: list[Rollout]) -> list[dict[str, Any]]:
    """One row per (family, category) and one per family.

    A row counts its episodes (``n``), those an endpoint or user simulator broke (``infra``) and
    those the model failed (``failed``); ``success`` and ``reward`` are means over the episodes
    that ran (``n - infra``; ``None`` when none did), so a broken endpoint does not read as a bad model.
    """
    cells: dict[tuple[str, str], list[Rollout]] = defaultdict(list)
    for node, r in zip(tasks, rollouts, strict=True):
        category = str(node.task.metadata.get("category") or node.env.env_id)
        cells[(node.family, category)].append(r)
        cells[(node.family, "ALL")].append(r)
    rows = []
    for (fam, cat), rs in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1] == "ALL", kv[0][1])):
        ran = [r for r in rs if r.termination not in INFRA]
        successes = sum(r.success for r in ran)
        rows.append({"benchmark": fam, "category": cat, "n": len(rs), "infra": len(rs) - len(ran), "failed": len(ran) - successes,
                     "success": successes / len(ran) if ran else None, "reward": sum(r.reward for r in ran) / len(ran) if ran else None})  # fmt: skip
    return rows


def infra_report(config: EvalConfig, rollouts: list[Rollout]) -> str | None:
    """What failed outside the model and how to fix it, when more than ``max_infra_failures`` did (else ``None``)."""
    broken = [r for r in rollouts if r.termination in INFRA]
    if not broken or len(broken) <= config.max_infra_failures * len(rollouts):
        return None
    lines = [f"{len(broken)} of {len(rollouts)} episodes failed outside the model, more than --max-infra-failures {config.max_infra_failures:g} "
             f"allows; their rewards say nothing about the model."]  # fmt: skip
    for kind in sorted({r.termination for r in broken}):
        some = [r for r in broken if r.termination == kind]
        lines.append(f"  {kind} in {len(some)} episode(s), e.g. {some[0].task_id}: {some[0].error}")
    if any(r.termination == "endpoint_error" for r in broken):
        lines.append(f"Fix: check that --base-url {config.base_url} is up and serves --model '{config.model}' (curl {config.base_url.rstrip('/')}/models); "
                     f"for a slow server raise --timeout-s ({config.timeout_s:g}) or --retries ({config.retries}).")  # fmt: skip
    if any(r.termination == WORKER_ERROR for r in broken):
        lines.append(f"Fix: env workers died or ran past --env-timeout-s ({config.env_timeout_s:g}) on every attempt (--env-retries "
                     f"{config.env_retries}): raise them, or check the Ray cluster (ray status).")  # fmt: skip
    if any(r.termination == "user_error" for r in broken):
        lines.append("Fix: the user simulator failed: check the endpoint or local model in the family's user options "
                     "(adapter_options user_options, e.g. docs/tau.md), or evaluate with the scripted user.")  # fmt: skip
    lines.append("To accept this many, pass --max-infra-failures FRACTION (0 to 1).")
    return "\n".join(lines)


def write_episodes(path: Path, tasks: Suite, rollouts: list[Rollout]) -> None:
    """Every episode as one JSON line: ids, verdict, termination, infrastructure error and transcript (with ``raw`` model text)."""
    with path.open("w", encoding="utf-8", errors="backslashreplace") as f:  # a lone surrogate becomes its JSON escape
        for node, r in zip(tasks, rollouts, strict=True):
            episode = {"benchmark": node.family, "split": node.split, "reward": r.reward, "success": r.success, "task_id": r.task_id,
                       "env_id": r.env_id, "termination": r.termination, "infra": r.termination in INFRA, "error": r.error,
                       "messages": r.messages}  # fmt: skip
            f.write(json.dumps(episode, ensure_ascii=False, default=str) + "\n")


def print_table(rows: list[dict[str, Any]]) -> None:
    """The summary rows as a Markdown table (success and reward over the episodes that ran)."""
    print(f"| {'benchmark':<10} | {'category':<32} | {'n':>4} | {'infra':>5} | {'failed':>6} | {'success':>7} | {'reward':>6} |")
    print(f"|{'-' * 12}|{'-' * 34}|{'-' * 6}|{'-' * 7}|{'-' * 8}|{'-' * 9}|{'-' * 8}|")
    for row in rows:
        success, reward = (f"{row[k]:.3f}" if row[k] is not None else "-" for k in ("success", "reward"))
        print(
            f"| {row['benchmark']:<10} | {row['category']:<32} | {row['n']:>4} | {row['infra']:>5} | {row['failed']:>6} | {success:>7} | {reward:>6} |"
        )


def main(config: EvalConfig) -> list[dict[str, Any]]:
    """Evaluate; returns the summary rows.

    Raises:
        SystemExit: More episodes than ``max_infra_failures`` allows failed outside the model
            (after the results are written), or the settings are invalid.
    """
    if not 0.0 <= config.max_infra_failures <= 1.0:
        raise SystemExit(f"--max-infra-failures is a fraction of the episodes, from 0 to 1; got {config.max_infra_failures:g}")
    config, run_config = with_run_defaults(config)
    import_modules([m for m in config.imports.split(",") if m])
    model = resolve_model(config) if not config.base_url else config.model
    tasks = select_tasks(config.benchmarks, config.split, config.max_difficulty, config.max_tasks, config.seed)
    if config.base_url and config.env_workers > 0:
        raise SystemExit("--env-workers runs the environments of local-model episodes; endpoint episodes already run --workers at a time "
                         "in threads: drop --env-workers, or raise --workers")  # fmt: skip
    pool = None if config.base_url else env_backend(config, tasks)
    try:
        rollouts = run_local(config, tasks, model, pool) if pool is not None else run_endpoint(config, tasks, model)
    finally:
        getattr(pool, "shutdown", lambda: None)()  # Ray env workers stop; Ray itself stays up
    out = Path(config.output_dir) / "evaluation"
    out.mkdir(parents=True, exist_ok=True)
    write_episodes(out / "episodes.jsonl", tasks, rollouts)
    rows = summarise(tasks, rollouts)
    infra = sum(r.termination in INFRA for r in rollouts)
    summary = {"model": model, "config": asdict(config), "defaults_from": str(run_config) if run_config else None,
               "episodes": len(rollouts), "infra_failures": infra, "env_workers": _worker_stats(pool, rollouts), "rows": rows}  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    origin = f" (unset settings from {run_config})" if run_config else ""
    print(
        f"model: {model}   benchmarks: {config.benchmarks}   split: {config.split}{origin}   episodes: {len(rollouts)}   infra failures: {infra}"
    )
    print_table(rows)
    report = infra_report(config, rollouts)
    if report:
        raise SystemExit(f"{report}\nResults (infra episodes included, marked) are in {out}.")
    return rows


def _worker_stats(pool: EnvBackend | None, rollouts: list[Rollout]) -> dict[str, int] | None:
    """The env workers' counters plus the episodes that failed on every attempt (``None`` in-process)."""
    stats = getattr(pool, "stats", None)
    if stats is None:
        return None
    return {**stats.as_dict(), "failed_episodes": sum(r.termination == WORKER_ERROR for r in rollouts)}


def parse_config(argv: list[str]) -> EvalConfig:
    """The config from ``argv``; each ``--import MODULE`` joins ``--imports``."""
    modules, argv = split_imports(argv)
    (config,) = HfArgumentParser(EvalConfig).parse_args_into_dataclasses(
        args=[*argv, *(["--imports", ",".join(modules)] if modules else [])]
    )
    return config


if __name__ == "__main__":
    main(parse_config(sys.argv[1:]))
