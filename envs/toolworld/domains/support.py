"""Support domains: help-desk tickets and project tasks."""

from __future__ import annotations

import random
from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Transition, pick
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.records import RecordWorld, positive

from envsched_gym.tool import tool

AGENTS = ("Kim", "Luis", "Noor", "Sam")


class Tickets(RecordWorld):
    """A support desk: tickets with a priority, an assignee and an open/closed status."""

    noun = "ticket"
    id_prefix = "TCK"

    @tool
    def find_ticket(self, name: str) -> dict:
        """Look up a ticket's id by its subject.

        Args:
            name: Ticket subject, e.g. "Login Timeout".
        """
        return self.lookup(name)

    @tool
    def get_ticket(self, ticket_id: str) -> dict:
        """Read a ticket: priority (1 urgent to 4 low), assignee and status.

        Args:
            ticket_id: Ticket id such as "TCK-013".
        """
        return self.view(ticket_id)

    @tool
    def search_tickets(self, query: str) -> list:
        """List the tickets whose subject contains some text.

        Args:
            query: Part of a subject.
        """
        return self.search(query)

    @tool(write=True)
    def assign_ticket(self, ticket_id: str, agent: Literal["Kim", "Luis", "Noor", "Sam"]) -> dict:
        """Assign a ticket to a support agent.

        Args:
            ticket_id: Ticket id.
            agent: The agent.
        """
        return self.assign(ticket_id, "assignee", agent)

    @tool(write=True)
    def close_ticket(self, ticket_id: str) -> dict:
        """Close an open ticket.

        Args:
            ticket_id: Ticket id.
        """
        return self.transition(ticket_id, "closed", ("open",))

    @tool(write=True)
    def reopen_ticket(self, ticket_id: str) -> dict:
        """Reopen a closed ticket.

        Args:
            ticket_id: Ticket id.
        """
        return self.transition(ticket_id, "open", ("closed",))

    @tool(write=True)
    def set_priority(self, ticket_id: str, priority: Literal[1, 2, 3, 4]) -> dict:
        """Change a ticket's priority.

        Args:
            ticket_id: Ticket id.
            priority: 1 (urgent) to 4 (low).
        """
        return self.assign(ticket_id, "priority", int(priority))


TICKETS = Domain(
    name="tickets",
    world=Tickets,
    description="You are a help-desk assistant. Tickets are found by their subject.",
    words=(
        ("Login", "Printer", "Invoice", "Password", "Email", "Laptop", "VPN", "Badge"),
        ("Timeout", "Failure", "Request", "Error", "Outage", "Reset"),
    ),
    make_record=lambda rng: {
        "priority": rng.randint(1, 4),
        "assignee": rng.choice(AGENTS),
        "status": rng.choice(("open", "open", "closed")),
    },
    fields=(("priority", "priority"), ("assignee", "assignee"), ("status", "status")),
    actions=(
        Assign("assign_ticket", "ticket_id", "agent", "assignee", "assign {ref} to {value}", pick(AGENTS)),
        Transition("close_ticket", "ticket_id", "closed", ("open",), "close {ref}"),
        Assign("set_priority", "ticket_id", "priority", "priority", "set the priority of {ref} to {value}", pick((1, 2, 3, 4))),
        Transition("reopen_ticket", "ticket_id", "open", ("closed",), "reopen {ref}"),
    ),
    extras=("search_tickets",),
)


class Projects(RecordWorld):
    """Project tasks: hours logged against an hour budget, and a workflow status."""

    noun = "task"
    id_prefix = "TSK"

    @tool
    def find_task(self, name: str) -> dict:
        """Look up a task's id by its title.

        Args:
            name: Task title, e.g. "Migrate Database".
        """
        return self.lookup(name)

    @tool
    def get_task(self, task_id: str) -> dict:
        """Read a task: hours logged, hour budget and status.

        Args:
            task_id: Task id such as "TSK-008".
        """
        return self.view(task_id)

    @tool(write=True)
    def log_hours(self, task_id: str, hours: int) -> dict:
        """Log hours on a task; the total cannot exceed the task's hour budget.

        Args:
            task_id: Task id.
            hours: Hours worked (positive).
        """
        return self.adjust(task_id, "hours_logged", positive(hours, "hours"), cap=self.record(task_id)["hour_budget"], what="hours")

    @tool(write=True)
    def start_task(self, task_id: str) -> dict:
        """Start a task that is still to do.

        Args:
            task_id: Task id.
        """
        return self.transition(task_id, "in_progress", ("todo",))

    @tool(write=True)
    def complete_task(self, task_id: str) -> dict:
        """Complete a task that is in progress.

        Args:
            task_id: Task id.
        """
        return self.transition(task_id, "done", ("in_progress",))


def _task(rng: random.Random) -> dict:
    budget = rng.choice((8, 16, 24, 40, 80))
    return {
        "hours_logged": rng.randint(0, budget),
        "hour_budget": budget,
        "status": rng.choice(("todo", "in_progress", "in_progress", "done")),
    }


PROJECTS = Domain(
    name="projects",
    world=Projects,
    description="You are a project-management assistant. Tasks are found by their title.",
    words=(
        ("Migrate", "Refactor", "Audit", "Document", "Test", "Deploy", "Design"),
        ("Database", "Billing", "Dashboard", "Checkout", "Search", "Onboarding"),
    ),
    make_record=_task,
    fields=(("hours_logged", "hours logged"), ("hour_budget", "hour budget"), ("status", "status")),
    actions=(
        Adjust("log_hours", "task_id", "hours", "hours_logged", 1, "log {amount} hours on {ref}", (1, 12), "hours", "hour_budget", "hours"),
        Transition("start_task", "task_id", "in_progress", ("todo",), "start {ref}"),
        Transition("complete_task", "task_id", "done", ("in_progress",), "complete {ref}"),
    ),
    limits={"hours": (5, 10)},
)
