"""The driver cursor behind the stores' `%s` placeholders, logged as Django logs queries."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection

logger = logging.getLogger("django.db.backends")


class EngineCursor:
    """A driver cursor behind the stores' `%s` placeholders.

    Django's cursors cost as much as the database's own work on our batch statements of
    thousands of parameters (on SQLite inside the writer lock), so the stores use the
    driver's cursor. What Django's debug cursor gives is kept: when Django logs queries
    (DEBUG, or a test's CaptureQueriesContext / django_assert_num_queries), each
    statement is timed, logged and appended to connection.queries_log, so query counts
    include the engine's statements. Nothing of that is done when logging is off.
    """

    __slots__ = ("_convert", "_cursor", "_logged")

    def __init__(self, cursor: Any, convert: Callable[[str], str]) -> None:
        self._cursor = cursor
        self._convert = convert
        self._logged = connection.queries_logged

    def execute(self, sql: str, params: Sequence = ()) -> EngineCursor:
        if self._logged:
            return self._log(sql, params, self._cursor.execute, params)
        self._cursor.execute(self._convert(sql), params)
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence]) -> EngineCursor:
        if self._logged:
            return self._log(sql, f"{len(rows)} rows", self._cursor.executemany, rows)
        self._cursor.executemany(self._convert(sql), rows)
        return self

    def _log(self, sql: str, shown: object, call: Callable, params: object) -> EngineCursor:
        began = time.monotonic()
        try:
            call(self._convert(sql), params)
        finally:
            duration = time.monotonic() - began
            if isinstance(shown, Sequence) and not isinstance(shown, str):
                sql = _with_values(sql, shown)
            connection.queries_log.append({"sql": sql, "time": f"{duration:.3f}"})
            logger.debug(
                "(%.3f) %s; args=%s; alias=%s",
                duration,
                sql,
                shown,
                connection.alias,
                extra={"duration": duration, "sql": sql, "params": shown, "alias": "default"},
            )
        return self

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list:
        return self._cursor.fetchall()

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


def _with_values(sql: str, params: Sequence) -> str:
    """The statement with its parameters written in, as Django's query log shows them
    (for reading, and EXPLAIN in tests; never executed)."""

    def literal(value: object) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, bool | int | float):
            return str(int(value) if isinstance(value, bool) else value)
        return "'" + str(value).replace("'", "''") + "'"

    parts = sql.split("%s")
    if len(parts) != len(params) + 1:
        return sql
    return (
        "".join(part + literal(value) for part, value in zip(parts, params, strict=False))
        + parts[-1]
    )
