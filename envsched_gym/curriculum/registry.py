"""Scheduler registry: every curriculum by name, built with :func:`make_scheduler`."""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from envsched_gym.curriculum.base import BaseScheduler
from envsched_gym.curriculum.baselines import DAPOScheduler, DUMPScheduler, MoPPSScheduler, PLRScheduler, RandomScheduler
from envsched_gym.curriculum.envsched import EnvSchedScheduler
from envsched_gym.suite import Suite

SCHEDULERS: dict[str, type[BaseScheduler]] = {
    cls.name: cls for cls in (EnvSchedScheduler, RandomScheduler, DAPOScheduler, MoPPSScheduler, PLRScheduler, DUMPScheduler)
}


def parse_options(text: str) -> dict[str, int | float]:
    """Scheduler options written ``"key=value,key=value"`` (numbers; ``""``: none), e.g. ``repeat_discount=0,transfer_weight=1``.

    Raises:
        ValueError: An item is not ``key=value``, its value is not a number, or a key comes twice (the message names it).
    """
    options: dict[str, int | float] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"scheduler option {item!r} is not key=value; write e.g. repeat_discount=0,transfer_weight=1")
        if key.strip() in options:
            raise ValueError(f"scheduler option {key.strip()!r} is given twice; keep one value")
        try:
            options[key.strip()] = int(value) if value.strip().lstrip("-").isdigit() else float(value)
        except ValueError:
            raise ValueError(f"scheduler option {item!r}: {value.strip()!r} is not a number") from None
    return options


def parse_variant(text: str) -> tuple[str, dict[str, int | float]]:
    """A labelled set of scheduler options, ``"LABEL:key=value,..."`` -> ``(LABEL, options)`` (benchmark rows and runs).

    Raises:
        ValueError: No label or no options, or an option :func:`parse_options` refuses (the message quotes the variant).
    """
    label, _, options = text.partition(":")
    if not label.strip() or not options.strip():
        raise ValueError(f"variant {text!r} must read LABEL:key=value[,key=value...], e.g. no-transfer:transfer_weight=0")
    try:
        return label.strip(), parse_options(options)
    except ValueError as exc:
        raise ValueError(f"variant {text!r}: {exc}") from None


def make_scheduler(name: str, suite: Suite, seed: int = 0, **kwargs: Any) -> BaseScheduler:
    """Build the scheduler ``name`` over ``suite``.

    Args:
        name: One of :data:`SCHEDULERS` (``envsched``, ``random``, ``dapo``, ``mopps``, ``plr``, ``dump``).
        suite: Nodes to schedule over.
        seed: Seeds every random choice of the scheduler.
        **kwargs: The scheduler's own options (for example ``half_life=10`` for EnvSched), and
            for every scheduler ``weights`` (family weights overriding the suite's) and
            ``mixture`` (a :class:`~envsched_gym.curriculum.mixture.MixtureConfig`).
    """
    cls = SCHEDULERS.get(name.lower())
    if cls is None:
        close = difflib.get_close_matches(name.lower(), list(SCHEDULERS), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"unknown scheduler '{name}'.{hint} Known: {sorted(SCHEDULERS)}")
    params = inspect.signature(cls.__init__).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):  # EnvSched checks its own (config fields)
        known = sorted(set(params) - {"self", "suite", "seed"})
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise TypeError(f"unknown {cls.name} options {unknown}; known: {known}")
    return cls(suite, seed=seed, **kwargs)
