"""What the task generator knows about a domain's write tools.

Each :class:`Action` describes one write tool in terms of the :class:`RecordWorld` primitive
it uses, so the generator can build a valid call (:meth:`Action.make`) and a request the agent
must refuse (:meth:`Action.violate`): one that breaks a hard rule the tool enforces (a
balance, a capacity, a status) or a variant's policy limit that only the system prompt states.
Request phrases are imperative and contain ``{ref}``, the user's reference to the record.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from envsched_gym.declarations import ToolCall

Record = dict[str, Any]


def fact(value: Any) -> str:
    """A value as the agent must repeat it: strings as they are, numbers as tools print them.

    Integral floats drop the ``.0`` so that both ``1200`` and ``1200.00`` in an answer match.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


@dataclass(frozen=True)
class Act:
    """A valid write.

    Attributes:
        call: The call.
        phrase: The user's request for it (contains ``{ref}``).
        touches: Records the call changes.
        report: Field a report of the call quotes, if any.
        vague: The request without its amount (``{ref}`` kept), for tasks where the agent must
            ask how much; ``None`` when the call has no amount.
        amount: The user's answer to that question (``"30 units"``).
    """

    call: ToolCall
    phrase: str
    touches: tuple[str, ...]
    report: str | None = None
    vague: str | None = None
    amount: str | None = None


@dataclass(frozen=True)
class Refusal:
    """A request the agent must decline.

    Attributes:
        call: The call the request asks for (the one the agent must not make).
        phrase: The user's request (contains ``{ref}``).
        reveal: Whether the agent must read the record to see why (hard rules) or the
            system prompt already says (policy limits).
        reason: The explanation the gold answer gives (contains ``{ref}``).
        facts: Values the explanation must contain.
        kind: ``bound``, ``status`` or ``policy``.
    """

    call: ToolCall
    phrase: str
    reveal: bool
    reason: str
    facts: tuple[str, ...]
    kind: str


class Action:
    """A write tool the generator can use. ``tool`` is its name, ``id_arg`` its record argument."""

    tool: str
    id_arg: str
    policy: str | None = None

    def make(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Act | None:
        """A valid call on record ``rid`` (``others``: free records for a second party), or ``None``."""
        raise NotImplementedError

    def violate(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Refusal | None:
        """A request on ``rid`` that must be refused, or ``None`` when this record allows none."""
        return None

    def policy_text(self, limit: float) -> str:
        """The system-prompt sentence stating this action's limit."""
        raise NotImplementedError(f"{self.tool} has no policy limit")

    def reported(self, result: Any) -> Any:
        """The value a report of this call quotes, taken from the tool's result."""
        return None


@dataclass(frozen=True)
class Adjust(Action):
    """Add (``sign=1``) or remove (``sign=-1``) an amount of a numeric field.

    Attributes:
        template: Request phrase with ``{ref}`` and ``{amount}``.
        amounts: Inclusive range the generator draws amounts from.
        cap: Field holding the record's maximum, a fixed maximum, or ``None`` (no maximum).
        unit: Unit word used in explanations.
        policy: Name of the variant's per-request limit on the amount, if any.
    """

    tool: str
    id_arg: str
    arg: str
    field: str
    sign: int
    template: str
    amounts: tuple[int, int]
    unit: str
    cap: str | int | None = None
    policy: str | None = None
    policy_template: str = "Never {verb} more than {limit} {unit} in one request; refuse larger requests and state the limit."

    def make(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Act | None:
        hi = self.amounts[1]
        if self.sign < 0:
            hi = min(hi, int(rec[self.field]))
        if self.cap is not None:
            hi = min(hi, int(self._cap(rec) - rec[self.field]))
        if limit is not None:
            hi = min(hi, int(limit))
        if hi < self.amounts[0]:
            return None
        amount = rng.randint(self.amounts[0], hi)
        phrase, vague = self.template.replace("{amount}", str(amount)), self.template.replace("{amount}", "some")
        return Act(self._call(rid, amount), phrase, (rid,), self.field, vague, f"{amount} {self.unit}")

    def violate(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Refusal | None:
        options: list[Refusal] = []
        room = rec[self.field] if self.sign < 0 else (self._cap(rec) - rec[self.field] if self.cap is not None else None)
        if room is not None and (limit is None or int(room) + 1 <= limit):
            amount = rng.randint(int(room) + 1, int(limit) if limit is not None else int(room) + self.amounts[1])
            shown = fact(rec[self.field])
            if self.sign < 0:
                reason = f"{{ref}} has only {shown} {self.unit}, so {amount} cannot be taken"
            else:
                reason = f"{{ref}} holds {shown} of at most {fact(self._cap(rec))} {self.unit}, so {amount} more do not fit"
            options.append(
                Refusal(self._call(rid, amount), self.template.replace("{amount}", str(amount)), True, reason, (shown,), "bound")
            )
        if limit is not None:
            amount = int(limit) + rng.randint(1, max(1, int(limit) // 2))
            reason = f"the policy allows at most {fact(limit)} {self.unit} per request"
            options.append(
                Refusal(self._call(rid, amount), self.template.replace("{amount}", str(amount)), False, reason, (fact(limit),), "policy")
            )
        return rng.choice(options) if options else None

    def _call(self, rid: str, amount: int) -> ToolCall:
        return ToolCall(self.tool, {self.id_arg: rid, self.arg: amount})

    def _cap(self, rec: Record) -> float:
        return rec[self.cap] if isinstance(self.cap, str) else float(self.cap or 0)

    def policy_text(self, limit: float) -> str:
        verb = self.template.split()[0]
        return self.policy_template.format(verb=verb, limit=fact(limit), unit=self.unit)

    def reported(self, result: Any) -> Any:
        return result[self.field]


@dataclass(frozen=True)
class Move(Action):
    """Move an amount of a field from one record to another (a transfer).

    Attributes:
        template: Request phrase with ``{ref}`` (source), ``{dst}`` and ``{amount}``.
        dst_arg: Argument naming the destination record.
        noun: Record noun, for the destination's reference.
    """

    tool: str
    id_arg: str
    dst_arg: str
    arg: str
    field: str
    template: str
    amounts: tuple[int, int]
    unit: str
    noun: str
    policy: str | None = None

    def _call(self, rid: str, dst: str, amount: int) -> ToolCall:
        return ToolCall(self.tool, {self.id_arg: rid, self.dst_arg: dst, self.arg: amount})

    def _phrase(self, dst: str, amount: int | str) -> str:
        return self.template.replace("{dst}", f"{self.noun} {dst}").replace("{amount}", str(amount))

    def make(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Act | None:
        hi = min(self.amounts[1], int(rec[self.field]), int(limit) if limit is not None else self.amounts[1])
        if hi < self.amounts[0] or not others:
            return None
        amount, dst = rng.randint(self.amounts[0], hi), rng.choice(list(others))
        vague = self._phrase(dst, "some")
        return Act(self._call(rid, dst, amount), self._phrase(dst, amount), (rid, dst), self.field, vague, f"{amount} {self.unit}")

    def violate(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Refusal | None:
        if not others:
            return None
        dst = rng.choice(list(others))
        options: list[Refusal] = []
        have = int(rec[self.field])
        if limit is None or have + 1 <= limit:
            amount = rng.randint(have + 1, int(limit) if limit is not None else have + self.amounts[1])
            reason = f"{{ref}} has only {fact(rec[self.field])} {self.unit} available"
            options.append(
                Refusal(self._call(rid, dst, amount), self._phrase(dst, amount), True, reason, (fact(rec[self.field]),), "bound")
            )
        if limit is not None:
            amount = int(limit) + rng.randint(1, max(1, int(limit) // 2))
            reason = f"the policy allows at most {fact(limit)} {self.unit} per request"
            options.append(Refusal(self._call(rid, dst, amount), self._phrase(dst, amount), False, reason, (fact(limit),), "policy"))
        return rng.choice(options)

    def policy_text(self, limit: float) -> str:
        verb = self.template.split()[0]
        return f"Never {verb} more than {fact(limit)} {self.unit} in one request; refuse larger requests and state the limit."

    def reported(self, result: Any) -> Any:
        return result["from"][self.field]


@dataclass(frozen=True)
class Transition(Action):
    """Change a record's ``status`` where the current status allows it.

    Attributes:
        status: The status the tool sets.
        allowed_from: Statuses the change is allowed from (the tool enforces the same).
        template: Request phrase with ``{ref}``.
    """

    tool: str
    id_arg: str
    status: str
    allowed_from: tuple[str, ...]
    template: str

    def make(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Act | None:
        if rec["status"] not in self.allowed_from:
            return None
        return Act(ToolCall(self.tool, {self.id_arg: rid}), self.template, (rid,), "status")

    def violate(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Refusal | None:
        if rec["status"] in self.allowed_from:
            return None
        reason = f"{{ref}} is {rec['status']}, and only a record that is {' or '.join(self.allowed_from)} can be changed that way"
        return Refusal(ToolCall(self.tool, {self.id_arg: rid}), self.template, True, reason, (rec["status"],), "status")

    def reported(self, result: Any) -> Any:
        return result["status"]


@dataclass(frozen=True)
class Assign(Action):
    """Set a field to a new value drawn by ``choose`` (never the current value).

    Attributes:
        template: Request phrase with ``{ref}`` and ``{value}``.
        choose: Draws a new value for a record.
    """

    tool: str
    id_arg: str
    arg: str
    field: str
    template: str
    choose: Callable[[random.Random, Record], Any]

    def make(self, rng: random.Random, rid: str, rec: Record, others: Sequence[str], limit: float | None) -> Act | None:
        value = self.choose(rng, rec)
        if value == rec[self.field]:
            return None
        call = ToolCall(self.tool, {self.id_arg: rid, self.arg: value})
        return Act(call, self.template.replace("{value}", fact(value)), (rid,), self.field)

    def reported(self, result: Any) -> Any:
        return result[self.field]


def pick(values: Sequence[Any]) -> Callable[[random.Random, Record], Any]:
    """A ``choose`` for :class:`Assign` that draws from a fixed list."""
    return lambda rng, rec: rng.choice(list(values))


def scaled(field: str, low: float, high: float, *, step: int = 1) -> Callable[[random.Random, Record], Any]:
    """A ``choose`` for :class:`Assign`: the current value times a factor, as a multiple of ``step``."""

    def choose(rng: random.Random, rec: Record) -> Any:
        value = rec[field] * rng.uniform(low, high)
        return max(step, round(value / step) * step)

    return choose
