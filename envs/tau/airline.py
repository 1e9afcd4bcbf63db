"""The τ-bench airline world: flights, users and reservations, with τ2's 14 tools (6 of them write).

Tool names, arguments, return values and error messages follow τ2-bench's airline toolkit;
the fare, payment and baggage rules come from ``domains/airline/policy.md``. The clock is
fixed at 2024-05-15 15:00 EST. Ids are matched ignoring case and accents, as τ2's are.
"""

from __future__ import annotations

import copy
from typing import Literal, TypedDict

from envsched_gym.envs.tau.db import Record
from envsched_gym.envs.tau.world import TauWorld, fold

from envsched_gym import ToolError, tool

NOW = "2024-05-15T15:00:00"
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
AIRPORTS = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"), ("DFW", "Dallas"),
    ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"), ("BOS", "Boston"),
    ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"), ("EWR", "Newark"),
    ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)  # fmt: skip
Cabin = Literal["business", "economy", "basic_economy"]


class FlightInfo(TypedDict):
    """One flight of a reservation.

    Attributes:
        flight_number: Flight number, such as 'HAT001'.
        date: The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.
    """

    flight_number: str
    date: str


class Passenger(TypedDict):
    """A passenger.

    Attributes:
        first_name: The first name of the passenger, such as 'Noah'.
        last_name: The last name of the passenger, such as 'Brown'.
        dob: The date of birth of the passenger in the format 'YYYY-MM-DD', such as '1990-01-01'.
    """

    first_name: str
    last_name: str
    dob: str


class Payment(TypedDict):
    """A payment towards a reservation.

    Attributes:
        payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.
        amount: The amount of the payment.
    """

    payment_id: str
    amount: int


class AirlineWorld(TauWorld):
    """An airline's reservation system as a customer-service agent sees it."""

    # ------------------------------------------------------------------ lookups
    def _resolve(self, table: str, key: str) -> str | None:
        """The stored key equal to ``key`` up to case, accents and surrounding space."""
        for candidate in (key, key.strip()):
            if (table, candidate) in self.db:
                return candidate
        wanted = fold(key)
        return next((k for k in self.db.keys(table) if fold(k) == wanted), None)

    def _lookup(self, table: str, key: str, label: str) -> Record:
        resolved = self._resolve(table, key)
        if resolved is None:
            raise ToolError(f"{label} {key} not found")
        return self.db.get(table, resolved)  # type: ignore[return-value]

    def _user(self, user_id: str) -> Record:
        return self._lookup("users", user_id, "User")

    def _reservation(self, reservation_id: str) -> Record:
        return self._lookup("reservations", reservation_id, "Reservation")

    def _flight(self, flight_number: str) -> Record:
        return self._lookup("flights", flight_number, "Flight")

    def _flight_date(self, flight: Record, date: str) -> Record:
        if date not in flight["dates"]:
            raise ToolError(f"Flight {flight['flight_number']} not found on date {date}")
        return flight["dates"][date]

    def _available(self, flight: Record, date: str, cabin: str, seats: int) -> Record:
        """The flight's record for ``date``, checked bookable for ``seats`` passengers."""
        day = self._flight_date(flight, date)
        if day["status"] != "available":
            raise ToolError(f"Flight {flight['flight_number']} not available on date {date}")
        if day["available_seats"][cabin] < seats:
            raise ToolError(f"Not enough seats on flight {flight['flight_number']}")
        return day

    def _direct(self, date: str, origin: str | None, destination: str | None, leave_after: str | None = None) -> list[Record]:
        results = []
        for flight in self.db.values("flights"):
            day = flight["dates"].get(date)
            if day is None or day["status"] != "available":
                continue
            if origin not in (None, flight["origin"]) or destination not in (None, flight["destination"]):
                continue
            if leave_after is not None and flight["scheduled_departure_time_est"] < leave_after:
                continue
            results.append({
                "flight_number": flight["flight_number"], "origin": flight["origin"], "destination": flight["destination"],
                "status": "available", "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"], "date": None,
                "available_seats": dict(day["available_seats"]), "prices": dict(day["prices"]),
            })  # fmt: skip
        return results

    def _charge_update(self, user: Record, payment_id: str, total: int) -> Record | None:
        """Charge (or refund, if negative) ``total`` for a change; the payment record or None."""
        if payment_id not in user["payment_methods"]:
            raise ToolError("Payment method not found")
        method = user["payment_methods"][payment_id]
        if method["source"] == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < total:
            raise ToolError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            method["amount"] -= total
        return {"payment_id": payment_id, "amount": total} if total != 0 else None

    def _price_legs(self, flights: list[FlightInfo], cabin: str, seats: int) -> tuple[list[Record], list[Record], int]:
        """Reservation legs, their bookable flight-days, and the fare total for ``seats`` passengers."""
        legs, days, total = [], [], 0
        for info in flights:
            flight = self._flight(info["flight_number"])
            day = self._available(flight, info["date"], cabin, seats)
            price = day["prices"][cabin]
            legs.append(
                {
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_number": flight["flight_number"],
                    "date": info["date"],
                    "price": price,
                }
            )
            days.append(day)
            total += price * seats
        return legs, days, total

    def _pay_booking(self, user: Record, payments: list[Payment], total: int) -> None:
        """Check a booking's payments against the balances and the total, then take them."""
        for payment in payments:
            method = user["payment_methods"].get(payment["payment_id"])
            if method is None:
                raise ToolError(f"Payment method {payment['payment_id']} not found")
            if method["source"] in ("gift_card", "certificate") and method["amount"] < payment["amount"]:
                raise ToolError(f"Not enough balance in payment method {payment['payment_id']}")
        paid = sum(p["amount"] for p in payments)
        if paid != total:
            raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
        for payment in payments:
            method = user["payment_methods"][payment["payment_id"]]
            if method["source"] == "gift_card":
                method["amount"] -= payment["amount"]
            elif method["source"] == "certificate":
                user["payment_methods"].pop(payment["payment_id"])

    # -------------------------------------------------------------------- reads
    @tool
    def get_reservation_details(self, reservation_id: str) -> Record:
        """Get the details of a reservation.

        Args:
            reservation_id: The reservation ID, such as '8JX2WO'.
        """
        return self._reservation(reservation_id)

    @tool
    def get_user_details(self, user_id: str) -> Record:
        """Get the details of a user, including their reservations.

        Args:
            user_id: The user ID, such as 'sara_doe_496'.
        """
        return self._user(user_id)

    @tool
    def list_all_airports(self) -> list[dict[str, str]]:
        """Returns a list of all available airports."""
        return [{"iata": iata, "city": city} for iata, city in AIRPORTS]

    @tool
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[Record]:
        """Search for direct flights between two cities on a specific date.

        Args:
            origin: The origin city airport in three letters, such as 'JFK'.
            destination: The destination city airport in three letters, such as 'LAX'.
            date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.
        """
        return self._direct(date, origin, destination)

    @tool
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[Record]]:
        """Search for one-stop flights between two cities on a specific date.

        Args:
            origin: The origin city airport in three letters, such as 'JFK'.
            destination: The destination city airport in three letters, such as 'LAX'.
            date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.
        """
        results = []
        for first in self._direct(date, origin, None):
            first["date"] = date
            # As in τ2: an overnight first leg continues on the next day of May 2024 (no zero padding).
            next_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
            for second in self._direct(next_date, first["destination"], destination, first["scheduled_arrival_time_est"]):
                second["date"] = next_date
                results.append([first, second])
        return results

    @tool
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Get the status of a flight.

        Args:
            flight_number: The flight number.
            date: The date of the flight.
        """
        return self._flight_date(self._flight(flight_number), date)["status"]

    # ------------------------------------------------------------------- writes
    @tool(write=True)
    def book_reservation(
        self, user_id: str, origin: str, destination: str, flight_type: Literal["round_trip", "one_way"], cabin: Cabin,
        flights: list[FlightInfo], passengers: list[Passenger], payment_methods: list[Payment], total_baggages: int,
        nonfree_baggages: int, insurance: Literal["yes", "no"],
    ) -> Record:  # fmt: skip
        """Book a reservation.

        Args:
            user_id: The ID of the user to book the reservation such as 'sara_doe_496'.
            origin: The IATA code for the origin city such as 'SFO'.
            destination: The IATA code for the destination city such as 'JFK'.
            flight_type: The type of flight such as 'one_way' or 'round_trip'.
            cabin: The cabin class such as 'basic_economy', 'economy', or 'business'.
            flights: An array of objects containing details about each piece of flight.
            passengers: An array of objects containing details about each passenger.
            payment_methods: An array of objects containing details about each payment method.
            total_baggages: The total number of baggage items to book the reservation.
            nonfree_baggages: The number of non-free baggage items to book the reservation.
            insurance: Whether the reservation has insurance.
        """
        user = self._user(user_id)
        reservation_id = next((r for r in NEW_RESERVATION_IDS if ("reservations", r) not in self.db), None)
        if reservation_id is None:
            raise ToolError("Too many reservations")
        legs, days, fares = self._price_legs(flights, cabin, len(passengers))
        total = fares + (30 * len(passengers) if insurance == "yes" else 0) + 50 * nonfree_baggages
        self._pay_booking(user, payment_methods, total)
        for day in days:
            day["available_seats"][cabin] -= len(passengers)
        reservation = {
            "reservation_id": reservation_id, "user_id": user["user_id"], "origin": origin, "destination": destination,
            "flight_type": flight_type, "cabin": cabin, "flights": legs,
            "passengers": [{k: p[k] for k in ("first_name", "last_name", "dob")} for p in passengers],
            "payment_history": [{"payment_id": p["payment_id"], "amount": p["amount"]} for p in payment_methods],
            "created_at": NOW, "total_baggages": total_baggages, "nonfree_baggages": nonfree_baggages, "insurance": insurance,
        }  # fmt: skip
        self.db.put("reservations", reservation_id, reservation)
        user["reservations"].append(reservation_id)
        return reservation

    @tool(write=True)
    def cancel_reservation(self, reservation_id: str) -> Record:
        """Cancel the whole reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'.
        """
        reservation = self._reservation(reservation_id)
        refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"
        return reservation

    @tool(write=True)
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Send a certificate to a user. Be careful!

        Args:
            user_id: The ID of the user to book the reservation, such as 'sara_doe_496'.
            amount: The amount of the certificate to send.
        """
        user = self._user(user_id)
        for payment_id in NEW_CERTIFICATE_IDS:
            if payment_id not in user["payment_methods"]:
                user["payment_methods"][payment_id] = {"id": payment_id, "amount": amount, "source": "certificate"}
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise ToolError("Too many certificates")

    @tool(write=True)
    def update_reservation_baggages(self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str) -> Record:
        """Update the baggage information of a reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'
            total_baggages: The updated total number of baggage items included in the reservation.
            nonfree_baggages: The updated number of non-free baggage items included in the reservation.
            payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.
        """
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        payment = self._charge_update(user, payment_id, 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"]))
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["total_baggages"], reservation["nonfree_baggages"] = total_baggages, nonfree_baggages
        return reservation

    @tool(write=True)
    def update_reservation_flights(self, reservation_id: str, cabin: Cabin, flights: list[FlightInfo], payment_id: str) -> Record:
        """Update the flight information of a reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'.
            cabin: The cabin class of the reservation
            flights: An array of objects containing details about each piece of flight in the ENTIRE new reservation. Even if the a flight segment is not changed, it should still be included in the array.
            payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.
        """
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        seats = len(reservation["passengers"])
        legs, total = [], 0
        for info in flights:
            flight = self._flight(info["flight_number"])
            number = flight["flight_number"]
            kept = next(
                (
                    f
                    for f in reservation["flights"]
                    if f["flight_number"] == number and f["date"] == info["date"] and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept is None:
                day = self._available(flight, info["date"], cabin, seats)
                kept = {
                    "flight_number": number,
                    "date": info["date"],
                    "price": day["prices"][cabin],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                }
            legs.append(kept)
            total += kept["price"] * seats
        total -= sum(f["price"] for f in reservation["flights"]) * seats
        payment = self._charge_update(user, payment_id, total)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["flights"], reservation["cabin"] = copy.deepcopy(legs), cabin
        return reservation

    @tool(write=True)
    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger]) -> Record:
        """Update the passenger information of a reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'.
            passengers: An array of objects containing details about each passenger.
        """
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation["passengers"]):
            raise ToolError("Number of passengers does not match")
        reservation["passengers"] = [{k: p[k] for k in ("first_name", "last_name", "dob")} for p in passengers]
        return reservation
