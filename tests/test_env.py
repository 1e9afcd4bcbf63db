"""ToolUseEnv: the episode protocol, validation errors, limits, isolation and info."""

from __future__ import annotations

import gymnasium as gym
import pytest

import envsched_gym
from envsched_gym import UserReply, UserSimulator
from envsched_gym.policies import NoOpPolicy, OraclePolicy, run_episode
from tests.conftest import Notes, NotesAdapter


def _call(name: str, **args: object) -> str:
    return envsched_gym.render_calls([envsched_gym.ToolCall(name, dict(args))])


@pytest.fixture
def env(notes_adapter: NotesAdapter) -> gym.Env:
    return gym.make("envsched/Notes-v0")


def test_reset_gives_instruction_tools_and_messages(env: gym.Env) -> None:
    obs, info = env.reset(seed=0, options={"task_id": "notes/0"})
    assert obs == "Add a note 'call' saying 'call mum'."
    assert [m["role"] for m in info["messages"]] == ["system", "user"]
    assert {t["function"]["name"] for t in info["tools"]} == {"read_note", "write_note", "crash"}
    assert info["task_id"] == "notes/0" and info["env_id"] == "Notes"


def test_info_keys_at_reset_each_step_and_the_last_step(env: gym.Env) -> None:
    _, info = env.reset(seed=0, options={"task_id": "notes/0"})
    assert set(info) == {"task_id", "env_id", "turn", "messages", "tools"}
    *_, info = env.step(_call("read_note", title="todo"))
    assert set(info) == {"turn", "step", "messages", "tools", "parse"}  # ids are constant in an episode
    *_, terminated, _, info = env.step("Done.")
    assert terminated and set(info) == {"task_id", "env_id", "turn", "step", "messages", "tools", "parse", "outcome", "reward_breakdown", "termination"}
    assert (info["task_id"], info["env_id"], info["step"]) == ("notes/0", "Notes", 2)


def test_tool_result_observation_and_records(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/0"})
    obs, reward, terminated, truncated, info = env.step(_call("read_note", title="todo"))
    assert obs == '<tool_response>\n{"text": "buy milk", "tag": "home"}\n</tool_response>'
    assert (reward, terminated, truncated) == (0.0, False, False)
    parsed = info["parse"]
    assert parsed.format == "qwen3" and parsed.ok and [c.name for c in parsed.calls] == ["read_note"]
    assert [m["role"] for m in info["messages"]] == ["assistant", "tool"]
    record = env.unwrapped.episode.calls[0]
    assert record.ok and not record.write and record.turn == 0


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (_call("reed_note", title="x"), "Error: unknown tool 'reed_note'. Did you mean 'read_note'?"),
        (_call("write_note", title="x"), "Error: invalid arguments for 'write_note': 'text' is a required property"),
        (_call("write_note", title="x", text=3), "Error: invalid arguments for 'write_note' at 'text': 3 is not of type 'string'"),
        (_call("write_note", title="x", text="y", tag="play"), "Error: invalid arguments for 'write_note' at 'tag': 'play' is not one of"),
        (_call("read_note", title="x", colour="red"), "Error: unexpected argument(s) ['colour'] for 'read_note'"),
        (_call("read_note", title="nope"), "Error: no note titled 'nope'"),
        (_call("crash", n=1), "Error: RuntimeError: backend bug"),
        ("<tool_call>{oops}</tool_call>", "Error: could not parse the tool call (qwen3): tool call is not valid JSON"),
        ("__import__('os').system('echo hi')", "Error: could not parse the tool call (python)"),
    ],
)
def test_bad_calls_become_error_observations(env: gym.Env, action: str, expected: str) -> None:
    env.reset(seed=0, options={"task_id": "notes/0"})
    obs, reward, terminated, truncated, info = env.step(action)
    assert expected in obs, obs
    assert not terminated and not truncated
    assert env.unwrapped.world.notes == {"todo": {"text": "buy milk", "tag": "home"}}


def test_parse_errors_are_flagged_in_info(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/0"})
    info = env.step("<tool_call>{oops}</tool_call>")[4]
    assert not info["parse"].ok and info["parse"].errors[0].format == "qwen3"
    assert env.unwrapped.episode.parse_errors == 1


def test_oracle_and_noop(env: gym.Env) -> None:
    for task_id in ("notes/0", "notes/1"):
        assert run_episode(env, OraclePolicy(), task_id)["reward"] == 1.0
        assert run_episode(env, NoOpPolicy(), task_id)["reward"] == 0.0


def test_multi_turn_scripted_user(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/1"})
    env.step(_call("read_note", title="todo"))
    obs, _, terminated, _, info = env.step("It says buy milk.")
    assert obs == "Now tag a note 'x' with text 'y' as work." and not terminated and info["turn"] == 1
    env.step(_call("write_note", title="x", text="y", tag="work"))
    obs, reward, terminated, truncated, info = env.step("Done.")
    assert terminated and not truncated and reward == 1.0
    assert info["outcome"]["breakdown"] == {"state_match": 1.0, "facts": 1.0, "completed": 1.0}
    assert [c.turn for c in env.unwrapped.episode.calls] == [0, 1]


def test_wrong_final_state_scores_zero_with_breakdown(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/0"})
    env.step(_call("write_note", title="call", text="call dad"))
    _, reward, terminated, _, info = env.step("Saved the note 'call'.")
    assert terminated and reward == 0.0 and info["reward_breakdown"] == {"state_match": 0.0, "facts": 1.0, "completed": 1.0}


def test_each_episode_gets_its_own_world(env: gym.Env, notes_adapter: NotesAdapter) -> None:
    env.reset(seed=0, options={"task_id": "notes/0"})
    env.step(_call("write_note", title="a", text="b"))
    first = env.unwrapped.world
    other = gym.make("envsched/Notes-v0")
    other.reset(seed=0, options={"task_id": "notes/0"})
    assert "a" not in other.unwrapped.world.notes
    env.reset(seed=0, options={"task_id": "notes/0"})
    assert env.unwrapped.world is not first and "a" not in env.unwrapped.world.notes


def test_step_limit_truncates(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/0"})
    for _ in range(5):
        assert env.step(_call("read_note", title="todo"))[3] is False
    obs, reward, terminated, truncated, info = env.step(_call("read_note", title="todo"))
    assert truncated and not terminated and info["termination"] == "max_steps" and reward == 0.0
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("hi")


def test_per_turn_limit_truncates(notes_adapter: NotesAdapter) -> None:
    env = gym.make("envsched/Notes-v0", adapter_options={"max_steps_per_turn": 2})
    env.reset(seed=0, options={"task_id": "notes/1"})
    env.step(_call("read_note", title="todo"))
    *_, terminated, truncated, info = env.step(_call("read_note", title="todo"))
    assert truncated and info["termination"] == "turn_limit"



def test_per_turn_limit_restarts_with_each_user_turn(notes_adapter: NotesAdapter) -> None:
    env = gym.make("envsched/Notes-v0", adapter_options={"max_steps_per_turn": 2})
    env.reset(seed=0, options={"task_id": "notes/1"})
    env.step(_call("read_note", title="todo"))
    obs, _, terminated, truncated, info = env.step("It says buy milk.")  # 2nd step of turn 0 ends the turn
    assert not (terminated or truncated) and info["turn"] == 1 and "tag a note" in obs
    assert env.step(_call("read_note", title="todo"))[3] is False  # turn 1 has its own 2 steps
    *_, truncated, info = env.step(_call("read_note", title="todo"))
    assert truncated and info["termination"] == "turn_limit" and info["step"] == 4


def test_episode_limit_applies_inside_a_later_turn(notes_adapter: NotesAdapter) -> None:
    env = gym.make("envsched/Notes-v0", adapter_options={"max_steps_per_turn": 6})
    env.reset(seed=0, options={"task_id": "notes/1"})
    env.step("It says buy milk.")  # turn 0 ends at step 1; turn 1 may run 6 steps, the episode only 5 more
    for _ in range(4):
        assert env.step(_call("read_note", title="todo"))[3] is False
    *_, truncated, info = env.step(_call("read_note", title="todo"))
    assert truncated and info["termination"] == "max_steps" and info["step"] == 6

def test_single_response_is_scored_not_executed(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/2"})
    obs, reward, terminated, truncated, info = env.step(_call("read_note", title="todo"))
    assert terminated and obs == "" and info["termination"] == "single_response"
    assert env.unwrapped.episode.calls == []


class _BrokenUser(UserSimulator):
    def start(self, task: envsched_gym.TaskSpec) -> str:
        return task.instruction

    def reply(self, episode: envsched_gym.Episode) -> UserReply:
        raise TimeoutError("endpoint timed out after 30 s")


def test_failing_user_ends_episode_with_error_in_info(env: gym.Env) -> None:
    env.reset(seed=0, options={"task_id": "notes/0", "user": _BrokenUser()})
    _, reward, terminated, truncated, info = env.step("Hello?")
    assert terminated and not truncated and reward == 0.0 and info["user_error"] == "TimeoutError: endpoint timed out after 30 s"


def test_reset_without_task_id_is_seeded(env: gym.Env) -> None:
    picks = set()
    for seed in range(8):
        first = env.reset(seed=seed)[1]["task_id"]
        assert env.reset(seed=seed)[1]["task_id"] == first
        picks.add(first)
    assert len(picks) > 1


def test_split_restricts_random_draws(notes_adapter: NotesAdapter) -> None:
    env = gym.make("envsched/Notes-v0", split="test")
    assert {env.reset(seed=s)[1]["task_id"] for s in range(5)} == {"notes/1"}
    with pytest.raises(ValueError, match="no tasks in split 'heldout'"):
        gym.make("envsched/Notes-v0", split="heldout").reset(seed=0)


def test_unknown_task_id_suggests(env: gym.Env) -> None:
    with pytest.raises(KeyError, match="Did you mean"):
        env.reset(options={"task_id": "notes/00"})


def test_ansi_render(notes_adapter: NotesAdapter) -> None:
    env = gym.make("envsched/Notes-v0", render_mode="ansi")
    env.reset(seed=0, options={"task_id": "notes/0"})
    env.step(_call("read_note", title="todo"))
    text = env.render()
    assert "[user] Add a note" in text and "-> read_note({'title': 'todo'})" in text and "[tool:read_note]" in text


class _GreetingNotes(NotesAdapter):
    family = "GreetingNotes"

    def env_specs(self) -> list[envsched_gym.EnvSpec]:
        specs = super().env_specs()
        for spec in specs:
            spec.gym_id = "envsched/GreetingNotes-v0"
            spec.env_id = spec.env_id.replace("GreetingNotes", "Notes")
        return specs

    def tasks(self, split: str = "all") -> list[envsched_gym.TaskSpec]:
        tasks = super().tasks(split)
        for task in tasks:
            task.metadata["agent_greeting"] = "Hi! How can I help you today?"
        return tasks


def test_agent_greeting_opens_the_transcript() -> None:
    from envsched_gym.env import ToolUseEnv

    env = ToolUseEnv(_GreetingNotes(), "envsched/GreetingNotes-v0")
    _, info = env.reset(options={"task_id": "notes/0"})
    assert [(m["role"], m["content"][:3]) for m in info["messages"][1:]] == [("assistant", "Hi!"), ("user", "Add")]


def test_info_messages_are_the_transcript_entries(env: gym.Env) -> None:
    _, first = env.reset(seed=0, options={"task_id": "notes/0"})
    info = env.step(_call("read_note", title="todo"))[4]
    transcript = env.unwrapped.episode.messages
    assert all(any(m is t for t in transcript) for m in first["messages"] + info["messages"])
    assert info["messages"][0].calls[0].name == "read_note" and info["messages"][1] == {
        "role": "tool", "content": '{"text": "buy milk", "tag": "home"}', "name": "read_note"}  # fmt: skip


class _GrowingNotes(Notes):
    """Notes whose ``archive`` tool appears when the second user turn starts."""

    def __init__(self) -> None:
        super().__init__()
        self._shown = [t for t in self.tool_specs() if t.name != "archive"]

    @envsched_gym.tool(write=True)
    def archive(self, title: str) -> str:
        """Archive a note.

        Args:
            title: The note's title.
        """
        self.notes.pop(title, None)
        return "archived"

    def tools(self) -> list[envsched_gym.ToolSpec]:
        return self._shown

    def begin_turn(self, index: int) -> None:
        if index == 1:
            self._shown = self.tool_specs()


class _GrowingAdapter(NotesAdapter):
    family = "GrowingNotes"
    world = _GrowingNotes

    def env_specs(self) -> list[envsched_gym.EnvSpec]:
        specs = super().env_specs()[:1]
        specs[0].gym_id, specs[0].env_id = "envsched/GrowingNotes-v0", "Notes"
        return specs


def test_tools_a_world_adds_at_a_turn_are_listed_and_callable_from_that_turn() -> None:
    from envsched_gym.env import ToolUseEnv

    env = ToolUseEnv(_GrowingAdapter(), "envsched/GrowingNotes-v0")
    _, info = env.reset(options={"task_id": "notes/1"})
    assert "archive" not in {t["function"]["name"] for t in info["tools"]}
    obs = env.step(_call("archive", title="todo"))[0]
    assert "Error: unknown tool 'archive'" in obs
    _, _, _, _, info = env.step("It says buy milk.")
    assert info["turn"] == 1 and "archive" in {t["function"]["name"] for t in info["tools"]}
    assert env.step(_call("archive", title="todo"))[0] == "<tool_response>\narchived\n</tool_response>"


def test_unknown_reset_option_is_named_with_a_suggestion(env: gym.Env) -> None:
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) 'taskid' \(did you mean 'task_id'\?\)"):
        env.reset(options={"taskid": "notes/0"})


def test_the_call_cap_is_an_env_option_and_a_flood_runs_nothing(notes_adapter: NotesAdapter) -> None:
    env = gym.make("envsched/Notes-v0", max_calls_per_message=2)
    env.reset(options={"task_id": "notes/0"})
    obs, *_, info = env.step(_call("write_note", title="call", body="call mum") * 3)
    assert "more than 2 tool calls in one message" in obs
    assert env.unwrapped.episode.calls == [] and info["parse"].errors
    with pytest.raises(ValueError, match="max_calls_per_message must be a positive integer"):
        gym.make("envsched/Notes-v0", max_calls_per_message=0)


@pytest.mark.parametrize("action", [None, 10**5000, b"<tool_call>", object()], ids=["none", "huge-int", "bytes", "object"])
def test_an_action_that_is_not_text_is_an_error_observation(env: gym.Env, action: object) -> None:
    env.reset(options={"task_id": "notes/0"})
    obs, reward, terminated, truncated, info = env.step(action)
    assert "expected a string" in obs and info["parse"].errors and not terminated
