"""Office domains: calendar, file system, messaging."""

from __future__ import annotations

from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Transition, pick
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, positive

from envsched_gym.tool import tool

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
FOLDERS = ("inbox", "projects", "archive", "shared", "personal")


class Calendar(RecordWorld):
    """A work calendar: events with a day, a duration, reminder minutes and a status."""

    noun = "event"
    id_prefix = "EVT"

    @tool
    def find_event(self, name: str) -> dict:
        """Look up an event's id by its title.

        Args:
            name: Event title, e.g. "Budget Review".
        """
        return self.lookup(name)

    @tool
    def get_event(self, event_id: str) -> dict:
        """Read an event: day, duration in minutes, reminder and status.

        Args:
            event_id: Event id such as "EVT-006".
        """
        return self.view(event_id)

    @tool
    def list_day(self, day: Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]) -> list:
        """List the events on a weekday.

        Args:
            day: Weekday.
        """
        return [{"event_id": rid, "name": r["name"]} for rid, r in self.records.items() if r["day"] == day]

    @tool(write=True)
    def extend_event(self, event_id: str, minutes: int) -> dict:
        """Make an event longer; no event may last more than 240 minutes.

        Args:
            event_id: Event id.
            minutes: Minutes to add (positive).
        """
        return self.adjust(event_id, "duration_min", positive(minutes, "minutes"), cap=240, what="minutes")

    @tool(write=True)
    def move_event(self, event_id: str, day: Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]) -> dict:
        """Move an event to another weekday.

        Args:
            event_id: Event id.
            day: New weekday.
        """
        return self.assign(event_id, "day", day)

    @tool(write=True)
    def cancel_event(self, event_id: str) -> dict:
        """Cancel a scheduled event.

        Args:
            event_id: Event id.
        """
        return self.transition(event_id, "cancelled", ("scheduled",))

    @tool(write=True)
    def set_reminder(self, event_id: str, minutes_before: Literal[5, 10, 15, 30, 60]) -> dict:
        """Set how long before an event the reminder fires.

        Args:
            event_id: Event id.
            minutes_before: Minutes before the start.
        """
        return self.assign(event_id, "reminder_min", int(minutes_before))


CALENDAR = Domain(
    name="calendar",
    world=Calendar,
    description="You are a calendar assistant. Events are found by their title.",
    words=(
        ("Budget", "Design", "Hiring", "Roadmap", "Security", "Vendor", "Quarterly", "Team"),
        ("Review", "Sync", "Workshop", "Planning", "Demo", "Retro"),
    ),
    make_record=lambda rng: {
        "day": rng.choice(DAYS),
        "duration_min": rng.choice((15, 30, 45, 60, 90, 120, 180, 240)),
        "reminder_min": rng.choice((5, 10, 15, 30, 60)),
        "status": rng.choice(("scheduled", "scheduled", "cancelled")),
    },
    fields=(("day", "day"), ("duration_min", "duration in minutes"), ("reminder_min", "reminder time in minutes")),
    actions=(
        Adjust(
            "extend_event", "event_id", "minutes", "duration_min", 1, "extend {ref} by {amount} minutes", (15, 90), "minutes", 240, "extend"
        ),
        Assign("move_event", "event_id", "day", "day", "move {ref} to {value}", pick(DAYS)),
        Transition("cancel_event", "event_id", "cancelled", ("scheduled",), "cancel {ref}"),
        Assign(
            "set_reminder",
            "event_id",
            "minutes_before",
            "reminder_min",
            "set the reminder of {ref} to {value} minutes before",
            pick((5, 10, 15, 30, 60)),
        ),
    ),
    extras=("list_day",),
    limits={"extend": (30, 60)},
)


class FileSystem(RecordWorld):
    """A shared drive: files with a size, a folder and a lock status."""

    noun = "file"
    id_prefix = "FIL"

    @tool
    def find_file(self, name: str) -> dict:
        """Look up a file's id by its name.

        Args:
            name: File name, e.g. "Invoice Draft".
        """
        return self.lookup(name)

    @tool
    def get_file(self, file_id: str) -> dict:
        """Read a file's metadata: size in KB, folder and status.

        Args:
            file_id: File id such as "FIL-011".
        """
        return self.view(file_id)

    @tool
    def search_files(self, query: str) -> list:
        """List the files whose name contains some text.

        Args:
            query: Part of a file name.
        """
        return self.search(query)

    @tool(write=True)
    def move_file(self, file_id: str, folder: Literal["inbox", "projects", "archive", "shared", "personal"]) -> dict:
        """Move a file to another folder.

        Args:
            file_id: File id.
            folder: Destination folder.
        """
        return self.assign(file_id, "folder", folder)

    @tool(write=True)
    def lock_file(self, file_id: str) -> dict:
        """Lock an unlocked file against edits.

        Args:
            file_id: File id.
        """
        return self.transition(file_id, "locked", ("unlocked",))

    @tool(write=True)
    def unlock_file(self, file_id: str) -> dict:
        """Unlock a locked file.

        Args:
            file_id: File id.
        """
        return self.transition(file_id, "unlocked", ("locked",))

    @tool(write=True)
    def trash_file(self, file_id: str) -> dict:
        """Move an unlocked file to the trash (a locked file must be unlocked first).

        Args:
            file_id: File id.
        """
        return self.transition(file_id, "trashed", ("unlocked",))


FILESYSTEM = Domain(
    name="filesystem",
    world=FileSystem,
    description="You are a file-management assistant for a shared drive. Files are found by name.",
    words=(
        ("Invoice", "Contract", "Roadmap", "Payroll", "Logo", "Minutes", "Budget", "Survey"),
        ("Draft", "Final", "Notes", "Backup", "Summary", "Template"),
    ),
    make_record=lambda rng: {
        "size_kb": rng.randint(4, 9000),
        "folder": rng.choice(FOLDERS),
        "status": rng.choice(("unlocked", "unlocked", "locked", "trashed")),
    },
    fields=(("size_kb", "size in KB"), ("folder", "folder"), ("status", "status")),
    actions=(
        Assign("move_file", "file_id", "folder", "folder", "move {ref} to the {value} folder", pick(FOLDERS)),
        Transition("lock_file", "file_id", "locked", ("unlocked",), "lock {ref}"),
        Transition("unlock_file", "file_id", "unlocked", ("locked",), "unlock {ref}"),
        Transition("trash_file", "file_id", "trashed", ("unlocked",), "move {ref} to the trash"),
    ),
    extras=("search_files",),
)


class Messaging(RecordWorld):
    """A messaging app's contacts: unread messages, a nickname and a block status."""

    noun = "contact"
    id_prefix = "CON"

    @tool
    def find_contact(self, name: str) -> dict:
        """Look up a contact's id by full name.

        Args:
            name: Contact name, e.g. "Grace Lindqvist".
        """
        return self.lookup(name)

    @tool
    def get_contact(self, contact_id: str) -> dict:
        """Read a contact: unread message count, nickname and status.

        Args:
            contact_id: Contact id such as "CON-002".
        """
        return self.view(contact_id)

    @tool(write=True)
    def mark_read(self, contact_id: str, count: int) -> dict:
        """Mark some of a contact's unread messages as read.

        Args:
            contact_id: Contact id.
            count: Messages to mark read (positive, at most the unread count).
        """
        return self.adjust(contact_id, "unread", -positive(count, "count"), what="unread messages")

    @tool(write=True)
    def block_contact(self, contact_id: str) -> dict:
        """Block an active contact.

        Args:
            contact_id: Contact id.
        """
        return self.transition(contact_id, "blocked", ("active",))

    @tool(write=True)
    def unblock_contact(self, contact_id: str) -> dict:
        """Unblock a blocked contact.

        Args:
            contact_id: Contact id.
        """
        return self.transition(contact_id, "active", ("blocked",))

    @tool(write=True)
    def set_nickname(self, contact_id: str, nickname: Literal["Boss", "Buddy", "Coach", "Neighbour", "Twin"]) -> dict:
        """Give a contact a nickname.

        Args:
            contact_id: Contact id.
            nickname: The nickname.
        """
        return self.assign(contact_id, "nickname", nickname)


NICKNAMES = ("Boss", "Buddy", "Coach", "Neighbour", "Twin")

MESSAGING = Domain(
    name="messaging",
    world=Messaging,
    description="You are a messaging assistant managing the user's contacts. Contacts are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {
        "unread": rng.randint(0, 40),
        "nickname": rng.choice(NICKNAMES),
        "status": rng.choice(("active", "active", "blocked")),
    },
    fields=(("unread", "number of unread messages"), ("nickname", "nickname"), ("status", "status")),
    actions=(
        Adjust("mark_read", "contact_id", "count", "unread", -1, "mark {amount} messages from {ref} as read", (1, 15), "unread messages"),
        Transition("block_contact", "contact_id", "blocked", ("active",), "block {ref}"),
        Assign("set_nickname", "contact_id", "nickname", "nickname", "set the nickname of {ref} to {value}", pick(NICKNAMES)),
        Transition("unblock_contact", "contact_id", "active", ("blocked",), "unblock {ref}"),
    ),
)
