"""Multi-turn rollouts of a token-level policy through the suite's environments.

A rollout is one episode as GRPO sees it: the prompt tokens (system message with the tool
schemas, first user message, generation prompt) and one completion that interleaves the model's
messages with the environment's answers (tool results, later user turns). ``env_mask`` marks
the model's own tokens with 1 and the environment's with 0, so only the model's tokens carry
loss; the reward is the verifier's outcome at the episode's end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from transformers import PreTrainedTokenizerBase

from envsched_gym.rl.chat_template import continuation_ids
from envsched_gym.rl.generation import TokenGenerator
from envsched_gym.suite import Suite


@dataclass
class Rollout:
    """One episode as token sequences, with the environment's verdict.

    Attributes:
        task_id: The task rolled out.
        env_id: Its environment.
        prompt_ids: Tokens before the first assistant message.
        completion_ids: Assistant messages interleaved with the environment's answers.
        env_mask: 1 for tokens the model generated, 0 for the environment's tokens.
        logprobs: Sampling logprob per completion token (0 on environment tokens), when known.
        reward: The verifier's outcome reward (0 when the episode was cut by the token budget).
        success: The verifier's success flag.
        termination: How the episode ended (``length``: the completion token budget ran out;
            ``user_error`` or ``endpoint_error``: something outside the model failed).
        messages: The chat transcript (chat-template dicts); every assistant message the model
            produced carries ``raw``, the text it generated before parsing.
        error: What failed outside the model (the user simulator, an endpoint), when something did.
    """

    task_id: str
    env_id: str
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] | None = None
    reward: float = 0.0
    success: bool = False
    termination: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def done(self) -> bool:
        """True once the episode has ended."""
        return self.termination is not None


class EnvPool:
    """Environments reused across rollouts, one list per gymnasium id (making one is not free)."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self._free: dict[str, list[gym.Env]] = {}

    def take(self, task_id: str) -> gym.Env:
        """An environment that serves ``task_id`` (give it back with :meth:`give`)."""
        gym_id = self.suite.node(task_id).env.gym_id
        free = self._free.setdefault(gym_id, [])
        return free.pop() if free else gym.make(gym_id)

    def give(self, env: gym.Env) -> None:
        """Return an environment to the pool."""
        self._free.setdefault(env.spec.id, []).append(env)  # type: ignore[union-attr]


@dataclass
class _Live:
    rollout: Rollout
    env: gym.Env


def run_rollouts(
    task_ids: Sequence[str],
    pool: EnvPool,
    tokenizer: PreTrainedTokenizerBase,
    generator: TokenGenerator,
    max_completion_length: int,
    seed: int = 0,
    any_active: Callable[[bool], bool] | None = None,
    template_kwargs: dict[str, Any] | None = None,
) -> list[Rollout]:
    """Roll out one episode per entry of ``task_ids`` (repeat an id for a GRPO group).

    Args:
        task_ids: Tasks to run, in order; the result has the same order.
        pool: Environments to run them in.
        tokenizer: The policy's tokenizer, with a chat template that renders tools.
        generator: Continues every running episode by one assistant message per step.
        max_completion_length: Token budget of a completion; an episode that exceeds it is cut
            (reward 0, ``termination="length"``).
        seed: Seed of every episode's ``reset`` (worlds are deterministic given task and seed).
        any_active: For collective generators (vLLM across processes): given whether this
            process still has running episodes, return whether any process has, so every
            process makes the same number of ``generate`` calls.
        template_kwargs: Extra chat-template arguments (e.g. ``enable_thinking``).
    """
    kwargs = template_kwargs or {}
    live = [_start(task_id, pool, tokenizer, seed, kwargs) for task_id in task_ids]
    while True:
        running = [x for x in live if not x.rollout.done]
        if not (any_active(bool(running)) if any_active else running):
            break
        contexts = [x.rollout.prompt_ids + x.rollout.completion_ids for x in running] or [[tokenizer.eos_token_id]]
        for x, gen in zip(running, generator.generate(contexts)[: len(running)], strict=True):
            _advance(x, gen.ids, gen.logprobs, tokenizer, max_completion_length, kwargs)
    for x in live:
        pool.give(x.env)
    return [x.rollout for x in live]


def _start(task_id: str, pool: EnvPool, tokenizer: PreTrainedTokenizerBase, seed: int, kwargs: dict[str, Any]) -> _Live:
    env = pool.take(task_id)
    _, info = env.reset(seed=seed, options={"task_id": task_id})
    messages = list(info["messages"])
    ids = tokenizer.apply_chat_template(messages, tools=info["tools"] or None, add_generation_prompt=True, tokenize=True, return_dict=False, **kwargs)
    rollout = Rollout(task_id, info["env_id"], list(ids), logprobs=[], messages=messages)
    return _Live(rollout, env)


def _advance(
    live: _Live, ids: list[int], logprobs: list[float] | None, tokenizer: PreTrainedTokenizerBase, budget: int, kwargs: dict[str, Any]
) -> None:
    """Append one generated message, step the environment, and append its answer."""
    r = live.rollout
    stop = tokenizer.eos_token_id
    r.completion_ids += ids
    r.env_mask += [1] * len(ids)
    if r.logprobs is not None:
        r.logprobs = r.logprobs + logprobs if logprobs is not None else None
    text = tokenizer.decode([t for t in ids if t not in (stop, tokenizer.pad_token_id)], skip_special_tokens=False)
    _, reward, terminated, truncated, info = live.env.step(text)
    r.messages += [dict(info["messages"][0], raw=text), *info["messages"][1:]]
    if terminated or truncated:
        r.reward, r.success = float(reward), bool(info["outcome"]["success"])
        r.termination, r.error = info.get("termination", "agent"), info.get("user_error")
        return
    glue = ([] if ids and ids[-1] == stop else [stop]) + continuation_ids(tokenizer, info["messages"][1:], **kwargs)
    if len(r.completion_ids) + len(glue) >= budget:
        r.termination = "length"
        return
    r.completion_ids += glue
    r.env_mask += [0] * len(glue)
    if r.logprobs is not None:
        r.logprobs = r.logprobs + [0.0] * len(glue)
