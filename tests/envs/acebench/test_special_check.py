"""The special checker: faithful substring tests versus strict phrase parsing."""

from __future__ import annotations

from envsched_gym.envs.acebench.special_check import IRRELEVANT, check_special, gold_reply

INCOMPLETE = {"book_table": ["city", "guests"]}
ERROR = {"date": ["31-02-2024"]}


def both(category: str, reply: str, answer: object, n_calls: int = 0) -> tuple[bool, bool]:
    return (
        check_special(category, reply, n_calls, answer, "faithful").valid,
        check_special(category, reply, n_calls, answer, "strict").valid,
    )


def test_gold_replies_pass_both_modes() -> None:
    assert both("special_incomplete", gold_reply("special_incomplete", INCOMPLETE), INCOMPLETE) == (True, True)
    assert both("special_error_param", gold_reply("special_error_param", ERROR), ERROR) == (True, True)
    assert both("special_irrelevant", gold_reply("special_irrelevant", IRRELEVANT), IRRELEVANT) == (True, True)


def test_listing_extra_missing_parameters_passes_faithful_only() -> None:
    reply = '["Missing necessary parameters (city, guests, time) for the api (book_table)"]'
    assert both("special_incomplete", reply, INCOMPLETE) == (True, False)


def test_names_anywhere_in_the_reply_pass_faithful_only() -> None:
    reply = "Missing necessary parameters (time) for the api (other). Also city and guests for book_table."
    assert both("special_incomplete", reply, INCOMPLETE) == (True, False)


def test_tool_calls_are_ignored_by_faithful_only() -> None:
    reply = gold_reply("special_error_param", ERROR)
    assert both("special_error_param", reply, ERROR, n_calls=1) == (True, False)


def test_irrelevant_phrase_fragment_passes_faithful_only() -> None:
    reply = "Sorry, because of the limitations of the function I will guess instead."
    assert both("special_irrelevant", reply, IRRELEVANT) == (True, False)


def test_missing_phrase_fails_both() -> None:
    assert both("special_incomplete", "Please tell me the city and guests for book_table.", INCOMPLETE) == (False, False)
    assert both("special_error_param", "The date 31-02-2024 is wrong.", ERROR) == (False, False)


def test_wrong_value_fails_both() -> None:
    reply = '["There is incorrect value (2024-02-31) for the parameters (date) in the conversation history."]'
    assert both("special_error_param", reply, ERROR) == (False, False)


def test_strict_reports_what_the_reply_says() -> None:
    reply = '["Missing necessary parameters (city) for the api (book_table)"]'
    result = check_special("special_incomplete", reply, 0, INCOMPLETE, "strict")
    assert result.errors == ["expected {'book_table': ['city', 'guests']}, the reply says {'book_table': ['city']}"]
