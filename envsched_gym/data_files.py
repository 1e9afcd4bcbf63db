"""Reading benchmark data files, with errors that say where the data is wrong and how to fix it.

Every family loader reads its files through :func:`read_json` and :func:`read_jsonl` and checks
the fields it uses with :func:`require`, once, when the data is loaded. A problem is a
:class:`DataError` whose message names the file, the entry (a line number, a list position or
an id), the field, and what to do, for example::

    .../BFCL_v4_simple_python.json: line 3 (id 'simple_python_2'): field 'question' is missing.
    Fix: restore the file from the benchmark download (the README's 'Benchmark data' section).

Nothing is dropped, re-split or replaced silently: an empty file that should hold entries, an
answer without its question and a question without its answer are errors too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESTORE = "restore the file from the benchmark download (the README's 'Benchmark data' section)"
"""The default fix: the data files are upstream's, so a damaged one is replaced, not patched."""


class DataError(ValueError):
    """Benchmark data that cannot be used as it is.

    Attributes:
        file: The file (or folder) at fault.
        entry: The entry within it (``line 3``, ``entry 2 (id '5')``), or ``None`` for the whole file.
        field: The field at fault, dotted for nested ones (``evaluation_criteria.actions[0].name``).
        fix: What to do about it.
    """

    def __init__(self, file: str | os.PathLike[str], problem: str, *, entry: str | None = None,
                 field: str | None = None, fix: str = RESTORE) -> None:  # fmt: skip
        self.file, self.entry, self.field, self.fix = str(file), entry, field, fix
        subject = ", ".join(part for part in (entry, f"field {field!r}" if field else None) if part)
        super().__init__(f"{file}: {subject} {problem}. Fix: {fix}." if subject else f"{file} {problem}. Fix: {fix}.")


class DataNotFoundError(DataError, FileNotFoundError):
    """Benchmark data is missing; the message says where it was looked for and how to get it."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.file, self.entry, self.field, self.fix = "", None, None, ""


@dataclass(frozen=True, slots=True)
class Row:
    """One JSON object of a data file, with where it came from (for error messages).

    Attributes:
        file: The file it was read from.
        entry: Where it is in the file: ``line 3`` (JSON Lines) or ``entry 2`` (a JSON list),
            with ``(id '...')`` once :meth:`named`.
        data: The object itself.
        prefix: Field-name prefix of a nested object (``evaluation_criteria.actions[0].``).
    """

    file: Path
    entry: str
    data: dict[str, Any]
    prefix: str = ""

    def error(self, field: str | None, problem: str, fix: str = RESTORE) -> DataError:
        """A :class:`DataError` about ``field`` of this row (``None``: the row as a whole)."""
        name = f"{self.prefix}{field}" if field is not None else (self.prefix.rstrip(".") or None)
        return DataError(self.file, problem, entry=self.entry, field=name, fix=fix)

    def named(self, entry_id: object) -> Row:
        """The same row, its entry labelled with its id as well."""
        return Row(self.file, f"{self.entry} (id {str(entry_id)!r})", self.data, self.prefix)

    def child(self, field: str, value: Any) -> Row:
        """A nested object (``value``, found at ``field``) as a row of its own; it must be an object."""
        if not isinstance(value, dict):
            raise self.error(field, f"must be a JSON object, not {_kind(value)}")
        return Row(self.file, self.entry, value, f"{self.prefix}{field}.")


def require(row: Row, field: str, kind: type | tuple[type, ...], *, optional: bool = False) -> Any:
    """``row.data[field]``, checked to be a ``kind`` (``None`` is allowed too when ``optional``).

    Raises:
        DataError: The field is missing (and not ``optional``) or has another type.
    """
    if field not in row.data:
        if optional:
            return None
        raise row.error(field, "is missing")
    value = row.data[field]
    if value is None and optional:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        expected = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise row.error(field, f"must be {expected}, not {_kind(value)}")
    return value


def require_unique(rows: list[Row], field: str = "id") -> dict[str, Row]:
    """``{str(id): row}`` of rows whose ``field`` (a string or integer) is unique.

    Raises:
        DataError: A row lacks the id, or repeats an earlier row's.
    """
    by_id: dict[str, Row] = {}
    for row in rows:
        key = str(require(row, field, (str, int)))
        if key in by_id:
            raise row.error(field, f"duplicates {key!r} of {by_id[key].entry}", "give every entry its own id, or " + RESTORE)
        by_id[key] = row.named(key)
    return by_id


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON value in ``path``.

    Raises:
        DataNotFoundError: The file does not exist.
        DataError: It is not valid JSON (the message gives the line and column).
    """
    text = _read_text(Path(path))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"is not valid JSON: {exc.msg} (column {exc.colno})", entry=f"line {exc.lineno}") from None


def read_json_rows(path: str | os.PathLike[str], what: str = "entries") -> list[Row]:
    """A JSON file holding a non-empty list of objects, as :class:`Row` s (``entry 0``, ``entry 1``, ...).

    Args:
        path: The file.
        what: What the entries are, for the message about an empty list (``tasks``).
    """
    value = read_json(path)
    if not isinstance(value, list):
        raise DataError(path, f"must hold a JSON list of {what}, not {_kind(value)}")
    if not value:
        raise DataError(path, f"holds no {what} (an empty list)")
    rows = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise DataError(path, f"is {_kind(item)}, not a JSON object", entry=f"entry {index}")
        rows.append(Row(Path(path), f"entry {index}", item))
    return rows


def read_jsonl(path: str | os.PathLike[str], what: str = "entries") -> list[Row]:
    """Every JSON object of a non-empty JSON Lines file (blank lines skipped), as :class:`Row` s.

    Raises:
        DataNotFoundError: The file does not exist.
        DataError: A line is not valid JSON or not an object, or the file has no entries.
    """
    path = Path(path)
    rows = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                path, f"is not valid JSON: {exc.msg} (column {exc.colno})", entry=f"line {number}",
                fix=f"each line of a JSON Lines file is one whole JSON object; {RESTORE}",
            ) from None  # fmt: skip
        if not isinstance(value, dict):
            raise DataError(path, f"is {_kind(value)}, not a JSON object", entry=f"line {number}")
        rows.append(Row(path, f"line {number}", value))
    if not rows:
        raise DataError(path, f"holds no {what} (the file is empty)")
    return rows


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataNotFoundError(f"{path} does not exist. Fix: {RESTORE}.") from None
    except UnicodeDecodeError as exc:
        raise DataError(path, f"is not UTF-8 text (byte {exc.start})") from None


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list", dict: "an object"}


def _kind(value: Any) -> str:
    """How a JSON value reads in a message: ``a list``, ``null``, ``a string ('abc')``."""
    if value is None:
        return "null"
    name = _TYPE_NAMES.get(type(value), type(value).__name__)
    return f"{name} ({str(value)[:40]!r})" if isinstance(value, (str, int, float)) and not isinstance(value, bool) else name
