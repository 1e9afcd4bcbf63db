"""A small OpenAI-compatible completions server for a local Hugging Face model (CPU or GPU).

It answers ``POST /v1/completions`` with token-id prompts (``"prompt": [ids]`` or a list of
them) or text, samples with this project's :class:`~envsched_gym.rl.generation.HFGenerator`, and
returns the sampled ids the way vLLM does with ``return_tokens_as_token_ids``
(``logprobs.tokens`` as ``"token_id:<id>"``). ``GET /v1/models`` lists the model. It stands in
for vLLM on machines without a GPU, and is what the server-rollout tests run against:

    python -m envsched_gym.rl.serve --model ~/.cache/envsched_gym/models/smollm2-135m --port 8000

Requests are served one at a time (the model is not thread-safe); a batch of prompts in one
request is decoded together.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from envsched_gym.rl.generation import HFGenerator, SamplingConfig
from envsched_gym.rl.server_generation import TOKEN_PREFIX

KNOWN_FIELDS = frozenset({
    "model", "prompt", "max_tokens", "temperature", "top_p", "logprobs", "return_tokens_as_token_ids", "stop_token_ids",
    "skip_special_tokens", "seed", "n", "stream",
})  # fmt: skip


class CompletionsServer(ThreadingHTTPServer):
    """The HTTP server; ``serve_forever()`` in a thread, ``shutdown()`` to stop.

    Args:
        model: The causal LM.
        tokenizer: Its tokenizer.
        name: The model name clients must send.
        host: Interface to listen on.
        port: Port (0: any free port; read ``server_address``).
    """

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__((host, port), _Handler)
        self.model, self.tokenizer, self.name = model, tokenizer, name
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """``http://host:port/v1``."""
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response to one ``/v1/completions`` request body (raises ``ValueError`` on a bad one)."""
        if unknown := sorted(set(body) - KNOWN_FIELDS):
            raise ValueError(f"unknown request field(s) {unknown}; this server takes {sorted(KNOWN_FIELDS)}")
        if body.get("model") != self.name:
            raise ValueError(f"model {body.get('model')!r} is not served here; the model is {self.name!r}")
        if body.get("stream") or int(body.get("n", 1)) != 1:
            raise ValueError("stream and n > 1 are not supported")
        prompts = _prompts(body.get("prompt"), self.tokenizer)
        sampling = SamplingConfig(int(body.get("max_tokens", 16)), float(body.get("temperature", 1.0)), float(body.get("top_p", 1.0)))
        with self.lock:
            if body.get("seed") is not None:
                torch.manual_seed(int(body["seed"]))
            generated = HFGenerator(self.model, self.tokenizer, sampling, reuse_cache=False).generate(prompts)
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        choices = []
        for index, gen in enumerate(generated):
            stopped = bool(gen.ids) and gen.ids[-1] == self.tokenizer.eos_token_id
            tokens = [f"{TOKEN_PREFIX}{t}" if as_ids else self.tokenizer.decode([t]) for t in gen.ids]
            choices.append({
                "index": index, "text": self.tokenizer.decode(gen.ids, skip_special_tokens=bool(body.get("skip_special_tokens", True))),
                "finish_reason": "stop" if stopped else "length",
                "logprobs": {"tokens": tokens, "token_logprobs": gen.logprobs} if body.get("logprobs") is not None else None,
            })  # fmt: skip
        return {"object": "text_completion", "model": self.name, "choices": choices}


def _prompts(prompt: Any, tokenizer: PreTrainedTokenizerBase) -> list[list[int]]:
    if isinstance(prompt, str):
        return [tokenizer.encode(prompt, add_special_tokens=False)]
    if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
        return [list(prompt)]
    if isinstance(prompt, list) and prompt and all(isinstance(p, list) and p and all(isinstance(t, int) for t in p) for p in prompt):
        return [list(p) for p in prompt]
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        return [tokenizer.encode(p, add_special_tokens=False) for p in prompt]
    raise ValueError("prompt must be text, a list of token ids, or a list of either")


class _Handler(BaseHTTPRequestHandler):
    server: CompletionsServer

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": self.server.name, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/completions":
            self._send(404, {"error": {"message": f"no route {self.path}; this server serves /v1/completions"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self._send(200, self.server.complete(body))
        except (ValueError, TypeError) as exc:
            self._send(400, {"error": {"message": str(exc)}})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        """Quiet: one line per request would flood a rollout's output."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="A local model folder or a hub id (from_pretrained).")
    parser.add_argument("--name", default="", help="Name clients send as 'model' (default: --model).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation="sdpa")
    server = CompletionsServer(model, tokenizer, args.name or args.model, args.host, args.port)
    print(f"serving {server.name} at {server.base_url}/completions", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
