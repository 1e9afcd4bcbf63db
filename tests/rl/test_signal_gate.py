"""signal_gate.py: a batch with an exactly zero gradient leaves the weights and Adam's state alone."""

from __future__ import annotations

import pytest
import torch

from envsched_gym.rl.signal_gate import has_signal, skip_steps_without_signal


def _steps(gate: bool, grads: list[float]) -> tuple[torch.nn.Parameter, torch.optim.AdamW]:
    """A 4-weight parameter stepped by AdamW (lr 0.1) with the given gradient scale per step."""
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(4))
    optimizer = torch.optim.AdamW([weight], lr=0.1, weight_decay=0.0)
    if gate:
        skip_steps_without_signal(optimizer)
    direction = torch.tensor([1.0, -2.0, 0.5, 3.0])
    for scale in grads:
        weight.grad = scale * direction
        optimizer.step()
    return weight, optimizer


def test_plain_adam_keeps_moving_on_zero_gradients_and_the_gate_stops_it():
    after_one, _ = _steps(False, [1.0])
    plain, _ = _steps(False, [1.0] + [0.0] * 11)
    gated, optimizer = _steps(True, [1.0] + [0.0] * 11)
    drift = (plain - after_one).abs()
    assert torch.all(drift > 0.3)  # eleven empty batches move each weight by over 3x the first step's 0.1
    assert torch.equal(gated, after_one)  # the gate: nothing moves after the one batch with signal
    assert optimizer.skipped_steps == 11 and optimizer.state[gated]["step"].item() == 1


def test_a_gated_optimizer_steps_as_if_the_empty_batches_had_not_been_drawn():
    dense, _ = _steps(False, [1.0, 0.5])
    gated, optimizer = _steps(True, [1.0, 0.0, 0.0, 0.5])
    assert torch.allclose(gated, dense) and optimizer.skipped_steps == 2


def test_signal_is_any_non_zero_gradient_and_gating_twice_is_refused():
    first, second = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([first, second], lr=1.0)
    assert not has_signal(optimizer)  # no gradient yet
    first.grad, second.grad = torch.zeros(2), torch.tensor([0.0, 1e-30])
    assert has_signal(optimizer)
    skip_steps_without_signal(optimizer)
    with pytest.raises(ValueError, match="gate it once"):
        skip_steps_without_signal(optimizer)
