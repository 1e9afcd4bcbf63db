"""The @tool decorator: schemas from type hints and Google docstrings."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import pytest

from envsched_gym import World, tool
from envsched_gym.tool import parse_google_docstring, spec_from_function


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Address:
    """A postal address.

    Attributes:
        street: Street and number.
        zip: Postal code.
    """

    street: str
    zip: str
    country: str = "NL"
    lines: list[str] = field(default_factory=list)


class Item(TypedDict):
    sku: str
    qty: int


class Shop(World):
    @tool(write=True)
    def order(
        self,
        items: list[Item],
        address: Address,
        colour: Colour = Colour.RED,
        speed: Literal["slow", "fast"] | None = None,
        gift: bool = False,
        note: str | None = None,
        weights: dict[str, float] | None = None,
        anything: Any = None,
    ) -> dict:
        """Place an order.

        Spans two lines of summary.

        Args:
            items: What to buy; each entry
                names a SKU and a quantity.
            address: Where to ship.
            colour: Wrapping colour.
            speed: Shipping speed.
            gift: Gift-wrap it.
            note: Free text.
            weights: Per-SKU weight in kg.
            anything: Untyped payload.

        Returns:
            The order record.
        """
        return {}

    @tool(name="peek")
    def _peek(self, sku: str) -> int:
        """Stock level."""
        return 0


def _params() -> dict[str, Any]:
    return next(t for t in Shop.tool_specs() if t.name == "order").parameters


def test_required_and_optional() -> None:
    assert _params()["required"] == ["items", "address"]


def test_descriptions_come_from_the_docstring() -> None:
    spec = next(t for t in Shop.tool_specs() if t.name == "order")
    assert spec.description == "Place an order. Spans two lines of summary."
    assert _params()["properties"]["items"]["description"] == "What to buy; each entry names a SKU and a quantity."
    assert spec.write is True


def test_enums_from_literal_and_enum() -> None:
    props = _params()["properties"]
    assert props["speed"]["enum"] == ["slow", "fast"] and props["speed"]["type"] == "string"
    assert props["colour"]["enum"] == ["red", "blue"] and props["colour"]["default"] == "red"


def test_lists_dicts_and_nested_objects() -> None:
    props = _params()["properties"]
    item = props["items"]["items"]
    assert props["items"]["type"] == "array" and item["type"] == "object"
    assert item["properties"] == {"sku": {"type": "string"}, "qty": {"type": "integer"}} and item["required"] == ["sku", "qty"]
    address = props["address"]
    assert address["required"] == ["street", "zip"] and address["properties"]["zip"]["description"] == "Postal code."
    assert address["properties"]["lines"] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "number"}, "description": "Per-SKU weight in kg."}
    assert props["gift"]["type"] == "boolean" and props["note"]["type"] == "string"
    assert "type" not in props["anything"]


def test_renamed_tool_and_read_marking() -> None:
    peek = next(t for t in Shop.tool_specs() if t.name == "peek")
    assert peek.write is False and peek.parameters["required"] == ["sku"]
    assert Shop().call("peek", {"sku": "x"}) == 0


def test_missing_type_hint_is_a_clear_error() -> None:
    def bad(self, x) -> None:  # type: ignore[no-untyped-def]
        """Bad."""

    with pytest.raises(TypeError, match="parameter 'x' needs a type hint"):
        spec_from_function(bad)


def test_unsupported_type_names_the_fix() -> None:
    def bad(self, x: complex) -> None:
        """Bad."""

    with pytest.raises(TypeError, match="no JSON-schema form; use str/int/float/bool"):
        spec_from_function(bad)


def test_docstring_parser_sections() -> None:
    summary, args = parse_google_docstring("Do it.\n\nArgs:\n    a (int): First.\n        More.\n    b: Second.\n\nRaises:\n    KeyError: never an arg.")
    assert summary == "Do it." and args == {"a": "First. More.", "b": "Second."}
