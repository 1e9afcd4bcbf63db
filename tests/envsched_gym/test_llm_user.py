"""LLM user simulator over an OpenAI-compatible endpoint, against a fake server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import gymnasium as gym
import pytest

import envsched_gym
from envsched_gym.llm_user import EndpointConfig, LLMError, LLMUser, OpenAICompatibleBackend, backend_from_options


class FakeServer(ThreadingHTTPServer):
    """Answers /v1/chat/completions from a script of (status, content or error body, delay)."""

    script: list[tuple[int, str, float]]
    requests: list[dict[str, Any]]


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        status, text, delay = self.server.script.pop(0) if self.server.script else (200, "###STOP###", 0.0)
        time.sleep(delay)
        payload = {"choices": [{"message": {"role": "assistant", "content": text}}]} if status == 200 else {"error": text}
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: Any) -> None:
        """Keep test output quiet."""


@pytest.fixture
def server() -> Iterator[FakeServer]:
    srv = FakeServer(("127.0.0.1", 0), Handler)
    srv.script, srv.requests = [], []
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _config(server: FakeServer, **kw: Any) -> EndpointConfig:
    return EndpointConfig(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="fake-user", backoff_s=0.01, **kw)


def test_completion_request_key_and_think_stripping(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-test")
    server.script = [(200, "<think>plan</think> Hello there", 0.0)]
    reply = OpenAICompatibleBackend(_config(server, api_key_env="FAKE_API_KEY")).complete([{"role": "user", "content": "hi"}])
    assert reply == "Hello there"
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "fake-user" and request["body"]["messages"] == [{"role": "user", "content": "hi"}]


def test_retries_server_errors_then_succeeds(server: FakeServer) -> None:
    server.script = [(503, "busy", 0.0), (500, "oops", 0.0), (200, "ok", 0.0)]
    assert OpenAICompatibleBackend(_config(server, retries=2)).complete([]) == "ok"
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(server: FakeServer) -> None:
    server.script = [(400, "bad model", 0.0)]
    with pytest.raises(LLMError, match=r"HTTP 400.*bad model"):
        OpenAICompatibleBackend(_config(server, retries=3)).complete([])
    assert len(server.requests) == 1


def test_timeouts_are_retried_then_reported(server: FakeServer) -> None:
    server.script = [(200, "late", 1.0), (200, "late", 1.0)]
    with pytest.raises(LLMError, match="after 2 attempt"):
        OpenAICompatibleBackend(_config(server, timeout_s=0.2, retries=1)).complete([])


def test_unreachable_endpoint_raises_llm_error() -> None:
    backend = OpenAICompatibleBackend(EndpointConfig(base_url="http://127.0.0.1:9/v1", model="m", retries=0, timeout_s=1))
    with pytest.raises(LLMError, match="failed after 1 attempt"):
        backend.complete([])


def test_options_need_an_endpoint_or_a_local_model() -> None:
    with pytest.raises(ValueError, match="base_url"):
        backend_from_options({"model": "x"})
    assert backend_from_options({"local_model": "some/path"}).model_name == "some/path"  # type: ignore[attr-defined]


def _tau_env(server: FakeServer, **user_options: Any) -> gym.Env:
    options = {"user": "llm", "user_options": {**vars(_config(server)), **user_options}}
    return gym.make("envsched/Tau-airline-v0", adapter_options=options)


@pytest.mark.usefixtures("benchmarks")
def test_llm_user_drives_a_tau_episode(server: FakeServer) -> None:
    server.script = [(200, "I want to cancel reservation EHGLP3.", 0.0), (200, "Thanks, bye! ###STOP###", 0.0)]
    env = _tau_env(server)
    obs, _ = env.reset(options={"task_id": "airline/0"})
    assert obs == "I want to cancel reservation EHGLP3."
    first = server.requests[0]["body"]["messages"]
    assert first[0]["role"] == "system" and "User Simulation Guidelines" in first[0]["content"] and "emma_kim_9957" in first[0]["content"]
    assert first[1] == {"role": "user", "content": "Hi! How can I help you today?"}
    env.step('<tool_call>{"name": "get_user_details", "arguments": {"user_id": "emma_kim_9957"}}</tool_call>')
    _, _, terminated, truncated, info = env.step("I cannot cancel it under our policy.")
    assert terminated and not truncated and info["termination"] == "user_stop"
    seen = server.requests[1]["body"]["messages"]
    assert seen[-2:] == [  # the simulated user's own line, then the agent's text; tool traffic hidden
        {"role": "assistant", "content": "I want to cancel reservation EHGLP3."},
        {"role": "user", "content": "I cannot cancel it under our policy."},
    ]
    assert info["messages"][-1] == {"role": "user", "content": "Thanks, bye! ###STOP###"}


@pytest.mark.usefixtures("benchmarks")
def test_failed_user_ends_the_episode_with_the_error_in_info(server: FakeServer) -> None:
    server.script = [(500, "down", 0.0)] * 4
    env = _tau_env(server, retries=0)
    obs, _ = env.reset(options={"task_id": "airline/0"})
    assert obs == ""
    _, reward, terminated, _, info = env.step("Hello, how can I help?")
    assert terminated and reward == 0.0 and info["termination"] == "user_error" and "HTTP 500" in info["user_error"]


def test_llm_user_is_generic_over_scenarios(server: FakeServer) -> None:
    server.script = [(200, "Book a table for two.", 0.0)]
    user = LLMUser(
        OpenAICompatibleBackend(_config(server)), guidelines="Play a diner.", scenario=lambda task: "Wants a table.", greeting=None
    )
    assert user.start(envsched_gym.TaskSpec(task_id="x", env_id="e", instruction="")) == "Book a table for two."
    assert server.requests[0]["body"]["messages"] == [
        {"role": "system", "content": "Play a diner.\n\n<scenario>\nWants a table.\n</scenario>"}
    ]


@pytest.mark.slow
def test_local_transformers_backend_generates_greedily(tmp_path: Any) -> None:
    """A tiny random Qwen3 saved locally: chat template in, decoded reply out, deterministic."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from envsched_gym.llm_user import TransformersBackend

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|im_start|>", "<|im_end|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(["Hi! How can I help you today?", "I want to cancel my order."] * 20, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|im_end|>")
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    torch.manual_seed(0)
    config = transformers.Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        intermediate_size=64,
        head_dim=16,
    )
    transformers.Qwen3ForCausalLM(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    backend = TransformersBackend(str(tmp_path), max_new_tokens=6, device="cpu")
    messages = [{"role": "system", "content": "Play a customer."}, {"role": "user", "content": "Hi! How can I help you today?"}]
    reply = backend.complete(messages)
    assert isinstance(reply, str) and reply == backend.complete(messages)
