"""Skip the optimizer step of a batch that carries no learning signal.

A GRPO group whose rewards are all equal has zero advantage, so a batch of such groups has an
exactly zero gradient. Adam still moves the weights on such a step: its update is
``lr x m / (sqrt(v) + eps)`` with the moments of *earlier* batches, so one batch with signal keeps
pushing the weights along its own direction for the next ten or so steps, each push nearly as
large as the first (the running ``v`` shrinks as slowly as ``m``). In sparse-reward training,
where most batches have no signal, that momentum is most of what changes the policy. On the
real comparison's seed 5 (docs/training.md) the random scheduler's run had one group with
varied rewards in its first 16 steps, and its held-out success fell from 0.21 to 0.04 by step 12.

:func:`skip_steps_without_signal` makes such a step a no-op, as if the batch had not been drawn:
no parameter moves and the optimizer's moments and step count stay where they were.

A gated step with signal is still one Adam step of about the learning rate's size however weak
its signal: Adam divides by the gradient's own running scale, so a batch with one varied group of
4 rollouts moves every weight about as far as a batch of 16 varied groups. With
``groups_per_update = N > 1`` the gate also *accumulates*: a round's gradient is added to a
pending sum instead of being applied, and the optimizer steps on that sum once at least N groups
with varied rewards have contributed (the counterpart, at equal rollouts, of DAPO's dynamic
sampling, which keeps sampling until the batch holds enough groups with signal). The pending sum
and count travel with the optimizer's ``state_dict``, so a checkpoint resumes them; loading a
non-empty pending sum into an optimizer gated with ``groups_per_update = 1`` is refused rather than
dropping it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

GATED = "_envsched_signal_gate"
"""Attribute set on a gated optimizer, so that gating twice is refused."""

PENDING = "envsched_pending_signal"
"""Key of the accumulated gradient and group count in a gated optimizer's ``state_dict``."""


def has_signal(optimizer: torch.optim.Optimizer) -> bool:
    """Whether any parameter the optimizer holds has a non-zero gradient."""
    return any(p.grad is not None and bool(torch.any(p.grad)) for group in optimizer.param_groups for p in group["params"])


def skip_steps_without_signal(
    optimizer: torch.optim.Optimizer, groups_per_update: int = 1, varied_groups: Callable[[], int] | None = None
) -> torch.optim.Optimizer:
    """Wrap ``optimizer.step`` so that it does nothing when every gradient is zero or missing.

    Counts the steps that moved nothing in ``optimizer.skipped_steps`` (with accumulation, also the
    deferred ones) and the rounds whose gradient was added to a pending sum in
    ``optimizer.deferred_steps``. Gate the optimizer before a learning rate scheduler is built on it
    (the scheduler wraps ``step`` too, and must see the gated one). A step given a ``closure``
    (which computes the gradients itself) is always taken.

    Args:
        optimizer: The optimizer to gate (in place; it is also returned).
        groups_per_update: Step only once this many groups with varied rewards have contributed
            to the gradient since the last step (1: every round with signal steps).
        varied_groups: The number of groups with varied rewards in the round whose gradient is
            about to be stepped, over all processes (so every process steps alike); needed when
            ``groups_per_update > 1``.

    Raises:
        ValueError: The optimizer is gated already, ``groups_per_update`` is not a positive
            integer, or it is above 1 without ``varied_groups``.
    """
    if getattr(optimizer, GATED, False):
        raise ValueError("this optimizer skips steps without signal already; gate it once")
    if isinstance(groups_per_update, bool) or not isinstance(groups_per_update, int) or groups_per_update < 1:
        raise ValueError(f"groups_per_update must be a whole number of groups >= 1 (1: step on every round with signal), got {groups_per_update!r}")
    if groups_per_update > 1 and varied_groups is None:
        raise ValueError("groups_per_update > 1 needs varied_groups, the count of groups with varied rewards in each round")
    step: Callable[..., Any] = optimizer.step
    pending = _Pending(optimizer, groups_per_update, varied_groups)

    @functools.wraps(step)
    def gated(closure: Callable[[], Any] | None = None) -> Any:
        if closure is not None:
            return step(closure)
        if not has_signal(optimizer) or not pending.ready():
            optimizer.skipped_steps += 1  # type: ignore[attr-defined]
            return None
        return step()

    optimizer.skipped_steps = 0  # type: ignore[attr-defined]
    optimizer.deferred_steps = 0  # type: ignore[attr-defined]
    optimizer.step = gated  # type: ignore[method-assign]
    if groups_per_update > 1:
        optimizer.register_state_dict_post_hook(pending.save)
    optimizer.register_load_state_dict_pre_hook(pending.load)
    setattr(optimizer, GATED, True)
    return optimizer


class _Pending:
    """The gradient sum and varied-group count of the rounds not yet stepped on (``groups_per_update > 1``)."""

    def __init__(self, optimizer: torch.optim.Optimizer, groups_per_update: int, varied_groups: Callable[[], int] | None) -> None:
        self.optimizer, self.groups_per_update, self.varied_groups = optimizer, groups_per_update, varied_groups
        self.groups = 0
        self.grads: list[torch.Tensor | None] | None = None

    def params(self) -> list[torch.Tensor]:
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    def ready(self) -> bool:
        """Add this round's gradient to the pending sum; at ``groups_per_update`` varied groups put the sum in ``.grad`` and say step."""
        if self.groups_per_update == 1:
            return True
        assert self.varied_groups is not None
        params = self.params()
        grads = [None if p.grad is None else p.grad.detach().clone() for p in params]
        if self.grads is not None:
            grads = [_add(a, b) for a, b in zip(self.grads, grads, strict=True)]
        self.groups += int(self.varied_groups())
        if self.groups < self.groups_per_update:
            self.grads = grads
            self.optimizer.deferred_steps += 1  # type: ignore[attr-defined]
            return False
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        self.grads, self.groups = None, 0
        return True

    def save(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> dict[str, Any]:
        state[PENDING] = {"groups": self.groups, "grads": self.grads}
        return state

    def load(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> dict[str, Any]:
        state = dict(state)
        saved = state.pop(PENDING, None)
        if saved is not None:
            grads = saved["grads"]
            if self.groups_per_update == 1 and grads is not None:
                raise ValueError(
                    f"the checkpoint holds a pending gradient of {int(saved['groups'])} varied group(s) that waited for more; "
                    "this optimizer steps on every round (groups_per_update 1) and would drop it: resume with the run's "
                    "--signal-groups-per-update value"
                )
            if grads is not None and len(grads) != len(self.params()):
                raise ValueError(f"the saved pending gradient has {len(grads)} tensors for {len(self.params())} parameters: it belongs to another model; resume from a checkpoint of this run")
            self.groups, self.grads = int(saved["groups"]), grads
        return state


def _add(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    if a is None:
        return b
    return a if b is None else a + b
