"""ACEBench's ``Travel`` scenario: flights, reservations, baggage and refunds.

Behaviour and return values follow ACEBench's ``scenariosen/travel.py`` and ``scenarioszh/travel.py`` (its fixed clock is
2024-07-14 06:00; cancelling refunds to the cash balance and keeps the reservation, as the
original does). The state (users, flights, reservations) is loaded from the extracted
initial state of the task's language. ``Travel`` ignores the task's ``BaseApi`` config.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, ClassVar

from envsched_gym.envs.acebench.phone import Scenario

from envsched_gym import ToolError, tool

NOW = datetime(2024, 7, 14, 6, 0, 0)
_TIME = "%Y-%m-%d %H:%M:%S"
FREE_BAGGAGE = {"regular": (1, 2), "silver": (2, 3), "gold": (3, 3)}
"""Free checked bags per membership level: (economy, business)."""
BAGGAGE_FEE = 50


class Travel(Scenario):
    """Flight booking for three users (English cabin names and cancellation reason).

    Attributes:
        economy: The economy cabin's name (the Chinese scenario uses 经济舱).
        business: The business cabin's name (商务舱).
        airline_cancelled: The cancellation reason that earns a full refund.
    """

    saved_attributes = ("users", "reservations")
    economy: ClassVar[str] = "Economy Class"
    business: ClassVar[str] = "Business Class"
    airline_cancelled: ClassVar[str] = "The airline has canceled the flight."

    def __init__(self) -> None:
        self.users: dict[str, dict[str, Any]] = {}
        self.flights: list[dict[str, Any]] = []
        self.reservations: list[dict[str, Any]] = []

    @tool
    def get_flight_details(self, origin: str | None = None, destination: str | None = None) -> Any:
        """Retrieve flight details based on origin and destination.

        Args:
            origin: The origin city of the flight.
            destination: The destination city of the flight.
        """
        flights = [
            f for f in self.flights if (not origin or f["origin"] == origin) and (not destination or f["destination"] == destination)
        ]
        if not flights:
            return self._say("no_direct_flights")
        return [dict(f) for f in flights]

    @tool
    def get_user_details(self, user_id: str, password: str) -> dict[str, Any]:
        """Retrieve user details based on user ID and password.

        Args:
            user_id: The id of the user.
            password: The password of the user.
        """
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return {k: v for k, v in user.items() if k != "password"}
        return {"status": "error", "message": self._say("bad_credentials")}

    @tool
    def get_reservation_details(self, reservation_id: str | None = None, user_id: str | None = None) -> Any:
        """Retrieve reservation details based on reservation ID or user ID.

        Args:
            reservation_id: The reservation ID of the booking.
            user_id: The ID of the user.
        """
        if reservation_id:
            found = [r for r in self.reservations if r["reservation_id"] == reservation_id]
        elif user_id:
            found = [r for r in self.reservations if r["user_id"] == user_id]
        else:
            return {"status": "error", "message": self._say("need_reservation_or_user")}
        return [{**r, "flight_info": self._flight(r["flight_no"])} for r in found]

    @tool
    def find_transfer_flights(self, origin_city: str, transfer_city: str, destination_city: str) -> Any:
        """Find connecting flights via a transfer city; the first leg must land before the second departs.

        Args:
            origin_city: The starting city.
            transfer_city: The transfer city.
            destination_city: The destination city.
        """
        first = [f for f in self.flights if f["origin"] == origin_city and f["destination"] == transfer_city and f["status"] == "available"]
        second = [
            f for f in self.flights if f["origin"] == transfer_city and f["destination"] == destination_city and f["status"] == "available"
        ]
        pairs = [
            {"first_leg": a, "second_leg": b}
            for a in first
            for b in second
            if datetime.strptime(a["arrival_time"], _TIME) < datetime.strptime(b["depart_time"], _TIME)
        ]
        return pairs or self._say("no_transfer_flights")

    @tool(write=True)
    def reserve_flight(self, user_id: str, password: str, flight_no: str, cabin: str, payment_method: str, baggage_count: int) -> str:
        """Book a flight for the user, paying the fare plus fees for baggage over the free allowance.

        Args:
            user_id: The ID of the user making the reservation.
            password: The password of the user.
            flight_no: The flight number to book.
            cabin: The cabin class, "Economy Class" or "Business Class".
            payment_method: "bank" or "cash".
            baggage_count: The total number of checked baggage items.
        """
        user = self.users.get(user_id)
        if not user or user["password"] != password:
            raise ToolError(self._say("bad_credentials"))
        flight = next((f for f in self.flights if f["flight_no"] == flight_no and f["status"] == "available"), None)
        if flight is None:
            raise ToolError(f"no available flight {flight_no}")
        total = (flight["economy_price"] if cabin == self.economy else flight["business_price"]) + self._baggage_fee(
            user["membership_level"], cabin, baggage_count
        )
        if payment_method not in ("cash", "bank"):
            return self._say("invalid_payment")
        balance = f"{payment_method}_balance"
        if total > user[balance]:
            return self._say("balance_short", method=payment_method)
        user[balance] -= total
        flight["seats_available"] -= 1
        rid = f"res_{len(self.reservations) + 1}"
        self.reservations.append(
            {
                "reservation_id": rid,
                "user_id": user_id,
                "flight_no": flight_no,
                "payment_method": payment_method,
                "cabin": cabin,
                "baggage": baggage_count,
            }
        )
        return self._say("booked", id=rid, total=total)

    @tool(write=True)
    def modify_flight(
        self,
        user_id: str,
        reservation_id: str,
        new_flight_no: str | None = None,
        new_cabin: str | None = None,
        add_baggage: int = 0,
        new_payment_method: str | None = None,
    ) -> str:
        """Modify a reservation: flight (same route), cabin class, extra baggage; fees and refunds follow.

        Args:
            user_id: The ID of the user making the modification.
            reservation_id: The reservation to modify.
            new_flight_no: The new flight number (same origin and destination).
            new_cabin: The new cabin class.
            add_baggage: Checked baggage items to add.
            new_payment_method: "cash" or "bank" for any charge; default the reservation's.
        """
        reservation = self._reservation(user_id, reservation_id)
        if reservation is None:
            return self._say("reservation_not_found")
        current = self._flight(reservation["flight_no"])
        if current is None:
            return self._say("flight_not_found")
        method = new_payment_method or reservation["payment_method"]
        user = self.users[user_id]
        notes: list[str] = []
        if new_flight_no and new_flight_no != reservation["flight_no"]:
            new = self._flight(new_flight_no)
            if not new or (new["origin"], new["destination"]) != (current["origin"], current["destination"]):
                return self._say("flight_change_failed")
            reservation["flight_no"] = new_flight_no
            notes.append(self._say("flight_changed"))
        if new_cabin and new_cabin != reservation.get("cabin"):
            notes.append(self._change_cabin(user, reservation, current, new_cabin, method))
        if add_baggage > 0:
            notes.append(self._add_baggage(user, reservation, add_baggage, method))
        return " ".join(n for n in notes if n) or self._say("modified_free")

    @tool(write=True)
    def cancel_reservation(self, user_id: str, reservation_id: str, reason: str) -> str:
        """Cancel a reservation; free more than 24 hours ahead or when the airline cancelled, else a 10% fee.

        Args:
            user_id: The ID of the user who made the reservation.
            reservation_id: The reservation to cancel.
            reason: The reason for cancellation.
        """
        user = self.users.get(user_id)
        if not user:
            return self._say("invalid_user")
        reservation = self._reservation(user_id, reservation_id)
        if reservation is None:
            return self._say("invalid_reservation")
        flight = self._flight(reservation["flight_no"])
        if flight is None:
            return self._say("invalid_flight")
        depart = datetime.strptime(flight["depart_time"], _TIME)
        if NOW > depart:
            return self._say("flight_used")
        price = flight["economy_price"] if reservation["cabin"] == self.economy else flight["business_price"]
        if reason == self.airline_cancelled:
            user["cash_balance"] += price
            return self._say("cancel_airline", amount=price)
        if depart - NOW > timedelta(days=1):
            user["cash_balance"] += price
            return self._say("cancel_free", amount=price)
        fee = price * 0.1
        user["cash_balance"] += price - fee
        return self._say("cancel_fee", fee=fee, amount=price - fee)

    # ----------------------------------------------------------------- helpers
    def _flight(self, flight_no: str) -> dict[str, Any] | None:
        return next((f for f in self.flights if f["flight_no"] == flight_no), None)

    def _reservation(self, user_id: str, reservation_id: str) -> dict[str, Any] | None:
        return next((r for r in self.reservations if r["reservation_id"] == reservation_id and r["user_id"] == user_id), None)

    def _free_bags(self, level: str, cabin: str) -> int | None:
        cabins = {self.economy: 0, self.business: 1}
        return FREE_BAGGAGE[level][cabins[cabin]] if level in FREE_BAGGAGE and cabin in cabins else None

    def _baggage_fee(self, level: str, cabin: str, count: int) -> int:
        free = self._free_bags(level, cabin)
        if free is None:
            raise ToolError(f"unknown membership level {level!r} or cabin {cabin!r}; cabins are {self.economy!r} and {self.business!r}")
        return max(count - free, 0) * BAGGAGE_FEE

    @staticmethod
    def _pay(user: dict[str, Any], method: str, amount: float) -> bool:
        """Add ``amount`` (negative: charge) to the method's balance; False if it would go negative."""
        key = {"cash": "cash_balance", "bank": "bank_balance"}.get(method)
        if key is None:
            return True  # the original silently ignores an unknown method
        if user[key] + amount < 0:
            return False
        user[key] += amount
        return True

    def _change_cabin(self, user: dict[str, Any], reservation: dict[str, Any], flight: dict[str, Any], cabin: str, method: str) -> str:
        prices = {self.economy: flight["economy_price"], self.business: flight["business_price"]}
        diff = prices.get(cabin, 0) - prices.get(reservation["cabin"], 0)
        reservation["cabin"] = cabin
        if diff > 0:
            if self._pay(user, method, -diff):
                return self._say("cabin_paid", amount=diff)
            return self._say("cabin_unpaid")
        if diff < 0:
            self._pay(user, method, -diff)
            return self._say("cabin_refunded", amount=-diff)
        return ""

    def _add_baggage(self, user: dict[str, Any], reservation: dict[str, Any], extra: int, method: str) -> str:
        free = self._free_bags(user["membership_level"], reservation["cabin"]) or 0
        total = reservation.get("baggage", 0) + extra
        cost = max(0, total - free) * BAGGAGE_FEE
        note = ""
        if cost > 0:
            note = self._say("baggage_paid", amount=cost) if self._pay(user, method, -cost) else self._say("baggage_unpaid")
        reservation["baggage"] = total
        return note


class TravelZh(Travel):
    """The Chinese scenario: cabins 经济舱 / 商务舱, full refund for 航空公司取消航班."""

    economy = "经济舱"
    business = "商务舱"
    airline_cancelled = "航空公司取消航班"
