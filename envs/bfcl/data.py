"""Where BFCL-v3 data is read from, and the checked readers for it.

The data directory (the one holding ``BFCL_v4_<category>.json`` and ``possible_answer/``) is
``bfcl/bfcl_eval/data`` under the benchmark root (see :mod:`envsched_gym.data`), or the
``data_dir`` argument when that is the data directory itself. The data shipped inside the
installed ``bfcl-eval`` package is used only when asked for (``data_source="package"``): a
missing file is an error naming the path it was expected at, never a reason to read another copy.

Every question and answer line is checked when its category loads: required fields and their
types, unique ids, and one answer per question (and no answer without its question).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from envsched_gym.data import benchmark_root
from envsched_gym.data_files import DataNotFoundError, Row, read_jsonl, require, require_unique

VERSION_PREFIX = "BFCL_v4"
RELATIVE = Path("bfcl") / "bfcl_eval" / "data"
DATA_SOURCES = ("benchmarks", "package")
PACKAGE_HINT = (
    "pass data_source='package' to read the data of the installed bfcl-eval package (`pip install --no-deps bfcl-eval==2026.3.23`)"
)

SINGLE_TURN = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
    "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_relevance", "live_irrelevance",
)  # fmt: skip
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
CATEGORIES = SINGLE_TURN + MULTI_TURN
NO_GROUND_TRUTH = ("irrelevance", "live_relevance", "live_irrelevance")

FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
"""The executable backends of the multi-turn categories and their function-doc files."""


def _is_data_dir(path: Path) -> bool:
    return (path / "possible_answer").is_dir() or any(path.glob(f"{VERSION_PREFIX}_*.json"))


def _installed_data_dir() -> Path | None:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def find_data_dir(data_dir: str | os.PathLike[str] | None = None, data_source: str = "benchmarks") -> Path:
    """The BFCL data directory (see the module docstring).

    Args:
        data_dir: The BFCL data directory itself, or a benchmark root holding ``bfcl/bfcl_eval/data``.
        data_source: ``benchmarks`` (the benchmark data root) or ``package`` (the installed
            ``bfcl-eval`` package's data; then ``data_dir`` must be ``None``).

    Raises:
        DataNotFoundError: The directory does not exist; the message names where it was expected.
    """
    if data_source not in DATA_SOURCES:
        raise ValueError(f"unknown BFCL data_source {data_source!r}; use one of {DATA_SOURCES}")
    if data_source == "package":
        if data_dir is not None:
            raise ValueError(
                f"data_source='package' reads the installed bfcl-eval data, so data_dir={str(data_dir)!r} is not used; drop one"
            )
        installed = _installed_data_dir()
        if installed is None or not installed.is_dir():
            raise DataNotFoundError(
                "data_source='package': the bfcl-eval package (or its data/) is not installed. "
                "Fix: `pip install --no-deps bfcl-eval==2026.3.23`, or read the benchmark data root (data_source='benchmarks')."
            )
        return installed
    if data_dir is None:
        root = benchmark_root()
    else:
        root = Path(data_dir)
        if not root.is_dir():
            raise DataNotFoundError(
                f"BFCL data_dir={str(data_dir)!r} is not a folder. Fix: pass the BFCL data folder or the benchmark root."
            )
        if _is_data_dir(root):
            return root
    if not (root / RELATIVE).is_dir():
        raise DataNotFoundError(
            f"BFCL data folder {root / RELATIVE} does not exist. Fix: put the bfcl-eval 2026.3.23 data there "
            f"(the README's 'Benchmark data' section), pass data_dir=/path/to/bfcl_eval/data, or {PACKAGE_HINT}."
        )
    return root / RELATIVE


def question_file(category: str, data_dir: Path) -> Path:
    """The question file of ``category``."""
    return data_dir / f"{VERSION_PREFIX}_{category}.json"


def answer_file(category: str, data_dir: Path) -> Path:
    """The possible-answer file of ``category``."""
    return data_dir / "possible_answer" / f"{VERSION_PREFIX}_{category}.json"


def required_files(categories: list[str], data_dir: Path) -> list[Path]:
    """Every file serving ``categories`` needs (multi-turn tools read every multi-turn answer file)."""
    files = [question_file(c, data_dir) for c in categories]
    files += [answer_file(c, data_dir) for c in categories if c not in NO_GROUND_TRUTH]
    if any(c in MULTI_TURN for c in categories):
        files += [answer_file(c, data_dir) for c in MULTI_TURN if c not in categories]
        files += [data_dir / "multi_turn_func_doc" / name for name in FUNC_DOC_FILES.values()]
    return files


def check_files(categories: list[str], data_dir: Path) -> None:
    """Raise :class:`DataNotFoundError` naming the first file ``categories`` need that is absent."""
    for path in required_files(categories, data_dir):
        if not path.is_file():
            raise DataNotFoundError(f"{path} does not exist. Fix: restore it from the bfcl-eval 2026.3.23 data, or {PACKAGE_HINT}.")


def load_entries(category: str, data_dir: Path) -> list[Row]:
    """The checked question entries of ``category`` (each row named by its id)."""
    rows = list(require_unique(read_jsonl(question_file(category, data_dir), "questions")).values())
    for row in rows:
        turns = require(row, "question", list)
        if not turns:
            raise row.error("question", "is an empty list (it needs at least one turn)")
        for index, turn in enumerate(turns[: None if category in MULTI_TURN else 1]):
            _check_turn(row, f"question[{index}]", turn, empty_ok=category in MULTI_TURN)
        if category in MULTI_TURN:
            _check_multi_turn_entry(row)
        else:
            functions = require(row, "function", list)
            for index, doc in enumerate(functions):
                doc_row = row.child(f"function[{index}]", doc)
                require(doc_row, "name", str)
                require(doc_row, "parameters", dict)
    return rows


def _check_turn(row: Row, field: str, turn: Any, empty_ok: bool) -> None:
    if not isinstance(turn, list) or not (turn or empty_ok):
        raise row.error(field, "must be a non-empty list of messages {role, content}")
    for index, message in enumerate(turn):
        message_row = row.child(f"{field}[{index}]", message)
        require(message_row, "role", str)
        require(message_row, "content", str)


def _check_multi_turn_entry(row: Row) -> None:
    classes = require(row, "involved_classes", list)
    unknown = [c for c in classes if c not in FUNC_DOC_FILES]
    if unknown or not classes:
        raise row.error("involved_classes", f"names unknown backend classes {unknown}" if unknown else "is empty",
                        f"use classes of {sorted(FUNC_DOC_FILES)}, or restore the line from the benchmark download")  # fmt: skip
    require(row, "initial_config", dict, optional=True)
    require(row, "path", list, optional=True)
    missed = require(row, "missed_function", dict, optional=True) or {}
    for turn, names in missed.items():
        if not (turn.isdigit() and int(turn) < len(row.data["question"])) or not isinstance(names, list):
            raise row.error(f"missed_function[{turn!r}]", "must map a turn index of 'question' to a list of function names")


def load_ground_truth(category: str, data_dir: Path) -> dict[str, Row]:
    """``{entry id: answer row}`` of ``category`` (checked ids and ``ground_truth`` lists); empty for
    the no-ground-truth categories."""
    if category in NO_GROUND_TRUTH:
        return {}
    rows = require_unique(read_jsonl(answer_file(category, data_dir), "answers"))
    for row in rows.values():
        truth = require(row, "ground_truth", list)
        if category in MULTI_TURN and not all(isinstance(t, list) and all(isinstance(c, str) for c in t) for t in truth):
            raise row.error("ground_truth", "must be a list of turns, each a list of call strings")
    return rows


def load_category(category: str, data_dir: Path) -> tuple[list[Row], dict[str, Row]]:
    """The question rows of ``category`` and their answer rows by id: one answer per question.

    Raises:
        DataError: A question has no answer line, or an answer has no question.
    """
    entries = load_entries(category, data_dir)
    answers = load_ground_truth(category, data_dir)
    if category in NO_GROUND_TRUTH:
        return entries, answers
    ids = {str(row.data["id"]) for row in entries}
    for row in entries:
        if str(row.data["id"]) not in answers:
            raise row.error(
                "id", f"has no answer line in {answer_file(category, data_dir)}", "restore the answer line, or delete the question"
            )
    for key, row in answers.items():
        if key not in ids:
            raise row.error(
                "id", f"answers no question of {question_file(category, data_dir)}", "restore the question, or delete the answer line"
            )
    return entries, answers


def load_func_docs(class_name: str, data_dir: Path) -> list[dict[str, Any]]:
    """The checked function docs of one multi-turn backend class."""
    rows = read_jsonl(data_dir / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name], "function docs")
    for row in rows:
        require(row.named(require(row, "name", str)), "parameters", dict, optional=True)
    return [row.data for row in rows]
