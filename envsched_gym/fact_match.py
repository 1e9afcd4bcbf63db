"""Whether an answer states a fact: the fact as a whole token, and a number by its value.

A plain substring test lets an answer state a fact it never states: the fact ``1`` (nights of a
booking) is "in" ``21``, in ``BKG-016`` and in ``1.5``; ``locked`` is in ``unlocked``. A policy
trained on such rewards learns to emit strings that contain many facts at once. On the real
comparison's seed 2 (docs/training.md) the SmolLM2 policy learned to answer ``BKG-007: 21`` to
"how many nights", which the substring test scored 1.0 for 1, 2, 12 and 21 nights.

:func:`states_fact` reads the answer as tokens instead:

* a *numeric* fact (``5``, ``-3``, ``12.50``) matches a number of the answer with the same value
  (``5.0`` states ``5``, ``1,250`` states ``1250``), where a number is a run of digits, optionally
  signed, with thousands separators and a decimal part, that is not part of a longer word,
  identifier or number (``BKG-016``, ``v2``, ``0.5``, ``15``, ``5th`` and ``1,5`` do not state
  ``5``, ``16`` or ``2``);
* any other fact (``cancelled``, ``Dev Kowalski``, ``BKG-016``) matches only where neither end
  touches a letter, digit, underscore or an in-word hyphen (``unlocked`` and ``in_service`` do not
  state ``locked`` or ``service``; ``re-open`` does not state ``open``).

Token matching does not stop an answer that lists many numbers (``1 2 3 5 8 12``) from stating
whichever one is asked for; :func:`numbers_in` lets the ``grounded`` block
(:class:`envsched_gym.blocks.GroundedNumbers`) refuse numbers that nothing the agent was given says.
"""

from __future__ import annotations

import re
from functools import lru_cache

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
"""What a numeric fact looks like (the whole fact)."""

_NUMBER_IN_TEXT = re.compile(r"(?<![\w.\-])(?<!\d,)-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w\-]|[.,]\d)")
"""A number of an answer (``1,250.5`` whole): not glued to a word, identifier, hyphenated token or another number."""


def states_fact(text: str, fact: str, case_sensitive: bool = False) -> bool:
    """Whether ``text`` states ``fact`` as a whole token (a numeric fact: by value; see the module docstring)."""
    fact = fact.strip()
    if NUMBER.fullmatch(fact):
        return float(fact) in numbers_in(text)
    return _token_pattern(fact, case_sensitive).search(text) is not None


def numbers_in(text: str) -> list[float]:
    """The numbers ``text`` states, by value, in order (the tokens a numeric fact can match)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER_IN_TEXT.finditer(text)]


@lru_cache(maxsize=4096)
def _token_pattern(fact: str, case_sensitive: bool) -> re.Pattern[str]:
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(rf"(?<![\w\-]){re.escape(fact)}(?![\w]|-\w)", flags)
