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


def _accumulated(rounds: list[tuple[float, int]], groups_per_update: int) -> tuple[torch.nn.Parameter, torch.optim.AdamW]:
    """AdamW (lr 0.1) gated to wait for ``groups_per_update`` varied groups; each round is (gradient scale, varied groups)."""
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(4))
    optimizer = torch.optim.AdamW([weight], lr=0.1, weight_decay=0.0)
    count = [0]
    skip_steps_without_signal(optimizer, groups_per_update, lambda: count[0])
    direction = torch.tensor([1.0, -2.0, 0.5, 3.0])
    for scale, varied in rounds:
        weight.grad, count[0] = scale * direction, varied
        optimizer.step()
    return weight, optimizer


def test_waiting_for_several_varied_groups_steps_once_on_the_summed_gradient():
    # rounds 1-3 bring 1 + 0 + 2 varied groups: one step, on the sum of rounds 1 and 3; round 4's group is still pending
    waited, optimizer = _accumulated([(1.0, 1), (0.0, 0), (0.5, 2), (2.0, 1)], groups_per_update=3)
    once, _ = _steps(False, [1.5])
    assert torch.allclose(waited, once)
    assert optimizer.state[waited]["step"].item() == 1 and optimizer.skipped_steps == 3 and optimizer.deferred_steps == 2


def test_a_pending_gradient_survives_a_checkpoint_of_the_optimizer():
    straight, _ = _accumulated([(1.0, 1), (0.5, 1), (2.0, 1), (0.25, 1)], groups_per_update=2)
    first, saved = _accumulated([(1.0, 1), (0.5, 1), (2.0, 1)], groups_per_update=2)  # round 3's gradient is pending
    state = saved.state_dict()
    assert state["envsched_pending_signal"]["groups"] == 1
    weight = torch.nn.Parameter(first.detach().clone())
    resumed = torch.optim.AdamW([weight], lr=0.1, weight_decay=0.0)
    skip_steps_without_signal(resumed, 2, lambda: 1)
    resumed.load_state_dict(state)
    weight.grad = 0.25 * torch.tensor([1.0, -2.0, 0.5, 3.0])
    resumed.step()
    assert torch.allclose(weight, straight) and not torch.allclose(weight, first)


def test_resuming_a_pending_gradient_without_accumulation_is_refused_not_dropped():
    _, saved = _accumulated([(1.0, 1)], groups_per_update=2)  # one varied group is pending
    state = saved.state_dict()
    plain = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(4))], lr=0.1)
    skip_steps_without_signal(plain)
    with pytest.raises(ValueError, match="--signal-groups-per-update"):
        plain.load_state_dict(state)
    _, stepped = _accumulated([(1.0, 1), (1.0, 1)], groups_per_update=2)  # nothing pending: N=1 may resume it
    resumed = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(4))], lr=0.1)
    skip_steps_without_signal(resumed)
    resumed.load_state_dict(stepped.state_dict())
    assert resumed.state_dict()["state"][0]["step"].item() == 1


@pytest.mark.parametrize(("groups", "counter", "message"), [
    (0, lambda: 1, "whole number of groups >= 1"), (True, lambda: 1, "whole number"), (1.5, lambda: 1, "whole number"),
    (2, None, "needs varied_groups"),
])  # fmt: skip
def test_groups_per_update_must_be_a_positive_count_with_a_counter(groups, counter, message):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=1.0)
    with pytest.raises(ValueError, match=message):
        skip_steps_without_signal(optimizer, groups, counter)
