"""Community domains: library, gym, school enrolment, smart home."""

from __future__ import annotations

import random
from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Move, Transition, pick
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, positive

from envsched_gym.tool import tool

PLANS = ("basic", "plus", "premium")
ADVISORS = ("Dr. Reyes", "Dr. Chen", "Dr. Adeyemi", "Dr. Larsen")
MODES = ("eco", "comfort", "away")


class Library(RecordWorld):
    """A lending library: copies on the shelf, copies owned and whether a title is in circulation."""

    noun = "book"
    id_prefix = "BK"

    @tool
    def find_book(self, name: str) -> dict:
        """Look up a book's id by its title.

        Args:
            name: Book title, e.g. "Silent River".
        """
        return self.lookup(name)

    @tool
    def get_book(self, book_id: str) -> dict:
        """Read a book: copies available, copies owned and status.

        Args:
            book_id: Book id such as "BK-006".
        """
        return self.view(book_id)

    @tool
    def search_books(self, query: str) -> list:
        """List the books whose title contains some text.

        Args:
            query: Part of a title.
        """
        return self.search(query)

    @tool(write=True)
    def check_out(self, book_id: str, copies: int) -> dict:
        """Lend copies of a book; fails when fewer copies are on the shelf.

        Args:
            book_id: Book id.
            copies: Copies lent (positive).
        """
        return self.adjust(book_id, "available", -positive(copies, "copies"), what="copies")

    @tool(write=True)
    def check_in(self, book_id: str, copies: int) -> dict:
        """Return copies to the shelf; available copies cannot exceed the copies owned.

        Args:
            book_id: Book id.
            copies: Copies returned (positive).
        """
        return self.adjust(book_id, "available", positive(copies, "copies"), cap=self.record(book_id)["owned"], what="copies")

    @tool(write=True)
    def withdraw_title(self, book_id: str) -> dict:
        """Take a title out of circulation.

        Args:
            book_id: Book id.
        """
        return self.transition(book_id, "withdrawn", ("circulating",))


def _book(rng: random.Random) -> dict:
    owned = rng.randint(1, 8)
    return {
        "available": rng.randint(0, owned),
        "owned": owned,
        "status": rng.choice(("circulating", "circulating", "circulating", "withdrawn")),
    }


LIBRARY = Domain(
    name="library",
    world=Library,
    description="You are a librarian's assistant. Books are found by their title.",
    words=(
        ("Silent", "Golden", "Hidden", "Broken", "Distant", "Winter", "Crimson", "Paper"),
        ("River", "Garden", "Empire", "Compass", "Lantern", "Harbor"),
    ),
    make_record=_book,
    fields=(("available", "number of copies available"), ("owned", "number of copies owned"), ("status", "status")),
    actions=(
        Adjust("check_out", "book_id", "copies", "available", -1, "check out {amount} copies of {ref}", (1, 3), "copies", None, "loan"),
        Adjust("check_in", "book_id", "copies", "available", 1, "check in {amount} copies of {ref}", (1, 3), "copies", "owned"),
        Transition("withdraw_title", "book_id", "withdrawn", ("circulating",), "withdraw {ref} from circulation"),
    ),
    extras=("search_books",),
    limits={"loan": (5, 5)},
)


class Gym(RecordWorld):
    """Gym memberships: class credits, plan and whether the membership is active or paused."""

    noun = "member"
    id_prefix = "GYM"

    @tool
    def find_member(self, name: str) -> dict:
        """Look up a gym member's id by full name.

        Args:
            name: Member name, e.g. "Dev Kowalski".
        """
        return self.lookup(name)

    @tool
    def get_member(self, member_id: str) -> dict:
        """Read a membership: class credits, plan and status.

        Args:
            member_id: Member id such as "GYM-009".
        """
        return self.view(member_id)

    @tool(write=True)
    def book_classes(self, member_id: str, classes: int) -> dict:
        """Book classes, one credit each; fails when the member has fewer credits.

        Args:
            member_id: Member id.
            classes: Classes to book (positive).
        """
        return self.adjust(member_id, "credits", -positive(classes, "classes"), what="credits")

    @tool(write=True)
    def share_credits(self, from_member: str, to_member: str, credits: int) -> dict:
        """Give class credits from one member to another.

        Args:
            from_member: Id of the giving member.
            to_member: Id of the receiving member.
            credits: Credits to give (positive).
        """
        return self.transfer(from_member, to_member, "credits", credits)

    @tool(write=True)
    def change_plan(self, member_id: str, plan: Literal["basic", "plus", "premium"]) -> dict:
        """Switch a membership plan.

        Args:
            member_id: Member id.
            plan: New plan.
        """
        return self.assign(member_id, "plan", plan)

    @tool(write=True)
    def pause_membership(self, member_id: str) -> dict:
        """Pause an active membership.

        Args:
            member_id: Member id.
        """
        return self.transition(member_id, "paused", ("active",))


GYM = Domain(
    name="gym",
    world=Gym,
    description="You are a gym's membership assistant. Members are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {
        "credits": rng.randint(0, 30),
        "plan": rng.choice(PLANS),
        "status": rng.choice(("active", "active", "paused")),
    },
    fields=(("credits", "number of class credits"), ("plan", "plan"), ("status", "membership status")),
    actions=(
        Adjust("book_classes", "member_id", "classes", "credits", -1, "book {amount} classes for {ref}", (1, 6), "credits"),
        Move(
            "share_credits",
            "from_member",
            "to_member",
            "credits",
            "credits",
            "give {amount} class credits from {ref} to {dst}",
            (1, 10),
            "credits",
            "member",
            "share",
        ),
        Assign("change_plan", "member_id", "plan", "plan", "switch {ref} to the {value} plan", pick(PLANS)),
        Transition("pause_membership", "member_id", "paused", ("active",), "pause the membership of {ref}"),
    ),
    limits={"share": (5, 10)},
)


class School(RecordWorld):
    """Student enrolment: credits enrolled, credit cap, advisor and status."""

    noun = "student"
    id_prefix = "STU"

    @tool
    def find_student(self, name: str) -> dict:
        """Look up a student's id by full name.

        Args:
            name: Student name, e.g. "Farid Silva".
        """
        return self.lookup(name)

    @tool
    def get_student(self, student_id: str) -> dict:
        """Read a student: credits enrolled, maximum credits, advisor and status.

        Args:
            student_id: Student id such as "STU-012".
        """
        return self.view(student_id)

    @tool(write=True)
    def enroll_credits(self, student_id: str, credits: int) -> dict:
        """Enrol a student in more credits; the total cannot exceed their maximum.

        Args:
            student_id: Student id.
            credits: Credits to add (positive).
        """
        return self.adjust(student_id, "credits", positive(credits, "credits"), cap=self.record(student_id)["max_credits"], what="credits")

    @tool(write=True)
    def drop_credits(self, student_id: str, credits: int) -> dict:
        """Drop credits; fails when the student has fewer credits enrolled.

        Args:
            student_id: Student id.
            credits: Credits to drop (positive).
        """
        return self.adjust(student_id, "credits", -positive(credits, "credits"), what="credits")

    @tool(write=True)
    def set_advisor(self, student_id: str, advisor: Literal["Dr. Reyes", "Dr. Chen", "Dr. Adeyemi", "Dr. Larsen"]) -> dict:
        """Assign a faculty advisor.

        Args:
            student_id: Student id.
            advisor: The advisor.
        """
        return self.assign(student_id, "advisor", advisor)

    @tool(write=True)
    def put_on_leave(self, student_id: str) -> dict:
        """Put an enrolled student on leave.

        Args:
            student_id: Student id.
        """
        return self.transition(student_id, "on_leave", ("enrolled",))


def _student(rng: random.Random) -> dict:
    cap = rng.choice((18, 21, 24))
    return {
        "credits": rng.randint(0, cap),
        "max_credits": cap,
        "advisor": rng.choice(ADVISORS),
        "status": rng.choice(("enrolled", "enrolled", "on_leave")),
    }


SCHOOL = Domain(
    name="school",
    world=School,
    description="You are a registrar's assistant. Students are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=_student,
    fields=(("credits", "number of credits enrolled"), ("advisor", "advisor"), ("max_credits", "credit maximum")),
    actions=(
        Adjust(
            "enroll_credits",
            "student_id",
            "credits",
            "credits",
            1,
            "enrol {ref} in {amount} more credits",
            (1, 9),
            "credits",
            "max_credits",
        ),
        Adjust("drop_credits", "student_id", "credits", "credits", -1, "drop {amount} credits for {ref}", (1, 6), "credits"),
        Assign("set_advisor", "student_id", "advisor", "advisor", "make {value} the advisor of {ref}", pick(ADVISORS)),
        Transition("put_on_leave", "student_id", "on_leave", ("enrolled",), "put {ref} on leave"),
    ),
)


class SmartHome(RecordWorld):
    """Smart-home thermostats: target temperature, mode and power status."""

    noun = "thermostat"
    id_prefix = "THM"

    @tool
    def find_thermostat(self, name: str) -> dict:
        """Look up a thermostat's id by its room name.

        Args:
            name: Room name, e.g. "Upstairs Bedroom".
        """
        return self.lookup(name)

    @tool
    def get_thermostat(self, thermostat_id: str) -> dict:
        """Read a thermostat: target temperature in Celsius, mode and status.

        Args:
            thermostat_id: Thermostat id such as "THM-001".
        """
        return self.view(thermostat_id)

    @tool(write=True)
    def raise_target(self, thermostat_id: str, degrees: int) -> dict:
        """Raise the target temperature; targets above 28 C are not allowed.

        Args:
            thermostat_id: Thermostat id.
            degrees: Degrees Celsius to add (positive).
        """
        return self.adjust(thermostat_id, "target_c", positive(degrees, "degrees"), cap=28, what="degrees")

    @tool(write=True)
    def set_mode(self, thermostat_id: str, mode: Literal["eco", "comfort", "away"]) -> dict:
        """Switch a thermostat's mode.

        Args:
            thermostat_id: Thermostat id.
            mode: New mode.
        """
        return self.assign(thermostat_id, "mode", mode)

    @tool(write=True)
    def turn_off(self, thermostat_id: str) -> dict:
        """Switch a running thermostat off.

        Args:
            thermostat_id: Thermostat id.
        """
        return self.transition(thermostat_id, "switched_off", ("running",))

    @tool(write=True)
    def turn_on(self, thermostat_id: str) -> dict:
        """Start a switched-off thermostat.

        Args:
            thermostat_id: Thermostat id.
        """
        return self.transition(thermostat_id, "running", ("switched_off",))


SMART_HOME = Domain(
    name="smarthome",
    world=SmartHome,
    description="You are a smart-home assistant controlling thermostats, found by room name.",
    words=(
        ("Upstairs", "Downstairs", "Front", "Back", "Guest", "Corner", "Attic"),
        ("Bedroom", "Office", "Hallway", "Kitchen", "Studio", "Den"),
    ),
    make_record=lambda rng: {
        "target_c": rng.randint(16, 26),
        "mode": rng.choice(MODES),
        "status": rng.choice(("running", "running", "switched_off")),
    },
    fields=(("target_c", "target temperature"), ("mode", "mode"), ("status", "power status")),
    actions=(
        Adjust(
            "raise_target",
            "thermostat_id",
            "degrees",
            "target_c",
            1,
            "raise the target temperature of {ref} by {amount} degrees",
            (1, 5),
            "degrees",
            28,
        ),
        Assign("set_mode", "thermostat_id", "mode", "mode", "switch {ref} to {value} mode", pick(MODES)),
        Transition("turn_off", "thermostat_id", "switched_off", ("running",), "turn off {ref}"),
        Transition("turn_on", "thermostat_id", "running", ("switched_off",), "turn on {ref}"),
    ),
)
