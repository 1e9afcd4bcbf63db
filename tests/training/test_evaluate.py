"""evaluate.py: a local model (batched) and an OpenAI-compatible endpoint (threads), scored by each verifier."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from toy import TINY, register_toy

import envsched_gym
from envsched_gym.rl.micro import build_micro_qwen3
from envsched_gym.rl.trajectories import gold_conversations
from training.evaluate import EvalConfig, main
from training.train_grpo import TrainConfig


@pytest.fixture(scope="module")
def toy_tasks():
    register_toy()
    return envsched_gym.suite("Toy", split="heldout")


class GoldServer(BaseHTTPRequestHandler):
    """Answers like a chat endpoint that knows the gold solution of the task in the first user message."""

    gold: dict[str, list] = {}
    requests: list[dict] = []

    def reply(self, body: dict) -> dict:
        turns = GoldServer.gold[body["messages"][1]["content"]]
        turn = turns[sum(m["role"] == "assistant" for m in body["messages"])]
        message = {"role": "assistant", "content": turn.content or None}
        if turn.tool_calls:
            message["tool_calls"] = [{"id": f"c{i}", "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                     for i, c in enumerate(turn.tool_calls)]  # fmt: skip
        return message

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        GoldServer.requests.append(body)
        payload = json.dumps({"choices": [{"message": self.reply(body)}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


class GarbleServer(GoldServer):
    """Answers every request with a tool call whose JSON does not parse."""

    GARBLED = '<tool_call>\n{"name": "put", "arguments": {key: plum\n</tool_call>'

    def reply(self, body: dict) -> dict:
        return {"role": "assistant", "content": self.GARBLED}


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A chat endpoint on a free local port, serving in a daemon thread (``shutdown()`` it)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def evaluate_against(handler, tmp_path, **settings) -> list[dict]:
    """``main`` on the Toy held-out tasks against a local server running ``handler``."""
    server = serve(handler)
    try:
        return main(EvalConfig(output_dir=str(tmp_path), base_url=f"http://127.0.0.1:{server.server_port}/v1", benchmarks="Toy",
                               split="heldout", max_difficulty=0, max_tasks=0, **settings))  # fmt: skip
    finally:
        server.shutdown()


def read_episodes(run) -> list[dict]:
    return [json.loads(line) for line in (run / "evaluation" / "episodes.jsonl").read_text().splitlines()]


def test_endpoint_with_gold_answers_scores_one_everywhere(toy_tasks, tmp_path):
    GoldServer.gold = {n.task.instruction: n.task.solution for n in toy_tasks}
    rows = evaluate_against(GoldServer, tmp_path, model="gold", workers=3)
    assert rows[-1] == {"benchmark": "Toy", "category": "ALL", "n": len(toy_tasks), "infra": 0, "failed": 0, "success": 1.0, "reward": 1.0}
    assert {r["category"] for r in rows} == {n.env.env_id for n in toy_tasks} | {"ALL"}
    assert all(body["tools"] and body["model"] == "gold" for body in GoldServer.requests)
    episodes = read_episodes(tmp_path)
    assert len(episodes) == len(toy_tasks) and all(e["success"] and e["messages"][-1]["role"] == "assistant" for e in episodes)


def test_dead_endpoint_exits_non_zero_and_counts_infra_failures_apart(toy_tasks, tmp_path, capsys):
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = EvalConfig(output_dir=str(tmp_path), model="m", base_url=f"http://127.0.0.1:{port}/v1", benchmarks="Toy", split="heldout",
                        max_difficulty=0, max_tasks=0, retries=0, timeout_s=5)  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main(config)
    message = str(exc.value.code)
    assert f"{len(toy_tasks)} of {len(toy_tasks)} episodes failed outside the model" in message
    assert "endpoint_error" in message and f"--base-url http://127.0.0.1:{port}/v1" in message and "--max-infra-failures" in message
    summary = json.loads((tmp_path / "evaluation" / "summary.json").read_text())
    assert summary["infra_failures"] == len(toy_tasks)
    assert summary["rows"][-1] == {"benchmark": "Toy", "category": "ALL", "n": len(toy_tasks), "infra": len(toy_tasks), "failed": 0,
                                   "success": None, "reward": None}  # fmt: skip
    assert "| infra |" in capsys.readouterr().out
    episodes = read_episodes(tmp_path)
    assert all(e["infra"] and e["termination"] == "endpoint_error" and "Connection refused" in e["error"] for e in episodes)
    assert not any(m["role"] == "assistant" for e in episodes for m in e["messages"])  # no error text posing as the model's
    rows = main(dataclasses.replace(config, max_infra_failures=1.0))  # accepted when the user allows it
    assert rows[-1]["infra"] == len(toy_tasks)


def test_unparseable_model_output_keeps_its_raw_text(toy_tasks, tmp_path):
    rows = evaluate_against(GarbleServer, tmp_path, model="garble", retries=0)
    assert rows[-1]["infra"] == 0 and rows[-1]["failed"] == len(toy_tasks)
    turns = [m for e in read_episodes(tmp_path) for m in e["messages"] if m["role"] == "assistant"]
    assert turns and all(m["raw"] == GarbleServer.GARBLED and GarbleServer.GARBLED not in m["content"] for m in turns)


def test_local_model_episodes_are_scored_by_the_verifier(toy_tasks, tmp_path):
    register_toy()
    model = build_micro_qwen3(list(gold_conversations(envsched_gym.suite("Toy", split="train"))), tmp_path / "m", TINY)
    config = EvalConfig(output_dir=str(tmp_path), model=str(model), benchmarks="envsched/Toy-copy-v0", split="heldout", max_difficulty=0,
                        max_new_tokens=12, max_completion_length=80, batch_size=2)  # fmt: skip
    rows = main(config)
    assert rows[-1]["n"] == sum(n.env.env_id == "Toy-copy" for n in toy_tasks)
    summary = json.loads((tmp_path / "evaluation" / "summary.json").read_text())
    assert summary["model"] == str(model) and summary["rows"] == rows
    episodes = read_episodes(tmp_path)
    assert all(e["env_id"] == "Toy-copy" and e["termination"] for e in episodes)
    assert [e["reward"] for e in episodes] == [float(e["success"]) for e in episodes]
    assert all(isinstance(m["raw"], str) for e in episodes for m in e["messages"] if m["role"] == "assistant")


def test_run_directory_defaults_to_the_runs_families_and_split(toy_tasks, tmp_path):
    register_toy()
    build_micro_qwen3(list(gold_conversations(envsched_gym.suite("Toy", split="train"))), tmp_path / "micro-model", TINY)
    trained = TrainConfig(output_dir=str(tmp_path), families="envsched/Toy-copy-v0", eval_split="train", max_difficulty=0)
    (tmp_path / "config.json").write_text(json.dumps(dataclasses.asdict(trained)))
    local = {"max_new_tokens": 12, "max_completion_length": 80, "batch_size": 8, "max_tasks": 0}
    rows = main(EvalConfig(output_dir=str(tmp_path), **local))  # what `evaluate.py --output-dir RUN` runs
    copy_train = [n for n in envsched_gym.suite("Toy", split="train") if n.env.env_id == "Toy-copy"]
    assert [(r["benchmark"], r["category"], r["n"]) for r in rows] == [
        ("Toy", "Toy-copy", len(copy_train)),
        ("Toy", "ALL", len(copy_train)),
    ]
    summary = json.loads((tmp_path / "evaluation" / "summary.json").read_text())
    assert summary["defaults_from"] == str(tmp_path / "config.json")
    assert (summary["config"]["benchmarks"], summary["config"]["split"]) == ("envsched/Toy-copy-v0", "train")
    rows = main(EvalConfig(output_dir=str(tmp_path), split="heldout", **local))  # a value given explicitly wins
    assert rows[-1]["n"] == sum(n.env.env_id == "Toy-copy" for n in toy_tasks)
