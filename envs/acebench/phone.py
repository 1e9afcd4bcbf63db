"""ACEBench's phone-platform scenario classes: device (wifi, login), messages, reminders, food.

Behaviour and return values follow ACEBench's ``scenariosen`` and ``scenarioszh``
``phone_platform`` classes (messages in :mod:`envsched_gym.envs.acebench.messages`; the food
platform is in :mod:`envsched_gym.envs.acebench.food`). The
classes carry no data: their state (users, inbox, merchants, ...) is loaded from the extracted
initial states of the task's language (see :mod:`envsched_gym.envs.acebench.dataset`), so the
same code serves English and Chinese tasks. The one behavioural difference between the two
sets, the Chinese food platform refusing an order that costs exactly the balance, is kept. Message and reminder ids are ``int`` keys, as in
the original; :meth:`Scenario.saved_state` writes them as strings, as the ground truth does.

Failures are returned as ``{"status": False, "message": ...}`` dicts exactly where the
original returns them; where the original would raise (for example a message sent during
the episode has no ``time``), a :class:`~envsched_gym.ToolError` is raised instead.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any, ClassVar

from envsched_gym.envs.acebench.messages import say

from envsched_gym import ToolError, World, tool

Result = dict[str, Any]


class Scenario(World):
    """Base of the ACEBench scenario classes.

    Attributes:
        saved_attributes: Attributes the ACEBench harness saves as the end state
            (``SAVED_CLASS`` in its inference code); the end-state check compares these.
    """

    saved_attributes: ClassVar[tuple[str, ...]] = ()
    int_key_attributes: ClassVar[tuple[str, ...]] = ()
    _language: str = "en"

    def set_language(self, language: str) -> None:
        """Word return messages as the ``en`` or ``zh`` scenario set does."""
        self._language = language

    def _say(self, key: str, **fields: Any) -> str:
        return say(self._language, key, **fields)

    def _fail(self, key: str, **fields: Any) -> Result:
        return {"status": False, "message": self._say(key, **fields)}

    def load_initial(self, state: dict[str, Any]) -> None:
        """Set the attributes ``__init__`` sets in ACEBench (from the extracted initial state)."""
        for key, value in copy.deepcopy(state).items():
            if key in self.int_key_attributes:
                value = {int(k): v for k, v in value.items()}
            setattr(self, key, value)

    def load_scenario(self, config: dict[str, Any]) -> None:
        """ACEBench's ``_load_scenario``: only wifi and login (FoodPlatform also resets logins)."""

    def saved_state(self) -> dict[str, Any]:
        """The saved attributes as JSON data (int dict keys become strings)."""
        out: dict[str, Any] = {}
        for key in self.saved_attributes:
            if hasattr(self, key):
                value = getattr(self, key)
                if key in self.int_key_attributes:
                    value = {str(k): v for k, v in value.items()}
                out[key] = copy.deepcopy(value)
        return out


class BaseApi(Scenario):
    """The phone: Wi-Fi and device login, shared by every phone-platform app."""

    saved_attributes = ("wifi", "logged_in")

    def __init__(self) -> None:
        self.wifi = False
        self.logged_in = True

    def load_scenario(self, config: dict[str, Any]) -> None:
        self.wifi = config.get("wifi", False)
        self.logged_in = config.get("logged_in", True)

    @tool(write=True)
    def turn_on_wifi(self) -> Result:
        """Turn on WiFi connection."""
        self.wifi = True
        return {"status": True, "message": self._say("wifi_on")}

    @tool(write=True)
    def login_device(self) -> Result:
        """Log in to the device."""
        self.logged_in = True
        return {"status": True, "message": self._say("device_logged_in")}


class MessageApi(BaseApi):
    """Text messages between the six users of the scenario."""

    saved_attributes = ("inbox",)
    int_key_attributes = ("inbox",)

    def __init__(self) -> None:
        super().__init__()
        self.max_capacity = 6
        self.user_list: dict[str, dict[str, Any]] = {}
        self.inbox: dict[int, dict[str, Any]] = {}
        self.message_id_counter = 0

    @tool(write=True)
    def send_message(self, sender_name: str, receiver_name: str, message: str) -> Result:
        """Send a message from one user to another.

        Args:
            sender_name: The name of the user sending the message.
            receiver_name: The name of the user receiving the message.
            message: The content of the message to be sent.
        """
        if not self.logged_in:
            return self._fail("send_not_logged_in")
        if not self.wifi:
            return self._fail("send_no_wifi")
        if len(self.inbox) >= self.max_capacity:
            return self._fail("inbox_full")
        if sender_name not in self.user_list or receiver_name not in self.user_list:
            return self._fail("no_such_users")
        self.message_id_counter += 1
        self.inbox[self.message_id_counter] = {
            "sender_id": self.user_list[sender_name]["user_id"],
            "receiver_id": self.user_list[receiver_name]["user_id"],
            "message": message,
        }
        return {"status": True, "message": self._say("sent", receiver=receiver_name)}

    @tool(write=True)
    def delete_message(self, message_id: int) -> Result:
        """Delete a message based on its message ID.

        Args:
            message_id: The ID of the message to be deleted.
        """
        if not self.logged_in:
            return self._fail("delete_not_logged_in")
        if message_id not in self.inbox:
            return self._fail("no_such_message")
        del self.inbox[message_id]
        return {"status": True, "message": self._say("deleted", id=message_id)}

    @tool
    def view_messages_between_users(self, sender_name: str, receiver_name: str) -> Result:
        """Get all the messages sent from one user to another.

        Args:
            sender_name: The name of the user sending the messages.
            receiver_name: The name of the user receiving the messages.
        """
        if not self.logged_in:
            return self._fail("view_not_logged_in")
        if sender_name not in self.user_list:
            return self._fail("no_sender")
        if receiver_name not in self.user_list:
            return self._fail("no_receiver")
        sender_id, receiver_id = self.user_list[sender_name]["user_id"], self.user_list[receiver_name]["user_id"]
        found = [
            {"id": i, "sender": sender_name, "receiver": receiver_name, "message": m["message"]}
            for i, m in self.inbox.items()
            if m["sender_id"] == sender_id and m["receiver_id"] == receiver_id
        ]
        return {"status": True, "messages": found} if found else self._fail("no_messages_between")

    @tool
    def search_messages(self, user_name: str, keyword: str) -> Result:
        """Search for messages from a specific user that contain a particular keyword.

        Args:
            user_name: The name of the user whose messages are being searched.
            keyword: The keyword to search for within the messages.
        """
        if user_name not in self.user_list:
            return self._fail("no_user")
        user_id = self.user_list[user_name]["user_id"]
        found = [
            {"id": i, "sender_id": m["sender_id"], "receiver_id": m["receiver_id"], "message": m["message"]}
            for i, m in self.inbox.items()
            if user_id in (m["sender_id"], m["receiver_id"]) and keyword.lower() in m["message"].lower()
        ]
        return {"status": True, "messages": found} if found else self._fail("no_keyword_messages")

    @tool
    def get_all_message_times_with_ids(self) -> dict[Any, Any]:
        """Get the times of all messages along with their message IDs."""
        if not self.logged_in:
            return self._fail("times_not_logged_in")
        return {i: self._time_of(i) for i in self.inbox}

    @tool
    def get_latest_message_id(self) -> Result:
        """Get the ID of the most recently sent message."""
        return self._extreme_message("latest", max)

    @tool
    def get_earliest_message_id(self) -> Result:
        """Get the ID of the earliest sent message."""
        return self._extreme_message("earliest", min)

    def _extreme_message(self, which: str, pick: Any) -> Result:
        if not self.logged_in:
            return self._fail(f"{which}_not_logged_in")
        if not self.inbox:
            return self._fail("no_messages")
        times = {i: datetime.strptime(self._time_of(i), "%Y-%m-%d") for i in self.inbox}
        best = pick(times, key=times.__getitem__)  # ties keep the first id, as the original's strict comparison
        return {"status": True, "message": self._say(f"{which}_id", id=best), "message_id": best}

    def _time_of(self, message_id: int) -> str:
        time = self.inbox[message_id].get("time")
        if time is None:
            raise ToolError(f"message {message_id} has no time (messages sent during the episode carry none)")
        return str(time)


class ReminderApi(BaseApi):
    """Reminders with a fixed capacity (ACEBench's ``ReminderApi``)."""

    saved_attributes = ("reminder_list",)
    int_key_attributes = ("reminder_list",)

    def __init__(self) -> None:
        super().__init__()
        self.max_capacity = 6
        self.reminder_list: dict[int, dict[str, Any]] = {}
        self.reminder_id_counter = 0

    @tool
    def view_reminder_by_title(self, title: str) -> Result:
        """View a specific reminder by its title.

        Args:
            title: The title of the reminder.
        """
        if not self.logged_in:
            return self._fail("reminder_view_not_logged_in")
        for reminder in self.reminder_list.values():
            if reminder["title"] == title:
                return {"status": True, "reminder": reminder}
        return self._fail("no_reminder_title", title=title)

    @tool(write=True)
    def add_reminder(self, title: str, description: str, time: str) -> Result:
        """Add a new reminder.

        Args:
            title: The title of the reminder.
            description: The description of the reminder.
            time: The time of the reminder, in the format YYYY-MM-DD HH:MM.
        """
        if not self.logged_in:
            return self._fail("reminder_add_not_logged_in")
        if len(self.reminder_list) >= self.max_capacity:
            return self._fail("reminders_full")
        self.reminder_id_counter += 1
        rid = self.reminder_id_counter
        self.reminder_list[rid] = {"reminder_id": rid, "title": title, "description": description, "time": time, "notified": False}
        return {"status": True, "message": self._say("reminder_added", title=title)}

    @tool(write=True)
    def delete_reminder(self, reminder_id: int) -> Result:
        """Delete the specified reminder.

        Args:
            reminder_id: The ID of the reminder to delete.
        """
        if not self.logged_in:
            return self._fail("reminder_delete_not_logged_in")
        if reminder_id not in self.reminder_list:
            return self._fail("no_such_reminder")
        del self.reminder_list[reminder_id]
        return {"status": True, "message": self._say("reminder_deleted", id=reminder_id)}

    @tool
    def view_all_reminders(self) -> Result:
        """View all reminders."""
        if not self.reminder_list:
            return self._fail("no_reminders")
        keys = ("title", "description", "time", "notified")
        return {"status": True, "reminders": [{k: r[k] for k in keys} for r in self.reminder_list.values()]}

    @tool
    def search_reminders(self, keyword: str) -> Result:
        """Search reminders whose title or description contains a keyword (no login needed, as in the zh original).

        Args:
            keyword: The keyword to search for.
        """
        key = keyword.lower()
        found = [
            {"title": r["title"], "description": r["description"], "time": r["time"]}
            for r in self.reminder_list.values()
            if key in r["title"].lower() or key in r["description"].lower()
        ]
        return {"status": True, "reminders": found} if found else self._fail("no_keyword_reminders")

    @tool(write=True)
    def mark_as_notified(self, reminder_id: int) -> Result:
        """Mark a reminder as notified.

        Args:
            reminder_id: The ID of the reminder.
        """
        if reminder_id not in self.reminder_list:
            return self._fail("no_such_reminder")
        self.reminder_list[reminder_id]["notified"] = True
        return {"status": True, "message": self._say("reminder_notified", id=reminder_id)}
