"""Retail tool behaviour, case by case, from policy.md and the τ2 database."""

from __future__ import annotations

import json

import pytest
from envsched_gym.envs.tau.retail import RetailWorld

from envsched_gym import ToolError

PENDING_GIFT = "#W6779827"  # ethan_lopez_6291, paid 4079.45 with gift_card_7219486 (balance 49.0)
PENDING_CARD = "#W5918442"  # sofia_rossi_8776, paid 1463.7 with credit_card_5051208
DELIVERED_CARD = "#W6304490"  # omar_khan_2363, paid with credit_card_4420174
DELIVERED_PAYPAL = "#W1840144"  # harper_brown_7363, paid with paypal_2306935; also owns credit_card_3240550


def _other_variant(world: RetailWorld, order_id: str, index: int = 0) -> tuple[dict, dict]:
    """An order item and an available variant of the same product with a different id."""
    item = world.db.peek("orders", order_id)["items"][index]
    variants = world.db.peek("products", item["product_id"])["variants"]
    new = next(v for k, v in sorted(variants.items()) if k != item["item_id"] and v["available"])
    return item, new


def test_find_user_by_email_ignores_case_and_reports_unknown(retail: RetailWorld) -> None:
    user = retail.db.peek("users", "omar_khan_2363")
    assert retail.call("find_user_id_by_email", {"email": user["email"].upper()}) == "omar_khan_2363"
    with pytest.raises(ToolError, match=r"^User not found$"):
        retail.call("find_user_id_by_email", {"email": "nobody@example.com"})


def test_find_user_by_name_zip_needs_the_exact_zip(retail: RetailWorld) -> None:
    args = {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}
    assert retail.call("find_user_id_by_name_zip", args) == "yusuf_rossi_9620"
    with pytest.raises(ToolError, match="User not found"):
        retail.call("find_user_id_by_name_zip", {**args, "zip": "19123"})


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("get_order_details", {"order_id": "W6779827"}, "Order not found"),
        ("get_product_details", {"product_id": "0"}, "Product not found"),
        ("get_item_details", {"item_id": "0"}, "Item not found"),
        ("get_user_details", {"user_id": "nobody_1"}, "User not found"),
        ("calculate", {"expression": "__import__('os')"}, "Invalid characters in expression"),
        ("calculate", {"expression": "1 / 0"}, "division by zero"),
    ],
)
def test_lookup_errors(retail: RetailWorld, tool: str, args: dict, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        retail.call(tool, args)


def test_calculate_rounds_to_cents(retail: RetailWorld) -> None:
    assert retail.call("calculate", {"expression": "652.61 + 473.43"}) == "1126.04"
    assert retail.call("calculate", {"expression": "(1 + 2) * 3 / 4"}) == "2.25"
    assert retail.call("calculate", {"expression": "2 ** 10"}) == "1024.0"


def test_list_all_product_types_is_sorted_json_of_50(retail: RetailWorld) -> None:
    types = json.loads(retail.call("list_all_product_types", {}))
    assert len(types) == 50 and list(types) == sorted(types)


def test_cancel_pending_order_refunds_gift_card_immediately(retail: RetailWorld) -> None:
    order = retail.call("cancel_pending_order", {"order_id": PENDING_GIFT, "reason": "ordered by mistake"})
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"][-1] == {"transaction_type": "refund", "amount": 4079.45, "payment_method_id": "gift_card_7219486"}
    assert retail.db.peek("users", "ethan_lopez_6291")["payment_methods"]["gift_card_7219486"]["balance"] == round(49.0 + 4079.45, 2)


def test_cancel_pending_order_by_card_leaves_no_balance_change(retail: RetailWorld) -> None:
    before = json.dumps(retail.db.peek("users", "sofia_rossi_8776"), sort_keys=True)
    order = retail.call("cancel_pending_order", {"order_id": PENDING_CARD, "reason": "no longer needed"})
    assert order["payment_history"][-1]["transaction_type"] == "refund"
    assert json.dumps(retail.db.peek("users", "sofia_rossi_8776"), sort_keys=True) == before


@pytest.mark.parametrize(
    ("order_id", "reason", "message"),
    [
        (DELIVERED_CARD, "no longer needed", "Non-pending order cannot be cancelled"),
        (PENDING_CARD, "found it cheaper", "Invalid reason"),
    ],
)
def test_cancel_refusals(retail: RetailWorld, order_id: str, reason: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        retail.call("cancel_pending_order", {"order_id": order_id, "reason": reason})
    assert retail.db.peek("orders", order_id)["status"] != "cancelled"


def test_exchange_delivered_items_records_the_request_and_price_difference(retail: RetailWorld) -> None:
    item, new = _other_variant(retail, DELIVERED_CARD)
    args = {
        "order_id": DELIVERED_CARD,
        "item_ids": [item["item_id"]],
        "new_item_ids": [new["item_id"]],
        "payment_method_id": "credit_card_4420174",
    }
    order = retail.call("exchange_delivered_order_items", args)
    assert order["status"] == "exchange requested"
    assert order["exchange_items"] == [item["item_id"]] and order["exchange_new_items"] == [new["item_id"]]
    assert order["exchange_price_difference"] == round(new["price"] - item["price"], 2)
    with pytest.raises(ToolError, match="Non-delivered order cannot be exchanged"):
        retail.call("exchange_delivered_order_items", args)  # once only: the order is no longer 'delivered'


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"order_id": PENDING_CARD}, "Non-delivered order cannot be exchanged"),
        ({"item_ids": ["0000000000"], "new_item_ids": ["1"]}, "Number of 0000000000 not found."),
        ({"new_item_ids": []}, "The number of items to be exchanged should match."),
        ({"new_item_ids": ["1725100896"]}, "Variant not found"),
        ({"payment_method_id": "gift_card_0000000"}, "Payment method not found"),
    ],
)
def test_exchange_refusals(retail: RetailWorld, change: dict, message: str) -> None:
    item, new = _other_variant(retail, DELIVERED_CARD)
    args = {
        "order_id": DELIVERED_CARD,
        "item_ids": [item["item_id"]],
        "new_item_ids": [new["item_id"]],
        "payment_method_id": "credit_card_4420174",
    }
    with pytest.raises(ToolError, match=message):
        retail.call("exchange_delivered_order_items", {**args, **change})


def test_return_to_original_method(retail: RetailWorld) -> None:
    items = [i["item_id"] for i in retail.db.peek("orders", DELIVERED_PAYPAL)["items"][:2]]
    order = retail.call(
        "return_delivered_order_items", {"order_id": DELIVERED_PAYPAL, "item_ids": items, "payment_method_id": "paypal_2306935"}
    )
    assert order["status"] == "return requested" and order["return_items"] == sorted(items)
    assert order["return_payment_method_id"] == "paypal_2306935"


@pytest.mark.parametrize(
    ("order_id", "item_ids", "method", "message"),
    [
        (DELIVERED_PAYPAL, ["8384507844"], "credit_card_3240550", "Payment method should be the original payment method"),
        (DELIVERED_PAYPAL, ["8384507844", "8384507844"], "paypal_2306935", "Some item not found"),
        (PENDING_CARD, ["1725100896"], "credit_card_5051208", "Non-delivered order cannot be returned"),
    ],
)
def test_return_refusals(retail: RetailWorld, order_id: str, item_ids: list[str], method: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        retail.call("return_delivered_order_items", {"order_id": order_id, "item_ids": item_ids, "payment_method_id": method})


def test_modify_pending_order_address_and_refusal_once_delivered(retail: RetailWorld) -> None:
    address = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "78701"}
    order = retail.call("modify_pending_order_address", {"order_id": PENDING_CARD, **address})
    assert order["address"] == address
    with pytest.raises(ToolError, match="Non-pending order cannot be modified"):
        retail.call("modify_pending_order_address", {"order_id": DELIVERED_CARD, **address})


def test_modify_user_address(retail: RetailWorld) -> None:
    address = {"address1": "2 Oak Ave", "address2": "Apt 3", "city": "Denver", "state": "CO", "country": "USA", "zip": "80202"}
    user = retail.call("modify_user_address", {"user_id": "omar_khan_2363", **address})
    assert user["address"] == address and retail.db.peek("users", "omar_khan_2363")["address"] == address


def test_modify_pending_items_charges_difference_and_only_once(retail: RetailWorld) -> None:
    item, new = _other_variant(retail, PENDING_CARD)
    args = {
        "order_id": PENDING_CARD,
        "item_ids": [item["item_id"]],
        "new_item_ids": [new["item_id"]],
        "payment_method_id": "credit_card_5051208",
    }
    order = retail.call("modify_pending_order_items", args)
    diff = new["price"] - item["price"]
    assert order["status"] == "pending (item modified)"
    assert order["payment_history"][-1] == {
        "transaction_type": "payment" if diff > 0 else "refund",
        "amount": abs(diff),
        "payment_method_id": "credit_card_5051208",
    }
    changed = next(i for i in order["items"] if i["item_id"] == new["item_id"])
    assert changed["price"] == new["price"] and changed["options"] == new["options"]
    with pytest.raises(ToolError, match="Non-pending order cannot be modified"):
        retail.call("modify_pending_order_items", args)


def test_modify_pending_items_refusals(retail: RetailWorld) -> None:
    item, _ = _other_variant(retail, PENDING_CARD)
    same = {
        "order_id": PENDING_CARD,
        "item_ids": [item["item_id"]],
        "new_item_ids": [item["item_id"]],
        "payment_method_id": "credit_card_5051208",
    }
    with pytest.raises(ToolError, match="The new item id should be different from the old item id"):
        retail.call("modify_pending_order_items", same)
    upgrades = [
        (v["price"] - i["price"], i["item_id"], v["item_id"])
        for i in retail.db.peek("orders", PENDING_GIFT)["items"]
        for v in retail.db.peek("products", i["product_id"])["variants"].values()
        if v["available"] and v["item_id"] != i["item_id"]
    ]
    diff, old_id, new_id = max(upgrades)
    assert diff > 49.0  # dearer than the gift card's balance
    costly = {"order_id": PENDING_GIFT, "item_ids": [old_id], "new_item_ids": [new_id], "payment_method_id": "gift_card_7219486"}
    with pytest.raises(ToolError, match="Insufficient gift card balance to pay for the new item"):
        retail.call("modify_pending_order_items", costly)


def test_modify_pending_payment_swaps_method_with_payment_and_refund(retail: RetailWorld) -> None:
    order = retail.call("modify_pending_order_payment", {"order_id": PENDING_GIFT, "payment_method_id": "credit_card_9789590"})
    assert order["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": 4079.45, "payment_method_id": "credit_card_9789590"},
        {"transaction_type": "refund", "amount": 4079.45, "payment_method_id": "gift_card_7219486"},
    ]
    assert retail.db.peek("users", "ethan_lopez_6291")["payment_methods"]["gift_card_7219486"]["balance"] == round(49.0 + 4079.45, 2)
    with pytest.raises(ToolError, match="There should be exactly one payment for a pending order"):
        retail.call("modify_pending_order_payment", {"order_id": PENDING_GIFT, "payment_method_id": "gift_card_7219486"})


def test_modify_pending_payment_refusals(retail: RetailWorld) -> None:
    with pytest.raises(ToolError, match="The new payment method should be different from the current one"):
        retail.call("modify_pending_order_payment", {"order_id": PENDING_GIFT, "payment_method_id": "gift_card_7219486"})
    with pytest.raises(ToolError, match="Payment method not found"):
        retail.call("modify_pending_order_payment", {"order_id": PENDING_CARD, "payment_method_id": "paypal_1"})


def test_transfer_to_human_agents(retail: RetailWorld) -> None:
    assert retail.call("transfer_to_human_agents", {"summary": "wants a refund to another card"}) == "Transfer successful"


def test_refused_write_leaves_db_hash_unchanged(retail: RetailWorld) -> None:
    before = retail.sha256()
    with pytest.raises(ToolError):
        retail.call("cancel_pending_order", {"order_id": DELIVERED_CARD, "reason": "no longer needed"})
    assert retail.sha256() == before
