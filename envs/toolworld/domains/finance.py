"""Finance domains: bank accounts, payroll, department budgets, sales deals, loyalty points."""

from __future__ import annotations

import random
from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Move, Transition, pick, scaled
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.commerce import FIRST_NAMES, LAST_NAMES
from envsched_gym.envs.toolworld.records import RecordWorld, money, positive
from envsched_gym.tool import tool

DEPARTMENTS = ("sales", "engineering", "support", "finance", "marketing")


class Banking(RecordWorld):
    """Bank accounts: balance in dollars and whether the account is open or frozen."""

    noun = "account"
    id_prefix = "ACC"

    @tool
    def find_account(self, name: str) -> dict:
        """Look up an account's id by the holder's full name.

        Args:
            name: Account holder, e.g. "Elena Silva".
        """
        return self.lookup(name)

    @tool
    def get_account(self, account_id: str) -> dict:
        """Read an account: balance in dollars and status.

        Args:
            account_id: Account id such as "ACC-010".
        """
        return self.view(account_id)

    @tool(write=True)
    def transfer_funds(self, from_account: str, to_account: str, amount: float) -> dict:
        """Move money between two accounts; fails when the source balance is too low.

        Args:
            from_account: Id of the account to debit.
            to_account: Id of the account to credit.
            amount: Dollars to move (positive).
        """
        return self.transfer(from_account, to_account, "balance", money(amount))

    @tool(write=True)
    def deposit(self, account_id: str, amount: float) -> dict:
        """Deposit money into an account.

        Args:
            account_id: Account id.
            amount: Dollars to deposit (positive).
        """
        return self.adjust(account_id, "balance", money(positive(amount)), what="dollars")

    @tool(write=True)
    def withdraw(self, account_id: str, amount: float) -> dict:
        """Withdraw money; fails when the balance is too low.

        Args:
            account_id: Account id.
            amount: Dollars to withdraw (positive).
        """
        return self.adjust(account_id, "balance", -money(positive(amount)), what="dollars")

    @tool(write=True)
    def freeze_account(self, account_id: str) -> dict:
        """Freeze an open account (for a lost card or suspected fraud).

        Args:
            account_id: Account id.
        """
        return self.transition(account_id, "frozen", ("open",))


BANKING = Domain(
    name="banking",
    world=Banking,
    description="You are a bank's assistant. Accounts are found by the holder's full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {"balance": money(rng.randint(20, 4000) + rng.randint(0, 99) / 100), "status": rng.choice(("open", "open", "open", "frozen"))},
    fields=(("balance", "balance"), ("status", "account status")),
    actions=(
        Move("transfer_funds", "from_account", "to_account", "amount", "balance", "transfer {amount} dollars from {ref} to {dst}", (10, 900), "dollars", "account", "transfer"),
        Adjust("withdraw", "account_id", "amount", "balance", -1, "withdraw {amount} dollars from {ref}", (10, 500), "dollars", None, "withdrawal"),
        Adjust("deposit", "account_id", "amount", "balance", 1, "deposit {amount} dollars into {ref}", (10, 800), "dollars"),
        Transition("freeze_account", "account_id", "frozen", ("open",), "freeze {ref}"),
    ),
    limits={"transfer": (300, 1000), "withdrawal": (200, 600)},
)


class Payroll(RecordWorld):
    """Employees: annual salary, leave days left and department."""

    noun = "employee"
    id_prefix = "EMP"

    @tool
    def find_employee(self, name: str) -> dict:
        """Look up an employee's id by full name.

        Args:
            name: Employee name, e.g. "Hugo Novak".
        """
        return self.lookup(name)

    @tool
    def get_employee(self, employee_id: str) -> dict:
        """Read an employee: salary in dollars, leave days left and department.

        Args:
            employee_id: Employee id such as "EMP-005".
        """
        return self.view(employee_id)

    @tool
    def list_department(self, department: Literal["sales", "engineering", "support", "finance", "marketing"]) -> list:
        """List the employees of a department.

        Args:
            department: Department name.
        """
        return [{"employee_id": rid, "name": r["name"]} for rid, r in self.records.items() if r["department"] == department]

    @tool(write=True)
    def book_leave(self, employee_id: str, days: int) -> dict:
        """Book leave days; fails when the employee has fewer days left.

        Args:
            employee_id: Employee id.
            days: Days of leave (positive).
        """
        return self.adjust(employee_id, "leave_days", -positive(days, "days"), what="leave days")

    @tool(write=True)
    def give_raise(self, employee_id: str, amount: int) -> dict:
        """Raise an employee's annual salary.

        Args:
            employee_id: Employee id.
            amount: Yearly raise in whole dollars (positive).
        """
        return self.adjust(employee_id, "salary", positive(amount), what="dollars")

    @tool(write=True)
    def change_department(self, employee_id: str, department: Literal["sales", "engineering", "support", "finance", "marketing"]) -> dict:
        """Move an employee to another department.

        Args:
            employee_id: Employee id.
            department: New department.
        """
        return self.assign(employee_id, "department", department)


PAYROLL = Domain(
    name="payroll",
    world=Payroll,
    description="You are an HR assistant managing salaries, leave and departments. Employees are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {"salary": rng.randint(40, 150) * 1000, "leave_days": rng.randint(0, 25), "department": rng.choice(DEPARTMENTS)},
    fields=(("salary", "salary"), ("leave_days", "number of leave days left"), ("department", "department")),
    actions=(
        Adjust("give_raise", "employee_id", "amount", "salary", 1, "give {ref} a raise of {amount} dollars", (500, 6000), "dollars", None, "raise"),
        Adjust("book_leave", "employee_id", "days", "leave_days", -1, "book {amount} days of leave for {ref}", (1, 10), "leave days"),
        Assign("change_department", "employee_id", "department", "department", "move {ref} to the {value} department", pick(DEPARTMENTS)),
    ),
    extras=("list_department",),
    limits={"raise": (2000, 5000)},
)


class Budgets(RecordWorld):
    """Department budgets: amount allocated, amount spent and whether the budget is open."""

    noun = "budget"
    id_prefix = "BUD"

    @tool
    def find_budget(self, name: str) -> dict:
        """Look up a budget's id by name.

        Args:
            name: Budget name, e.g. "Travel Q3".
        """
        return self.lookup(name)

    @tool
    def get_budget(self, budget_id: str) -> dict:
        """Read a budget: allocated and spent dollars and status.

        Args:
            budget_id: Budget id such as "BUD-001".
        """
        return self.view(budget_id)

    @tool(write=True)
    def reallocate(self, from_budget: str, to_budget: str, amount: int) -> dict:
        """Move allocated money from one budget to another; the source must have it allocated.

        Args:
            from_budget: Id of the budget giving money.
            to_budget: Id of the budget receiving money.
            amount: Dollars to move (positive).
        """
        return self.transfer(from_budget, to_budget, "allocated", amount)

    @tool(write=True)
    def record_expense(self, budget_id: str, amount: int) -> dict:
        """Record spending against a budget; spending cannot exceed the allocation.

        Args:
            budget_id: Budget id.
            amount: Dollars spent (positive).
        """
        return self.adjust(budget_id, "spent", positive(amount), cap=self.record(budget_id)["allocated"], what="dollars")

    @tool(write=True)
    def close_budget(self, budget_id: str) -> dict:
        """Close an open budget to further spending.

        Args:
            budget_id: Budget id.
        """
        return self.transition(budget_id, "closed", ("open",))


def _budget(rng: random.Random) -> dict:
    allocated = rng.randint(5, 60) * 500
    return {"allocated": allocated, "spent": rng.randint(0, allocated // 500) * 500, "status": rng.choice(("open", "open", "closed"))}


BUDGETS = Domain(
    name="budgets",
    world=Budgets,
    description="You are a finance assistant tracking department budgets.",
    words=(("Travel", "Hardware", "Software", "Events", "Training", "Hiring", "Office"), ("Q1", "Q2", "Q3", "Q4", "H1", "H2")),
    make_record=_budget,
    fields=(("allocated", "allocated amount"), ("spent", "amount spent"), ("status", "status")),
    actions=(
        Move("reallocate", "from_budget", "to_budget", "amount", "allocated", "move {amount} dollars of allocation from {ref} to {dst}", (500, 8000), "dollars", "budget", "realloc"),
        Adjust("record_expense", "budget_id", "amount", "spent", 1, "record an expense of {amount} dollars on {ref}", (100, 5000), "dollars", "allocated"),
        Transition("close_budget", "budget_id", "closed", ("open",), "close {ref}"),
    ),
    limits={"realloc": (2000, 6000)},
)


class Deals(RecordWorld):
    """A sales pipeline: each deal has a value in dollars and a stage."""

    noun = "deal"
    id_prefix = "DL"

    @tool
    def find_deal(self, name: str) -> dict:
        """Look up a deal's id by the client company's name.

        Args:
            name: Client name, e.g. "Apex Foods".
        """
        return self.lookup(name)

    @tool
    def get_deal(self, deal_id: str) -> dict:
        """Read a deal: value in dollars, owner and status (its pipeline stage).

        Args:
            deal_id: Deal id such as "DL-009".
        """
        return self.view(deal_id)

    @tool
    def search_deals(self, query: str) -> list:
        """List the deals whose client name contains some text.

        Args:
            query: Part of a client name.
        """
        return self.search(query)

    @tool(write=True)
    def qualify_deal(self, deal_id: str) -> dict:
        """Move a deal from lead to qualified.

        Args:
            deal_id: Deal id.
        """
        return self.transition(deal_id, "qualified", ("lead",))

    @tool(write=True)
    def close_won(self, deal_id: str) -> dict:
        """Mark a qualified deal as won.

        Args:
            deal_id: Deal id.
        """
        return self.transition(deal_id, "won", ("qualified",))

    @tool(write=True)
    def set_deal_value(self, deal_id: str, value: int) -> dict:
        """Update a deal's expected value.

        Args:
            deal_id: Deal id.
            value: New value in whole dollars (positive).
        """
        return self.assign(deal_id, "value", int(positive(value, "value")))

    @tool(write=True)
    def reassign_deal(self, deal_id: str, owner: Literal["Maya", "Omar", "Priya", "Tom"]) -> dict:
        """Hand a deal to another sales rep.

        Args:
            deal_id: Deal id.
            owner: The new owner.
        """
        return self.assign(deal_id, "owner", owner)


OWNERS = ("Maya", "Omar", "Priya", "Tom")

DEALS = Domain(
    name="deals",
    world=Deals,
    description="You are a CRM assistant managing the sales pipeline. Deals are found by the client's name.",
    words=(("Apex", "Blue", "Cedar", "Delta", "Ember", "Falcon", "Granite", "Harbor"), ("Foods", "Logistics", "Labs", "Media", "Motors", "Health")),
    make_record=lambda rng: {"value": rng.randint(5, 200) * 1000, "owner": rng.choice(OWNERS), "status": rng.choice(("lead", "lead", "qualified", "qualified", "won"))},
    fields=(("value", "deal value"), ("owner", "owner"), ("status", "stage")),
    actions=(
        Transition("qualify_deal", "deal_id", "qualified", ("lead",), "qualify {ref}"),
        Transition("close_won", "deal_id", "won", ("qualified",), "mark {ref} as won"),
        Assign("set_deal_value", "deal_id", "value", "value", "set the value of {ref} to {value} dollars", scaled("value", 0.5, 1.5, step=1000)),
        Assign("reassign_deal", "deal_id", "owner", "owner", "reassign {ref} to {value}", pick(OWNERS)),
    ),
    extras=("search_deals",),
)


class Loyalty(RecordWorld):
    """A loyalty programme: members with points and a tier."""

    noun = "member"
    id_prefix = "LOY"

    @tool
    def find_member(self, name: str) -> dict:
        """Look up a loyalty member's id by full name.

        Args:
            name: Member name, e.g. "Ines Haddad".
        """
        return self.lookup(name)

    @tool
    def get_member(self, member_id: str) -> dict:
        """Read a member: points balance and tier.

        Args:
            member_id: Member id such as "LOY-014".
        """
        return self.view(member_id)

    @tool(write=True)
    def award_points(self, member_id: str, points: int) -> dict:
        """Award points to a member.

        Args:
            member_id: Member id.
            points: Points to add (positive).
        """
        return self.adjust(member_id, "points", positive(points, "points"), what="points")

    @tool(write=True)
    def redeem_points(self, member_id: str, points: int) -> dict:
        """Redeem points for a reward; fails when the member has fewer points.

        Args:
            member_id: Member id.
            points: Points to redeem (positive).
        """
        return self.adjust(member_id, "points", -positive(points, "points"), what="points")

    @tool(write=True)
    def gift_points(self, from_member: str, to_member: str, points: int) -> dict:
        """Give points from one member to another.

        Args:
            from_member: Id of the giving member.
            to_member: Id of the receiving member.
            points: Points to give (positive).
        """
        return self.transfer(from_member, to_member, "points", points)

    @tool(write=True)
    def set_tier(self, member_id: str, tier: Literal["bronze", "silver", "gold"]) -> dict:
        """Change a member's tier.

        Args:
            member_id: Member id.
            tier: New tier.
        """
        return self.assign(member_id, "tier", tier)


LOYALTY = Domain(
    name="loyalty",
    world=Loyalty,
    description="You are a loyalty programme assistant. Members are found by full name.",
    words=(FIRST_NAMES, LAST_NAMES),
    make_record=lambda rng: {"points": rng.randint(0, 5000), "tier": rng.choice(("bronze", "silver", "gold"))},
    fields=(("points", "points balance"), ("tier", "tier")),
    actions=(
        Adjust("redeem_points", "member_id", "points", "points", -1, "redeem {amount} points for {ref}", (100, 2000), "points"),
        Adjust("award_points", "member_id", "points", "points", 1, "award {amount} points to {ref}", (50, 1500), "points", None, "award"),
        Move("gift_points", "from_member", "to_member", "points", "points", "gift {amount} points from {ref} to {dst}", (50, 1000), "points", "member"),
        Assign("set_tier", "member_id", "tier", "tier", "change the tier of {ref} to {value}", pick(("bronze", "silver", "gold"))),
    ),
    limits={"award": (500, 1000)},
)
