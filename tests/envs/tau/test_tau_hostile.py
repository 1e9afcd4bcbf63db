"""Tau's shared tools and scripted user under hostile agent text (issue 14)."""

from __future__ import annotations

import random
import re
import time

import pytest
from envsched_gym.envs.tau.scripted_user import announces_transfer
from envsched_gym.envs.tau.world import MAX_DIGITS, arithmetic

from envsched_gym.world import ToolError

_REGEX = re.compile(r"transferr?(ed|ing)\b.*\bhuman agent", re.IGNORECASE | re.DOTALL)  # the former, quadratic check


def test_transfer_detection_agrees_with_the_former_regex() -> None:
    rng = random.Random(0)
    pieces = ["transferred", "transferring", "transfering", "Transferred", "human agent", "HUMAN AGENT", "human", " agent", " ", "d", "x", "\n"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        assert announces_transfer(text) == bool(_REGEX.search(text)), text


def test_transfer_detection_is_linear_in_the_text() -> None:
    start = time.perf_counter()
    assert not announces_transfer("transferred " * 200_000)  # 2.4 MB; the regex took 12.5 s for 96 KB
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "expression",
    ["(((9**64)**64)**64)**64", "(9**64)**64", "2**64*2**64*2**64*2**64*2**64" + "*2**64" * 60, "9" * 5000, "+".join(["1"] * 60_000), "-" * 100_000 + "1"],
    ids=["tower", "power-of-power", "product-chain", "long-literal", "deep-sum", "deep-unary"],
)
def test_calculate_refuses_what_it_cannot_compute_quickly(expression: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ToolError, match=r"too large|nested too deeply|invalid"):
        arithmetic(expression)
    assert time.perf_counter() - start < 1.0


def test_calculate_still_computes_large_but_bounded_results() -> None:
    assert arithmetic("2**64*2**64") == float(2**128)
    assert arithmetic("(2**10)**64") == float(2**640)
    assert MAX_DIGITS >= 300  # results up to a float's range stay computable
