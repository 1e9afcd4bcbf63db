"""ACEBench's checker for the special categories (incomplete, error_param, irrelevant).

The agent must not call a tool but say, in a fixed English phrase, what is wrong:
``Missing necessary parameters (k1, k2) for the api (ApiName)``,
``There is incorrect value (v) for the parameters (k) in the conversation history.``, or
``Due to the limitations of the function, I cannot solve this problem.``

``faithful`` keeps the original's substring tests on the raw reply (any reply containing the
phrase and every expected name passes, extra names included, tool calls ignored); ``strict``
parses the phrases and requires exactly the expected names and no tool call.
"""

from __future__ import annotations

import re
from typing import Any

from envsched_gym.envs.acebench.normal_check import Check

MISSING = "Missing necessary parameters"
INCORRECT = "There is incorrect value"
IRRELEVANT = "Due to the limitations of the function, I cannot solve this problem."
# "<head> (<first>) <middle> (<second>)", matched by forward searches only (see _pairs)
_MISSING = (re.compile(r"Missing necessary parameters\s*\("), re.compile(r"\)\s*for the api\s*\("))
_INCORRECT = (re.compile(r"There is incorrect value\s*\("), re.compile(r"\)\s*for the parameters\s*\("))


def gold_reply(category: str, answer: Any) -> str:
    """The reply the system prompt asks for, built from the possible answer."""
    if category == "special_incomplete":
        parts = [f'"{MISSING} ({", ".join(values)}) for the api ({name})"' for name, values in answer.items()]
    elif category == "special_error_param":
        parts = [
            f'"{INCORRECT} ({", ".join(values)}) for the parameters ({key}) in the conversation history."' for key, values in answer.items()
        ]
    elif category == "special_irrelevant":
        parts = [f'"{IRRELEVANT}"']
    else:
        raise ValueError(f"{category!r} is not a special category")
    return "[" + ", ".join(parts) + "]"


def check_special(category: str, reply: str, n_calls: int, answer: Any, mode: str = "strict") -> Check:
    """Check one reply (``n_calls``: tool calls the message made)."""
    if mode == "faithful":
        return _faithful(category, reply, answer)
    if n_calls:
        return Check(False, [f"{n_calls} tool call(s) made; this request cannot be executed as given"], "called_tool")
    return _strict(category, reply, answer)


def _faithful(category: str, reply: str, answer: Any) -> Check:
    if category == "special_irrelevant":
        ok = "the limitations of the function" in reply
        return Check(ok, [] if ok else ["the reply does not say the request exceeds the functions"], "" if ok else "error_detection")
    phrase = MISSING if category == "special_incomplete" else INCORRECT
    if phrase not in reply:
        return Check(False, [f"the reply lacks {phrase!r}"], "error_detection")
    for name, values in answer.items():
        expected = ([name] if category == "special_incomplete" else []) + list(values)
        absent = [v for v in expected if v not in reply]
        if absent:
            return Check(False, [f"the reply does not name {absent}"], "error_correction")
    return Check(True)


def _pairs(reply: str, pattern: tuple[re.Pattern[str], re.Pattern[str]]) -> list[tuple[str, str]]:
    """``(first, second)`` of each ``head (first) middle (second)`` in ``reply``, left to right.

    The same matches as ``re.findall(r"head\\s*\\((.*?)\\)\\s*middle\\s*\\((.*?)\\)", reply, re.DOTALL)``,
    in linear time: that regex rescans the rest of the reply from every head without a middle
    after it (12 s for 5,000 heads). If the first head has no middle (or no ``)``) after it,
    no later head has either, so the scan stops.
    """
    head, middle = pattern
    found, pos = [], 0
    while (start := head.search(reply, pos)) is not None and (mid := middle.search(reply, start.end())) is not None:
        close = reply.find(")", mid.end())
        if close < 0:
            break
        found.append((reply[start.end() : mid.start()], reply[mid.end() : close]))
        pos = close + 1
    return found


def _names(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,，]", text) if part.strip()]


def _strict(category: str, reply: str, answer: Any) -> Check:
    if category == "special_irrelevant":
        core = reply.strip().strip("[]").strip().strip("\"'").strip()
        ok = core == IRRELEVANT
        return Check(ok, [] if ok else [f"expected exactly {IRRELEVANT!r}, got {reply!r}"], "" if ok else "error_detection")
    if category == "special_incomplete":
        found = {api.strip(): sorted(_names(params)) for params, api in _pairs(reply, _MISSING)}
        want = {name.strip(): sorted(v.strip() for v in values) for name, values in answer.items()}
    else:
        found = {}
        for value, key in _pairs(reply, _INCORRECT):
            found.setdefault(key.strip(), []).append(value.strip())
        want = {key.strip(): [", ".join(v.strip() for v in values)] for key, values in answer.items()}
        found = {k: [", ".join(v)] for k, v in found.items()}
    if found != want:
        return Check(False, [f"expected {want}, the reply says {found}"], "error_correction" if found else "error_detection")
    return Check(True)
