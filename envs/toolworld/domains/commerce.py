"""Commerce domains: warehouse inventory, shop orders, parking garages."""

from __future__ import annotations

import random

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Transition, scaled
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, money, positive

from envsched_gym.tool import tool


class Inventory(RecordWorld):
    """Warehouse stock: items with a quantity, a shelf capacity, a unit price and a status."""

    noun = "item"
    id_prefix = "ITM"

    @tool
    def find_item(self, name: str) -> dict:
        """Look up an item's id by its exact name.

        Args:
            name: Item name, e.g. "Steel Bolt" (case-insensitive).
        """
        return self.lookup(name)

    @tool
    def get_item(self, item_id: str) -> dict:
        """Read an item: quantity in stock, shelf capacity, unit price and status.

        Args:
            item_id: Item id such as "ITM-004".
        """
        return self.view(item_id)

    @tool
    def search_items(self, query: str) -> list:
        """List the items whose name contains some text.

        Args:
            query: Part of a name, e.g. "bolt".
        """
        return self.search(query)

    @tool(write=True)
    def restock_item(self, item_id: str, quantity: int) -> dict:
        """Add received units to an item's stock; the shelf capacity cannot be exceeded.

        Args:
            item_id: Item id.
            quantity: Units received (positive).
        """
        return self.adjust(item_id, "quantity", positive(quantity, "quantity"), cap=self.record(item_id)["capacity"], what="units")

    @tool(write=True)
    def ship_item(self, item_id: str, quantity: int) -> dict:
        """Remove shipped units from stock; fails when fewer units are in stock.

        Args:
            item_id: Item id.
            quantity: Units shipped (positive).
        """
        return self.adjust(item_id, "quantity", -positive(quantity, "quantity"), what="units")

    @tool(write=True)
    def set_price(self, item_id: str, price: float) -> dict:
        """Change an item's unit price.

        Args:
            item_id: Item id.
            price: New unit price in dollars (positive).
        """
        return self.assign(item_id, "price", money(positive(price, "price")))

    @tool(write=True)
    def discontinue_item(self, item_id: str) -> dict:
        """Mark an active item as discontinued (it stays in the catalogue).

        Args:
            item_id: Item id.
        """
        return self.transition(item_id, "discontinued", ("active",))


def _item(rng: random.Random) -> dict:
    return {"quantity": rng.randint(5, 120), "capacity": 150, "price": money(rng.randint(2, 90) + 0.0),
            "status": rng.choice(("active", "active", "active", "discontinued"))}  # fmt: skip


INVENTORY = Domain(
    name="inventory",
    world=Inventory,
    description="You are a warehouse assistant. You manage stock, prices and the catalogue with the inventory tools.",
    words=(
        ("Steel", "Copper", "Brass", "Oak", "Nylon", "Rubber", "Glass", "Carbon"),
        ("Bolt", "Hinge", "Bracket", "Washer", "Spring", "Gasket", "Valve", "Clamp"),
    ),
    make_record=_item,
    fields=(("quantity", "stock quantity"), ("price", "unit price"), ("status", "status")),
    actions=(
        Adjust(
            "restock_item",
            "item_id",
            "quantity",
            "quantity",
            1,
            "restock {ref} with {amount} units",
            (5, 60),
            "units",
            "capacity",
            "restock",
        ),
        Adjust("ship_item", "item_id", "quantity", "quantity", -1, "ship {amount} units of {ref}", (1, 40), "units"),
        Assign("set_price", "item_id", "price", "price", "set the unit price of {ref} to {value}", scaled("price", 0.6, 1.5)),
        Transition("discontinue_item", "item_id", "discontinued", ("active",), "discontinue {ref}"),
    ),
    extras=("search_items",),
    limits={"restock": (30, 80)},
)


class Shop(RecordWorld):
    """Customer orders of an online shop: item count, total, and a fulfilment status."""

    noun = "order"
    id_prefix = "ORD"

    @tool
    def find_order(self, name: str) -> dict:
        """Look up the id of a customer's order by the customer's full name.

        Args:
            name: Customer name, e.g. "Ada Okafor".
        """
        return self.lookup(name)

    @tool
    def get_order(self, order_id: str) -> dict:
        """Read an order: number of items, total in dollars, credit applied and status.

        Args:
            order_id: Order id such as "ORD-012".
        """
        return self.view(order_id)

    @tool(write=True)
    def add_items(self, order_id: str, count: int) -> dict:
        """Add items to an order; an order holds at most 12 items.

        Args:
            order_id: Order id.
            count: Number of items to add (positive).
        """
        return self.adjust(order_id, "items", positive(count, "count"), cap=12, what="items")

    @tool(write=True)
    def apply_credit(self, order_id: str, amount: int) -> dict:
        """Apply store credit to an order, lowering its total; the total cannot go below zero.

        Args:
            order_id: Order id.
            amount: Credit in whole dollars (positive).
        """
        return self.adjust(order_id, "total", -positive(amount), what="dollars")

    @tool(write=True)
    def cancel_order(self, order_id: str) -> dict:
        """Cancel an order that has not shipped yet.

        Args:
            order_id: Order id.
        """
        return self.transition(order_id, "cancelled", ("pending",))

    @tool(write=True)
    def ship_order(self, order_id: str) -> dict:
        """Mark a pending order as shipped.

        Args:
            order_id: Order id.
        """
        return self.transition(order_id, "shipped", ("pending",))


def _order(rng: random.Random) -> dict:
    return {"items": rng.randint(1, 8), "total": money(rng.randint(20, 400) + rng.choice((0.0, 0.5, 0.99))),
            "status": rng.choice(("pending", "pending", "shipped", "delivered", "cancelled"))}  # fmt: skip


SHOP = Domain(
    name="shop",
    world=Shop,
    description="You are an online shop's order assistant. Orders are found by the customer's full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=_order,
    fields=(("total", "order total"), ("items", "number of items"), ("status", "status")),
    actions=(
        Adjust(
            "apply_credit",
            "order_id",
            "amount",
            "total",
            -1,
            "apply {amount} dollars of store credit to {ref}",
            (5, 60),
            "dollars",
            None,
            "credit",
        ),
        Adjust("add_items", "order_id", "count", "items", 1, "add {amount} items to {ref}", (1, 4), "items", 12),
        Transition("cancel_order", "order_id", "cancelled", ("pending",), "cancel {ref}"),
        Transition("ship_order", "order_id", "shipped", ("pending",), "mark {ref} as shipped"),
    ),
    limits={"credit": (25, 50)},
)


class Parking(RecordWorld):
    """City garages: free spaces, capacity, hourly rate and whether the garage is open."""

    noun = "garage"
    id_prefix = "GAR"

    @tool
    def find_garage(self, name: str) -> dict:
        """Look up a garage's id by name.

        Args:
            name: Garage name, e.g. "North Plaza".
        """
        return self.lookup(name)

    @tool
    def get_garage(self, garage_id: str) -> dict:
        """Read a garage: free spaces, capacity, hourly rate and status.

        Args:
            garage_id: Garage id such as "GAR-002".
        """
        return self.view(garage_id)

    @tool
    def search_garages(self, query: str) -> list:
        """List the garages whose name contains some text.

        Args:
            query: Part of a name, e.g. "plaza".
        """
        return self.search(query)

    @tool(write=True)
    def reserve_spaces(self, garage_id: str, spaces: int) -> dict:
        """Reserve spaces for a group; fails when fewer spaces are free.

        Args:
            garage_id: Garage id.
            spaces: Spaces to reserve (positive).
        """
        return self.adjust(garage_id, "free_spaces", -positive(spaces, "spaces"), what="spaces")

    @tool(write=True)
    def release_spaces(self, garage_id: str, spaces: int) -> dict:
        """Release reserved spaces; free spaces cannot exceed the capacity.

        Args:
            garage_id: Garage id.
            spaces: Spaces to release (positive).
        """
        return self.adjust(garage_id, "free_spaces", positive(spaces, "spaces"), cap=self.record(garage_id)["capacity"], what="spaces")

    @tool(write=True)
    def set_rate(self, garage_id: str, hourly_rate: float) -> dict:
        """Change a garage's hourly rate.

        Args:
            garage_id: Garage id.
            hourly_rate: New rate in dollars per hour (positive).
        """
        return self.assign(garage_id, "hourly_rate", money(positive(hourly_rate, "hourly_rate")))


def _garage(rng: random.Random) -> dict:
    capacity = rng.choice((40, 60, 80, 120))
    return {"free_spaces": rng.randint(0, capacity), "capacity": capacity, "hourly_rate": money(rng.randint(2, 9) + 0.5)}


PARKING = Domain(
    name="parking",
    world=Parking,
    description="You are a parking operator's assistant managing city garages.",
    words=(
        ("North", "South", "East", "West", "Harbor", "Central", "Airport", "Market"),
        ("Plaza", "Tower", "Square", "Station", "Deck", "Yard"),
    ),
    make_record=_garage,
    fields=(("free_spaces", "number of free spaces"), ("hourly_rate", "hourly rate"), ("capacity", "capacity")),
    actions=(
        Adjust(
            "reserve_spaces", "garage_id", "spaces", "free_spaces", -1, "reserve {amount} spaces at {ref}", (2, 20), "spaces", None, "group"
        ),
        Adjust(
            "release_spaces", "garage_id", "spaces", "free_spaces", 1, "release {amount} spaces at {ref}", (2, 20), "spaces", "capacity"
        ),
        Assign(
            "set_rate",
            "garage_id",
            "hourly_rate",
            "hourly_rate",
            "set the hourly rate of {ref} to {value} dollars",
            scaled("hourly_rate", 0.5, 1.8),
        ),
    ),
    extras=("search_garages",),
    limits={"group": (10, 20)},
)
