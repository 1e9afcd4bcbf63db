"""fact_match.py: an answer states a fact only as a whole token, and a number only by its value."""

from __future__ import annotations

import pytest

from envsched_gym.fact_match import states_fact


@pytest.mark.parametrize(("text", "fact"), [
    ("BKG-007: 21", "1"),  # the answer a trained policy learned: it "contains" 1, 2 and 21 nights
    ("BKG-007: 21", "2"), ("booking BKG-016", "16"), ("booking BKG-016", "0"), ("0.5 kg", "5"), ("-5 degrees", "5"),
    ("the 5th", "5"), ("v2", "2"), ("1,250 units", "250"), ("1,5", "5"), ("3-5 nights", "5"), ("12.75", "12"),
    ("the door is unlocked", "locked"), ("in_service", "service"), ("re-open it", "open"), ("BKG-0167", "BKG-016"),
])  # fmt: skip
def test_a_fact_inside_a_longer_token_or_number_is_not_stated(text, fact):
    assert fact in text  # the substring test would have scored it
    assert not states_fact(text, fact)


@pytest.mark.parametrize(("text", "fact"), [
    ("It has 12 nights.", "12"), ("12.0 nights", "12"), ('{"nights": 1}', "1"), ("-5 degrees", "-5"), ("1,250 units", "1250"),
    ("5%", "5"), ("$5 each", "5"), ("5, 6 and 7", "5"), ("Status: Cancelled", "cancelled"), ("locked.", "locked"),
    ("Dev Kowalski booked it", "dev kowalski"), ("booking BKG-016 is confirmed", "BKG-016"), ("switched_off now", "switched_off"),
])  # fmt: skip
def test_a_fact_standing_alone_is_stated_and_numbers_compare_by_value(text, fact):
    assert states_fact(text, fact)


def test_case_sensitivity_is_kept_when_asked():
    assert states_fact("Status: ACTIVE", "active") and not states_fact("Status: ACTIVE", "active", case_sensitive=True)
