"""Agent end-state and process checks: each faithful quirk, and strict's rejection of it."""

from __future__ import annotations

from envsched_gym.envs.acebench.agent_check import call_string, check_end_state, parse_call_string, process_accuracy

from envsched_gym import ToolCall

INBOX = {"1": {"message": "hi"}, "2": {"message": "yo"}}
GOLD = [{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": INBOX}}]


def both(saved: list, gold: list = GOLD) -> tuple[bool, bool]:
    return check_end_state(saved, gold, "faithful").valid, check_end_state(saved, gold, "strict").valid


def test_ground_truth_state_passes_both() -> None:
    assert both([{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": dict(INBOX)}}]) == (True, True)


def test_extra_dict_entries_are_ignored_by_faithful_only() -> None:
    inbox = {**INBOX, "3": {"message": "extra"}}
    assert both([{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": inbox}}]) == (True, False)


def test_misspelled_ground_truth_class_is_skipped_by_faithful_only() -> None:
    gold = [{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageAPI": {"inbox": INBOX}}]
    saved = [{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": {}}}]
    assert both(saved, gold) == (True, False)


def test_no_saved_state_fails_faithful_only() -> None:
    """An agent that made no successful call saves nothing: faithful fails even if the state is right."""
    gold = [{"BaseApi": {"wifi": False, "logged_in": True}}]
    assert check_end_state([], gold, "faithful").valid is False
    assert check_end_state([{"BaseApi": {"wifi": False, "logged_in": True}}], gold, "strict").valid is True


def test_wrong_value_fails_both() -> None:
    assert both([{"BaseApi": {"wifi": False, "logged_in": True}}, {"MessageApi": {"inbox": dict(INBOX)}}]) == (False, False)


def test_strict_reports_the_difference() -> None:
    inbox = {"1": {"message": "hi"}, "3": {"message": "x"}}
    result = check_end_state([{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": inbox}}], GOLD, "strict")
    assert result.errors == ["MessageApi.inbox: missing keys ['2'], unexpected keys ['3'], different values at []"]


def test_milestone_strings_round_trip_with_unescaped_apostrophes() -> None:
    stone = "[add_food_delivery_order(username='Eve', merchant_name='Domino's', items=[{'product': 'Pizza', 'quantity': 1}])]"
    calls = parse_call_string(stone)
    assert calls == [
        ToolCall(
            "add_food_delivery_order", {"username": "Eve", "merchant_name": "Domino's", "items": [{"product": "Pizza", "quantity": 1}]}
        )
    ]
    assert call_string(calls) == stone


def test_process_counts_milestones_in_order() -> None:
    stones = ["[turn_on_wifi()]", "[get_latest_message_id()]"]
    messages = [[ToolCall("turn_on_wifi", {})], [ToolCall("login_device", {})], [ToolCall("get_latest_message_id", {})]]
    assert process_accuracy(messages, stones, "faithful") == 1.0
    assert process_accuracy(messages, stones, "strict") == 1.0
    assert process_accuracy(messages[::-1], stones, "strict") == 0.5


def test_a_missed_milestone_ends_the_faithful_search_only() -> None:
    stones = ["[turn_on_wifi()]", "[delete_message(message_id=3)]", "[get_latest_message_id()]"]
    messages = [[ToolCall("turn_on_wifi", {})], [ToolCall("get_latest_message_id", {})]]
    assert process_accuracy(messages, stones, "faithful") == round(1 / 3, 3)
    assert process_accuracy(messages, stones, "strict") == round(2 / 3, 3)


def test_milestones_compare_as_text_in_faithful_only() -> None:
    """Faithful compares call strings, so argument order matters; strict compares parsed calls."""
    stones = ["[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]"]
    reordered = [[ToolCall("send_message", {"receiver_name": "Frank", "sender_name": "Eve", "message": "hi"})]]
    assert process_accuracy(reordered, stones, "faithful") == 0.0
    assert process_accuracy(reordered, stones, "strict") == 1.0


def test_best_of_milestone_alternatives() -> None:
    alternatives = [["[turn_on_wifi()]", "[login_device()]"], ["[login_device()]"]]
    assert process_accuracy([[ToolCall("login_device", {})]], alternatives, "strict") == 1.0
