"""``ToolUseEnv``: one gymnasium environment for every tool-use family.

Action: the assistant's raw text. Observation: the next text the agent sees (tool results
in ``<tool_response>`` blocks, or the next user message). The episode ends when the user
(scripted or simulated) has nothing more to say, or at a step limit (``truncated``). The
outcome reward comes from the task's verifier at the end; ``info`` carries the new
structured messages, the tool schemas, the parse result and the reward breakdown.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

from envsched_gym.adapter import Adapter
from envsched_gym.declarations import EnvSpec, TaskSpec, ToolCall, ToolSpec
from envsched_gym.episode import CallRecord, Episode, Message, Outcome, Termination
from envsched_gym.parsing import ALL_FORMATS, Format, ParseResult, parse_tool_calls
from envsched_gym.rendering import render_tool_results, result_text
from envsched_gym.spaces import UnicodeText
from envsched_gym.task_index import TaskIndex
from envsched_gym.users import UserSimulator
from envsched_gym.validation import ToolBox, jsonable
from envsched_gym.verifier import Verifier
from envsched_gym.world import ToolError, World


class ToolUseEnv(gym.Env[str, str]):
    """A tool-use environment over the tasks an adapter serves under one gymnasium id.

    Args:
        adapter: The adapter that declares the tasks and builds worlds.
        gym_id: Which of the adapter's registered ids this environment serves.
        split: Tasks ``reset`` may draw when no ``task_id`` is given.
        formats: Accepted tool-call wire formats.
        render_mode: ``"ansi"`` to render the transcript as text.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        adapter: Adapter,
        gym_id: str,
        split: str = "all",
        formats: tuple[Format, ...] = ALL_FORMATS,
        render_mode: str | None = None,
    ) -> None:
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
        self._toolbox: ToolBox | None = None
        self._toolbox_key: int | None = None
        self._views_key: list[ToolSpec] | None = None
        self._views: tuple[dict[str, list[str]], list[dict[str, Any]]] = ({}, [])

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode of ``options["task_id"]`` (or a task drawn with the env's RNG)."""
        super().reset(seed=seed)
        options = options or {}
        task, env = self.index.get(options["task_id"]) if "task_id" in options else self._draw_task()
        self.world = self.adapter.make_world(task)
        self._verifier = self.adapter.make_verifier(task)
        self._user = options.get("user") or self.adapter.make_user(task)
        self.episode = Episode(task=task, env=env)
        system = self._system_prompt(task, env)
        new = [Message("system", system)] if system else []
        if greeting := task.metadata.get("agent_greeting"):
            new.append(Message("assistant", str(greeting)))
        first = self._user.start(task)
        new.append(Message("user", first))
        self.episode.messages.extend(new)
        self.world.begin_turn(0)
        self._refresh_toolbox()
        return first, self._info(new, outcome=None, parsed=None)

    def _draw_task(self) -> tuple[TaskSpec, EnvSpec]:
        ids = self.index.ids(self.split)
        if not ids:
            raise ValueError(f"{self.gym_id}: no tasks in split '{self.split}'; splits with tasks: {self.index.splits()}")
        return self.index.get(ids[int(self.np_random.integers(len(ids)))])

    def _system_prompt(self, task: TaskSpec, env: EnvSpec) -> str:
        return str(task.metadata.get("system_prompt", env.system_prompt))

    # ------------------------------------------------------------------- step
    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one assistant message; see the module docstring for the protocol."""
        ep = self._require_episode()
        ep.steps += 1
        ep.steps_in_turn += 1
        # Tools change only inside reset/step, so the views the last info was built from are current.
        parsed = parse_tool_calls(action if isinstance(action, str) else str(action), self.formats, self._views[0])
        ep.parse_errors += len(parsed.errors)
        assistant = Message("assistant", parsed.content, tool_calls=parsed.calls, reasoning=parsed.reasoning)
        ep.messages.append(assistant)
        new = [assistant]
        if ep.env.interaction == "single_response":
            observation = self._finish("single_response")
        elif parsed.calls or parsed.errors:
            observation = self._run_calls(parsed, new)
        else:
            observation = self._end_turn(new)
        truncated = self._apply_limits()
        done = ep.termination is not None
        outcome = self._outcome() if done else None
        reward = outcome.reward if outcome else 0.0
        terminated = done and not truncated
        return observation, reward, terminated, truncated, self._info(new, outcome, parsed)

    def _require_episode(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.episode.termination is not None:
            raise RuntimeError(f"episode of task '{self.episode.task.task_id}' is over ({self.episode.termination}); call reset()")
        return self.episode

    def _run_calls(self, parsed: ParseResult, new: list[Message]) -> str:
        results, names = [], []
        for call in parsed.calls:
            results.append(self._run_call(call))
            names.append(call.name)
        for e in parsed.errors:
            results.append(f"Error: could not parse the tool call ({e.format}): {e.message}")
            names.append("parse_error")
        messages = [Message("tool", text, name=name) for text, name in zip(results, names, strict=True)]
        self.episode.messages.extend(messages)  # type: ignore[union-attr]
        new.extend(messages)
        return render_tool_results(results)

    def _run_call(self, call: ToolCall) -> str:
        ep, world, toolbox = self.episode, self.world, self._toolbox
        assert ep is not None and world is not None and toolbox is not None
        error = toolbox.check(call)
        spec = toolbox.specs.get(call.name)
        output = error if error is not None else _execute(world, call)
        ok = error is None and not output.startswith("Error:")
        ep.calls.append(CallRecord(ep.turn, ep.steps, call, output, ok, bool(spec and spec.write)))
        return output

    def _end_turn(self, new: list[Message]) -> str:
        """The agent replied in text: close the turn and ask the user for the next one."""
        ep, world, user = self.episode, self.world, self._user
        assert ep is not None and world is not None and user is not None and self._verifier is not None
        self._verifier.on_turn_end(ep, world)
        try:
            reply = user.reply(ep)
        except Exception as exc:  # an LLM user that times out ends the episode, not the run
            ep.user_error = f"{type(exc).__name__}: {exc}"
            return self._finish("user_error")
        if reply.stop:
            if reply.content:
                self._append(Message("user", reply.content), new)
            return self._finish("user_stop" if ep.env.user_simulator != "scripted" else "agent")
        ep.turn += 1
        ep.steps_in_turn = 0
        world.begin_turn(ep.turn)
        self._refresh_toolbox()
        self._append(Message("user", reply.content), new)
        return reply.content

    def _append(self, message: Message, new: list[Message]) -> None:
        self.episode.messages.append(message)  # type: ignore[union-attr]
        new.append(message)

    def _apply_limits(self) -> bool:
        """End the episode at a step limit; return whether it was truncated."""
        ep = self.episode
        assert ep is not None
        if ep.termination is not None:
            return ep.termination in ("max_steps", "turn_limit")
        limit = ep.env.max_steps_per_turn
        if limit is not None and ep.steps_in_turn >= limit:
            self._finish("turn_limit")
        elif ep.steps >= ep.env.max_steps:
            self._finish("max_steps")
        return ep.termination is not None

    def _finish(self, reason: Termination) -> str:
        assert self.episode is not None
        self.episode.termination = reason
        return ""

    def _outcome(self) -> Outcome:
        assert self.episode is not None and self.world is not None and self._verifier is not None
        if self.episode.outcome is None:
            self.episode.outcome = self._verifier.score(self.episode, self.world)
        return self.episode.outcome

    # ------------------------------------------------------------------ tools
    def tools(self) -> list[ToolSpec]:
        """Tools the agent can call now."""
        ep = self.episode
        if ep is not None and ep.task.tools is not None:
            return ep.task.tools
        if self.world is not None:
            return self.world.tools()
        return []

    def _refresh_toolbox(self) -> None:
        tools = self.tools()
        if self._toolbox is None or self._toolbox_key != id(tools):
            self._toolbox = self.index.toolbox(tools)
            self._toolbox_key = id(tools)

    def _tool_views(self) -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
        """Parameter names and OpenAI schemas of the current tools (re-read when the list changes)."""
        tools = self.tools()
        if tools is not self._views_key:
            self._views = (self.index.signatures(tools), self.index.openai_tools(tools))
            self._views_key = tools
        return self._views

    # ------------------------------------------------------------------- info
    def _info(self, new: list[Message], outcome: Outcome | None, parsed: ParseResult | None) -> dict[str, Any]:
        ep = self.episode
        assert ep is not None
        info: dict[str, Any] = {
            "task_id": ep.task.task_id,
            "env_id": ep.env.env_id,
            "turn": ep.turn,
            "step": ep.steps,
            "messages": [m.to_chat() for m in new],
            "tools": self._tool_views()[1],
        }
        if parsed is not None:
            errors = [{"format": e.format, "message": e.message} for e in parsed.errors] if parsed.errors else []
            info["parse"] = {"format": parsed.format, "n_calls": len(parsed.calls), "errors": errors}
        if outcome is not None:
            info["outcome"] = outcome.to_info()
            info["reward_breakdown"] = dict(outcome.breakdown)
            info["termination"] = ep.termination
            if ep.user_error:
                info["user_error"] = ep.user_error
        return info

    def render(self) -> str | None:
        """The transcript so far as plain text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self.episode is None:
            return None
        lines = []
        for m in self.episode.messages:
            calls = "".join(f"\n  -> {c.name}({c.arguments})" for c in m.tool_calls)
            lines.append(f"[{m.role}{':' + m.name if m.name else ''}] {m.content}{calls}")
        return "\n".join(lines)


def _execute(world: World, call: ToolCall) -> str:
    """Run a validated call; a tool's failure becomes ``Error: ...`` text for the agent."""
    try:
        return result_text(jsonable(world.call(call.name, call.arguments)))
    except ToolError as exc:
        return f"Error: {exc}"
    except Exception as exc:  # a tool's own failure must reach the agent, not crash the rollout
        return f"Error: {type(exc).__name__}: {exc}"
