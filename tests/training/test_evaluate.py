"""evaluate.py: a local model (batched) and an OpenAI-compatible endpoint (threads), scored by each verifier."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from toy import TINY, register_toy

import envsched_gym
from envsched_gym.rl.micro import build_micro_qwen3
from envsched_gym.rl.trajectories import gold_conversations
from training.evaluate import EvalConfig, main


@pytest.fixture(scope="module")
def toy_tasks():
    register_toy()
    return envsched_gym.suite("Toy", split="heldout")


class GoldServer(BaseHTTPRequestHandler):
    """Answers like a chat endpoint that knows the gold solution of the task in the first user message."""

    gold: dict[str, list] = {}
    requests: list[dict] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        GoldServer.requests.append(body)
        turns = GoldServer.gold[body["messages"][1]["content"]]
        turn = turns[sum(m["role"] == "assistant" for m in body["messages"])]
        message = {"role": "assistant", "content": turn.content or None}
        if turn.tool_calls:
            message["tool_calls"] = [{"id": f"c{i}", "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                     for i, c in enumerate(turn.tool_calls)]  # fmt: skip
        payload = json.dumps({"choices": [{"message": message}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_endpoint_with_gold_answers_scores_one_everywhere(toy_tasks, tmp_path):
    GoldServer.gold = {n.task.instruction: n.task.solution for n in toy_tasks}
    server = ThreadingHTTPServer(("127.0.0.1", 0), GoldServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = EvalConfig(output_dir=str(tmp_path), model="gold", base_url=f"http://127.0.0.1:{server.server_port}/v1",
                            benchmarks="Toy", split="heldout", max_difficulty=0, max_tasks=0, workers=3)  # fmt: skip
        rows = main(config)
    finally:
        server.shutdown()
    assert rows[-1] == {"benchmark": "Toy", "category": "ALL", "n": len(toy_tasks), "success": 1.0, "reward": 1.0}
    assert {r["category"] for r in rows} == {n.env.env_id for n in toy_tasks} | {"ALL"}
    assert all(body["tools"] and body["model"] == "gold" for body in GoldServer.requests)
    episodes = [json.loads(line) for line in (tmp_path / "evaluation" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == len(toy_tasks) and all(e["success"] and e["messages"][-1]["role"] == "assistant" for e in episodes)


def test_local_model_episodes_are_scored_by_the_verifier(toy_tasks, tmp_path):
    register_toy()
    model = build_micro_qwen3(list(gold_conversations(envsched_gym.suite("Toy", split="train"))), tmp_path / "m", TINY)
    config = EvalConfig(output_dir=str(tmp_path), model=str(model), benchmarks="envsched/Toy-copy-v0", split="heldout", max_difficulty=0,
                        max_new_tokens=12, max_completion_length=80, batch_size=2)  # fmt: skip
    rows = main(config)
    assert rows[-1]["n"] == sum(n.env.env_id == "Toy-copy" for n in toy_tasks)
    summary = json.loads((tmp_path / "evaluation" / "summary.json").read_text())
    assert summary["model"] == str(model) and summary["rows"] == rows
    episodes = [json.loads(line) for line in (tmp_path / "evaluation" / "episodes.jsonl").read_text().splitlines()]
    assert all(e["env_id"] == "Toy-copy" and e["termination"] for e in episodes)
    assert [e["reward"] for e in episodes] == [float(e["success"]) for e in episodes]
