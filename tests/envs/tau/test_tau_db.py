"""Copy-on-write DB: isolation between episodes, canonical dump and hash, state round trip."""

from __future__ import annotations

import hashlib
import json

from envsched_gym.envs.tau.db import BaseDB, TauDB, dump
from envsched_gym.envs.tau.retail import RetailWorld


def _small() -> BaseDB:
    return BaseDB({"users": {"b": {"name": "Bé", "n": [1, 2]}, "a": {"name": "A", "n": []}}, "orders": {}})


def test_canonical_dump_is_json_dumps_with_sorted_keys() -> None:
    db = TauDB(_small())
    db.get("users", "a")["n"].append(3)
    db.put("orders", "#1", {"z": 1, "y": None})
    expected = {"users": {"b": {"name": "Bé", "n": [1, 2]}, "a": {"name": "A", "n": [3]}}, "orders": {"#1": {"z": 1, "y": None}}}
    text = json.dumps(expected, sort_keys=True, ensure_ascii=False)
    assert db.canonical() == text == dump(expected)
    assert db.sha256() == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert db.to_dict() == expected


def test_episodes_do_not_share_writes() -> None:
    base = _small()
    first, second = TauDB(base), TauDB(base)
    first.get("users", "b")["n"].append(9)
    assert second.peek("users", "b")["n"] == [1, 2] and base.tables["users"]["b"]["n"] == [1, 2]
    assert first.sha256() != second.sha256() == TauDB(base).sha256()


def test_reads_copy_records_without_changing_the_hash() -> None:
    db = TauDB(_small())
    before = db.sha256()
    db.get("users", "a")
    assert db.sha256() == before and "a" in db.overlay["users"]


def test_keys_keep_base_order_then_added_records() -> None:
    db = TauDB(_small())
    db.put("users", "c", {"name": "C", "n": []})
    assert db.keys("users") == ["b", "a", "c"] and ("users", "c") in db and ("users", "d") not in db
    assert db.get("users", "d") is None


def test_world_state_round_trip_and_full_db_hash(retail: RetailWorld) -> None:
    state = retail.state()
    assert retail.sha256() == hashlib.sha256(dump(state).encode("utf-8")).hexdigest()
    state["users"]["omar_khan_2363"]["email"] = "changed@example.com"
    other = RetailWorld(retail.db.base)
    other.load_state(state)
    assert other.call("find_user_id_by_email", {"email": "changed@example.com"}) == "omar_khan_2363"
    assert retail.db.peek("users", "omar_khan_2363")["email"] != "changed@example.com"


def test_a_lone_surrogate_written_into_the_db_hashes_without_raising() -> None:
    db = TauDB(_small())
    before = db.sha256()
    key = db.keys(next(iter(db.overlay)))[0]
    table = next(iter(db.overlay))
    db.get(table, key)["note"] = "\ud800"
    assert db.sha256() != before
