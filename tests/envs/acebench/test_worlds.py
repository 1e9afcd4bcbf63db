"""The scenario worlds behave as ACEBench's classes, loaded from the extracted initial states."""

from __future__ import annotations

import pytest
from envsched_gym.envs.acebench import dataset as D
from envsched_gym.envs.acebench.world import ScenarioWorld

from envsched_gym import ToolError

pytestmark = pytest.mark.usefixtures("benchmarks")
"""Every test here reads the ACEBench data: missing data fails them (tests/conftest.py)."""

PHONE = ["BaseApi", "MessageApi", "ReminderApi", "FoodPlatform"]


def world(classes: list[str], wifi: bool = False, logged_in: bool = True, language: str = "en") -> ScenarioWorld:
    return ScenarioWorld(classes, D.initial_states(language), {"BaseApi": {"wifi": wifi, "logged_in": logged_in}}, language)


def test_base_config_applies_to_every_instance_and_calls_reach_all() -> None:
    w = world(PHONE)
    assert [i.wifi for i in w.instances.values()] == [False] * 4
    w.call("turn_on_wifi", {})
    assert [i.wifi for i in w.instances.values()] == [True] * 4


def test_message_needs_wifi_and_capacity() -> None:
    w = world(["BaseApi", "MessageApi"])
    assert w.call("send_message", {"sender_name": "Grace", "receiver_name": "Frank", "message": "hi"})["status"] is False
    w.call("turn_on_wifi", {})
    full = w.call("send_message", {"sender_name": "Grace", "receiver_name": "Frank", "message": "hi"})
    assert full == {"status": False, "message": "Inbox capacity is full. You need to ask the user which message to delete."}
    assert w.call("get_earliest_message_id", {})["message_id"] == 3
    assert w.call("delete_message", {"message_id": 3})["status"] is True
    assert w.call("send_message", {"sender_name": "Grace", "receiver_name": "Frank", "message": "hi"})["status"] is True
    inbox = w.saved_state()[1]["MessageApi"]["inbox"]
    assert list(inbox) == ["1", "2", "4", "5", "6", "7"]
    assert inbox["7"] == {"sender_id": "USR102", "receiver_id": "USR101", "message": "hi"}
    with pytest.raises(ToolError, match="has no time"):
        w.call("get_latest_message_id", {})


def test_food_order_needs_platform_login_and_balance() -> None:
    w = world(["BaseApi", "FoodPlatform"], wifi=True)
    order = {"username": "Eve", "merchant_name": "Domino's", "items": [{"product": "Super Supreme Pizza", "quantity": 2}]}
    assert w.call("add_food_delivery_order", order)["status"] is False
    assert w.call("login_food_platform", {"username": "Eve", "password": "password123"})["status"] is True
    assert w.call("add_food_delivery_order", order)["message"].endswith("Total amount: 176.0 yuan")
    food = w.saved_state()[1]["FoodPlatform"]
    assert food["users"]["Eve"]["balance"] == 324.0 and food["logged_in_users"] == ["Eve"]


def test_reminder_ids_continue_from_the_counter() -> None:
    w = world(["BaseApi", "ReminderApi"])
    w.call("add_reminder", {"title": "t", "description": "d", "time": "2024-07-15 09:30"})
    assert w.saved_state()[1]["ReminderApi"]["reminder_list"]["4"]["reminder_id"] == 4


def test_travel_fees_refunds_and_zh_cabins() -> None:
    w = world(["Travel"])
    booked = w.call(
        "reserve_flight",
        {
            "user_id": "user1",
            "password": "password123",
            "flight_no": "CA1234",
            "cabin": "Economy Class",
            "payment_method": "bank",
            "baggage_count": 3,
        },
    )
    assert booked == "Booking successful. Reservation ID: res_5. Total cost: 1300 yuan (including baggage fees)."
    assert w.call("cancel_reservation", {"user_id": "user1", "reservation_id": "res_5", "reason": "changed plans"}).startswith(
        "More than 24 hours"
    )
    assert w.instances["Travel"].users["user1"]["cash_balance"] == 3200.0
    zh = world(["Travel"], language="zh")
    zh.call(
        "reserve_flight",
        {
            "user_id": "user3",
            "password": "password789",
            "flight_no": "MU3561",
            "cabin": "经济舱",
            "payment_method": "bank",
            "baggage_count": 4,
        },
    )
    assert zh.instances["Travel"].users["user3"]["bank_balance"] == 5000.0 - 1500 - 50


def test_unknown_tool_and_class() -> None:
    with pytest.raises(ToolError, match="not available"):
        world(["BaseApi"]).call("send_message", {"sender_name": "a", "receiver_name": "b", "message": "c"})
    with pytest.raises(ValueError, match="unknown ACEBench scenario classes"):
        world(["Finance"])


def test_zh_messages_and_exact_balance_rule() -> None:
    zh = world(["BaseApi", "FoodPlatform"], language="zh")
    assert zh.call("turn_on_wifi", {}) == {"status": True, "message": "wifi已经打开"}
    zh.call("login_food_platform", {"username": "Jack", "password": "password654"})
    menu = zh.instances["FoodPlatform"].merchant_list
    merchant, product = next((m, p) for m, info in menu.items() for p in info["menu"] if p["price"] == 68.0)
    zh.instances["FoodPlatform"].users["Jack"]["balance"] = 68.0
    order = {"username": "Jack", "merchant_name": merchant, "items": [{"product": product["product"], "quantity": 1}]}
    assert zh.call("add_food_delivery_order", order) == {"status": False, "message": "余额不足，无法下单"}
    en = world(["BaseApi", "FoodPlatform"], wifi=True)
    en.call("login_food_platform", {"username": "Jack", "password": "password654"})
    en.instances["FoodPlatform"].users["Jack"]["balance"] = 68.0
    en_order = {"username": "Jack", "merchant_name": "Domino's", "items": [{"product": "Margherita Pizza", "quantity": 1}]}
    assert en.call("add_food_delivery_order", en_order)["status"] is True
