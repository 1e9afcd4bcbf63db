"""Token-in, token-out: completions keep the sampled ids, and environment tokens are masked (real SmolLM2 tokenizer)."""

from __future__ import annotations

import pytest
from toy import register_toy

import envsched_gym
from envsched_gym.rl.generation import Generated
from envsched_gym.rl.pretrained import PACKAGED_MODELS, packaged_tokenizer
from envsched_gym.rl.rollout import EnvPool, run_rollouts

TWO_CALLS = (
    '<tool_call>\n{"name": "get", "arguments": {"key": "apple"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get", "arguments": {"key": "pear"}}\n</tool_call>'
)


@pytest.fixture(scope="module")
def smol_tokenizer():
    return packaged_tokenizer(PACKAGED_MODELS["smollm2-135m"])


class ScriptedIds:
    """Returns fixed messages as *non-canonical* token ids (one token per character), recording what it returned."""

    def __init__(self, tokenizer, messages: list[str]):
        self.tokenizer, self.messages, self.returned = tokenizer, messages, []
        self.calls = 0

    def generate(self, contexts):
        out = []
        for _ in contexts:
            text = self.messages[min(self.calls, len(self.messages) - 1)]
            ids = [self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(ch)[0]) for ch in text if self.tokenizer.tokenize(ch)]
            ids.append(self.tokenizer.eos_token_id)
            self.returned.append(ids)
            out.append(Generated(ids))
        self.calls += 1
        return out


def _task():
    register_toy()
    return next(n for n in envsched_gym.suite("Toy", split="train") if n.env.env_id == "Toy-put")


def test_completion_ids_are_the_generated_ids_not_a_retokenization(smol_tokenizer):
    node = _task()
    gen = ScriptedIds(smol_tokenizer, [TWO_CALLS, "Done."])
    (r,) = run_rollouts([node.task_id], EnvPool(envsched_gym.suite("Toy", split="train")), smol_tokenizer, gen, 2000)
    model_runs, run, previous = [], [], 1
    for token, mask in zip(r.completion_ids, r.env_mask, strict=True):
        if mask and not previous and run:
            model_runs.append(run)
            run = []
        if mask:
            run.append(token)
        previous = mask
    model_runs.append(run)
    assert model_runs == gen.returned
    canonical = smol_tokenizer(TWO_CALLS, add_special_tokens=False)["input_ids"]
    assert gen.returned[0][:-1] != canonical, "the scripted ids must differ from a re-encoding for this test to mean anything"


def test_every_token_of_several_tool_responses_in_one_turn_is_masked(smol_tokenizer):
    node = _task()
    gen = ScriptedIds(smol_tokenizer, [TWO_CALLS, "Done."])
    (r,) = run_rollouts([node.task_id], EnvPool(envsched_gym.suite("Toy", split="train")), smol_tokenizer, gen, 2000)
    env_text = smol_tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask, strict=True) if not m])
    model_text = smol_tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask, strict=True) if m])
    assert env_text.count("<tool_response>") == 2 and env_text.count("</tool_response>") == 2
    assert "<tool_response>" not in model_text and model_text == TWO_CALLS + "<|im_end|>Done.<|im_end|>"
    # One user turn holds both results, as Qwen3's template groups them, and the mask covers it whole.
    assert env_text.count("<|im_start|>user") == 1 and env_text.endswith("<|im_start|>assistant\n")
    tools = [t.openai_schema() for t in node.env.tools]
    assert smol_tokenizer.decode(r.prompt_ids + r.completion_ids) == smol_tokenizer.apply_chat_template(r.messages, tools=tools, tokenize=False).rstrip("\n")
