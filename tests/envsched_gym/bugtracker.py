"""A small bug tracker family, written from the README as a new user would: the worlds and tasks
that the verifier-block and validation tests play."""

from __future__ import annotations

from typing import Any

from envsched_gym import Adapter, AssistantTurn, TaskSpec, ToolCall, ToolError, VerifierConfig, World, tool

USERS = ("ana", "bo", "chen")


class BugTracker(World):
    def __init__(self) -> None:
        self.issues: dict[str, dict[str, Any]] = {
            "BUG-1": {"title": "login fails", "assignee": None, "open": True},
            "BUG-2": {"title": "login page slow", "assignee": None, "open": True},
            "BUG-3": {"title": "crash on save", "assignee": "bo", "open": False},
        }

    @tool
    def get_issue(self, issue_id: str) -> dict[str, Any]:
        """Read an issue.

        Args:
            issue_id: Issue id, e.g. "BUG-1".
        """
        if issue_id not in self.issues:
            raise ToolError(f"unknown issue '{issue_id}'")
        return self.issues[issue_id]

    @tool(write=True)
    def assign(self, issue_id: str, user: str) -> str:
        """Assign an open issue to a user.

        Args:
            issue_id: Issue id.
            user: User name.
        """
        issue = self.get_issue(issue_id)
        if user not in USERS:
            raise ToolError(f"unknown user '{user}'; users: {list(USERS)}")
        if not issue["open"]:
            raise ToolError(f"{issue_id} is closed and cannot be assigned")
        issue["assignee"] = user
        return f"{issue_id} assigned to {user}"

    @tool(write=True)
    def close(self, issue_id: str) -> str:
        """Close an issue.

        Args:
            issue_id: Issue id.
        """
        self.get_issue(issue_id)["open"] = False
        return f"{issue_id} closed"


def assign_call(issue: str = "BUG-1", user: str = "ana") -> ToolCall:
    return ToolCall("assign", {"issue_id": issue, "user": user})


def task(task_id: str, verifier: VerifierConfig, solution: list[AssistantTurn], turns: list[str] | None = None, **kw: Any) -> TaskSpec:
    turns = turns or ["Assign BUG-1 to ana."]
    return TaskSpec(task_id, kw.pop("env_id", "BugTracker"), turns[0], user_turns=turns, solution=solution, verifier=verifier, **kw)


ASSIGN = task(
    "bug/assign",
    VerifierConfig("gold_state", {"facts": ["BUG-1", "ana"]}),
    [AssistantTurn(tool_calls=[assign_call()]), AssistantTurn("BUG-1 is now assigned to ana.")],
)
REFUSE = task(
    "bug/refuse",
    VerifierConfig("blocks", {"blocks": [{"block": "state_match"}, {"block": "refusal"}]}),
    [AssistantTurn("I cannot assign BUG-3: it is closed.")],
    ["Assign BUG-3 to ana."],
)
ASK = task(
    "bug/ask",
    VerifierConfig("blocks", {"blocks": [{"block": "state_match"}, {"block": "ask_clarification"}]}),
    [AssistantTurn("Which login bug do you mean, BUG-1 or BUG-2?"), AssistantTurn(tool_calls=[assign_call("BUG-2")]), AssistantTurn("Done.")],
    ["Assign the login bug to ana.", "The slow page one."],
)


class BugTrackerAdapter(Adapter):
    family = "BugTracker"
    world = BugTracker
    extra: tuple[TaskSpec, ...] = ()

    def tasks(self, split: str = "all") -> list[TaskSpec]:
        return [t for t in (ASSIGN, REFUSE, ASK, *self.extra) if split in ("all", t.split)]


def adapter_with(*tasks: TaskSpec, family: str = "BugTracker") -> BugTrackerAdapter:
    """A BugTracker adapter (class named for ``family``) that serves ``tasks`` on top of the three above."""
    cls = type(f"{family}Adapter", (BugTrackerAdapter,), {"family": family, "extra": tasks})
    return cls()
