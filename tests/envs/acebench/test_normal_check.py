"""The normal checker: faithful reproduces each documented quirk, strict rejects the same answers."""

from __future__ import annotations

import pytest
from envsched_gym.envs.acebench.normal_check import check_normal, gold_function_name, values_equal

FUNCTIONS = [
    {
        "name": "book_table",
        "description": "Book a restaurant table.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "guests": {"type": "integer"},
                "outdoor": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "budget": {"type": "object", "properties": {"max": {"type": "integer"}}},
                "note": {"type": "string"},
            },
            "required": ["city"],
        },
    }
]
GOLD = {"book_table": {"city": "Paris", "guests": 4, "outdoor": True}}


def both(output: list[dict], answer: object = GOLD, functions: list[dict] = FUNCTIONS) -> tuple[bool, bool]:
    return check_normal(functions, output, answer, "faithful").valid, check_normal(functions, output, answer, "strict").valid


def test_gold_passes_both_modes() -> None:
    assert both([{"book_table": {"city": "Paris", "guests": 4, "outdoor": True}}]) == (True, True)


def test_numbers_are_type_checked_only() -> None:
    assert both([{"book_table": {"city": "Paris", "guests": 40, "outdoor": True}}]) == (True, False)


def test_wrong_number_type_fails_both() -> None:
    assert both([{"book_table": {"city": "Paris", "guests": "4", "outdoor": True}}]) == (False, False)


def test_booleans_are_type_checked_only() -> None:
    assert both([{"book_table": {"city": "Paris", "guests": 4, "outdoor": False}}]) == (True, False)


def test_strings_match_as_substrings() -> None:
    assert both([{"book_table": {"city": "Paris, France", "guests": 4, "outdoor": True}}]) == (True, False)


def test_strings_are_normalised() -> None:
    assert both([{"book_table": {"city": "P-A_R.I S", "guests": 4, "outdoor": True}}]) == (True, False)


def test_gold_parameters_may_be_omitted_unless_required() -> None:
    assert both([{"book_table": {"city": "Paris"}}]) == (True, False)


def test_dict_values_match_as_substrings_of_their_text() -> None:
    gold = {"book_table": {"city": "Paris", "budget": {"max": 5}}}
    assert both([{"book_table": {"city": "Paris", "budget": {"max": 150}}}], gold) == (True, False)


def test_value_unchecked_when_ground_truth_type_differs_from_schema() -> None:
    gold = {"book_table": {"city": "Paris", "note": 3}}
    assert both([{"book_table": {"city": "Paris", "note": 7}}], gold) == (True, False)


def test_ground_truth_equal_to_schema_properties_accepts_anything() -> None:
    properties = FUNCTIONS[0]["parameters"]["properties"]
    assert both([{"book_table": {"city": "Rome"}}], {"book_table": properties}) == (True, False)


def test_one_call_may_satisfy_two_gold_calls() -> None:
    gold = {"book_table": {"city": "Paris"}, "book_table_1": {"city": "Rome"}}
    output = [{"book_table": {"city": "Paris Rome"}}, {"book_table": {"city": "Oslo"}}]
    assert both(output, gold) == (True, False)


def test_duplicate_suffix_is_stripped_even_from_real_function_names() -> None:
    functions = [{**FUNCTIONS[0], "name": "book_table_2"}, {**FUNCTIONS[0], "name": "book_table_1"}]
    gold = {"book_table_2": {"city": "Paris"}}
    assert gold_function_name("book_table_2", functions) == "book_table_2"
    assert both([{"book_table_2": {"city": "Paris"}}], gold, functions) == (False, True)


def test_lists_compare_exactly_after_normalisation() -> None:
    gold = {"book_table": {"city": "Paris", "tags": ["Quiet Spot", "view"]}}
    assert both([{"book_table": {"city": "Paris", "tags": ["quiet-spot", "VIEW"]}}], gold) == (True, False)
    assert both([{"book_table": {"city": "Paris", "tags": ["view", "quiet spot"]}}], gold) == (False, False)


def test_parallel_calls_are_order_free_in_both_modes() -> None:
    gold = {"book_table": {"city": "Paris"}, "book_table_1": {"city": "Rome"}}
    assert both([{"book_table": {"city": "Rome"}}, {"book_table": {"city": "Paris"}}], gold) == (True, True)


def test_extra_parameter_and_wrong_function_fail_both() -> None:
    assert both([{"book_table": {"city": "Paris", "guests": 4, "outdoor": True, "zzz": 1}}]) == (False, False)
    assert both([{"other": {"city": "Paris"}}]) == (False, False)


def test_alternatives_any_matches() -> None:
    answer = [{"book_table": {"city": "Rome"}}, GOLD]
    assert both([{"book_table": {"city": "Paris", "guests": 4, "outdoor": True}}], answer) == (True, True)


def test_strict_reports_the_difference() -> None:
    result = check_normal(FUNCTIONS, [{"book_table": {"city": "Paris", "guests": 5, "outdoor": True}}], GOLD, "strict")
    assert result.errors == ["book_table: guests=5, expected 4"]


@pytest.mark.parametrize(("got", "want", "equal"), [(1, 1.0, True), (True, 1, False), ({"a": [1]}, {"a": [1.0]}, True), ("a", "A", False)])
def test_values_equal(got: object, want: object, equal: bool) -> None:
    assert values_equal(got, want) is equal


def test_whitespace_deletion_is_an_opt_in_faithful_quirk() -> None:
    """Inside an object, a list compares as str(...): deleted spaces then break the match."""
    gold = {"book_table": {"city": "Paris", "budget": {"max": ["quiet spot"]}}}
    output = [{"book_table": {"city": "Paris", "budget": {"max": ["quiet spot"]}}}]
    assert check_normal(FUNCTIONS, output, gold, "faithful").valid
    assert not check_normal(FUNCTIONS, output, gold, "faithful", strip_whitespace=True).valid
    assert check_normal(FUNCTIONS, output, gold, "strict", strip_whitespace=True).valid


def test_numbers_beyond_a_float_compare_without_raising() -> None:
    assert values_equal(10**400, 10**400) and not values_equal(10**400, 1.0) and not values_equal(1e308, 10**400)
    guests = [{"book_table": {"city": "Paris", "guests": 10**400, "outdoor": True}}]
    assert both(guests)[1] is False  # faithful mode, like ACEBench, does not compare integers
    floats = [{"name": "f", "description": "", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}, "required": ["x"]}}]
    assert both([{"f": {"x": 10**400}}], {"f": {"x": 1.5}}, floats) == (False, False)
