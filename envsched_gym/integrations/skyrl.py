"""The suite's environments as SkyRL-gym environments (``pip install 'envsched-gym[skyrl]'``).

SkyRL's generator makes one environment per dataset row with
``skyrl_gym.make(env_class, env_config=..., extras=row_extras)``, calls ``init(prompt)``, then
``step(model_text)`` until ``done``, appending each step's ``observations`` (OpenAI-form messages)
to the chat. :class:`EnvSchedSkyRLEnv` is that interface over a :class:`~envsched_gym.env.ToolUseEnv`:
the same parsing, tools, users and verifiers, so rewards equal the gymnasium path's.

Rows come from :func:`skyrl_rows` (``prompt``, ``env_class`` and the extras SkyRL passes back):

    from envsched_gym.integrations.skyrl import register, skyrl_rows
    register()                                   # skyrl_gym id "envsched"
    rows = skyrl_rows(envsched_gym.suite("ToolWorld", split="train"))
    # pandas.DataFrame(rows).to_parquet("train.parquet") for SkyRL's PromptDataset

Extras of a row: ``task_id`` and ``gym_id`` (required), and
optionally ``adapter_options`` and ``imports`` (modules that register user families, imported
in the worker that makes the environment). ``env_config`` may set ``tools_in_prompt``
(default true: the tool schemas are written into the system message in Qwen3's ``<tools>``
form, since SkyRL's generator does not pass tools to the chat template).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from envsched_gym.plugins import import_modules
from envsched_gym.suite import Suite

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as exc:  # the integration is an extra; say how to get it
    raise ImportError(f"envsched_gym.integrations.skyrl needs skyrl-gym: pip install 'envsched-gym[skyrl]' ({exc})") from exc

ENV_CLASS = "envsched"
EXTRAS = frozenset({"task_id", "gym_id", "adapter_options", "imports"})
CONFIG_KEYS = frozenset({"tools_in_prompt"})
_TOOLS_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


class EnvSchedSkyRLEnv(BaseTextEnv):
    """One episode of one suite task behind SkyRL's ``BaseTextEnv`` interface.

    Args:
        env_config: SkyRL's per-class config (a dict or OmegaConf node); keys: ``tools_in_prompt``.
        extras: The dataset row's extras (see the module docstring).

    Raises:
        ValueError: An unknown extra or config key, or no ``task_id`` / ``gym_id``.
    """

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        extras, config = dict(extras or {}), dict(env_config or {})
        _check_keys(extras, EXTRAS, "extras")
        _check_keys(config, CONFIG_KEYS, "env_config")
        if missing := sorted({"task_id", "gym_id"} - set(extras)):
            raise ValueError(f"extras need {missing} (rows from envsched_gym.integrations.skyrl.skyrl_rows carry them)")
        import_modules(list(extras.get("imports") or []))
        self.task_id: str = extras["task_id"]
        self.tools_in_prompt = bool(config.get("tools_in_prompt", True))
        options = extras.get("adapter_options")
        self.env = gym.make(extras["gym_id"], **({"adapter_options": options} if options else {}))
        self.max_turns = self.env.unwrapped.adapter.max_steps
        self.last_info: dict[str, Any] = {}

    def init(self, prompt: list[dict[str, Any]] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset to the task; returns the opening messages (system with tools, user).

        Raises:
            ValueError: ``prompt`` is given and is not this task's opening.
        """
        _, info = self.env.reset(options={"task_id": self.task_id})
        opening = _with_tools(info["messages"], info["tools"]) if self.tools_in_prompt else [dict(m) for m in info["messages"]]
        if prompt and [dict(m) for m in prompt] != opening:
            raise ValueError(
                f"task '{self.task_id}': the row's prompt is not the task's opening; rebuild the rows with skyrl_rows() "
                f"(same tools_in_prompt={self.tools_in_prompt})"
            )
        return opening, {"task_id": self.task_id, "env_id": info["env_id"], "tools": info["tools"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One assistant message: the tool results or next user message as observations; the
        verifier's reward when the episode ends (0 before)."""
        self.turns += 1
        _, reward, terminated, truncated, info = self.env.step(action)
        self.last_info = info
        observations = [_chat(m) for m in info["messages"] if m["role"] != "assistant"]
        done = bool(terminated or truncated)
        metadata: dict[str, Any] = {"task_id": self.task_id, "parse_errors": len(info["parse"].errors)}
        if done:
            metadata |= {"breakdown": info["reward_breakdown"], "termination": info["termination"], "success": info["outcome"]["success"]}
        return BaseTextEnvStepOutput(observations=observations, reward=float(reward), done=done, metadata=metadata, postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """The finished episode's reward components (SkyRL averages numeric metrics)."""
        outcome = self.last_info.get("outcome")
        return {} if outcome is None else {"success": float(outcome["success"]), **outcome["breakdown"]}

    def close(self) -> None:
        self.env.close()


def register() -> None:
    """Register :class:`EnvSchedSkyRLEnv` as SkyRL env class ``"envsched"`` (idempotent)."""
    if ENV_CLASS not in skyrl_gym.registry:
        skyrl_gym.register(id=ENV_CLASS, entry_point=f"{__name__}:EnvSchedSkyRLEnv")


def skyrl_rows(suite: Suite, *, tools_in_prompt: bool = True, imports: list[str] | None = None) -> list[dict[str, Any]]:
    """One SkyRL dataset row per suite node: ``prompt``, ``env_class`` and the extras."""
    rows = []
    for node in suite:
        extras: dict[str, Any] = {"task_id": node.task_id, "gym_id": node.env.gym_id}
        if node.family in suite.options:
            extras["adapter_options"] = suite.options[node.family]
        if imports:
            extras["imports"] = list(imports)
        prompt, _ = EnvSchedSkyRLEnv({"tools_in_prompt": tools_in_prompt}, extras).init()
        rows.append({"prompt": prompt, "env_class": ENV_CLASS, **extras})
    return rows


def _with_tools(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    opening = [dict(m) for m in messages]
    if not tools:
        return opening
    block = _TOOLS_HEAD + "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools) + _TOOLS_TAIL
    if opening and opening[0]["role"] == "system":
        opening[0]["content"] = f"{opening[0]['content']}\n\n{block}"
    else:
        opening.insert(0, {"role": "system", "content": block})
    return opening


def _chat(message: Mapping[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in ("role", "content", "name") if k in message}


def _check_keys(given: Mapping[str, Any], known: frozenset[str], what: str) -> None:
    if unknown := sorted(set(given) - known):
        raise ValueError(f"unknown {what} key(s) {unknown}; {what} takes {sorted(known)}")
