"""``ToolUseEnv``: one gymnasium environment for every tool-use family.

Action: the assistant's raw text. Observation: the next text the agent sees (tool results
in ``<tool_response>`` blocks, or the next user message). The episode ends when the user
(scripted or simulated) has nothing more to say, or at a step limit (``truncated``). The
outcome reward comes from the task's verifier at the end; ``info`` carries the new
structured messages, the tool schemas, the parse result and the reward breakdown.

``info`` keys: at ``reset``, ``task_id``, ``env_id``, ``turn``, ``messages`` and ``tools``; at
every step, ``turn``, ``step``, ``messages``, ``tools`` and ``parse``; at the last step also
``task_id``, ``env_id``, ``outcome``, ``reward_breakdown``, ``termination`` (and ``user_error``).
The ids, constant in an episode, are left out in between: a vector env merges every key of
every step's ``info`` into arrays.
"""

from __future__ import annotations

import difflib
from typing import Any, SupportsFloat

import gymnasium as gym

from envsched_gym.adapter import Adapter
from envsched_gym.declarations import EnvSpec, TaskSpec, ToolCall, ToolSpec
from envsched_gym.episode import TRUNCATIONS, CallRecord, ChatMessage, Episode, Message
from envsched_gym.parsing import ALL_FORMATS, MAX_CALLS_PER_MESSAGE, Format, ParseResult, parse_tool_calls
from envsched_gym.rendering import render_tool_results, result_text
from envsched_gym.spaces import UnicodeText
from envsched_gym.task_index import TaskIndex
from envsched_gym.users import UserSimulator
from envsched_gym.validation import ToolBox, jsonable
from envsched_gym.verifier import Verifier
from envsched_gym.world import ToolError, World

RESET_OPTIONS: frozenset[str] = frozenset({"task_id", "user"})


class ToolUseEnv(gym.Env[str, str]):
    """A tool-use environment over the tasks an adapter serves under one gymnasium id.

    Args:
        adapter: The adapter that declares the tasks and builds worlds.
        gym_id: Which of the adapter's registered ids this environment serves.
        split: Tasks ``reset`` may draw when no ``task_id`` is given.
        formats: Accepted tool-call wire formats.
        render_mode: ``"ansi"`` to render the transcript as text.
        max_calls_per_message: Most tool calls one assistant message may make; a message with
            more runs none and gets one error observation (``gym.make(id, max_calls_per_message=N)``).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        adapter: Adapter,
        gym_id: str,
        split: str = "all",
        formats: tuple[Format, ...] = ALL_FORMATS,
        render_mode: str | None = None,
        max_calls_per_message: int = MAX_CALLS_PER_MESSAGE,
    ) -> None:
        if isinstance(max_calls_per_message, bool) or not isinstance(max_calls_per_message, int) or max_calls_per_message < 1:
            raise ValueError(f"max_calls_per_message must be a positive integer, got {max_calls_per_message!r}")
        self.max_calls_per_message = max_calls_per_message
        self.adapter = adapter
        self.gym_id = gym_id
        self.index = TaskIndex.for_adapter(adapter, gym_id)
        self.split = split
        self.formats = formats
        self.render_mode = render_mode
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText()
        self.episode: Episode | None = None
        self.world: World | None = None
        self._verifier: Verifier | None = None
        self._user: UserSimulator | None = None
        self._tools: list[ToolSpec] | None = None
        self._toolbox: ToolBox | None = None
        self._schemas: list[dict[str, Any]] = []
        self._signatures: dict[str, list[str]] = {}
        self._single_response = False
        self._turn_cap = 0

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode.

        Options: ``task_id`` (without it, a task of ``split`` drawn with the env's RNG) and
        ``user``, a :class:`UserSimulator` that replaces the task's own for this episode.
        """
        if seed is not None:  # gymnasium's reset only (re)seeds ``np_random``
            super().reset(seed=seed)
        task_id = user = None
        if options:
            if not options.keys() <= RESET_OPTIONS:
                raise _unknown_options(options)
            task_id, user = options.get("task_id"), options.get("user")
        task, env = self.index.get(task_id) if task_id is not None else self._draw_task()
        self.world = world = self.adapter.make_world(task)
        self._verifier = self.adapter.make_verifier(task)
        self._user = user = user or self.adapter.make_user(task)
        self.episode = episode = Episode(task=task, env=env)
        self._single_response = env.interaction == "single_response"
        self._turn_cap = _turn_cap(env, 0)
        new = self._opening(task, env)
        first = user.start(task)
        new.append({"role": "user", "content": first})
        episode.messages += new
        world.begin_turn(0)
        self._refresh_tools()
        return first, {"task_id": task.task_id, "env_id": env.env_id, "turn": 0, "messages": new, "tools": self._schemas}

    @staticmethod
    def _opening(task: TaskSpec, env: EnvSpec) -> list[ChatMessage]:
        """The messages before the user's first: the system prompt (the task's own, else the
        environment's) and an agent greeting when the task has one."""
        system = task.metadata.get("system_prompt", env.system_prompt)
        new: list[ChatMessage] = [{"role": "system", "content": system if isinstance(system, str) else str(system)}] if system else []
        if greeting := task.metadata.get("agent_greeting"):
            new.append({"role": "assistant", "content": str(greeting)})
        return new

    def _draw_task(self) -> tuple[TaskSpec, EnvSpec]:
        ids = self.index.ids(self.split)
        if not ids:
            raise ValueError(f"{self.gym_id}: no tasks in split '{self.split}'; splits with tasks: {self.index.splits()}")
        return self.index.get(ids[int(self.np_random.integers(len(ids)))])

    # ------------------------------------------------------------------- step
    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one assistant message; see the module docstring for the protocol.

        This runs once per model message in every rollout, so it is kept flat: the parts
        (parse, validate, execute, verify) are called directly, the step limits are folded into
        one precomputed cap per turn, and ``info`` reuses the transcript's own message objects.
        """
        ep = self.episode
        if ep is None or ep.termination is not None:
            raise self._not_running()
        ep.steps = steps = ep.steps + 1
        ep.steps_in_turn += 1
        parsed = parse_tool_calls(action, self.formats, self._signatures, self.max_calls_per_message)
        if parsed.errors:
            ep.parse_errors += len(parsed.errors)
        assistant = Message.assistant(parsed.content, parsed.calls, parsed.reasoning)
        ep.messages.append(assistant)
        new: list[ChatMessage] = [assistant]
        if self._single_response:
            ep.termination = "single_response"
            observation = ""
        elif parsed.calls or parsed.errors:
            observation = self._run_calls(ep, parsed, new)
        else:
            observation = self._end_turn(ep, new)
        if ep.termination is None:
            if steps < self._turn_cap:
                return observation, 0.0, False, False, {"turn": ep.turn, "step": steps, "messages": new, "tools": self._schemas, "parse": parsed}
            limit = ep.env.max_steps_per_turn
            ep.termination = "turn_limit" if limit is not None and ep.steps_in_turn >= limit else "max_steps"
        if ep.outcome is None:
            ep.outcome = self._verifier.score(ep, self.world)  # type: ignore[union-attr,arg-type]
        truncated = ep.termination in TRUNCATIONS
        return observation, ep.outcome.reward, not truncated, truncated, self._final_info(ep, new, parsed)

    def _not_running(self) -> RuntimeError:
        if self.episode is None:
            return RuntimeError("call reset() before step()")
        return RuntimeError(f"episode of task '{self.episode.task.task_id}' is over ({self.episode.termination}); call reset()")

    def _run_calls(self, ep: Episode, parsed: ParseResult, new: list[ChatMessage]) -> str:
        """Validate and run each call, record it, and answer with one tool message per call."""
        world, toolbox, transcript = self.world, self._toolbox, ep.messages
        assert world is not None and toolbox is not None
        results = []
        for call in parsed.calls:
            error = toolbox.check(call)
            output = error if error is not None else execute(world, call)
            spec = toolbox.specs.get(call.name)
            ok = error is None and not output.startswith("Error:")
            ep.calls.append(CallRecord(ep.turn, ep.steps, call, output, ok, spec is not None and spec.write))
            results.append(output)
            message = {"role": "tool", "content": output, "name": call.name}
            transcript.append(message)
            new.append(message)
        for e in parsed.errors:
            output = f"Error: could not parse the tool call ({e.format}): {e.message}"
            results.append(output)
            message = {"role": "tool", "content": output, "name": "parse_error"}
            transcript.append(message)
            new.append(message)
        return render_tool_results(results)

    def _end_turn(self, ep: Episode, new: list[ChatMessage]) -> str:
        """The agent replied in text: close the turn and ask the user for the next one."""
        world, user = self.world, self._user
        assert world is not None and user is not None and self._verifier is not None
        self._verifier.on_turn_end(ep, world)
        try:
            reply = user.reply(ep)
        except Exception as exc:  # an LLM user that times out ends the episode, not the run
            ep.user_error = f"{type(exc).__name__}: {exc}"
            ep.termination = "user_error"
            return ""
        if reply.stop:
            if reply.content:
                message = {"role": "user", "content": reply.content}
                ep.messages.append(message)
                new.append(message)
            ep.termination = "user_stop" if ep.env.user_simulator != "scripted" else "agent"
            return ""
        ep.turn += 1
        ep.steps_in_turn = 0
        self._turn_cap = _turn_cap(ep.env, ep.steps)
        world.begin_turn(ep.turn)
        self._refresh_tools()
        message = {"role": "user", "content": reply.content}
        ep.messages.append(message)
        new.append(message)
        return reply.content

    # ------------------------------------------------------------------ tools
    def tools(self) -> list[ToolSpec]:
        """Tools the agent can call now."""
        ep = self.episode
        if ep is not None and ep.task.tools is not None:
            return ep.task.tools
        if self.world is not None:
            return self.world.tools()
        return []

    def _refresh_tools(self) -> None:
        """Re-read the tool list (at reset and when a user turn starts, where a world may add or
        remove tools) and, for another list, its validators, signatures and schemas (cached per
        list by the index)."""
        tools = self.tools()
        if tools is not self._tools:
            self._tools = tools
            _, self._toolbox, self._schemas, self._signatures = self.index.tool_entry(tools)

    # ------------------------------------------------------------------- info
    def _final_info(self, ep: Episode, new: list[ChatMessage], parsed: ParseResult) -> dict[str, Any]:
        """The last step's ``info``: a step's keys plus the outcome, its breakdown and how the
        episode ended (every step's ``info`` shares the transcript's message objects)."""
        outcome = ep.outcome
        assert outcome is not None
        info = {
            "task_id": ep.task.task_id, "env_id": ep.env.env_id, "turn": ep.turn, "step": ep.steps, "messages": new,
            "tools": self._schemas, "parse": parsed, "outcome": outcome.to_info(), "reward_breakdown": outcome.breakdown,
            "termination": ep.termination,
        }
        if ep.user_error:
            info["user_error"] = ep.user_error
        return info

    def render(self) -> str | None:
        """The transcript so far as plain text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self.episode is None:
            return None
        lines = []
        for m in self.episode.messages:
            calls = "".join(f"\n  -> {c.name}({c.arguments})" for c in (m.calls if isinstance(m, Message) else ()))
            name = f":{m['name']}" if m.get("name") else ""
            lines.append(f"[{m['role']}{name}] {m.get('content') or ''}{calls}")
        return "\n".join(lines)


def _unknown_options(options: dict[str, Any]) -> ValueError:
    unknown = sorted(set(options) - RESET_OPTIONS, key=str)
    hints = {k: difflib.get_close_matches(str(k), sorted(RESET_OPTIONS), n=1) for k in unknown}
    named = ", ".join(f"{k!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for k, h in hints.items())
    return ValueError(f"unknown reset option(s) {named}; ToolUseEnv.reset takes {sorted(RESET_OPTIONS)}")


def _turn_cap(env: EnvSpec, steps: int) -> int:
    """The step count at which a turn that starts after ``steps`` steps ends by a limit
    (``max_steps`` for the episode, or ``max_steps_per_turn`` for the turn, whichever is first)."""
    per_turn = env.max_steps_per_turn
    return env.max_steps if per_turn is None else min(env.max_steps, steps + per_turn)


def execute(world: World, call: ToolCall) -> str:
    """Run a validated call; a tool's failure becomes ``Error: ...`` text for the agent."""
    try:
        return result_text(jsonable(world.call(call.name, call.arguments)))
    except ToolError as exc:
        return f"Error: {exc}"
    except Exception as exc:  # a tool's own failure must reach the agent, not crash the rollout
        return f"Error: {type(exc).__name__}: {exc}"
