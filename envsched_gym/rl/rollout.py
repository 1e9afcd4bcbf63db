"""Multi-turn rollouts of a token-level policy through the suite's environments.

A rollout is one episode as GRPO sees it: the prompt tokens (system message with the tool
schemas, first user message, generation prompt) and one completion that interleaves the model's
messages with the environment's answers (tool results, later user turns). ``env_mask`` marks
the model's own tokens with 1 and the environment's with 0, so only the model's tokens carry
loss; the reward is the verifier's outcome at the episode's end.

The environments run in a backend (:mod:`envsched_gym.rl.env_backend`): :class:`EnvPool` in
this process, or :class:`~envsched_gym.rl.env_workers.RayEnvWorkers` in Ray actors. With the
latter, the model generates for the episodes whose observations have arrived while the others'
environment and user-simulator steps run (``lockstep=False``). Each episode's tokens depend only
on its own contexts, so a generator whose output for a context does not depend on the rest of
its batch (greedy decoding, a scripted policy) gives the in-process results; ``lockstep=True``
makes the same ``generate`` calls as in-process, which gives its results for a sampling
generator too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase

from envsched_gym.rl.chat_template import continuation_ids
from envsched_gym.rl.env_backend import EnvBackend, EnvFailure, EnvPool, EnvReply, EnvSession
from envsched_gym.rl.generation import Generated, TokenGenerator

__all__ = ["EnvPool", "EpisodeFailed", "Rollout", "run_rollouts"]

WORKER_ERROR = "worker_error"
"""The termination of an episode whose environment worker died or timed out on every attempt."""


class EpisodeFailed(RuntimeError):
    """Episodes failed outside the model and the environment on every attempt (workers died or timed out)."""


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
            ``user_error``, ``endpoint_error`` or ``worker_error``: something outside the model failed).
        messages: The chat transcript (chat-template dicts); every assistant message the model
            produced carries ``raw``, the text it generated before parsing.
        error: What failed outside the model (the user simulator, an endpoint, a worker), when something did.
        retries: Times the episode was restarted after its environment worker died or timed out.
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
    retries: int = 0

    @property
    def done(self) -> bool:
        """True once the episode has ended."""
        return self.termination is not None


def run_rollouts(
    task_ids: Sequence[str],
    pool: EnvBackend,
    tokenizer: PreTrainedTokenizerBase,
    generator: TokenGenerator,
    max_completion_length: int,
    seed: int = 0,
    any_active: Callable[[bool], bool] | None = None,
    template_kwargs: dict[str, Any] | None = None,
    progress: str | None = None,
) -> list[Rollout]:
    """Roll out one episode per entry of ``task_ids`` (repeat an id for a GRPO group).

    Args:
        task_ids: Tasks to run, in order; the result has the same order.
        pool: Where the environments run: an :class:`EnvPool` (this process) or ``RayEnvWorkers``.
        tokenizer: The policy's tokenizer, with a chat template that renders tools.
        generator: Continues running episodes by one assistant message per call.
        max_completion_length: Token budget of a completion; an episode that exceeds it is cut
            (reward 0, ``termination="length"``).
        seed: Seed of every episode's ``reset`` (worlds are deterministic given task and seed).
        any_active: For collective generators (vLLM across processes): given whether this
            process still has running episodes, return whether any process has, so every
            process makes the same number of ``generate`` calls.
        template_kwargs: Extra chat-template arguments (e.g. ``enable_thinking``).
        progress: Show a progress bar of finished episodes with this description (``None``: no bar).

    The backend's ``lockstep``, ``retries`` and ``on_failure`` decide when the model generates
    and what happens to an episode whose worker died or timed out (see ``RayEnvWorkers``).

    Raises:
        EpisodeFailed: The backend's ``on_failure`` is ``raise`` and some episode failed on every attempt.
    """
    driver = _Driver(list(task_ids), pool.session(), tokenizer, max_completion_length, seed, template_kwargs or {}, pool.retries)
    bar = tqdm(total=len(task_ids), desc=progress, unit="episode", disable=progress is None, leave=False, mininterval=0)
    try:
        while True:
            ready = driver.wait(pool.lockstep)
            running = driver.running()
            bar.update(len(task_ids) - len(running) - bar.n)
            if not (any_active(bool(running)) if any_active else running):
                break
            contexts = [driver.context(slot) for slot in ready] or [[tokenizer.eos_token_id]]
            for slot, gen in zip(ready, generator.generate(contexts)[: len(ready)], strict=True):
                driver.generated(slot, gen)
    finally:
        bar.close()
        driver.session.close()
    failed = [r for r in driver.rollouts if r.termination == WORKER_ERROR]
    if failed and pool.on_failure == "raise":
        raise EpisodeFailed(
            f"{len(failed)} of {len(driver.rollouts)} episodes failed on every attempt ({pool.retries + 1}) outside the model, "
            f"e.g. {failed[0].task_id}: {failed[0].error}. Raise the workers' timeout_s (--env-timeout-s) or retries, or check the Ray workers."
        )
    return driver.rollouts  # type: ignore[return-value]


@dataclass
class _Slot:
    task_id: str
    rollout: Rollout | None = None
    waiting_env: bool = True
    last_ids: list[int] = field(default_factory=list)
    last_text: str = ""
    retries: int = 0


class _Driver:
    """The token side of every slot's episode; the session runs the environment side."""

    def __init__(self, task_ids: list[str], session: EnvSession, tokenizer: PreTrainedTokenizerBase, budget: int, seed: int,
                 kwargs: dict[str, Any], retries: int) -> None:  # fmt: skip
        self.session, self.tokenizer, self.budget, self.seed, self.kwargs, self.retries = session, tokenizer, budget, seed, kwargs, retries
        self.slots = [_Slot(task_id) for task_id in task_ids]
        for slot, s in enumerate(self.slots):
            session.reset(slot, s.task_id, seed)

    @property
    def rollouts(self) -> list[Rollout | None]:
        """Every slot's rollout (all set once no slot is running)."""
        return [s.rollout for s in self.slots]

    def running(self) -> list[int]:
        """Slots whose episode has not ended."""
        return [i for i, s in enumerate(self.slots) if s.rollout is None or not s.rollout.done]

    def wait(self, lockstep: bool) -> list[int]:
        """Slots whose next move is the model's, after taking in the replies that have arrived.

        Blocks while no slot is ready but some wait for their environment (with ``lockstep``,
        while any slot waits for its environment).
        """
        while True:
            pending = any(s.waiting_env for s in self.slots)
            block = pending and (lockstep or not self._ready())
            if pending:
                for slot, reply in self.session.poll(block):
                    self._receive(slot, reply)
            if not block:
                return self._ready()

    def context(self, slot: int) -> list[int]:
        """The tokens the model continues for ``slot``."""
        r = self.slots[slot].rollout
        return r.prompt_ids + r.completion_ids  # type: ignore[union-attr]

    def generated(self, slot: int, gen: Generated) -> None:
        """Append one generated message to slot's completion and send its text to the environment."""
        s, tok = self.slots[slot], self.tokenizer
        r = s.rollout
        assert r is not None
        r.completion_ids += gen.ids
        r.env_mask += [1] * len(gen.ids)
        if r.logprobs is not None:
            r.logprobs = r.logprobs + gen.logprobs if gen.logprobs is not None else None
        s.last_ids = gen.ids
        s.last_text = tok.decode([t for t in gen.ids if t not in (tok.eos_token_id, tok.pad_token_id)], skip_special_tokens=False)
        s.waiting_env = True
        self.session.step(slot, s.last_text)

    def _ready(self) -> list[int]:
        return [i for i, s in enumerate(self.slots) if not s.waiting_env and s.rollout is not None and not s.rollout.done]

    def _receive(self, slot: int, reply: EnvReply | EnvFailure) -> None:
        s = self.slots[slot]
        s.waiting_env = False
        if isinstance(reply, EnvFailure):
            self._failed(s, slot, reply)
        elif s.rollout is None:
            ids = self.tokenizer.apply_chat_template(reply.messages, tools=reply.tools or None, add_generation_prompt=True, tokenize=True,
                                                     return_dict=False, **self.kwargs)  # fmt: skip
            s.rollout = Rollout(s.task_id, reply.env_id, list(ids), logprobs=[], messages=reply.messages, retries=s.retries)
        else:
            self._answer(s, reply)

    def _answer(self, s: _Slot, reply: EnvReply) -> None:
        """Take in the environment's answer to slot's last message: the episode's end, or its tokens."""
        r, stop = s.rollout, self.tokenizer.eos_token_id
        assert r is not None
        r.messages += [dict(reply.messages[0], raw=s.last_text), *reply.messages[1:]]
        if reply.done:
            r.reward, r.success, r.termination, r.error = reply.reward, reply.success, reply.termination, reply.error
            return
        closing = [] if s.last_ids and s.last_ids[-1] == stop else [stop]
        glue = closing + continuation_ids(self.tokenizer, reply.messages[1:], **self.kwargs)
        if len(r.completion_ids) + len(glue) >= self.budget:
            r.termination = "length"
            return
        r.completion_ids += glue
        r.env_mask += [0] * len(glue)
        if r.logprobs is not None:
            r.logprobs = r.logprobs + [0.0] * len(glue)

    def _failed(self, s: _Slot, slot: int, failure: EnvFailure) -> None:
        """Restart slot's episode from its reset, or record it as failed once its retries are spent."""
        if s.retries < self.retries:
            s.retries += 1
            s.rollout, s.waiting_env = None, True
            self.session.reset(slot, s.task_id, self.seed)
            return
        s.rollout = Rollout(s.task_id, failure.env_id, [], termination=WORKER_ERROR, error=failure.reason, retries=s.retries)
