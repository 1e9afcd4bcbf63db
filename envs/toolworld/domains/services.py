"""Service domains: pharmacy prescriptions and restaurant reservations."""

from __future__ import annotations

import random
from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Transition, pick
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, positive

from envsched_gym.tool import tool


class Pharmacy(RecordWorld):
    """Patients' prescriptions: refills left, daily dose and whether the prescription is active."""

    noun = "patient"
    id_prefix = "PAT"

    @tool
    def find_patient(self, name: str) -> dict:
        """Look up a patient's id by full name.

        Args:
            name: Patient name, e.g. "Ben Tanaka".
        """
        return self.lookup(name)

    @tool
    def get_patient(self, patient_id: str) -> dict:
        """Read a patient's prescription: refills left, dose in mg and status.

        Args:
            patient_id: Patient id such as "PAT-003".
        """
        return self.view(patient_id)

    @tool(write=True)
    def dispense_refills(self, patient_id: str, refills: int) -> dict:
        """Dispense refills of the prescription; fails when not enough refills are left.

        Args:
            patient_id: Patient id.
            refills: Number of refills to dispense (positive).
        """
        return self.adjust(patient_id, "refills_left", -positive(refills, "refills"), what="refills")

    @tool(write=True)
    def set_dose(self, patient_id: str, dose_mg: Literal[5, 10, 20, 40, 80]) -> dict:
        """Change the prescribed daily dose.

        Args:
            patient_id: Patient id.
            dose_mg: New daily dose in milligrams.
        """
        return self.assign(patient_id, "dose_mg", int(dose_mg))

    @tool(write=True)
    def suspend_prescription(self, patient_id: str) -> dict:
        """Suspend an active prescription.

        Args:
            patient_id: Patient id.
        """
        return self.transition(patient_id, "suspended", ("active",))


def _patient(rng: random.Random) -> dict:
    return {
        "refills_left": rng.randint(0, 6),
        "dose_mg": rng.choice((5, 10, 20, 40, 80)),
        "status": rng.choice(("active", "active", "suspended")),
    }


PHARMACY = Domain(
    name="pharmacy",
    world=Pharmacy,
    description="You are a pharmacy assistant handling prescriptions. Patients are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=_patient,
    fields=(("refills_left", "number of refills left"), ("dose_mg", "daily dose in mg"), ("status", "prescription status")),
    actions=(
        Adjust("dispense_refills", "patient_id", "refills", "refills_left", -1, "dispense {amount} refills for {ref}", (1, 3), "refills"),
        Assign("set_dose", "patient_id", "dose_mg", "dose_mg", "change the daily dose of {ref} to {value} mg", pick((5, 10, 20, 40, 80))),
        Transition("suspend_prescription", "patient_id", "suspended", ("active",), "suspend the prescription of {ref}"),
    ),
)


class Restaurant(RecordWorld):
    """Table reservations: party size, table seats and reservation status."""

    noun = "reservation"
    id_prefix = "RSV"

    @tool
    def find_reservation(self, name: str) -> dict:
        """Look up a reservation's id by the guest's full name.

        Args:
            name: Guest name, e.g. "Chloe Moreau".
        """
        return self.lookup(name)

    @tool
    def get_reservation(self, reservation_id: str) -> dict:
        """Read a reservation: party size, seats at the table, time and status.

        Args:
            reservation_id: Reservation id such as "RSV-007".
        """
        return self.view(reservation_id)

    @tool(write=True)
    def add_guests(self, reservation_id: str, guests: int) -> dict:
        """Add guests to a reservation; the party cannot exceed the table's seats.

        Args:
            reservation_id: Reservation id.
            guests: Extra guests (positive).
        """
        return self.adjust(
            reservation_id, "party_size", positive(guests, "guests"), cap=self.record(reservation_id)["seats"], what="guests"
        )

    @tool(write=True)
    def set_time(self, reservation_id: str, time: Literal["18:00", "18:30", "19:00", "19:30", "20:00", "20:30", "21:00"]) -> dict:
        """Move a reservation to another time the same evening.

        Args:
            reservation_id: Reservation id.
            time: New time, on the half hour.
        """
        return self.assign(reservation_id, "time", time)

    @tool(write=True)
    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a booked reservation.

        Args:
            reservation_id: Reservation id.
        """
        return self.transition(reservation_id, "cancelled", ("booked",))

    @tool(write=True)
    def seat_party(self, reservation_id: str) -> dict:
        """Mark a booked party as seated.

        Args:
            reservation_id: Reservation id.
        """
        return self.transition(reservation_id, "seated", ("booked",))


TIMES = ("18:00", "18:30", "19:00", "19:30", "20:00", "20:30", "21:00")


def _reservation(rng: random.Random) -> dict:
    seats = rng.choice((2, 4, 6, 8))
    return {
        "party_size": rng.randint(1, seats),
        "seats": seats,
        "time": rng.choice(TIMES),
        "status": rng.choice(("booked", "booked", "seated", "cancelled")),
    }


RESTAURANT = Domain(
    name="restaurant",
    world=Restaurant,
    description="You are a restaurant host assistant managing tonight's reservations, found by the guest's full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=_reservation,
    fields=(("party_size", "party size"), ("time", "reservation time"), ("seats", "number of seats at the table")),
    actions=(
        Adjust("add_guests", "reservation_id", "guests", "party_size", 1, "add {amount} guests to {ref}", (1, 3), "guests", "seats"),
        Assign("set_time", "reservation_id", "time", "time", "move {ref} to {value}", pick(TIMES)),
        Transition("cancel_reservation", "reservation_id", "cancelled", ("booked",), "cancel {ref}"),
        Transition("seat_party", "reservation_id", "seated", ("booked",), "mark {ref} as seated"),
    ),
)
