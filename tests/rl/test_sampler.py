"""The curriculum sampler: RepeatSampler's layout, late binding, and the same order on every process."""

from __future__ import annotations

import json
import zlib
from collections import Counter

import pytest
from accelerate.data_loader import BatchSamplerShard
from torch.utils.data import BatchSampler
from trl.trainer.utils import RepeatSampler

import envsched_gym
from envsched_gym.curriculum import make_scheduler
from envsched_gym.rl.feedback import GroupResult, RoundLogger
from envsched_gym.rl.sampler import CurriculumSampler
from envsched_gym.suite import Suite

B, G = 3, 4


def _sampler(suite, name="envsched", rounds=6, repeat=1):
    return CurriculumSampler(make_scheduler(name, suite, seed=0), B, G, repeat_count=repeat, num_rounds=rounds)


def _reward(task_id: str, k: int, r: int) -> float:
    """A deterministic stand-in for an episode's outcome: differs across tasks, rollouts and rounds."""
    return float(zlib.crc32(f"{task_id}/{k}/{r}".encode()) % 3 == 0)


@pytest.mark.parametrize("repeat", [1, 2])
def test_layout_is_repeat_samplers(toy_suite, repeat):
    sampler = _sampler(toy_suite, rounds=2, repeat=repeat)
    reference = RepeatSampler(list(range(B)), mini_repeat_count=G, batch_size=B, repeat_count=repeat, shuffle=False)
    assert list(sampler) == list(reference) * 2
    assert len(sampler) == len(list(sampler))


def test_two_processes_bind_the_same_tasks(toy_suite):
    """Two processes, each with its own scheduler, its own shard of every batch and its own rollouts.

    Rewards are gathered (concatenated in process order, as accelerate's gather_object does) and
    fed back on both; the dataloader reads a batch ahead of training, as the trainer's does.
    """
    procs = [_sampler(toy_suite) for _ in range(2)]
    batches = [BatchSamplerShard(BatchSampler(p, batch_size=B * G // 2, drop_last=False), num_processes=2, process_index=i)
               for i, p in enumerate(procs)]  # fmt: skip
    iters = [iter(b) for b in batches]
    ahead = [next(it) for it in iters]
    for r in range(6):
        current, ahead = ahead, [next(it, None) for it in iters]
        local = []
        for p, slots in zip(procs, current, strict=True):
            tasks = p.bind(r)
            local.append([(tasks[s], _reward(tasks[s], k, r)) for k, s in enumerate(slots)])
        gathered = local[0] + local[1]
        groups = [(gathered[i][0], [x for _, x in gathered[i : i + G]]) for i in range(0, len(gathered), G)]
        for p in procs:
            p.feedback(r, groups)
    assert procs[0].decisions == procs[1].decisions
    assert len({tuple(d) for d in procs[0].decisions}) > 1
    assert procs[0].state_dict()["applied"] == 5 and list(procs[0].pending) == [5]


def test_binding_uses_every_earlier_round_and_never_a_missing_one(toy_suite):
    sampler = _sampler(toy_suite)
    first = sampler.bind(0)
    assert sampler.bind(0) == first
    with pytest.raises(RuntimeError, match="round 1"):
        sampler.bind(2)
    with pytest.raises(RuntimeError, match="never fed back"):
        sampler.bind(1)
    sampler.feedback(0, [(t, [1.0, 0.0, 0.0, 1.0]) for t in first])
    sampler.bind(1)
    assert sampler.applied == 1
    with pytest.raises(ValueError, match="already given"):
        sampler.feedback(0, [])


def test_resume_replays_bindings_and_continues_identically(toy_suite):
    def play(sampler, start, stop):
        for r in range(start, stop):
            tasks = sampler.bind(r)
            sampler.feedback(r, [(t, [_reward(t, k, r) for k in range(G)]) for t in tasks])

    straight = _sampler(toy_suite)
    play(straight, 0, 6)
    first = _sampler(toy_suite)
    play(first, 0, 3)
    resumed = _sampler(toy_suite)
    resumed.load_state_dict(first.state_dict())
    assert [resumed.bind(r) for r in range(3)] == straight.decisions[:3]
    play(resumed, 3, 6)
    assert resumed.decisions == straight.decisions


def test_predictions_are_recorded_at_binding(toy_suite):
    sampler = _sampler(toy_suite)
    sampler.bind(0)
    assert set(sampler.predictions[0]) >= {"variance", "mean"} and len(sampler.predictions[0]["variance"]) == B


def test_a_round_with_one_non_finite_reward_is_refused_whole(toy_suite):
    sampler = _sampler(toy_suite)
    first = sampler.bind(0)
    before = sampler.scheduler.state_dict()
    groups = [(t, [1.0, 0.0, 0.0, 1.0]) for t in first[:-1]] + [(first[-1], [1.0, float("nan"), 0.0, 1.0])]
    with pytest.raises(ValueError, match=f"task '{first[-1]}': reward nan"):
        sampler.feedback(0, groups)
    assert 0 not in sampler.pending and sampler.applied == 0
    assert str(sampler.scheduler.state_dict()) == str(before)  # no earlier group of the round got in
    sampler.feedback(0, [(t, [1.0, 0.0, 0.0, 1.0]) for t in first])  # the corrected round is accepted
    sampler.bind(1)


def test_every_round_logs_each_familys_share_next_to_its_target(toy_suite, notes_adapter, tmp_path):
    mixed = Suite([*toy_suite, *envsched_gym.suite("Notes", split="train")], weights={"Toy": 1.0, "Notes": 1.0})
    sampler = CurriculumSampler(make_scheduler("envsched", mixed, seed=0), B, G, repeat_count=1, num_rounds=4)
    logger = RoundLogger(sampler, tmp_path / "metrics.jsonl")
    for r in range(4):
        tasks = sampler.bind(r)
        logger.observe(r, [GroupResult(t, mixed.node(t).env.env_id, [1.0, 0.0, 1.0, 0.0], [True, False, True, False]) for t in tasks])
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    for record, tasks in zip(records, sampler.decisions, strict=True):
        drawn = Counter(mixed.node(t).family for t in tasks)
        assert record["family_share"] == {f: pytest.approx(drawn[f] / B) for f in ("Toy", "Notes")}
        assert record["family_target"].keys() == {"Toy", "Notes"} and sum(record["family_target"].values()) == pytest.approx(1.0)
    assert sum(r["family_share"]["Notes"] for r in records) / 4 == pytest.approx(0.5, abs=0.05 + 1 / (4 * B))
    restored = CurriculumSampler(make_scheduler("envsched", mixed, seed=0), B, G, repeat_count=1, num_rounds=4)
    restored.load_state_dict(sampler.state_dict())
    assert restored.mixes == sampler.mixes


def test_a_checkpoint_state_from_an_older_version_is_refused_with_the_fix(toy_suite):
    sampler = _sampler(toy_suite)
    state = sampler.state_dict()
    del state["mixes"]
    with pytest.raises(ValueError, match=r"lacks \['mixes'\].*older envsched-gym.*new --output-dir"):
        _sampler(toy_suite).load_state_dict(state)
