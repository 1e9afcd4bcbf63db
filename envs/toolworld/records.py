"""``RecordWorld``: the stateful base every ToolWorld domain builds its tools on.

A domain's state is one table of records (``records``: id -> fields), each with a unique
``name``. Domains write their tools as ordinary ``@tool`` methods with their own names,
parameters and docstrings; the checked primitives here (look-ups, bounded adjustments,
transfers, status transitions) keep the rules (balances, capacities, allowed transitions)
identical across domains, so the task generator can reason about them.
"""

from __future__ import annotations

import difflib
from typing import Any, ClassVar

from envsched_gym.declarations import ToolSpec
from envsched_gym.world import ToolError, World


def money(value: float) -> float:
    """Round to cents, so balances never drift by float error."""
    return round(value + 0.0, 2)


class RecordWorld(World):
    """A world over one table of named records.

    Attributes:
        records: Record id -> field dict (every record has ``name``).
        noun: Singular noun of a record, used in tool names and messages (``item``).
        id_prefix: Prefix of record ids (``ITM`` gives ``ITM-004``).
    """

    noun: ClassVar[str] = "record"
    id_prefix: ClassVar[str] = "REC"
    _variant_tools: ClassVar[dict[tuple[type, tuple[str, ...]], list[ToolSpec]]] = {}

    def __init__(self, enabled: tuple[str, ...] | None = None) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self._enabled = enabled
        self._tools = self._variant(enabled)

    @classmethod
    def _variant(cls, enabled: tuple[str, ...] | None) -> list[ToolSpec]:
        """The class's tools filtered to ``enabled``; one shared list per distinct subset."""
        if enabled is None:
            return cls.tool_specs()
        key = (cls, enabled)
        if key not in RecordWorld._variant_tools:
            RecordWorld._variant_tools[key] = [t for t in cls.tool_specs() if t.name in enabled]
        return RecordWorld._variant_tools[key]

    # ------------------------------------------------------------ tool set
    def tools(self) -> list[ToolSpec]:
        """The variant's tools (the same list object for every world of the variant)."""
        return self._tools

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run an enabled tool (a tool the variant leaves out is unknown here too)."""
        if self._enabled is not None and name not in self._enabled:
            raise KeyError(f"tool '{name}' is not enabled in this variant; enabled: {sorted(self._enabled)}")
        return super().call(name, arguments)

    # --------------------------------------------------------------- state
    def state(self) -> dict[str, Any]:
        """A copy of the records (they hold only scalars, so a two-level copy is a deep copy)."""
        return {"records": {rid: dict(rec) for rid, rec in self.records.items()}}

    def load_state(self, state: dict[str, Any]) -> None:
        """Set the records from ``state`` (copied, so the caller's dict is never changed)."""
        self.records = {rid: dict(rec) for rid, rec in state["records"].items()}

    # ------------------------------------------------------------- look-ups
    def lookup(self, name: str) -> dict[str, str]:
        """Id and name of the record called ``name`` (case-insensitive, exact).

        Raises:
            ToolError: No such name; the message suggests the closest names.
        """
        wanted = name.strip().lower()
        for rid, rec in self.records.items():
            if rec["name"].lower() == wanted:
                return {f"{self.noun}_id": rid, "name": rec["name"]}
        names = [r["name"] for r in self.records.values()]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {close}?" if close else ""
        raise ToolError(f"no {self.noun} named '{name}'.{hint}")

    def record(self, rid: str) -> dict[str, Any]:
        """The live record ``rid``.

        Raises:
            ToolError: Unknown id; the message says what ids look like and how to find one.
        """
        rec = self.records.get(rid)
        if rec is None:
            raise ToolError(
                f"unknown {self.noun} id '{rid}'; ids look like '{self.id_prefix}-001'. Use find_{self.noun} to look up an id by name."
            )
        return rec

    def view(self, rid: str) -> dict[str, Any]:
        """A copy of record ``rid`` with its id, as tools return it."""
        return {f"{self.noun}_id": rid, **self.record(rid)}

    def search(self, query: str) -> list[dict[str, str]]:
        """Ids and names of records whose name contains ``query`` (case-insensitive)."""
        q = query.strip().lower()
        return [{f"{self.noun}_id": rid, "name": r["name"]} for rid, r in self.records.items() if q in r["name"].lower()]

    # ------------------------------------------------------------ mutations
    def adjust(self, rid: str, field: str, delta: float, *, cap: float | None = None, what: str = "") -> dict[str, Any]:
        """Add ``delta`` to a numeric field, keeping it within ``[0, cap]``.

        Raises:
            ToolError: The result would be negative or above ``cap``; nothing changes.
        """
        rec = self.record(rid)
        if isinstance(rec[field], int) and float(delta).is_integer():
            delta = int(delta)
        if delta < 0 and rec[field] + delta < 0:
            raise ToolError(f"{rid} has only {_show(rec[field])} {what or field}; cannot take away {_show(-delta)}")
        if cap is not None and rec[field] + delta > cap:
            raise ToolError(f"{rid} would exceed its limit of {_show(cap)} {what or field} (now {_show(rec[field])})")
        rec[field] = _tidy(rec[field] + delta)
        return self.view(rid)

    def transfer(self, src: str, dst: str, field: str, amount: float) -> dict[str, Any]:
        """Move ``amount`` of ``field`` from ``src`` to ``dst``.

        Raises:
            ToolError: Non-positive amount, same record twice, or not enough in ``src``.
        """
        if amount <= 0:
            raise ToolError(f"amount must be positive, got {_show(amount)}")
        if src == dst:
            raise ToolError(f"source and destination are both {src}; choose two different {self.noun}s")
        source, target = self.record(src), self.record(dst)
        if isinstance(source[field], int) and float(amount).is_integer():
            amount = int(amount)
        if source[field] < amount:
            raise ToolError(f"{src} has only {_show(source[field])} {field}; cannot move {_show(amount)}")
        source[field] = _tidy(source[field] - amount)
        target[field] = _tidy(target[field] + amount)
        return {"from": self.view(src), "to": self.view(dst)}

    def transition(self, rid: str, status: str, allowed_from: tuple[str, ...]) -> dict[str, Any]:
        """Set ``status`` when the record's current status is in ``allowed_from``.

        Raises:
            ToolError: The current status does not allow the change.
        """
        rec = self.record(rid)
        if rec["status"] not in allowed_from:
            raise ToolError(f"{rid} is {rec['status']}; only a {self.noun} that is {' or '.join(allowed_from)} can become {status}")
        rec["status"] = status
        return self.view(rid)

    def assign(self, rid: str, field: str, value: Any) -> dict[str, Any]:
        """Set a field to ``value`` (the tool validated it) and return the record."""
        self.record(rid)[field] = value
        return self.view(rid)


def _tidy(value: float) -> float:
    return money(value) if isinstance(value, float) else value


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def positive(value: float, what: str = "amount") -> float:
    """``value`` if it is positive.

    Raises:
        ToolError: Zero or negative; the message asks for a positive number.
    """
    if value <= 0:
        raise ToolError(f"{what} must be a positive number, got {_show(value)}")
    return value
