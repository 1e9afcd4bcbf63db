"""Episodes share nothing through bfcl-eval's module globals or process-wide settings (issue 14)."""

from __future__ import annotations

import copy
import decimal

import mpmath
import pytest
from envsched_gym.envs.bfcl.backends import backend_module, mutable_globals

LONG_TRAVEL, LONG_VEHICLE, MATH = "multi_turn_long_context_150", "multi_turn_long_context_50", "multi_turn_long_context_15"


def _task(bfcl, task_id: str):
    return next(t for t in bfcl.tasks() if t.task_id == task_id)


def _extension_card(world) -> str:
    """A card the long-context filler added (it is not in the entry's own scenario)."""
    own = world.setup.initial_config.get("TravelAPI", {}).get("credit_card_list", {})
    extension = backend_module("TravelAPI").CREDIT_CARD_EXTENSION
    return next(card for card in extension if card not in own)


def _book(world, card: str) -> dict:
    travel = world.instances["TravelAPI"]
    travel.budget_limit = None  # the entry's budget is above the extension cards' balances
    airports = travel.list_all_airports()
    return world.call("book_flight", {
        "access_token": travel.access_token, "card_id": card, "travel_date": "2024-12-01",
        "travel_from": airports[0], "travel_to": airports[1], "travel_class": "economy",
    })  # fmt: skip


def test_a_booking_on_an_extension_card_stays_in_its_episode(bfcl) -> None:
    task = _task(bfcl, LONG_TRAVEL)
    world = bfcl.make_world(task)
    card = _extension_card(world)
    before = world.instances["TravelAPI"].credit_card_list[card]["balance"]
    assert _book(world, card)["booking_status"] is True
    assert world.instances["TravelAPI"].credit_card_list[card]["balance"] < before  # the booking did charge it
    assert backend_module("TravelAPI").CREDIT_CARD_EXTENSION[card]["balance"] == before
    assert bfcl.make_world(task).instances["TravelAPI"].credit_card_list[card]["balance"] == before  # next episode
    assert bfcl.make_verifier(task).gold_world.instances["TravelAPI"].credit_card_list[card]["balance"] == before


def test_the_long_context_weather_global_is_never_written(bfcl) -> None:
    module = backend_module("VehicleControlAPI")
    pristine = copy.deepcopy(module.LONG_WEATHER_EXTENSION)
    world = bfcl.make_world(_task(bfcl, LONG_VEHICLE))
    result = world.call("get_outside_temperature_from_google", {})
    assert "outsideTemperature" in result
    assert module.LONG_WEATHER_EXTENSION == pristine


def test_every_backend_global_is_unchanged_after_long_context_episodes(bfcl) -> None:
    names = ["TravelAPI", "VehicleControlAPI", "TradingBot", "GorillaFileSystem"]
    before = {n: copy.deepcopy({k: getattr(backend_module(n), k) for k in mutable_globals(n)}) for n in names}
    for task_id in (LONG_TRAVEL, LONG_VEHICLE):
        world = bfcl.make_world(_task(bfcl, task_id))
        if "TravelAPI" in world.setup.classes:
            _book(world, _extension_card(world))
        else:
            world.call("get_outside_temperature_from_google", {})
    assert {n: {k: getattr(backend_module(n), k) for k in mutable_globals(n)} for n in names} == before


def test_precision_a_call_sets_is_restored_and_its_result_rendered_at_that_precision(bfcl) -> None:
    world = bfcl.make_world(_task(bfcl, MATH))
    dps, prec = mpmath.mp.dps, decimal.getcontext().prec
    world.call("logarithm", {"value": 2.0, "base": 10.0, "precision": 30})
    world.call("square_root", {"number": 2.0, "precision": 50})
    assert (mpmath.mp.dps, decimal.getcontext().prec) == (dps, prec)
    log_text, root_text = world.results[-1]
    assert "0.301029995663981195213738894724" in log_text  # 30 digits, as BFCL's harness records it
    assert "1.4142135623730950488016887242096980785696718753769" in root_text


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("round_number", {"number": 123, "decimal_places": -(10**7)}),
        ("logarithm", {"value": 2.0, "base": 10.0, "precision": 10**6}),
        ("square_root", {"number": 2.0, "precision": 10**6}),
        ("power", {"base": 9, "exponent": 10**5}),
    ],
)
def test_calls_whose_cost_explodes_are_refused_before_they_run(bfcl, name: str, arguments: dict) -> None:
    world = bfcl.make_world(_task(bfcl, MATH))
    with pytest.raises(Exception, match=r"at most 4300|limit is 4300"):
        world.call(name, arguments)
    assert world.results[-1][-1].startswith("Error during execution:")
