"""benchmarks/rollout_scale.py: its tokenizer stand-in keeps the chat layout, and a small run prints both tables."""

from __future__ import annotations

import pytest
import ray

from benchmarks.rollout_scale import ByteTokenizer, ScaleConfig, main
from envsched_gym.rl.chat_template import continuation_ids


def test_byte_tokenizer_round_trips_and_gives_the_glue() -> None:
    tok = ByteTokenizer()
    text = "<|im_start|>user\nheizölrückstoßabdämpfung<|im_end|>\n"
    ids = tok(text)["input_ids"]
    assert ids.count(tok.eos_token_id) == 1 and tok.decode(ids) == text
    glue = continuation_ids(tok, [{"role": "tool", "content": "42"}])  # type: ignore[arg-type]
    assert tok.decode(glue) == "\n<|im_start|>tool\n42<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.usefixtures("benchmarks")
def test_small_run_prints_both_tables_with_ratios(capsys) -> None:
    try:
        rows = main(ScaleConfig(episodes=4, group=2, workers="1", rounds=1, user_latency_ms=50, families="toolworld"))
    finally:
        ray.shutdown()
    assert [r["workload"] for r in rows] == ["ToolWorld", "Tau retail, LLM user 50 ms"]
    assert all(r["serial"] > 0 and r["ray-1"] > 0 and r["episodes"] == 4 for r in rows)
    assert rows[0]["reward"] == 1.0
    out = capsys.readouterr().out
    assert "Table 1." in out and "Table 2." in out and "| ray-1 / serial |" in out
