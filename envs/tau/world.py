"""``TauWorld``: the base of the retail and airline worlds (DB handling and the shared tools)."""

from __future__ import annotations

import ast
import operator
import unicodedata
from collections.abc import Callable
from typing import Any

from envsched_gym.envs.tau.db import BaseDB, Record, TauDB

from envsched_gym import ToolError, World, tool

_ALLOWED_CHARS = frozenset("0123456789+-*/(). ")
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
}  # fmt: skip
MAX_EXPONENT = 64
MAX_DIGITS = 1000
"""Largest integer (in decimal digits) ``calculate`` builds: checked before each ``*`` and ``**``,
whose cost grows with the digits of the result (``(((9**64)**64)**64)**64`` has 16 million)."""
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def arithmetic(expression: str) -> float:
    """Value of an arithmetic expression (τ2's characters: digits, ``+ - * / ( ) .``), read with :mod:`ast`.

    τ2 evaluates the string with Python; here it is parsed, never executed, so ``**`` and
    ``//`` work as in Python while anything but arithmetic is refused.

    Raises:
        ToolError: Other characters or syntax, a division by zero, or an overflow.
    """
    if not all(char in _ALLOWED_CHARS for char in expression):
        raise ToolError("Invalid characters in expression")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        return float(_evaluate(tree.body))
    except SyntaxError as exc:
        raise ToolError(f"invalid syntax in expression: {exc.msg}") from None
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("result too large") from None
    except (RecursionError, MemoryError):
        raise ToolError("expression nested too deeply") from None
    except ValueError as exc:  # a literal of more than 4300 digits
        raise ToolError(f"invalid number in expression: {exc}") from None


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ToolError(f"exponent {right} is too large (at most {MAX_EXPONENT})")
        if _result_digits(node.op, left, right) > MAX_DIGITS:
            raise ToolError(f"result too large (more than {MAX_DIGITS} digits)")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    raise SyntaxError("only numbers, arithmetic operators and parentheses are allowed")


def _digits(value: Any) -> float:
    """Decimal digits of an integer's magnitude, from its bit length (no conversion)."""
    return value.bit_length() * 0.30103 if isinstance(value, int) else 0.0


def _result_digits(op: ast.operator, left: Any, right: Any) -> float:
    """An upper bound on the digits of ``left op right`` for integers (floats overflow instead)."""
    if isinstance(op, ast.Pow) and isinstance(right, int) and right > 0:
        return _digits(left) * right
    if isinstance(op, ast.Mult):
        return _digits(left) + _digits(right)
    return max(_digits(left), _digits(right))


def fold(text: str) -> str:
    """Text for tolerant matching: accents stripped, case folded, whitespace collapsed."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split())


class TauWorld(World):
    """A τ-bench domain over a copy-on-write :class:`TauDB`.

    The public state is the database (``state()`` / ``load_state()`` exchange the whole DB as
    plain data); :meth:`sha256` is the hash the DB check compares.

    Args:
        base: The domain's process-wide database.
    """

    def __init__(self, base: BaseDB) -> None:
        self._db = TauDB(base)

    @property
    def db(self) -> TauDB:
        """The episode's database."""
        return self._db

    def state(self) -> dict[str, dict[str, Record]]:
        """The whole database as an independent plain-data copy."""
        return self._db.to_dict()

    def load_state(self, state: dict[str, Any]) -> None:
        """Replace the database with ``state`` (``{table: {key: record}}``), copied."""
        self._db = TauDB(BaseDB(TauDB(BaseDB(state)).to_dict()))

    def sha256(self) -> str:
        """SHA-256 of the database's canonical sorted-key JSON dump."""
        return self._db.sha256()

    def _require(self, table: str, key: str, message: str) -> Record:
        """The episode's mutable copy of a record; ``ToolError(message)`` when absent."""
        record = self._db.get(table, key)
        if record is None:
            raise ToolError(message)
        return record

    @tool
    def calculate(self, expression: str) -> str:
        """Calculate the result of a mathematical expression.

        Args:
            expression: The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces.
        """
        return str(round(arithmetic(expression), 2))

    @tool
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if -  the user explicitly asks for a human agent -  given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.
        """
        return "Transfer successful"
