"""ACEBench's food-delivery platform (``FoodPlatform``): its own logins, balances and orders.

Follows ACEBench's ``scenariosen`` / ``scenarioszh`` ``food_services.py``; the Chinese class
refuses an order that costs exactly the user's balance, the English one accepts it.
"""

from __future__ import annotations

from typing import Any

from envsched_gym.envs.acebench.phone import BaseApi, Result

from envsched_gym import tool


class FoodPlatform(BaseApi):
    """A food-delivery platform with its own logins and user balances."""

    saved_attributes = ("users", "logged_in_users", "orders")

    def __init__(self) -> None:
        super().__init__()
        self.users: dict[str, dict[str, Any]] = {}
        self.merchant_list: dict[str, dict[str, Any]] = {}
        self.logged_in_users: list[str] = []
        self.orders: list[dict[str, Any]] = []

    def load_scenario(self, config: dict[str, Any]) -> None:
        super().load_scenario(config)
        self.logged_in_users = list(config.get("logged_in_users", []))

    @tool(write=True)
    def login_food_platform(self, username: str, password: str) -> Result:
        """Log in to the food platform.

        Args:
            username: The username.
            password: The password.
        """
        if not self.wifi:
            return self._fail("food_no_wifi")
        if username not in self.users:
            return self._fail("no_user")
        if self.users[username]["password"] != password:
            return self._fail("wrong_password")
        if username in self.logged_in_users:
            return self._fail("already_logged_in", user=username)
        self.logged_in_users.append(username)
        return {"status": True, "message": self._say("food_logged_in", user=username)}

    @tool
    def view_logged_in_users(self) -> Result:
        """View all users currently logged in to the food platform."""
        if not self.logged_in_users:
            return self._fail("nobody_logged_in")
        return {"status": True, "logged_in_users": self.logged_in_users}

    @tool
    def check_balance(self, user_name: str) -> float:
        """Check the balance of a user (0.0 for an unknown user, as in the original).

        Args:
            user_name: The user's name.
        """
        return float(self.users[user_name]["balance"]) if user_name in self.users else 0.0

    @tool(write=True)
    def add_food_delivery_order(self, username: str, merchant_name: str, items: list[dict[str, Any]]) -> Result:
        """Place a food delivery order for a logged-in user.

        Args:
            username: The user placing the order.
            merchant_name: The merchant's name.
            items: Items, each ``{"product": name, "quantity": n}``.
        """
        if username not in self.logged_in_users:
            return self._fail("food_not_logged_in", user=username)
        if merchant_name not in self.merchant_list:
            return self._fail("no_merchant")
        menu = {p["product"]: p["price"] for p in self.merchant_list[merchant_name]["menu"]}
        total, lines = 0.0, []
        for item in items:
            product, quantity = item.get("product"), item.get("quantity", 1)
            if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity <= 0:
                return self._fail("bad_quantity", quantity=quantity, product=product)
            if product not in menu:
                return self._fail("no_product", product=product, merchant=merchant_name)
            total += menu[product] * quantity
            lines.append({"product": product, "quantity": quantity, "price_per_unit": menu[product]})
        balance = self.users[username]["balance"]
        if total > balance or (self._language == "zh" and total == balance):  # the zh original refuses an exact balance
            return self._fail("insufficient_balance")
        self.users[username]["balance"] -= total
        self.orders.append({"user_name": username, "merchant_name": merchant_name, "items": lines, "total_price": total})
        return {"status": True, "message": self._say("ordered", merchant=merchant_name, total=total)}

    @tool
    def get_products(self, merchant_name: str) -> Any:
        """Get the menu of a merchant.

        Args:
            merchant_name: The merchant's name.
        """
        merchant = self.merchant_list.get(merchant_name)
        return merchant["menu"] if merchant else self._fail("merchant_missing", merchant=merchant_name)

    @tool
    def view_orders(self, user_name: str) -> Result:
        """View all orders of a user.

        Args:
            user_name: The user's name.
        """
        found = [o for o in self.orders if o["user_name"] == user_name]
        return {"status": True, "orders": found} if found else self._fail("no_orders")

    @tool
    def search_orders(self, keyword: str) -> Result:
        """Search orders by merchant or product keyword.

        Args:
            keyword: The keyword.
        """
        key = keyword.lower()
        found = [
            o for o in self.orders
            if key in o["merchant_name"].lower() or any(key in i["product"].lower() for i in o.get("items", []))
        ]  # fmt: skip
        return {"status": True, "orders": found} if found else self._fail("no_matching_orders")
