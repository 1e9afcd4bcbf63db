"""Rollouts generated through an OpenAI-compatible completions server, token in and token out.

The server is this project's (``envsched_gym.rl.serve``) serving a real model over HTTP: the micro
Qwen3 in the fast tests, SmolLM2-135M-Instruct in the slow one. Greedy rollouts through the server
must equal greedy rollouts with the model in process, token for token.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from envsched_gym.rl.generation import HFGenerator, SamplingConfig
from envsched_gym.rl.rollout import EnvPool, run_rollouts
from envsched_gym.rl.serve import CompletionsServer
from envsched_gym.rl.server_generation import CompletionsGenerator, ServerConfig, ServerError

GREEDY = SamplingConfig(max_new_tokens=24, temperature=0.0)


def _serve(server: CompletionsServer) -> Iterator[CompletionsServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def model_and_tokenizer(micro_dir):
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(micro_dir), AutoTokenizer.from_pretrained(micro_dir, padding_side="left")


@pytest.fixture(scope="module")
def server(model_and_tokenizer) -> Iterator[CompletionsServer]:
    model, tokenizer = model_and_tokenizer
    yield from _serve(CompletionsServer(model, tokenizer, "micro"))


def test_greedy_rollouts_through_the_server_equal_in_process(toy_suite, model_and_tokenizer, server) -> None:
    model, tokenizer = model_and_tokenizer
    tasks = [n.task_id for n in toy_suite][:3] * 2
    local = run_rollouts(tasks, EnvPool(toy_suite), tokenizer, HFGenerator(model, tokenizer, GREEDY), 200)
    remote_gen = CompletionsGenerator(ServerConfig(server.base_url, "micro", batch=2), tokenizer, GREEDY)
    remote = run_rollouts(tasks, EnvPool(toy_suite), tokenizer, remote_gen, 200)
    assert remote_gen.requests >= 3  # every agent step went over HTTP, in chunks of 2
    for a, b in zip(local, remote, strict=True):
        assert (a.prompt_ids, a.completion_ids, a.env_mask) == (b.prompt_ids, b.completion_ids, b.env_mask)
        assert (a.reward, a.termination) == (b.reward, b.termination)
        assert b.logprobs is not None and len(b.logprobs) == len(b.completion_ids)


def test_server_logprobs_are_the_models(model_and_tokenizer, server) -> None:
    model, tokenizer = model_and_tokenizer
    context = tokenizer.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n")
    (local,) = HFGenerator(model, tokenizer, GREEDY).generate([context])
    (remote,) = CompletionsGenerator(ServerConfig(server.base_url, "micro"), tokenizer, GREEDY).generate([context])
    assert remote.ids == local.ids
    assert remote.logprobs == pytest.approx(local.logprobs, abs=1e-5)


class TextOnly(BaseHTTPRequestHandler):
    """A server that returns only text, as OpenAI's API does."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        choices = [{"index": i, "text": "Done.", "finish_reason": "stop", "logprobs": None} for i, _ in enumerate(body["prompt"])]
        data = json.dumps({"choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def test_a_text_only_server_needs_retokenize_and_is_never_silently_retokenized(model_and_tokenizer) -> None:
    _, tokenizer = model_and_tokenizer
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), TextOnly)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        with pytest.raises(ServerError, match=r"no sampled token ids.*token_ids='retokenize'"):
            CompletionsGenerator(ServerConfig(url, "m"), tokenizer, GREEDY).generate([[1, 2, 3]])
        (gen,) = CompletionsGenerator(ServerConfig(url, "m", token_ids="retokenize"), tokenizer, GREEDY).generate([[1, 2, 3]])
        assert gen.ids == [*tokenizer.encode("Done.", add_special_tokens=False), tokenizer.eos_token_id] and gen.logprobs is None
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_dead_server_and_a_bad_request_are_errors_that_say_why(model_and_tokenizer, server) -> None:
    _, tokenizer = model_and_tokenizer
    dead = CompletionsGenerator(ServerConfig("http://127.0.0.1:9/v1", "micro", retries=1, timeout_s=2), tokenizer, GREEDY)
    with pytest.raises(ServerError, match=r"after 2 attempt\(s\)\); is the server up"):
        dead.generate([[1, 2]])
    with pytest.raises(ServerError, match=r"HTTP 400.*not served here"):
        CompletionsGenerator(ServerConfig(server.base_url, "other"), tokenizer, GREEDY).generate([[1, 2]])
    with pytest.raises(ValueError, match="token_ids is 'server' or 'retokenize'"):
        ServerConfig(server.base_url, "micro", token_ids="text")  # type: ignore[arg-type]


@pytest.mark.slow
def test_smollm2_served_over_http_gives_the_in_process_rollouts(toy_suite) -> None:
    from envsched_gym.rl.pretrained import converted_path

    path = converted_path("smollm2-135m")
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")
    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
    tasks = [n.task_id for n in toy_suite][:2]
    local = run_rollouts(tasks, EnvPool(toy_suite), tokenizer, HFGenerator(model, tokenizer, GREEDY), 160)
    for server in _serve(CompletionsServer(model, tokenizer, "smollm2")):
        remote = run_rollouts(tasks, EnvPool(toy_suite), tokenizer, CompletionsGenerator(ServerConfig(server.base_url, "smollm2"), tokenizer, GREEDY), 160)
    assert [r.completion_ids for r in remote] == [r.completion_ids for r in local]
    assert [r.reward for r in remote] == [r.reward for r in local]
