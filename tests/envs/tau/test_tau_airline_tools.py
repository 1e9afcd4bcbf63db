"""Airline tool behaviour, case by case, from policy.md (fares, payment, baggage) and the τ2 database."""

from __future__ import annotations

import pytest
from envsched_gym.envs.tau.airline import AirlineWorld

from envsched_gym import ToolError

USER = "mei_hernandez_8984"  # gold member: gift_card_5309492 (98.0), certificate_7502997 (250.0), two credit cards
CARD, GIFT, CERT = "credit_card_2140654", "gift_card_5309492", "certificate_7502997"
RESERVATION = "R9QDGB"  # economy, 3 passengers, 4 legs (143+194+126+144), paid 1911 by credit_card_6082923
PASSENGER = {"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-11"}
FLIGHT = {"flight_number": "HAT014", "date": "2024-05-20"}  # JFK->MIA, economy 143 with 9 seats, business 441


def _booking(**change: object) -> dict:
    args = {
        "user_id": USER, "origin": "JFK", "destination": "MIA", "flight_type": "one_way", "cabin": "economy",
        "flights": [FLIGHT], "passengers": [PASSENGER], "payment_methods": [{"payment_id": CARD, "amount": 143}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
    }  # fmt: skip
    return {**args, **change}


def test_book_reservation_charges_fare_and_takes_seats(airline: AirlineWorld) -> None:
    reservation = airline.call("book_reservation", _booking())
    assert reservation["reservation_id"] == "HATHAT" and reservation["created_at"] == "2024-05-15T15:00:00"
    assert reservation["flights"] == [
        {"origin": "JFK", "destination": "MIA", "flight_number": "HAT014", "date": "2024-05-20", "price": 143}
    ]
    assert airline.db.peek("flights", "HAT014")["dates"]["2024-05-20"]["available_seats"]["economy"] == 8
    assert airline.db.peek("users", USER)["reservations"][-1] == "HATHAT"
    assert airline.call("book_reservation", _booking())["reservation_id"] == "HATHAU"


def test_book_reservation_adds_insurance_and_nonfree_bags(airline: AirlineWorld) -> None:
    total = 2 * 143 + 2 * 30 + 50 * 1
    args = _booking(passengers=[PASSENGER, {**PASSENGER, "first_name": "Ann"}], insurance="yes", total_baggages=3, nonfree_baggages=1)
    with pytest.raises(ToolError, match=f"Payment amount does not add up, total price is {total}, but paid 143"):
        airline.call("book_reservation", args)
    reservation = airline.call("book_reservation", {**args, "payment_methods": [{"payment_id": CARD, "amount": total}]})
    assert reservation["insurance"] == "yes" and reservation["nonfree_baggages"] == 1


def test_book_with_certificate_and_gift_card_uses_them_up(airline: AirlineWorld) -> None:
    args = _booking(
        cabin="business",
        payment_methods=[{"payment_id": CERT, "amount": 250}, {"payment_id": GIFT, "amount": 98}, {"payment_id": CARD, "amount": 93}],
    )
    airline.call("book_reservation", args)
    methods = airline.db.peek("users", USER)["payment_methods"]
    assert CERT not in methods and methods[GIFT]["amount"] == 0.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"payment_methods": [{"payment_id": GIFT, "amount": 143}]}, f"Not enough balance in payment method {GIFT}"),
        ({"payment_methods": [{"payment_id": "credit_card_1", "amount": 143}]}, "Payment method credit_card_1 not found"),
        ({"flights": [{"flight_number": "HAT001", "date": "2024-05-01"}]}, "Flight HAT001 not available on date 2024-05-01"),
        ({"flights": [{"flight_number": "HAT014", "date": "2024-07-01"}]}, "Flight HAT014 not found on date 2024-07-01"),
        ({"flights": [{"flight_number": "HAT999", "date": "2024-05-20"}]}, "Flight HAT999 not found"),
        ({"user_id": "nobody_1"}, "User nobody_1 not found"),
        ({"cabin": "basic_economy", "passengers": [PASSENGER] * 4}, "Not enough seats on flight HAT014"),
    ],
)
def test_book_reservation_refusals(airline: AirlineWorld, change: dict, message: str) -> None:
    before = airline.sha256()
    with pytest.raises(ToolError, match=message):
        airline.call("book_reservation", _booking(**change))
    assert airline.sha256() == before


def test_cancel_reservation_refunds_every_payment(airline: AirlineWorld) -> None:
    reservation = airline.call("cancel_reservation", {"reservation_id": RESERVATION})
    assert reservation["status"] == "cancelled"
    assert reservation["payment_history"] == [
        {"payment_id": "credit_card_6082923", "amount": 1911},
        {"payment_id": "credit_card_6082923", "amount": -1911},
    ]


def test_ids_match_ignoring_case(airline: AirlineWorld) -> None:
    assert airline.call("get_reservation_details", {"reservation_id": RESERVATION.lower()})["reservation_id"] == RESERVATION
    assert airline.call("get_user_details", {"user_id": USER.upper()})["user_id"] == USER
    with pytest.raises(ToolError, match="Reservation ZZZZZZ not found"):
        airline.call("get_reservation_details", {"reservation_id": "ZZZZZZ"})


def test_update_baggages_charges_50_per_added_nonfree_bag(airline: AirlineWorld) -> None:
    reservation = airline.call(
        "update_reservation_baggages", {"reservation_id": RESERVATION, "total_baggages": 3, "nonfree_baggages": 2, "payment_id": CARD}
    )
    assert reservation["payment_history"][-1] == {"payment_id": CARD, "amount": 100}
    assert (reservation["total_baggages"], reservation["nonfree_baggages"]) == (3, 2)
    fewer = airline.call(
        "update_reservation_baggages", {"reservation_id": RESERVATION, "total_baggages": 1, "nonfree_baggages": 1, "payment_id": GIFT}
    )
    assert len(fewer["payment_history"]) == 2  # removing bags refunds nothing and records no payment
    assert airline.db.peek("users", USER)["payment_methods"][GIFT]["amount"] == 98.0


def test_update_baggages_payment_rules(airline: AirlineWorld) -> None:
    args = {"reservation_id": RESERVATION, "total_baggages": 1, "nonfree_baggages": 1}
    with pytest.raises(ToolError, match="Certificate cannot be used to update reservation"):
        airline.call("update_reservation_baggages", {**args, "payment_id": CERT})
    with pytest.raises(ToolError, match="Gift card balance is not enough"):
        airline.call("update_reservation_baggages", {**args, "nonfree_baggages": 2, "payment_id": GIFT})
    with pytest.raises(ToolError, match="Payment method not found"):
        airline.call("update_reservation_baggages", {**args, "payment_id": "paypal_1"})


def test_update_flights_cabin_upgrade_pays_the_fare_difference(airline: AirlineWorld) -> None:
    legs = [{"flight_number": f["flight_number"], "date": f["date"]} for f in airline.db.peek("reservations", RESERVATION)["flights"]]
    new_prices = [airline.db.peek("flights", f["flight_number"])["dates"][f["date"]]["prices"]["business"] for f in legs]
    reservation = airline.call(
        "update_reservation_flights", {"reservation_id": RESERVATION, "cabin": "business", "flights": legs, "payment_id": CARD}
    )
    assert reservation["cabin"] == "business" and [f["price"] for f in reservation["flights"]] == new_prices
    old_fares = 143 + 194 + 126 + 144
    assert reservation["payment_history"][-1] == {"payment_id": CARD, "amount": 3 * (sum(new_prices) - old_fares)}


def test_update_flights_keeping_flights_and_cabin_charges_nothing(airline: AirlineWorld) -> None:
    legs = [{"flight_number": f["flight_number"], "date": f["date"]} for f in airline.db.peek("reservations", RESERVATION)["flights"]]
    reservation = airline.call(
        "update_reservation_flights", {"reservation_id": RESERVATION, "cabin": "economy", "flights": legs, "payment_id": CARD}
    )
    assert len(reservation["payment_history"]) == 1


def test_update_passengers_requires_the_same_count(airline: AirlineWorld) -> None:
    with pytest.raises(ToolError, match="Number of passengers does not match"):
        airline.call("update_reservation_passengers", {"reservation_id": RESERVATION, "passengers": [PASSENGER]})
    people = [PASSENGER, {**PASSENGER, "first_name": "Liam"}, {**PASSENGER, "first_name": "Ann"}]
    assert airline.call("update_reservation_passengers", {"reservation_id": RESERVATION, "passengers": people})["passengers"] == people


def test_send_certificate_adds_up_to_three(airline: AirlineWorld) -> None:
    message = airline.call("send_certificate", {"user_id": USER, "amount": 100})
    assert message == f"Certificate certificate_3221322 added to user {USER} with amount 100."
    assert airline.db.peek("users", USER)["payment_methods"]["certificate_3221322"] == {
        "id": "certificate_3221322",
        "amount": 100,
        "source": "certificate",
    }
    airline.call("send_certificate", {"user_id": USER, "amount": 50})
    airline.call("send_certificate", {"user_id": USER, "amount": 50})
    with pytest.raises(ToolError, match="Too many certificates"):
        airline.call("send_certificate", {"user_id": USER, "amount": 50})


def test_searches_list_only_available_flights(airline: AirlineWorld) -> None:
    direct = airline.call("search_direct_flight", {"origin": "JFK", "destination": "MIA", "date": "2024-05-20"})
    assert all(f["status"] == "available" and (f["origin"], f["destination"]) == ("JFK", "MIA") for f in direct)
    assert {f["flight_number"]: f["prices"]["economy"] for f in direct}["HAT014"] == 143
    pairs = airline.call("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"})
    assert pairs
    for first, second in pairs:
        assert (first["origin"], second["destination"]) == ("JFK", "SEA") and first["destination"] == second["origin"]
        assert second["scheduled_departure_time_est"] >= first["scheduled_arrival_time_est"] or second["date"] != first["date"]


def test_flight_status_and_airports(airline: AirlineWorld) -> None:
    assert airline.call("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-01"}) == "landed"
    assert airline.call("get_flight_status", {"flight_number": "HAT014", "date": "2024-05-20"}) == "available"
    airports = airline.call("list_all_airports", {})
    assert len(airports) == 20 and {"iata": "JFK", "city": "New York"} in airports
