"""Episodes driven by an OpenAI-compatible chat endpoint (OpenAI, a vLLM server, SGLang, ...).

The environment's chat messages are sent with its tool schemas; the reply's ``tool_calls``
(or text) become the action, rendered in Qwen3's wire format for the environment to parse.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

import gymnasium as gym

from envsched_gym.declarations import ToolCall
from envsched_gym.llm_user import RETRY_STATUS, EndpointConfig, LLMError
from envsched_gym.rendering import render_calls
from envsched_gym.rl.rollout import Rollout


def openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-template messages in the OpenAI wire form (string arguments, call ids on calls and results)."""
    out: list[dict[str, Any]] = []
    open_ids: list[str] = []
    for i, m in enumerate(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            open_ids = [f"call_{i}_{k}" for k in range(len(m["tool_calls"]))]
            calls = [{"id": cid, "type": "function", "function": {"name": c["function"]["name"], "arguments": json.dumps(c["function"]["arguments"])}}
                     for cid, c in zip(open_ids, m["tool_calls"], strict=True)]  # fmt: skip
            out.append({"role": "assistant", "content": m.get("content") or None, "tool_calls": calls})
        elif m["role"] == "tool" and open_ids:
            out.append({"role": "tool", "tool_call_id": open_ids.pop(0), "content": m["content"]})
        elif m["role"] == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{m['content']}\n</tool_response>"})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def chat_completion(config: EndpointConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The reply message of one chat-completions request, with retries on transient failures.

    Raises:
        LLMError: The endpoint could not be reached or kept failing.
    """
    body: dict[str, Any] = {"model": config.model, "messages": messages, "temperature": config.temperature, **config.extra_body}
    if tools:
        body["tools"] = tools
    if config.max_tokens is not None:
        body["max_tokens"] = config.max_tokens
    headers = {"Content-Type": "application/json"}
    if os.environ.get(config.api_key_env):
        headers["Authorization"] = f"Bearer {os.environ[config.api_key_env]}"
    request = urllib.request.Request(config.base_url.rstrip("/") + "/chat/completions", json.dumps(body).encode(), headers, method="POST")
    last, delay = "no attempt made", config.backoff_s
    for attempt in range(config.retries + 1):
        if attempt:
            time.sleep(delay)
            delay *= 2
        try:
            with urllib.request.urlopen(request, timeout=config.timeout_s) as response:
                return json.loads(response.read().decode())["choices"][0]["message"]
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}: {exc.read()[:300].decode('utf-8', 'replace')}"
            if exc.code not in RETRY_STATUS:
                break
        except (urllib.error.URLError, OSError, KeyError, IndexError, json.JSONDecodeError) as exc:
            last = f"{type(exc).__name__}: {exc}"
    raise LLMError(f"{config.base_url} ({config.model}) failed after {attempt + 1} attempt(s): {last}")


def reply_action(reply: dict[str, Any]) -> str:
    """The environment action for an endpoint reply: its calls in Qwen3's wire format, or its text."""
    content = reply.get("content") or ""
    calls = []
    for item in reply.get("tool_calls") or []:
        fn = item.get("function", {})
        try:
            arguments = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError:
            return content + f'\n<tool_call>\n{{"name": {json.dumps(fn.get("name"))}, "arguments": {fn.get("arguments")}}}\n</tool_call>'
        calls.append(ToolCall(str(fn.get("name", "")), arguments if isinstance(arguments, dict) else {"value": arguments}))
    return render_calls(calls, "qwen3", content) if calls else content


def endpoint_episode(config: EndpointConfig, gym_id: str, task_id: str, seed: int = 0) -> Rollout:
    """Play one episode of ``task_id`` with the endpoint (no token ids: a text-only :class:`Rollout`).

    An endpoint that fails (after its retries) ends the episode with ``termination="endpoint_error"``
    and the failure in ``error``; each assistant message's ``raw`` is the action the environment
    parsed (the reply's text, with its tool calls in Qwen3's wire format).
    """
    env = gym.make(gym_id)
    _, info = env.reset(seed=seed, options={"task_id": task_id})
    rollout = Rollout(task_id, info["env_id"], [], messages=list(info["messages"]))
    tools = info["tools"]
    while not rollout.done:
        try:
            action = reply_action(chat_completion(config, openai_messages(rollout.messages), tools))
        except LLMError as exc:
            rollout.termination, rollout.error = "endpoint_error", str(exc)
            break
        _, reward, terminated, truncated, info = env.step(action)
        rollout.messages += [dict(info["messages"][0], raw=action), *info["messages"][1:]]
        tools = info["tools"]
        if terminated or truncated:
            rollout.reward, rollout.success = float(reward), bool(info["outcome"]["success"])
            rollout.termination, rollout.error = info.get("termination", "agent"), info.get("user_error")
    env.close()
    return rollout
