"""Where BFCL-v3 data is read from, and the JSON Lines readers for it.

The data directory (the one holding ``BFCL_v4_<category>.json`` and ``possible_answer/``) is,
in order: the ``data_dir`` argument (that directory itself, or a benchmark root holding
``bfcl/bfcl_eval/data``), ``$ENVSCHED_BENCHMARKS/bfcl/bfcl_eval/data``, the data shipped inside
the installed ``bfcl-eval`` package, and ``../shared/benchmarks`` next to a source checkout.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from envsched_gym.data import ENV_VAR, DataNotFoundError, benchmark_root

VERSION_PREFIX = "BFCL_v4"
RELATIVE = Path("bfcl") / "bfcl_eval" / "data"

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
    return (path / f"{VERSION_PREFIX}_simple_python.json").is_file()


def _installed_data_dir() -> Path | None:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def find_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The BFCL data directory (see the module docstring for the search order).

    Raises:
        DataNotFoundError: No candidate holds ``BFCL_v4_simple_python.json``.
    """
    candidates: list[Path] = []
    if data_dir is not None:
        candidates += [Path(data_dir), Path(data_dir) / RELATIVE]
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]) / RELATIVE)
    if (installed := _installed_data_dir()) is not None:
        candidates.append(installed)
    try:
        candidates.append(benchmark_root() / RELATIVE)
    except DataNotFoundError:
        pass
    for candidate in candidates:
        if _is_data_dir(candidate):
            return candidate
    looked = ", ".join(str(c) for c in candidates) or "(no candidate)"
    raise DataNotFoundError(
        f"BFCL data not found; looked in {looked}. Install the data with `pip install --no-deps bfcl-eval==2026.3.23`, "
        f"or pass data_dir=/path/to/bfcl_eval/data, or set {ENV_VAR} to a folder holding {RELATIVE}."
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every JSON object of a JSON Lines file (BFCL's ``.json`` files are JSON Lines)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_entries(category: str, data_dir: Path) -> list[dict[str, Any]]:
    """The question entries of ``category``."""
    return read_jsonl(data_dir / f"{VERSION_PREFIX}_{category}.json")


def load_ground_truth(category: str, data_dir: Path) -> dict[str, Any]:
    """``{entry id: ground_truth}`` of ``category``; empty for the no-ground-truth categories."""
    if category in NO_GROUND_TRUTH:
        return {}
    return {row["id"]: row["ground_truth"] for row in read_jsonl(data_dir / "possible_answer" / f"{VERSION_PREFIX}_{category}.json")}


def load_func_docs(class_name: str, data_dir: Path) -> list[dict[str, Any]]:
    """The function docs of one multi-turn backend class."""
    return read_jsonl(data_dir / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name])
