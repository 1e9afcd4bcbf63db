"""The special checker: faithful substring tests versus strict phrase parsing."""

from __future__ import annotations

import random
import re
import time

import pytest
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


_FORMER = {  # the former regexes, quadratic on many heads without a middle: the reference semantics
    "missing": re.compile(r"Missing necessary parameters\s*\((.*?)\)\s*for the api\s*\((.*?)\)", re.DOTALL),
    "incorrect": re.compile(r"There is incorrect value\s*\((.*?)\)\s*for the parameters\s*\((.*?)\)", re.DOTALL),
}


@pytest.mark.parametrize("which", ["missing", "incorrect"])
def test_the_linear_scan_finds_what_the_former_regex_found(which: str) -> None:
    from envsched_gym.envs.acebench.special_check import _INCORRECT, _MISSING, _pairs

    pattern = {"missing": _MISSING, "incorrect": _INCORRECT}[which]
    head = "Missing necessary parameters" if which == "missing" else "There is incorrect value"
    middle = "for the api" if which == "missing" else "for the parameters"
    pieces = [head, middle, "(", ")", " ", "\n", "a", ",", "x)", "(y"]
    rng = random.Random(0)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert _pairs(text, pattern) == _FORMER[which].findall(text), text


def test_many_heads_without_a_middle_are_scanned_in_linear_time() -> None:
    from envsched_gym.envs.acebench.special_check import _MISSING, _pairs

    start = time.perf_counter()
    assert _pairs("Missing necessary parameters(" * 50_000, _MISSING) == []  # the regex took 12 s for 5,000
    assert time.perf_counter() - start < 1.0
