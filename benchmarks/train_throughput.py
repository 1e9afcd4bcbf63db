"""Throughput and memory of a smol-cpu GRPO step, next to the physical floor of this machine.

    python benchmarks/train_throughput.py                                  # base SmolLM2-135M
    python benchmarks/train_throughput.py --model runs/smol/warm-start     # the warm-started policy (multi-step episodes)

Four parts, each configuration in its own process so that its peak RSS is its own:
1. matmul GFLOP/s in fp32 and bf16 at the model's shapes (the floor's denominator);
2. generation: 16 rollouts (4 ToolWorld tasks x G=4), tokens/s and seconds, for the levers
   KV cache kept across agent steps (on/off), the tool list in the system prompt (compact/JSON)
   and, under the trainer's bf16 autocast with LoRA, the frozen weights cast at each forward or
   stored in bf16 once (``envsched_gym/rl/frozen_bf16.py``), and LoRA decoded through PEFT's
   layers or merged (``envsched_gym/rl/merged_weights.py``);
3. training: forward + backward of those 16 rollouts with LoRA, micro-batch 4 or 16, fp32 or
   bf16 autocast: tokens/s, seconds and peak RSS;
4. a whole GRPO step through ``train_grpo.py`` (TRL's trainer, the smol-cpu preset without its
   warm start and evaluation): seconds per 16-rollout step and the process's peak RSS.
Floors: 2N FLOPs per generated or prefilled token and 6N per trained token (N = parameters), at
the matmul rate of part 1.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from transformers import HfArgumentParser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


@dataclass
class ThroughputConfig:
    """What to measure."""

    model: str = field(default="smollm2-135m", metadata={"help": "Packaged alias or from_pretrained path of the policy."})
    tasks: int = field(default=4, metadata={"help": "ToolWorld tasks (difficulty 1, train split) per step."})
    num_generations: int = field(default=4, metadata={"help": "Rollouts per task (G)."})
    max_new_tokens: int = field(default=64, metadata={"help": "Longest assistant message."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature of the generation rows (0: greedy, for A/B runs with identical episodes)."})
    grpo_steps: int = field(default=3, metadata={"help": "Steps of the whole-step measurement (the first is reported apart: warm-up)."})
    seed: int = field(default=0, metadata={"help": "Seed of the tasks and of sampling."})
    worker: str = field(default="", metadata={"help": "Internal: run one measurement (JSON) and print its result."})


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def _model_path(name: str) -> str:
    from envsched_gym.rl.pretrained import PACKAGED_MODELS, converted_path

    return str(converted_path(name)) if name in PACKAGED_MODELS else name


def measure_matmul(dtype_name: str) -> dict[str, Any]:
    """GFLOP/s of (2048 x 576) @ (576 x 1536) and (2048 x 1536) @ (1536 x 576): the MLP's shapes."""
    import torch

    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    rates = []
    for k, n in ((576, 1536), (1536, 576)):
        a, b = torch.randn(2048, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
        for _ in range(3):
            a @ b
        start, reps = time.perf_counter(), 20
        for _ in range(reps):
            a @ b
        rates.append(2 * 2048 * k * n * reps / (time.perf_counter() - start) / 1e9)
    return {"gflops": sum(rates) / len(rates)}


PRECISIONS = {
    "fp32": "fp32",
    "fp32-merged": "fp32, LoRA merged for decoding (train_grpo.py without native bf16)",
    "autocast": "bf16 autocast, LoRA, frozen weights cast at each forward",
    "autocast-frozen-bf16": "bf16 autocast, LoRA, frozen weights stored in bf16",
    "autocast-merged": "bf16 autocast, LoRA merged for decoding, frozen weights and LM head in bf16",
}


def _rollouts(cfg: ThroughputConfig, path: str, reuse_cache: bool, template: str, precision: str = "fp32") -> tuple[list[Any], float, Any]:
    import contextlib

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envsched_gym.rl.chat_template import COMPACT_TOOL_TEMPLATE, QWEN3_TOOL_TEMPLATE
    from envsched_gym.rl.frozen_bf16 import store_frozen_in_bf16
    from envsched_gym.rl.generation import HFGenerator, SamplingConfig
    from envsched_gym.rl.rollout import EnvPool, run_rollouts
    from envsched_gym.rl.tasks import select_tasks

    torch.manual_seed(cfg.seed)
    if precision not in PRECISIONS:
        raise SystemExit(f"unknown precision '{precision}'; choose one of {sorted(PRECISIONS)}")
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")
    if precision != "fp32":  # as in train_grpo.py: LoRA adapters on every linear layer, the trainer's autocast
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear"))
        if precision in ("autocast-frozen-bf16", "autocast-merged"):
            store_frozen_in_bf16(model)
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if precision.startswith("autocast") else contextlib.nullcontext()
    tok = AutoTokenizer.from_pretrained(path, padding_side="left")
    tok.chat_template = {"compact": COMPACT_TOOL_TEMPLATE, "json": QWEN3_TOOL_TEMPLATE}[template]
    tasks = select_tasks("ToolWorld", "train", 1, cfg.tasks, cfg.seed)
    ids = [n.task_id for n in tasks for _ in range(cfg.num_generations)]
    merged = precision.endswith("-merged")  # the other rows decode through PEFT's LoRA layers, as before merging existed
    generator = HFGenerator(model, tok, SamplingConfig(cfg.max_new_tokens, cfg.temperature), reuse_cache=reuse_cache,
                            merge_lora=merged, compute_dtype=torch.bfloat16 if precision == "autocast-merged" else None)  # fmt: skip
    start = time.perf_counter()
    with cast:
        rollouts = run_rollouts(ids, EnvPool(tasks), tok, generator, 320 * (3 if template == "json" else 1), seed=cfg.seed)
    return rollouts, time.perf_counter() - start, model


def measure_generation(cfg: ThroughputConfig, reuse_cache: bool, template: str, precision: str = "fp32") -> dict[str, Any]:
    """Seconds and tokens of one round of rollouts."""
    rollouts, seconds, model = _rollouts(cfg, _model_path(cfg.model), reuse_cache, template, precision)
    generated = sum(sum(r.env_mask) for r in rollouts)
    context = sum(len(r.prompt_ids) + len(r.completion_ids) for r in rollouts)
    return {"seconds": seconds, "generated_tokens": generated, "tokens": context, "generated_per_s": generated / seconds,
            "agent_steps": sum(sum(1 for m in r.messages if m["role"] == "assistant") for r in rollouts),
            "params": sum(p.numel() for n, p in model.named_parameters() if "lora_" not in n), "peak_gb": _peak_gb()}  # fmt: skip


def measure_training(cfg: ThroughputConfig, micro_batch: int, bf16: bool, compact: bool = True, attention: str = "sdpa") -> dict[str, Any]:
    """Forward + backward over one round's rollouts as TRL's loss runs them: LoRA r=16, TRL's fused LM head."""
    import torch
    import trl.trainer.utils as trl_utils
    from peft import LoraConfig, get_peft_model
    from trl.trainer.utils import add_fused_lm_head

    from envsched_gym.rl import cpu_scoring

    rollouts, _, model = _rollouts(cfg, _model_path(cfg.model), True, "compact")
    if attention != "sdpa":
        model.set_attn_implementation(attention)
    trl_utils._use_triton = cpu_scoring._compact_on_cpu if compact else cpu_scoring._ORIGINAL
    add_fused_lm_head(model)
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear"))
    model.train()
    start = time.perf_counter()
    padded = 0
    for s in range(0, len(rollouts), micro_batch):
        part = rollouts[s : s + micro_batch]
        # TRL's layout: prompts left-padded, completions right-padded.
        p_w, c_w = max(len(r.prompt_ids) for r in part), max(len(r.completion_ids) for r in part)
        ids = torch.zeros((len(part), p_w + c_w), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, r in enumerate(part):
            ids[i, p_w - len(r.prompt_ids) : p_w], mask[i, p_w - len(r.prompt_ids) : p_w] = torch.tensor(r.prompt_ids), 1
            ids[i, p_w : p_w + len(r.completion_ids)], mask[i, p_w : p_w + len(r.completion_ids)] = torch.tensor(r.completion_ids), 1
        labels = ids.masked_fill(mask == 0, -100)
        labels[:, :p_w] = -100
        padded += ids.numel()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        out.log_probs.sum().backward()
    seconds = time.perf_counter() - start
    tokens = sum(len(r.prompt_ids) + len(r.completion_ids) for r in rollouts)
    return {"seconds": seconds, "tokens": tokens, "padded_tokens": padded, "tokens_per_s": tokens / seconds, "peak_gb": _peak_gb()}


def measure_grpo_step(cfg: ThroughputConfig, flags: tuple[str, ...] = ()) -> dict[str, Any]:
    """Whole GRPO steps of the smol-cpu preset through train_grpo.py (no warm start, no evaluation), with extra ``flags``."""
    from training.train_grpo import main, parse_config

    with tempfile.TemporaryDirectory() as out:
        config = parse_config(["--preset", "smol-cpu", "--output-dir", out, "--model", cfg.model, "--steps", str(cfg.grpo_steps),
                               "--warm-start-steps", "0", "--eval-every", "0", "--save-steps", str(cfg.grpo_steps), "--seed", str(cfg.seed), *flags])  # fmt: skip
        main(config)
        rounds = [json.loads(line) for line in (Path(out) / "metrics.jsonl").read_text().splitlines()]
        log = json.loads((Path(out) / f"checkpoint-{cfg.grpo_steps}" / "trainer_state.json").read_text())["log_history"]
    return {"step_seconds": [float(h["step_time"]) for h in log if "step_time" in h], "rollout_seconds": [r["seconds"] for r in rounds], "peak_gb": _peak_gb()}


def run_worker(spec: dict[str, Any], cfg: ThroughputConfig) -> dict[str, Any]:
    kind = spec.pop("kind")
    fn = {"matmul": measure_matmul, "generation": measure_generation, "training": measure_training, "grpo": measure_grpo_step}[kind]
    return fn(**spec) if kind == "matmul" else fn(cfg, **spec)


def spawn(cfg: ThroughputConfig, spec: dict[str, Any], may_fail: bool = False) -> dict[str, Any]:
    """Run one measurement in a fresh process; its last stdout line is the JSON result.

    With ``may_fail`` a failed process gives ``{"failed": reason}`` (the table prints it) instead of
    stopping the report: the largest training micro-batch can exceed the machine's memory in fp32.
    """
    args = [sys.executable, __file__, "--model", cfg.model, "--tasks", str(cfg.tasks), "--num-generations", str(cfg.num_generations),
            "--max-new-tokens", str(cfg.max_new_tokens), "--grpo-steps", str(cfg.grpo_steps), "--seed", str(cfg.seed), "--worker", json.dumps(spec)]  # fmt: skip
    proc = subprocess.run(args, capture_output=True, text=True, env={"TRL_EXPERIMENTAL_SILENCE": "1", **__import__("os").environ}, check=False)
    if proc.returncode and may_fail:
        return {"failed": f"exit {proc.returncode}" + (" (killed, e.g. out of memory)" if proc.returncode == -9 else "")}
    if proc.returncode:
        raise SystemExit(f"measurement {spec} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(cfg: ThroughputConfig) -> dict[str, Any]:
    """Every measurement, printed as tables with the floor beside each rate.

    The bf16 rows run only where bf16 is native (AMX, AVX512-BF16): elsewhere a bf16 matmul takes
    PyTorch's slow fallback path (the matmul line shows its rate) and the table says they were skipped.
    """
    from envsched_gym.rl.precision import device_name, native_bf16

    mm = {d: spawn(cfg, {"kind": "matmul", "dtype_name": d})["gflops"] for d in ("fp32", "bf16")}
    native = native_bf16()
    gen_variants = [(True, "compact", "fp32"), (False, "compact", "fp32"), (True, "json", "fp32"), (True, "compact", "fp32-merged")]
    gen_variants += [(True, "compact", p) for p in ("autocast", "autocast-frozen-bf16", "autocast-merged")] if native else []
    gen = {v: spawn(cfg, {"kind": "generation", "reuse_cache": v[0], "template": v[1], "precision": v[2]}) for v in gen_variants}
    n = gen[(True, "compact", "fp32")]["params"]
    variants = list(dict.fromkeys([(2, native, True, "sdpa"), (4, native, True, "sdpa"), (4, native, False, "sdpa"), (4, False, True, "sdpa"),
                                   (4, False, True, "eager"), (16, native, True, "sdpa")]))  # fmt: skip
    train = {v: spawn(cfg, {"kind": "training", "micro_batch": v[0], "bf16": v[1], "compact": v[2], "attention": v[3]}, may_fail=True) for v in variants}
    step = spawn(cfg, {"kind": "grpo"})
    rollouts = cfg.tasks * cfg.num_generations
    print(f"model {cfg.model}: N = {n / 1e6:.1f}M parameters; {rollouts} rollouts per step ({cfg.tasks} tasks x G={cfg.num_generations})")
    print(f"matmul: fp32 {mm['fp32']:.0f} GFLOP/s, bf16 {mm['bf16']:.1f} GFLOP/s (2 cores, {device_name()}, {'native' if native else 'no native'} bf16)")
    if not native:
        print("bf16 autocast rows skipped: this CPU has no native bf16 matmul, and train_grpo.py's smol-cpu preset trains in fp32 here")
    _print_generation(cfg, gen, mm, n)
    _print_training(train, mm, n)
    total, gen_s = step["step_seconds"], step["rollout_seconds"]
    print(f"\nwhole GRPO steps (train_grpo.py, smol-cpu preset, no warm start, {'bf16 autocast' if native else 'fp32'}): seconds per {rollouts}-rollout step "
          + ", ".join(f"{t:.1f} (rollouts {g:.1f})" for t, g in zip(total, gen_s, strict=False))
          + f"; peak RSS of the process {step['peak_gb']:.2f} GB")
    return {"config": asdict(cfg), "matmul": mm, "native_bf16": native, "generation": {f"{k}": v for k, v in gen.items()},
            "training": {f"{k}": v for k, v in train.items()}, "grpo": step}  # fmt: skip


def _print_generation(cfg: ThroughputConfig, gen: dict[tuple[bool, str, str], dict[str, Any]], mm: dict[str, float], n: int) -> None:
    print("\n| generation | seconds | agent steps | tokens in contexts | generated tok/s | prefill floor tok/s at 2N | peak RSS GB |")
    print("|---|---|---|---|---|---|---|")
    for (r, t, p), g in gen.items():
        label = f"KV cache {'kept' if r else 'rebuilt'} across steps, {t} tools, {PRECISIONS[p]}"
        floor = mm["bf16" if p.startswith("autocast") else "fp32"] * 1e9 / (2 * n)
        print(f"| {label} | {g['seconds']:.1f} | {g['agent_steps']} | {g['tokens']} | {g['generated_per_s']:.1f} | {floor:.0f} | {g['peak_gb']:.2f} |")
    seconds = {k: g["seconds"] for k, g in gen.items()}
    kept = seconds[(True, "compact", "fp32")]
    notes = [f"KV cache kept: {seconds[(False, 'compact', 'fp32')] / kept:.2f}x faster rollouts",
             f"compact tools: {seconds[(True, 'json', 'fp32')] / kept:.2f}x faster than JSON schemas"]  # fmt: skip
    if (True, "compact", "autocast") in seconds:
        notes.append(f"under autocast, frozen weights stored in bf16: {seconds[(True, 'compact', 'autocast')] / seconds[(True, 'compact', 'autocast-frozen-bf16')]:.2f}x "
                     "faster than cast at each forward")  # fmt: skip
        notes.append(f"LoRA merged for decoding: {seconds[(True, 'compact', 'autocast-frozen-bf16')] / seconds[(True, 'compact', 'autocast-merged')]:.2f}x faster than LoRA layers")
    print("\n" + "; ".join(notes) + "\n")


def _print_training(train: dict[tuple[int, bool, bool, str], dict[str, Any]], mm: dict[str, float], n: int) -> None:
    print("| training pass (LoRA, TRL's fused LM head) | seconds | tokens (padded) | tok/s | floor tok/s at 6N | share of floor | peak RSS GB |")
    print("|---|---|---|---|---|---|---|")
    for (b, h, c, a), t in train.items():
        floor = mm["bf16" if h else "fp32"] * 1e9 / (6 * n)
        label = f"micro-batch {b}, {'bf16 autocast' if h else 'fp32'}, {'completion' if c else 'every'} positions scored, {a}"
        if "failed" in t:
            print(f"| {label} | did not finish: {t['failed']} | | | {floor:.0f} | | |")
            continue
        print(f"| {label} | {t['seconds']:.1f} | {t['tokens']} ({t['padded_tokens']}) | {t['tokens_per_s']:.0f} | {floor:.0f} | {t['tokens_per_s'] / floor:.2f} | {t['peak_gb']:.2f} |")


if __name__ == "__main__":
    (config,) = HfArgumentParser(ThroughputConfig).parse_args_into_dataclasses(args=sys.argv[1:])
    if config.worker:
        print(json.dumps(run_worker(json.loads(config.worker), config)))
    else:
        report(config)
