"""Units: the building blocks of a ToolWorld task.

A unit is one thing the user asks for about one record: read a field, make a write, or make a
write that must be refused. It knows its gold calls (a look-up by name first when the user
names the record instead of giving its id), the user's phrase for it, and the sentence of the
gold answer, which may quote values only known once the calls have run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envsched_gym.envs.toolworld.actions import Act, Refusal, fact
from envsched_gym.envs.toolworld.domain import Variant

from envsched_gym.declarations import ToolCall


def ref(variant: Variant, rid: str, by_name: bool) -> str:
    """How the user refers to record ``rid``: by id (``item ITM-003``) or by name."""
    noun = variant.domain.noun
    return f"the {noun} '{variant.records[rid]['name']}'" if by_name else f"{noun} {rid}"


def phrase_of(variant: Variant, field_name: str) -> str:
    """The user's words for a field (``stock quantity`` for ``quantity``)."""
    return dict(variant.domain.fields).get(field_name, field_name.replace("_", " "))


@dataclass
class Unit:
    """One request about one record.

    Attributes:
        rid: The record.
        by_name: The user names the record, so the gold looks its id up first.
        request: The user's phrase (record reference filled in).
        calls: Gold calls after the optional look-up, in order.
        answer: Gold answer sentence; ``{fact}`` is filled from :attr:`source`'s result.
        source: Index in :attr:`calls` of the call whose result holds the fact, or ``None``.
        key: Reads the fact from that result.
        facts: Facts fixed in advance (refusals).
        writes: Number of write calls among :attr:`calls`.
    """

    rid: str
    by_name: bool
    request: str
    calls: list[ToolCall]
    answer: str
    source: int | None = None
    key: Any = None
    facts: list[str] = field(default_factory=list)
    writes: int = 0

    def all_calls(self, variant: Variant) -> list[ToolCall]:
        """The look-up (when by name) followed by :attr:`calls`."""
        lookup = [ToolCall(variant.domain.find_tool, {"name": variant.records[self.rid]["name"]})] if self.by_name else []
        return lookup + list(self.calls)

    def finish(self, results: list[Any]) -> tuple[str, list[str]]:
        """The answer sentence and its facts, given the results of :attr:`calls`."""
        if self.source is None:
            return self.answer, list(self.facts)
        value = fact(self.key(results[self.source]))
        return self.answer.replace("{fact}", value), [*self.facts, value]


def read_unit(variant: Variant, rid: str, by_name: bool, field_name: str) -> Unit:
    """Ask for one field of a record."""
    where, what = ref(variant, rid, by_name), phrase_of(variant, field_name)
    get = ToolCall(variant.domain.get_tool, {f"{variant.domain.noun}_id": rid})
    return Unit(rid, by_name, f"tell me the {what} of {where}", [get], f"The {what} of {where} is {{fact}}.", 0, lambda r: r[field_name])


def write_unit(variant: Variant, act: Act, by_name: bool, report: bool, verify: bool, who: str | None = None) -> Unit:
    """Make a write; ``report`` asks for the changed value, ``verify`` reads it back with a get.

    Args:
        variant: The environment.
        act: The write.
        by_name: Whether the record is named instead of given by id.
        report: Whether the user asks for the changed value.
        verify: Whether the gold reads the record after the write (the value is then quoted
            from the read).
        who: The reference used in the request, if not the usual one (ask tasks).
    """
    rid = act.call.arguments[_id_arg(act)]
    where = ref(variant, rid, by_name)
    request = act.phrase.replace("{ref}", who or where)
    calls = [act.call]
    unit = Unit(rid, by_name, request, calls, f"Done: {act.phrase.replace('{ref}', where)}.", writes=1)
    if report and act.report is not None:
        what = phrase_of(variant, act.report)
        unit.request += f" and tell me the new {what}"
        unit.answer += f" The {what} of {where} is now {{fact}}."
        if verify:
            calls.append(ToolCall(variant.domain.get_tool, {f"{variant.domain.noun}_id": rid}))
            unit.source, unit.key = 1, _field_key(act.report)
        else:
            unit.source, unit.key = 0, _reported(variant, act)
    return unit


def refusal_unit(variant: Variant, rid: str, by_name: bool, refusal: Refusal) -> Unit:
    """A request to decline; the gold reads the record first when the reason is in it."""
    where = ref(variant, rid, by_name)
    calls = [ToolCall(variant.domain.get_tool, {f"{variant.domain.noun}_id": rid})] if refusal.reveal else []
    reason = refusal.reason.replace("{ref}", where)
    answer = f"I cannot {refusal.phrase.replace('{ref}', where)}: {reason}."
    return Unit(rid, by_name and refusal.reveal, refusal.phrase.replace("{ref}", where), calls, answer, facts=list(refusal.facts))


def _id_arg(act: Act) -> str:
    return next(k for k, v in act.call.arguments.items() if v == act.touches[0])


def _field_key(name: str) -> Any:
    return lambda result: result[name]


def _reported(variant: Variant, act: Act) -> Any:
    action = next(a for a in variant.actions if a.tool == act.call.name)
    return action.reported
