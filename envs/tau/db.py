"""The τ-bench databases as plain JSON data, copied per episode by copy-on-write.

``db.json`` is read once per process into a :class:`BaseDB` (shared, never mutated). Each
episode gets a :class:`TauDB` over it: a record is deep-copied into the episode's overlay the
first time a tool fetches it for use, so making a world costs O(1) instead of copying 2-7 MB
(``copy.deepcopy`` of the airline DB takes ~0.2 s; see ``docs/tau.md``).

The canonical form of a DB is ``json.dumps(db, sort_keys=True, ensure_ascii=False)`` with the
default separators; :meth:`TauDB.sha256` hashes exactly that string, assembled from per-record
dumps so that records the episode never touched reuse the base's cached text.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from envsched_gym.data_files import DataError, read_json

Record = dict[str, Any]


def dump(value: Any) -> str:
    """Canonical JSON text of a value (sorted keys, default separators, UTF-8 kept)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class BaseDB:
    """An immutable, process-wide database: ``{table: {key: record}}``.

    Attributes:
        tables: The data as loaded; never mutate it.
    """

    def __init__(self, tables: dict[str, dict[str, Record]]) -> None:
        self.tables = tables
        self._entries: dict[str, dict[str, str]] = {}
        self._texts: dict[str, str] = {}

    def entries(self, table: str) -> dict[str, str]:
        """``{key: '"key": <record dump>'}`` of a table (computed once, then cached)."""
        if table not in self._entries:
            self._entries[table] = {key: entry(key, record) for key, record in self.tables[table].items()}
        return self._entries[table]

    def table_text(self, table: str) -> str:
        """Canonical text of an untouched table, without its braces (cached)."""
        if table not in self._texts:
            entries = self.entries(table)
            self._texts[table] = ", ".join(entries[key] for key in sorted(entries))
        return self._texts[table]


def entry(key: str, record: Record) -> str:
    """One ``"key": value`` member of a canonical JSON object."""
    return f"{dump(key)}: {dump(record)}"


@lru_cache(maxsize=8)
def load_base(path: str) -> BaseDB:
    """Read ``db.json`` once per process (cached by path).

    Raises:
        DataError: The file is not JSON of the form ``{table: {key: record}}`` (the message names
            the table and record at fault).
    """
    tables = read_json(path)
    if not isinstance(tables, dict):
        raise DataError(path, "must hold a JSON object {table: {key: record}}")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise DataError(path, "must be a JSON object {key: record}", entry=f"table {name!r}")
        if (bad := next((key for key, record in table.items() if not isinstance(record, dict)), None)) is not None:
            raise DataError(path, "is not a JSON object", entry=f"table {name!r}, record {bad!r}")
    return BaseDB(tables)


def require_tables(base: BaseDB, path: str, tables: Iterable[str]) -> BaseDB:
    """``base`` (read from ``path``), checked to hold every table in ``tables``.

    Raises:
        DataError: A table is missing; the message names the file and the table.
    """
    if missing := [table for table in tables if table not in base.tables]:
        raise DataError(path, f"is missing (the DB has tables {sorted(base.tables)})", entry=f"table {missing[0]!r}")
    return base


class TauDB:
    """One episode's view of a :class:`BaseDB`, with its own copies of the records it changed.

    Tools call :meth:`get` for a record they may change or return (it is copied on first
    use), :meth:`peek` / :meth:`values` to scan without copying, and :meth:`put` to add one.
    """

    def __init__(self, base: BaseDB) -> None:
        self.base = base
        self.overlay: dict[str, dict[str, Record]] = {name: {} for name in base.tables}

    def __contains__(self, item: tuple[str, str]) -> bool:
        table, key = item
        return key in self.overlay[table] or key in self.base.tables[table]

    def get(self, table: str, key: str) -> Record | None:
        """The episode's own (mutable) copy of a record, or ``None`` if absent."""
        own = self.overlay[table]
        if key in own:
            return own[key]
        record = self.base.tables[table].get(key)
        if record is None:
            return None
        own[key] = copy.deepcopy(record)
        return own[key]

    def peek(self, table: str, key: str) -> Record | None:
        """A record for reading only (the base's object when the episode has not copied it)."""
        own = self.overlay[table]
        return own[key] if key in own else self.base.tables[table].get(key)

    def put(self, table: str, key: str, record: Record) -> None:
        """Add (or replace) a record."""
        self.overlay[table][key] = record

    def keys(self, table: str) -> list[str]:
        """Record keys of a table: the base's order, then records added by the episode."""
        base = self.base.tables[table]
        return list(base) + [k for k in self.overlay[table] if k not in base]

    def values(self, table: str) -> Iterator[Record]:
        """Every record of a table, read-only, in :meth:`keys` order."""
        for key in self.keys(table):
            yield self.peek(table, key)  # type: ignore[misc]

    def canonical(self) -> str:
        """The canonical JSON dump of the whole database."""
        tables = (f"{dump(table)}: {{{self._table_text(table)}}}" for table in sorted(self.overlay))
        return "{" + ", ".join(tables) + "}"

    def sha256(self) -> str:
        """SHA-256 (hex) of :meth:`canonical`. A lone surrogate an agent wrote (``"\\ud800"``) has
        no UTF-8 form; ``surrogatepass`` hashes it as its code point, so no text raises here."""
        return hashlib.sha256(self.canonical().encode("utf-8", "surrogatepass")).hexdigest()

    def to_dict(self) -> dict[str, dict[str, Record]]:
        """An independent deep copy of the whole database as plain data."""
        return json.loads(self.canonical())

    def _table_text(self, table: str) -> str:
        """A table's canonical text: the base's cached entries with the episode's records swapped in."""
        own = self.overlay[table]
        if not own:
            return self.base.table_text(table)
        merged = dict(self.base.entries(table))
        merged.update((key, entry(key, record)) for key, record in own.items())
        return ", ".join(merged[key] for key in sorted(merged))
