"""Finance domains: bank accounts, payroll, department budgets."""

from __future__ import annotations

import random
from typing import Literal

from envsched_gym.envs.toolworld.actions import Adjust, Assign, Move, Transition, pick
from envsched_gym.envs.toolworld.domain import Domain
from envsched_gym.envs.toolworld.domains.people import FIRST_NAMES, LAST_NAMES
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
    make_record=lambda rng: {
        "balance": money(rng.randint(20, 4000) + rng.randint(0, 99) / 100),
        "status": rng.choice(("open", "open", "open", "frozen")),
    },
    fields=(("balance", "balance"), ("status", "account status")),
    actions=(
        Move(
            "transfer_funds",
            "from_account",
            "to_account",
            "amount",
            "balance",
            "transfer {amount} dollars from {ref} to {dst}",
            (10, 900),
            "dollars",
            "account",
            "transfer",
        ),
        Adjust(
            "withdraw",
            "account_id",
            "amount",
            "balance",
            -1,
            "withdraw {amount} dollars from {ref}",
            (10, 500),
            "dollars",
            None,
            "withdrawal",
        ),
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
    make_record=lambda rng: {
        "salary": rng.randint(40, 150) * 1000,
        "leave_days": rng.randint(0, 25),
        "department": rng.choice(DEPARTMENTS),
    },
    fields=(("salary", "salary"), ("leave_days", "number of leave days left"), ("department", "department")),
    actions=(
        Adjust(
            "give_raise",
            "employee_id",
            "amount",
            "salary",
            1,
            "give {ref} a raise of {amount} dollars",
            (500, 6000),
            "dollars",
            None,
            "raise",
        ),
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
        Move(
            "reallocate",
            "from_budget",
            "to_budget",
            "amount",
            "allocated",
            "move {amount} dollars of allocation from {ref} to {dst}",
            (500, 8000),
            "dollars",
            "budget",
            "realloc",
        ),
        Adjust(
            "record_expense",
            "budget_id",
            "amount",
            "spent",
            1,
            "record an expense of {amount} dollars on {ref}",
            (100, 5000),
            "dollars",
            "allocated",
        ),
        Transition("close_budget", "budget_id", "closed", ("open",), "close {ref}"),
    ),
    limits={"realloc": (2000, 6000)},
)
