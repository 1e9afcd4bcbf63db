"""training/rescore.py: logged episodes replayed under the current verifier, divergence refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from training.rescore import eval_records, main, read_log, rescore, table

TASK = "ToolWorld/hotel-3/004"  # "Please tell me the room type of booking BKG-013." (a suite)
GET = '<tool_call>\n{"name": "get_booking", "arguments": {"booking_id": "BKG-013"}}\n</tool_call>'
GOLD = [GET, "The room type of booking BKG-013 is suite."]
GUESS = ["The room type of booking BKG-013 is suite."]  # paid 1.0 before the sourced block (session 41)


def _episode(actions: list[str], success: bool, termination: str = "agent", step: int = 0) -> dict:
    return {"step": step, "stage": "grpo", "task_id": TASK, "reward": float(success), "success": success,
            "termination": termination, "answer": actions[-1], "seed": 0, "actions": actions}  # fmt: skip


def _run(tmp_path: Path, episodes: list[dict]) -> Path:
    (tmp_path / "config.json").write_text(json.dumps({"families": "ToolWorld", "imports": ""}))
    (tmp_path / "eval_answers.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    return tmp_path


def test_a_guess_the_old_verifier_paid_for_is_re_scored_zero_and_the_gold_one(tmp_path: Path) -> None:
    replayed = rescore(_run(tmp_path, [_episode(GOLD, True), _episode(GUESS, True)]), "eval_answers.jsonl")
    assert [(r.success, r.reward, r.diverged) for r in replayed] == [(True, 1.0, ""), (False, 0.0, "")]
    assert "| grpo, 0 | 2 | 1.000 | 0.500 [0.000, 1.000] | 1 | 0 | 0 |" in table(replayed, "step")


def test_a_replay_that_ends_elsewhere_is_counted_as_diverged_not_scored(tmp_path: Path) -> None:
    episodes = [_episode([*GOLD, "Anything else?"], True), _episode([GET], True), _episode(GOLD, True, step=2)]
    replayed = rescore(_run(tmp_path, episodes), "eval_answers.jsonl")
    assert [r.diverged for r in replayed] == ["ended after action 2 of 3", "still running after all 1 actions", ""]
    assert "| grpo, 0 | 2 | 1.000 | - | 0 | 0 | 2 |" in table(replayed, "step")
    with pytest.raises(SystemExit, match="diverged on replay"):
        eval_records(replayed)


def test_an_episode_the_token_budget_cut_scores_zero_unless_it_had_ended(tmp_path: Path) -> None:
    cut = _episode([GET], False, termination="length")
    ended = _episode(GOLD, False, termination="length")  # the environment ended it: the log cannot say "length"
    replayed = rescore(_run(tmp_path, [cut, ended]), "eval_answers.jsonl")
    assert [(r.success, r.diverged) for r in replayed] == [(False, ""), (False, "ended after action 2 of 2")]


def test_write_gives_eval_jsonl_records_per_step(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path, [_episode(GOLD, True), _episode(GUESS, True), _episode(GOLD, True, step=4)])
    main([str(run), "--write", str(tmp_path / "out" / "eval.jsonl")])
    records = [json.loads(line) for line in (tmp_path / "out" / "eval.jsonl").read_text().splitlines()]
    assert [(r["step"], r["n"], r["successes"]) for r in records] == [(0, 2, [1.0, 0.0]), (4, 1, [1.0])]
    assert "re-scored success" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--write takes the held-out log"):
        main([str(run), "--log", "answers.jsonl", "--write", str(tmp_path / "x.jsonl")])


def test_logs_without_actions_and_runs_without_config_are_refused(tmp_path: Path) -> None:
    (tmp_path / "answers.jsonl").write_text('{"round": 0, "task_id": "t", "answer": "BKG-007: 21", "reward": 1.0}\n')
    with pytest.raises(SystemExit, match=r"line 1 \(and 0 more\) has no actions or seed to replay \(logged before session 41\)"):
        read_log(tmp_path / "answers.jsonl")
    with pytest.raises(SystemExit, match=r"config\.json is missing"):
        rescore(tmp_path, "answers.jsonl")
    with pytest.raises(SystemExit, match=r"eval_answers\.jsonl is missing"):
        read_log(tmp_path / "eval_answers.jsonl")
