"""LLM-backed user simulators: any OpenAI-compatible endpoint, or a local transformers model.

The simulator plays the customer: its system prompt is a benchmark's simulation guidelines
plus the task's scenario; the agent's text messages reach it as ``user`` turns (tool calls and
results stay hidden, as in τ2) and its replies come back as the next user message. A reply
containing a stop token ends the episode. Endpoint calls use plain HTTP (:mod:`urllib`), with a
timeout and retries with exponential backoff; the API key is read from an environment
variable, never from code or config files::

    backend = OpenAICompatibleBackend(EndpointConfig(base_url="http://localhost:8000/v1", model="Qwen/Qwen3-8B"))
    user = LLMUser(backend, guidelines=open("simulation_guidelines.md").read())

When the model cannot be reached the simulator raises :class:`LLMError` from ``reply`` and the
environment ends the episode with ``termination="user_error"`` and the message in ``info``.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from envsched_gym.declarations import TaskSpec
from envsched_gym.episode import Episode
from envsched_gym.users import UserReply, UserSimulator

STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth a retry (timeouts, conflicts, rate limits, server errors); the endpoint clients share it."""
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)

ChatMessage = dict[str, str]


class LLMError(RuntimeError):
    """The model could not produce a reply (unreachable, timed out, or a bad response)."""


class ChatBackend(Protocol):
    """Anything that turns chat messages into the next assistant message."""

    def complete(self, messages: list[ChatMessage]) -> str:
        """The model's reply to ``messages`` (``role``/``content`` dicts)."""
        ...


@dataclass
class EndpointConfig:
    """An OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang, llama.cpp, ...).

    Attributes:
        base_url: API root, e.g. ``http://127.0.0.1:8000/v1``; ``/chat/completions`` is appended.
        model: Model name sent in the request.
        api_key_env: Environment variable holding the API key; unset or empty sends no key.
        timeout_s: Seconds to wait for one HTTP response.
        retries: Extra attempts after a failed one (connection errors, timeouts, 429 and 5xx).
        backoff_s: Wait before the first retry; doubled after each.
        temperature: Sampling temperature.
        max_tokens: Reply length limit (``None``: the server's default).
        extra_body: More request fields, e.g. ``{"chat_template_kwargs": {"enable_thinking": False}}``.
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    temperature: float = 0.0
    max_tokens: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)


class OpenAICompatibleBackend:
    """Chat completions over HTTP with timeouts and retries (no ``openai`` package needed)."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config

    def complete(self, messages: list[ChatMessage]) -> str:
        cfg = self.config
        body: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": cfg.temperature, **cfg.extra_body}
        if cfg.max_tokens is not None:
            body["max_tokens"] = cfg.max_tokens
        request = urllib.request.Request(
            cfg.base_url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode("utf-8"), headers=self._headers(), method="POST"
        )
        delay, last = cfg.backoff_s, "no attempt made"
        for attempt in range(cfg.retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            try:
                with urllib.request.urlopen(request, timeout=cfg.timeout_s) as response:
                    return _content(json.loads(response.read().decode("utf-8")))
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {exc.read()[:300].decode('utf-8', 'replace')}"
                if exc.code not in RETRY_STATUS:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        raise LLMError(f"{cfg.base_url} ({cfg.model}) failed after {attempt + 1} attempt(s): {last}")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers


def _content(payload: dict[str, Any]) -> str:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"response has no choices[0].message.content: {json.dumps(payload)[:300]}") from None
    return _THINK.sub("", content or "").strip()


class TransformersBackend:
    """A local Hugging Face chat model, loaded on first use (greedy decoding).

    Args:
        model: Hub id or local path.
        max_new_tokens: Reply length limit.
        device: Torch device (``None``: CUDA if available, else CPU).
        chat_template_kwargs: Extra ``apply_chat_template`` arguments, e.g. ``{"enable_thinking": False}``.
    """

    def __init__(
        self, model: str, max_new_tokens: int = 256, device: str | None = None, chat_template_kwargs: dict[str, Any] | None = None
    ) -> None:
        self.model_name = model
        self.max_new_tokens = max_new_tokens
        self.device = device
        self.chat_template_kwargs = chat_template_kwargs or {}
        self._model: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._tokenizer = AutoTokenizer.from_pretrained(self.model_name)
        self._model = AutoModelForCausalLM.from_pretrained(self.model_name).to(self.device).eval()

    def complete(self, messages: list[ChatMessage]) -> str:
        if self._model is None:
            self._load()
        import torch

        inputs = self._tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True, **self.chat_template_kwargs
        ).to(self.device)
        with torch.no_grad():
            output = self._model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        new_tokens = output[0, inputs["input_ids"].shape[1] :]
        return _THINK.sub("", self._tokenizer.decode(new_tokens, skip_special_tokens=True)).strip()


def backend_from_options(options: dict[str, Any]) -> ChatBackend:
    """A backend from plain options: ``{"local_model": ...}`` or the :class:`EndpointConfig` fields.

    Raises:
        ValueError: Neither ``local_model`` nor both ``base_url`` and ``model`` are given.
    """
    options = dict(options)
    if "local_model" in options:
        return TransformersBackend(options.pop("local_model"), **options)
    if "base_url" not in options or "model" not in options:
        raise ValueError(
            f"LLM user options need 'base_url' and 'model' (an OpenAI-compatible endpoint) or 'local_model'; got {sorted(options)}"
        )
    return OpenAICompatibleBackend(EndpointConfig(**options))


class LLMUser(UserSimulator):
    """A user simulator driven by a chat model (see the module docstring).

    Args:
        backend: The model.
        guidelines: Simulation guidelines (the system prompt before the scenario).
        scenario: The task's scenario text for the system prompt (default: ``task.instruction``).
        greeting: The agent's opening line the simulated user answers first (``None``: none).
        stop_tokens: Substrings of a reply that end the conversation.
    """

    def __init__(
        self,
        backend: ChatBackend,
        guidelines: str,
        scenario: Callable[[TaskSpec], str] | None = None,
        greeting: str | None = "Hi! How can I help you today?",
        stop_tokens: tuple[str, ...] = STOP_TOKENS,
    ) -> None:
        self.backend = backend
        self.guidelines = guidelines
        self.scenario = scenario or (lambda task: task.instruction)
        self.greeting = greeting
        self.stop_tokens = stop_tokens
        self.history: list[ChatMessage] = []
        self._start_error: LLMError | None = None

    def start(self, task: TaskSpec) -> str:
        """The simulated user's first message; a failure is raised at the first :meth:`reply`."""
        system = f"{self.guidelines.strip()}\n\n<scenario>\n{self.scenario(task)}\n</scenario>"
        self.history = [{"role": "system", "content": system}]
        if self.greeting:
            self.history.append({"role": "user", "content": self.greeting})
        self._start_error = None
        try:
            return self._next()
        except LLMError as exc:
            self._start_error = exc
            return ""

    def reply(self, episode: Episode) -> UserReply:
        if self._start_error is not None:
            raise LLMError(f"the user simulator failed to start: {self._start_error}")
        self.history.append({"role": "user", "content": _agent_text_since_user(episode)})
        text = self._next()
        return UserReply(text, stop=any(token in text for token in self.stop_tokens))

    def _next(self) -> str:
        text = self.backend.complete(self.history)
        self.history.append({"role": "assistant", "content": text})
        return text


def _agent_text_since_user(episode: Episode) -> str:
    """The assistant's text messages after the last user message (tool traffic left out)."""
    texts: list[str] = []
    for message in reversed(episode.messages):
        text = (message.get("content") or "").strip()
        if message["role"] == "user":
            break
        if message["role"] == "assistant" and text:
            texts.append(text)
    return "\n".join(reversed(texts))
