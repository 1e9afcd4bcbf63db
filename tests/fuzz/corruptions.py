"""The bad-data matrix: corruptions of a copy of the benchmark files, and what each error must name.

Each :class:`Case` copies the files one family needs from the real benchmark root into a scratch
root (the real data is only read), damages the copy, and loads the family from it. The load must
raise a :class:`~envsched_gym.data_files.DataError` whose message holds every string the
corruption returns: the file, the entry (line or id) and the field. Report scripts import the
matrix: ``from tests.fuzz.corruptions import CASES, COUNTS``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envsched_gym.envs.bfcl.data import RELATIVE, required_files
from envsched_gym.envs.tau.tasks import TAU1_FILES

Corrupt = Callable[[Path], tuple[str, ...]]
"""Damages the copy under a scratch root; returns the strings the error message must contain."""

FAMILIES = ("core", "BFCL", "Tau", "ACE")
BFCL_Q = RELATIVE / "BFCL_v4_simple_python.json"
BFCL_A = RELATIVE / "possible_answer" / "BFCL_v4_simple_python.json"
MT_Q = RELATIVE / "BFCL_v4_multi_turn_base.json"
MT_A = RELATIVE / "possible_answer" / "BFCL_v4_multi_turn_base.json"
FUNC_DOC = RELATIVE / "multi_turn_func_doc" / "math_api.json"
TAU = Path("tau2/data/tau2/domains")
TAU_TASKS, TAU_SPLIT, TAU_DB = TAU / "retail" / "tasks.json", TAU / "retail" / "split_tasks.json", TAU / "retail" / "db.json"
TAU1 = Path("tau2/tau-bench/tau_bench/envs")
ACE = Path("acebench/data_all/data_en")
ACE_Q, ACE_A = ACE / "data_normal_atom_bool.json", ACE / "possible_answer" / "data_normal_atom_bool.json"
ACE_AGENT_Q, ACE_AGENT_A = ACE / "data_agent_multi_turn.json", ACE / "possible_answer" / "data_agent_multi_turn.json"
MULTI_TURN = {"categories": ["multi_turn_base"]}
AGENT = {"categories": ["agent_multi_turn"]}
TAU1_OPTIONS = {"task_set": "tau1"}


@dataclass(frozen=True)
class Case:
    """One corruption of one family's data.

    Attributes:
        family: ``core`` (the data root), ``BFCL``, ``Tau`` or ``ACE``.
        corruption: What was done (``truncated_json_line``, ``empty_file``, ...).
        target: Which file or part it was done to.
        corrupt: The damage (see :data:`Corrupt`).
        options: Adapter options (the categories or task set the damaged file belongs to).
        data_dir: Load with ``data_dir`` set to this path under the scratch root (``""``: the root).
        env_root: Load with ``ENVSCHED_BENCHMARKS`` set to this path under the scratch root
            instead of passing ``data_dir``.
        needs_db: Copy the retail DB too (and open a world, which reads it).
    """

    family: str
    corruption: str
    target: str
    corrupt: Corrupt
    options: dict[str, Any] = field(default_factory=dict)
    data_dir: str = ""
    env_root: str | None = None
    needs_db: bool = False

    @property
    def id(self) -> str:
        return f"{self.family}-{self.corruption}-{self.target}"


@dataclass
class Outcome:
    """What loading a damaged copy did: ``named`` (a DataError naming every expected part and a
    fix), ``obscure`` (an error that misses some), or ``silent`` (it loaded)."""

    case: Case
    kind: str
    message: str
    missing: tuple[str, ...] = ()


def run_case(case: Case, source: Path, scratch: Path) -> Outcome:
    """Copy ``case``'s files from ``source`` under ``scratch``, damage them, load, and classify."""
    from envsched_gym.data import ENV_VAR
    from envsched_gym.data_files import DataError

    root = scratch / "benchmarks"
    copy_family(case, source, root)
    expected = case.corrupt(root)
    data_dir: Path | None = root / case.data_dir
    env = {ENV_VAR: str(root / case.env_root)} if case.env_root is not None else {ENV_VAR: None}
    if case.env_root is not None:
        data_dir = None
    with _environment(env):
        try:
            load(case.family, case.options, data_dir, open_world=case.needs_db)
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            missing = tuple(s for s in (*expected, "Fix:") if s not in message)
            return Outcome(case, "named" if isinstance(exc, DataError) and not missing else "obscure", message, missing)
    return Outcome(case, "silent", "")


@contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """Set (or, for ``None``, unset) environment variables, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ------------------------------------------------------------------ copying and loading
def copy_family(case: Case, source: Path, root: Path) -> None:
    """Copy the files ``case`` loads from ``source`` (the real root) to ``root`` (never links them)."""
    for rel in files_of(case.family, case.options, case.needs_db):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, root / rel)


def files_of(family: str, options: dict[str, Any], needs_db: bool = False) -> list[Path]:
    """The files (relative to the benchmark root) that loading ``family`` with ``options`` reads."""
    if family == "BFCL":
        return [p.relative_to("/") for p in required_files(list(options.get("categories", ["simple_python"])), Path("/") / RELATIVE)]
    if family == "Tau":
        files = [TAU / d / name for d in ("retail", "airline") for name in ("tasks.json", "split_tasks.json", "policy.md")]
        if options.get("task_set") == "tau1":
            files += [TAU1 / d / f"tasks_{name}.json" for d, names in TAU1_FILES.items() for name in names]
        return files + ([TAU_DB] if needs_db else [])
    if family == "ACE":
        names = [f"data_{c}.json" for c in options.get("categories", ["normal_atom_bool"])]
        states = [Path("acebench/extracted/scenario_initial_states") / f"{k}_en.json" for k in ("multi_turn", "multi_step")]
        return [ACE / n for n in names] + [ACE / "possible_answer" / n for n in names] + [Path("acebench/extracted/prompts.json"), *states]
    return [Path("acebench/extracted/prompts.json")]


def load(family: str, options: dict[str, Any], data_dir: Path | None, open_world: bool = False) -> dict[str, str]:
    """Load ``family`` the way registration does (declarations, then every task); ``{task id: split}``."""
    if family == "core":
        from envsched_gym.data import benchmark_root

        return {"root": str(benchmark_root(data_dir))}
    adapter = _adapter(family, options, data_dir)
    adapter.env_specs()
    tasks = list(adapter.tasks("all"))
    if open_world:
        adapter.make_world(tasks[0])
    return {t.task_id: t.split for t in tasks}


def _adapter(family: str, options: dict[str, Any], data_dir: Path | None) -> Any:
    if family == "BFCL":
        from envsched_gym.adapters.bfcl import BFCLAdapter

        return BFCLAdapter(data_dir=data_dir, categories=options.get("categories", ["simple_python"]), **_rest(options))
    if family == "Tau":
        from envsched_gym.adapters.tau import TauAdapter

        return TauAdapter(data_dir=data_dir, **options)
    from envsched_gym.adapters.acebench import ACEBenchAdapter

    return ACEBenchAdapter(language="en", categories=options.get("categories", ["normal_atom_bool"]), data_dir=data_dir)


def _rest(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "categories"}


# ------------------------------------------------------------------ file edits
def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _id_at(path: Path, line: int) -> str:
    return str(json.loads(_lines(path)[line - 1])["id"])


def truncated_line(rel: Path, line: int = 3) -> Corrupt:
    def apply(root: Path) -> tuple[str, ...]:
        lines = _lines(root / rel)
        lines[line - 1] = lines[line - 1][: len(lines[line - 1]) // 2]
        _write_lines(root / rel, lines)
        return str(rel), f"line {line}", "not valid JSON"

    return apply


def non_object_line(rel: Path, line: int = 3) -> Corrupt:
    def apply(root: Path) -> tuple[str, ...]:
        lines = _lines(root / rel)
        lines[line - 1] = json.dumps(["not", "an", "object"])
        _write_lines(root / rel, lines)
        return str(rel), f"line {line}", "not a JSON object"

    return apply


def edited_line(rel: Path, edit: Callable[[dict[str, Any]], Any], *expect: str, line: int = 3) -> Corrupt:
    """Apply ``edit`` to the object on ``line``; the error names the file, the line, its id and ``expect``."""

    def apply(root: Path) -> tuple[str, ...]:
        lines = _lines(root / rel)
        entry = json.loads(lines[line - 1])
        edit(entry)
        entry_id = entry.get("id")
        lines[line - 1] = json.dumps(entry, ensure_ascii=False)
        _write_lines(root / rel, lines)
        return str(rel), f"line {line}", *([f"{entry_id!r}"] if entry_id is not None else []), *expect

    return apply


def deleted_line(rel: Path, other: Path, line: int = 3) -> Corrupt:
    """Delete ``line`` of ``rel``; the error names the entry it paired with in ``other`` (same line there)."""

    def apply(root: Path) -> tuple[str, ...]:
        entry_id = _id_at(root / rel, line)
        lines = _lines(root / rel)
        del lines[line - 1]
        _write_lines(root / rel, lines)
        return str(other), f"line {line}", repr(entry_id), "'id'", str(rel)

    return apply


def emptied(rel: Path, text: str = "", expect: str = "empty") -> Corrupt:
    def apply(root: Path) -> tuple[str, ...]:
        (root / rel).write_text(text, encoding="utf-8")
        return str(rel), expect

    return apply


def deleted_file(rel: Path, *expect: str) -> Corrupt:
    def apply(root: Path) -> tuple[str, ...]:
        (root / rel).unlink()
        return str(rel), "does not exist", *expect

    return apply


def edited_json(rel: Path, edit: Callable[[Any], tuple[str, ...]]) -> Corrupt:
    """Apply ``edit`` to the JSON value of ``rel``; ``edit`` returns the strings besides the file name."""

    def apply(root: Path) -> tuple[str, ...]:
        value = json.loads((root / rel).read_text(encoding="utf-8"))
        expect = edit(value)
        (root / rel).write_text(json.dumps(value, indent=4, ensure_ascii=False), encoding="utf-8")
        return str(rel), *expect

    return apply


def truncated_json(rel: Path) -> Corrupt:
    def apply(root: Path) -> tuple[str, ...]:
        text = (root / rel).read_text(encoding="utf-8")
        (root / rel).write_text(text[: len(text) // 2], encoding="utf-8")
        return str(rel), "line ", "not valid JSON"

    return apply


def nowhere(root: Path) -> tuple[str, ...]:
    return "ENVSCHED_BENCHMARKS", str(root / "nowhere"), "does not exist"


# ------------------------------------------------------------------ json edits
def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry.pop(key)


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry.__setitem__(key, value)


def _rename_gold(entry: dict[str, Any]) -> None:
    entry["ground_truth"] = [{"no_such_function": next(iter(entry["ground_truth"][0].values()))}]


def _rename_multi_turn_gold(entry: dict[str, Any]) -> None:
    first = entry["ground_truth"][0][0]
    entry["ground_truth"][0][0] = "no_such_tool" + first[first.index("(") :]


def _rename_ace_gold(entry: dict[str, Any]) -> None:
    entry["ground_truth"] = {"no_such_function": next(iter(entry["ground_truth"].values()))}


def _rename_milestone(entry: dict[str, Any]) -> None:
    entry["mile_stone"] = ["no_such_tool()", *entry["mile_stone"]]


def _task_field(index: int, path: tuple[str, ...], value: Any = None, drop: bool = False) -> Callable[[Any], tuple[str, ...]]:
    """Set (or drop) ``task[index][path...]`` of a τ2 tasks list; expects the entry, the id and the dotted field."""

    def edit(tasks: Any) -> tuple[str, ...]:
        node = tasks[index]
        keys = [int(k[1:-1]) if k.startswith("[") else k for k in path]
        for key in keys[:-1]:
            node = node[key]
        if drop:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
        dotted = ".".join(path).replace(".[", "[")
        return f"entry {index}", f"id {tasks[index]['id']!r}", repr(dotted)

    return edit


def _gold_action_name(index: int) -> Callable[[Any], tuple[str, ...]]:
    def edit(tasks: Any) -> tuple[str, ...]:
        tasks[index]["evaluation_criteria"]["actions"][0]["name"] = "no_such_tool"
        return f"id {tasks[index]['id']!r}", "'evaluation_criteria.actions[0].name'", "no_such_tool"

    return edit


def _tau1_action_name(tasks: Any) -> tuple[str, ...]:
    tasks[0]["actions"][0]["name"] = "no_such_tool"
    return "entry 0", "'test/0'", "'actions[0].name'", "no_such_tool"


def _tau1_without_instruction(tasks: Any) -> tuple[str, ...]:
    del tasks[0]["instruction"]
    return "entry 0", "'test/0'", "'instruction'", "is missing"


def _task_not_object(tasks: Any) -> tuple[str, ...]:
    tasks[2] = "not a task"
    return "entry 2", "not a JSON object"


def _task_duplicate(tasks: Any) -> tuple[str, ...]:
    tasks[3]["id"] = tasks[2]["id"]
    return "entry 3", f"{tasks[2]['id']!r}", "'id'", "duplicates"


def _split_unknown(split: Any) -> tuple[str, ...]:
    split["train"].append("9999")
    return "'train'", "'9999'", "not tasks of"


def _split_missing(split: Any) -> tuple[str, ...]:
    missing = split["test"].pop(0)
    return f"[{missing!r}]", "neither 'train' nor 'test'"


def _split_overlap(split: Any) -> tuple[str, ...]:
    split["train"].append(split["test"][0])
    return "'test'", f"{split['test'][0]!r}", "which 'train' lists too"


def _split_type(split: Any) -> tuple[str, ...]:
    split["train"] = ",".join(split["train"])
    return "'train'", "must be a list"


def _db_without_orders(db: Any) -> tuple[str, ...]:
    del db["orders"]
    return "table 'orders'", "is missing"


# ------------------------------------------------------------------ the matrix
def _bfcl() -> list[Case]:
    return [
        Case("BFCL", "truncated_json_line", "questions", truncated_line(BFCL_Q)),
        Case("BFCL", "truncated_json_line", "answers", truncated_line(BFCL_A)),
        Case("BFCL", "non_object_line", "questions", non_object_line(BFCL_Q)),
        Case("BFCL", "missing_field", "question", edited_line(BFCL_Q, _drop("question"), "'question'", "is missing")),
        Case("BFCL", "missing_field", "ground_truth", edited_line(BFCL_A, _drop("ground_truth"), "'ground_truth'", "is missing")),
        Case("BFCL", "missing_field", "func_doc_name", edited_line(FUNC_DOC, _drop("name"), "'name'", line=1), MULTI_TURN),
        Case("BFCL", "wrong_type", "function", edited_line(BFCL_Q, _set("function", "calc"), "'function'", "must be a list")),
        Case("BFCL", "wrong_type", "ground_truth_item", edited_line(BFCL_A, _set("ground_truth", ["open(x)"]), "'ground_truth[0]'", "must be one")),
        Case("BFCL", "duplicate_id", "questions", edited_line(BFCL_Q, _set("id", "simple_python_1"), "'id'", "duplicates", line=3)),
        Case("BFCL", "empty_file", "multi_turn_questions", emptied(MT_Q), MULTI_TURN),
        Case("BFCL", "empty_file", "answers", emptied(BFCL_A)),
        Case("BFCL", "deleted_answer_line", "single_turn", deleted_line(BFCL_A, BFCL_Q)),
        Case("BFCL", "deleted_answer_line", "multi_turn", deleted_line(MT_A, MT_Q), MULTI_TURN),
        Case("BFCL", "orphan_answer", "single_turn", deleted_line(BFCL_Q, BFCL_A)),
        Case("BFCL", "gold_tool_missing", "single_turn", edited_line(BFCL_A, _rename_gold, "'ground_truth[0]'", "no_such_function")),
        Case("BFCL", "gold_tool_missing", "multi_turn", edited_line(MT_A, _rename_multi_turn_gold, "'ground_truth[0]'", "no_such_tool", line=1), MULTI_TURN),
        Case("BFCL", "gold_turns_mismatch", "multi_turn", edited_line(MT_A, lambda e: e["ground_truth"].pop(), "'ground_truth'", "turns", line=1), MULTI_TURN),
        Case("BFCL", "unknown_class", "multi_turn", edited_line(MT_Q, _set("involved_classes", ["NoSuchAPI"]), "'involved_classes'", "NoSuchAPI", line=1), MULTI_TURN),
        Case("BFCL", "missing_file", "questions", deleted_file(BFCL_Q, "data_source='package'")),
        Case("BFCL", "missing_file", "func_doc", deleted_file(FUNC_DOC, "data_source='package'"), MULTI_TURN),
        Case("BFCL", "nonexistent_env_root", "ENVSCHED_BENCHMARKS", nowhere, env_root="nowhere"),
    ]  # fmt: skip


def _tau() -> list[Case]:
    tau1_test = TAU1 / "retail" / "tasks_test.json"
    return [
        Case("Tau", "truncated_json", "tasks", truncated_json(TAU_TASKS)),
        Case("Tau", "truncated_json", "split", truncated_json(TAU_SPLIT)),
        Case("Tau", "truncated_json", "db", truncated_json(TAU_DB), needs_db=True),
        Case("Tau", "non_object_entry", "tasks", edited_json(TAU_TASKS, _task_not_object)),
        Case("Tau", "missing_field", "user_scenario", edited_json(TAU_TASKS, _task_field(2, ("user_scenario",), drop=True))),
        Case("Tau", "missing_field", "action_name", edited_json(TAU_TASKS, _task_field(0, ("evaluation_criteria", "actions", "[0]", "name"), drop=True))),
        Case("Tau", "wrong_type", "reward_basis", edited_json(TAU_TASKS, _task_field(1, ("evaluation_criteria", "reward_basis"), "DB"))),
        Case("Tau", "unknown_name", "reward_basis", edited_json(TAU_TASKS, _task_field(1, ("evaluation_criteria", "reward_basis"), ["DB", "COMUNICATE"]))),
        Case("Tau", "duplicate_id", "tasks", edited_json(TAU_TASKS, _task_duplicate)),
        Case("Tau", "empty_file", "tasks", emptied(TAU_TASKS, "[]", "no tasks")),
        Case("Tau", "bad_split", "unknown_id", edited_json(TAU_SPLIT, _split_unknown)),
        Case("Tau", "bad_split", "missing_id", edited_json(TAU_SPLIT, _split_missing)),
        Case("Tau", "bad_split", "overlap", edited_json(TAU_SPLIT, _split_overlap)),
        Case("Tau", "bad_split", "wrong_type", edited_json(TAU_SPLIT, _split_type)),
        Case("Tau", "gold_tool_missing", "tau2", edited_json(TAU_TASKS, _gold_action_name(0))),
        Case("Tau", "gold_tool_missing", "tau1", edited_json(tau1_test, _tau1_action_name), TAU1_OPTIONS),
        Case("Tau", "missing_field", "tau1_instruction", edited_json(tau1_test, _tau1_without_instruction), TAU1_OPTIONS),
        Case("Tau", "db_missing_table", "orders", edited_json(TAU_DB, _db_without_orders), needs_db=True),
        Case("Tau", "missing_file", "tasks", deleted_file(TAU_TASKS)),
        Case("Tau", "missing_file", "tau1_dev_tasks", deleted_file(TAU1 / "retail" / "tasks_dev.json"), TAU1_OPTIONS),
        Case("Tau", "nonexistent_env_root", "ENVSCHED_BENCHMARKS", nowhere, env_root="nowhere"),
    ]  # fmt: skip


def _ace() -> list[Case]:
    return [
        Case("ACE", "truncated_json_line", "entries", truncated_line(ACE_Q)),
        Case("ACE", "truncated_json_line", "answers", truncated_line(ACE_A)),
        Case("ACE", "non_object_line", "entries", non_object_line(ACE_Q)),
        Case("ACE", "missing_field", "function", edited_line(ACE_Q, _drop("function"), "'function'", "is missing")),
        Case("ACE", "missing_field", "ground_truth", edited_line(ACE_A, _drop("ground_truth"), "'ground_truth'", "is missing")),
        Case("ACE", "missing_field", "mile_stone", edited_line(ACE_AGENT_A, _drop("mile_stone"), "'mile_stone'"), AGENT),
        Case("ACE", "wrong_type", "question", edited_line(ACE_Q, _set("question", ["user: hi"]), "'question'", "must be a string")),
        Case("ACE", "duplicate_id", "entries", edited_line(ACE_Q, _set("id", "normal_atom_bool_1"), "'id'", "duplicates")),
        Case("ACE", "empty_file", "normal_entries", emptied(ACE_Q)),
        Case("ACE", "empty_file", "agent_entries", emptied(ACE_AGENT_Q), AGENT),
        Case("ACE", "deleted_answer_line", "normal", deleted_line(ACE_A, ACE_Q)),
        Case("ACE", "orphan_answer", "normal", deleted_line(ACE_Q, ACE_A)),
        Case("ACE", "gold_tool_missing", "normal", edited_line(ACE_A, _rename_ace_gold, "'ground_truth'", "no_such_function")),
        Case("ACE", "gold_tool_missing", "agent_milestone", edited_line(ACE_AGENT_A, _rename_milestone, "'mile_stone'", "no_such_tool", line=1), AGENT),
        Case("ACE", "unknown_class", "agent", edited_line(ACE_AGENT_Q, _set("involved_classes", ["NoSuchApi"]), "'involved_classes'", "NoSuchApi", line=1), AGENT),
        Case("ACE", "missing_file", "entries", deleted_file(ACE_Q)),
        Case("ACE", "missing_file", "prompts", deleted_file(Path("acebench/extracted/prompts.json"))),
        Case("ACE", "nonexistent_env_root", "ENVSCHED_BENCHMARKS", nowhere, env_root="nowhere"),
    ]  # fmt: skip


def _core() -> list[Case]:
    return [
        Case("core", "nonexistent_env_root", "ENVSCHED_BENCHMARKS", nowhere, env_root="nowhere"),
        Case(
            "core",
            "nonexistent_data_dir",
            "data_dir",
            lambda root: ("data_dir=", str(root / "missing"), "does not exist"),
            data_dir="missing",
        ),
    ]


CASES: list[Case] = [*_core(), *_bfcl(), *_tau(), *_ace()]
"""Every corruption x family of the matrix."""
COUNTS: list[tuple[str, int]] = [(family, sum(c.family == family for c in CASES)) for family in FAMILIES]
"""How many cases each family has, in :data:`FAMILIES` order."""
