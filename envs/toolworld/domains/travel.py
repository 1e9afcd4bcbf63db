"""Travel domains: hotel bookings, flights, a vehicle fleet."""

from __future__ import annotations

import random
from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Transition, pick
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, positive

from envsched_gym.tool import tool

ROOMS = ("single", "double", "suite")
GATES = ("A1", "A2", "B4", "B7", "C3", "C9")


class Hotel(RecordWorld):
    """Hotel bookings: nights, room type and booking status."""

    noun = "booking"
    id_prefix = "BKG"

    @tool
    def find_booking(self, name: str) -> dict:
        """Look up a booking's id by the guest's full name.

        Args:
            name: Guest name, e.g. "Jonas Moreau".
        """
        return self.lookup(name)

    @tool
    def get_booking(self, booking_id: str) -> dict:
        """Read a booking: nights, room type and status.

        Args:
            booking_id: Booking id such as "BKG-004".
        """
        return self.view(booking_id)

    @tool(write=True)
    def extend_stay(self, booking_id: str, nights: int) -> dict:
        """Add nights to a booking; a stay is at most 21 nights.

        Args:
            booking_id: Booking id.
            nights: Nights to add (positive).
        """
        return self.adjust(booking_id, "nights", positive(nights, "nights"), cap=21, what="nights")

    @tool(write=True)
    def shorten_stay(self, booking_id: str, nights: int) -> dict:
        """Remove nights from a booking; fails when the booking has fewer nights.

        Args:
            booking_id: Booking id.
            nights: Nights to remove (positive).
        """
        return self.adjust(booking_id, "nights", -positive(nights, "nights"), what="nights")

    @tool(write=True)
    def change_room(self, booking_id: str, room_type: Literal["single", "double", "suite"]) -> dict:
        """Change the booked room type.

        Args:
            booking_id: Booking id.
            room_type: New room type.
        """
        return self.assign(booking_id, "room_type", room_type)

    @tool(write=True)
    def cancel_booking(self, booking_id: str) -> dict:
        """Cancel a confirmed booking.

        Args:
            booking_id: Booking id.
        """
        return self.transition(booking_id, "cancelled", ("confirmed",))


HOTEL = Domain(
    name="hotel",
    world=Hotel,
    description="You are a hotel front-desk assistant. Bookings are found by the guest's full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {
        "nights": rng.randint(1, 14),
        "room_type": rng.choice(ROOMS),
        "status": rng.choice(("confirmed", "confirmed", "cancelled", "checked_out")),
    },
    fields=(("nights", "number of nights"), ("room_type", "room type"), ("status", "status")),
    actions=(
        Adjust("extend_stay", "booking_id", "nights", "nights", 1, "extend {ref} by {amount} nights", (1, 7), "nights", 21, "extend"),
        Assign("change_room", "booking_id", "room_type", "room_type", "change the room of {ref} to a {value}", pick(ROOMS)),
        Adjust("shorten_stay", "booking_id", "nights", "nights", -1, "shorten {ref} by {amount} nights", (1, 5), "nights"),
        Transition("cancel_booking", "booking_id", "cancelled", ("confirmed",), "cancel {ref}"),
    ),
    limits={"extend": (5, 10)},
)


class Flights(RecordWorld):
    """Scheduled flights: free seats, capacity, gate and status."""

    noun = "flight"
    id_prefix = "FLT"

    @tool
    def find_flight(self, name: str) -> dict:
        """Look up a flight's id by its service name.

        Args:
            name: Service name, e.g. "Oslo Express".
        """
        return self.lookup(name)

    @tool
    def get_flight(self, flight_id: str) -> dict:
        """Read a flight: free seats, capacity, gate and status.

        Args:
            flight_id: Flight id such as "FLT-003".
        """
        return self.view(flight_id)

    @tool
    def search_flights(self, query: str) -> list:
        """List the flights whose service name contains some text.

        Args:
            query: Part of a name, e.g. a city.
        """
        return self.search(query)

    @tool(write=True)
    def book_seats(self, flight_id: str, seats: int) -> dict:
        """Book seats on a flight; fails when fewer seats are free.

        Args:
            flight_id: Flight id.
            seats: Seats to book (positive).
        """
        return self.adjust(flight_id, "seats_free", -positive(seats, "seats"), what="seats")

    @tool(write=True)
    def release_seats(self, flight_id: str, seats: int) -> dict:
        """Release booked seats; free seats cannot exceed the capacity.

        Args:
            flight_id: Flight id.
            seats: Seats to release (positive).
        """
        return self.adjust(flight_id, "seats_free", positive(seats, "seats"), cap=self.record(flight_id)["capacity"], what="seats")

    @tool(write=True)
    def set_gate(self, flight_id: str, gate: Literal["A1", "A2", "B4", "B7", "C3", "C9"]) -> dict:
        """Assign a departure gate.

        Args:
            flight_id: Flight id.
            gate: Gate code.
        """
        return self.assign(flight_id, "gate", gate)

    @tool(write=True)
    def delay_flight(self, flight_id: str) -> dict:
        """Mark a scheduled flight as delayed.

        Args:
            flight_id: Flight id.
        """
        return self.transition(flight_id, "delayed", ("scheduled",))


def _flight(rng: random.Random) -> dict:
    capacity = rng.choice((50, 120, 180))
    return {
        "seats_free": rng.randint(0, capacity // 2),
        "capacity": capacity,
        "gate": rng.choice(GATES),
        "status": rng.choice(("scheduled", "scheduled", "delayed", "departed")),
    }


FLIGHTS = Domain(
    name="flights",
    world=Flights,
    description="You are an airline operations assistant. Flights are found by their service name.",
    words=(("Oslo", "Lima", "Cairo", "Perth", "Quito", "Dakar", "Riga", "Hanoi"), ("Express", "Shuttle", "Connector", "Redeye", "Skyline")),
    make_record=_flight,
    fields=(("seats_free", "number of free seats"), ("gate", "gate"), ("status", "status")),
    actions=(
        Adjust("book_seats", "flight_id", "seats", "seats_free", -1, "book {amount} seats on {ref}", (1, 9), "seats", None, "group"),
        Assign("set_gate", "flight_id", "gate", "gate", "assign {ref} to gate {value}", pick(GATES)),
        Adjust("release_seats", "flight_id", "seats", "seats_free", 1, "release {amount} seats on {ref}", (1, 9), "seats", "capacity"),
        Transition("delay_flight", "flight_id", "delayed", ("scheduled",), "mark {ref} as delayed"),
    ),
    extras=("search_flights",),
    limits={"group": (5, 10)},
)


class Fleet(RecordWorld):
    """A company vehicle fleet: fuel, tank size, odometer and service status."""

    noun = "vehicle"
    id_prefix = "VEH"

    @tool
    def find_vehicle(self, name: str) -> dict:
        """Look up a vehicle's id by its fleet name.

        Args:
            name: Fleet name, e.g. "Red Van".
        """
        return self.lookup(name)

    @tool
    def get_vehicle(self, vehicle_id: str) -> dict:
        """Read a vehicle: fuel and tank size in litres, odometer in km and status.

        Args:
            vehicle_id: Vehicle id such as "VEH-010".
        """
        return self.view(vehicle_id)

    @tool(write=True)
    def refuel(self, vehicle_id: str, litres: int) -> dict:
        """Add fuel; the tank cannot hold more than its size.

        Args:
            vehicle_id: Vehicle id.
            litres: Litres added (positive).
        """
        return self.adjust(vehicle_id, "fuel_l", positive(litres, "litres"), cap=self.record(vehicle_id)["tank_l"], what="litres")

    @tool(write=True)
    def log_trip(self, vehicle_id: str, km: int) -> dict:
        """Record a trip's distance on the odometer.

        Args:
            vehicle_id: Vehicle id.
            km: Distance driven in km (positive).
        """
        return self.adjust(vehicle_id, "odometer_km", positive(km, "km"), what="km")

    @tool(write=True)
    def send_to_service(self, vehicle_id: str) -> dict:
        """Send an available vehicle to the workshop.

        Args:
            vehicle_id: Vehicle id.
        """
        return self.transition(vehicle_id, "in_service", ("available",))

    @tool(write=True)
    def return_from_service(self, vehicle_id: str) -> dict:
        """Return a serviced vehicle to the available pool.

        Args:
            vehicle_id: Vehicle id.
        """
        return self.transition(vehicle_id, "available", ("in_service",))


def _vehicle(rng: random.Random) -> dict:
    tank = rng.choice((45, 60, 80))
    return {
        "fuel_l": rng.randint(0, tank),
        "tank_l": tank,
        "odometer_km": rng.randint(1000, 90000),
        "status": rng.choice(("available", "available", "in_service")),
    }


FLEET = Domain(
    name="fleet",
    world=Fleet,
    description="You are a fleet manager's assistant. Vehicles are found by their fleet name.",
    words=(("Red", "Blue", "Green", "Silver", "Black", "White", "Yellow"), ("Van", "Truck", "Sedan", "Pickup", "Minibus", "Hatchback")),
    make_record=_vehicle,
    fields=(("fuel_l", "fuel level in litres"), ("odometer_km", "odometer reading in km"), ("status", "status")),
    actions=(
        Adjust("refuel", "vehicle_id", "litres", "fuel_l", 1, "refuel {ref} with {amount} litres", (5, 40), "litres", "tank_l"),
        Adjust("log_trip", "vehicle_id", "km", "odometer_km", 1, "log a trip of {amount} km for {ref}", (10, 600), "km", None, "trip"),
        Transition("send_to_service", "vehicle_id", "in_service", ("available",), "send {ref} to service"),
        Transition("return_from_service", "vehicle_id", "available", ("in_service",), "return {ref} from service"),
    ),
    limits={"trip": (200, 450)},
)
