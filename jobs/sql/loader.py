"""Named SQL statements, read from a vendor's `queries.sql`.

A file is a series of blocks:

    -- name: start_runs
    -- What the statement does, which index serves it, and (in one vendor's file) why it
    -- differs from the other vendor's.
    -- params: worker, now, keys
    UPDATE {run_table} SET ... WHERE id IN ({keys}) RETURNING id

`-- params:` names the statement's `%s` parameters in order (a `keys` or `rows`
parameter stands for a list: see Query.expand). `-- rows:` gives the row template that
`{rows}` repeats. Table names and status literals are filled in once, when the file is
read: statuses are written into the SQL and never bound (see jobs/sql/base.py), with one
source of truth, the models' choices.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from jobs.models import (
    FINISHED_STATUSES,
    Job,
    JobHistory,
    NotificationAttempt,
    RunStatus,
    SchedulerState,
    Trigger,
)

_NAME = re.compile(r"^-- name: (\w+)\s*$")

# Filled into every statement when its file is read.
SUBSTITUTIONS = {
    "{job_table}": Job._meta.db_table,
    "{run_table}": JobHistory._meta.db_table,
    "{state_table}": SchedulerState._meta.db_table,
    "{notification_table}": NotificationAttempt._meta.db_table,
    "{pending}": f"'{RunStatus.PENDING.value}'",
    "{running}": f"'{RunStatus.RUNNING.value}'",
    "{success}": f"'{RunStatus.SUCCESS.value}'",
    "{failed}": f"'{RunStatus.FAILED.value}'",
    "{skipped}": f"'{RunStatus.SKIPPED.value}'",
    "{cancelled}": f"'{RunStatus.CANCELLED.value}'",
    "{schedule}": f"'{Trigger.SCHEDULE.value}'",
    "{chain}": f"'{Trigger.CHAIN.value}'",
    "{retry}": f"'{Trigger.RETRY.value}'",
    # The link tables of the chains (Job.on_success, Job.on_failure).
    "{on_success_table}": Job.on_success.through._meta.db_table,
    "{on_failure_table}": Job.on_failure.through._meta.db_table,
    "{finished}": ", ".join(f"'{status.value}'" for status in FINISHED_STATUSES),
}


class Query(NamedTuple):
    name: str
    text: str  # with {keys} / {rows} still to expand
    params: tuple[str, ...]
    row: str  # the template {rows} repeats ("" when the statement has none)

    def expand(self, count: int) -> str:
        """The statement for `count` keys (`{keys}`) or rows (`{rows}`)."""
        return _expand(self.text, self.row, count)


@lru_cache(maxsize=256)
def _expand(text: str, row: str, count: int) -> str:
    # Statements depend on their batch size: a few sizes recur (full chunks, a tail).
    if "{keys}" in text:
        text = text.replace("{keys}", ", ".join(["%s"] * count))
    if "{rows}" in text:
        # A row template that is a SELECT makes a derived table of selected rows (the
        # MySQL store's: its VALUES lists cannot be named alike on MySQL and MariaDB).
        joiner = " UNION ALL " if row.startswith("SELECT ") else ", "
        text = text.replace("{rows}", joiner.join([row] * count))
    return text


def _substitute(text: str) -> str:
    for token, value in SUBSTITUTIONS.items():
        text = text.replace(token, value)
    return text


def load(path: Path) -> dict[str, Query]:
    """Every statement of a file, by name."""
    queries: dict[str, Query] = {}
    name = None
    params: tuple[str, ...] = ()
    row = ""
    body: list[str] = []

    def close() -> None:
        if name is not None:
            text = " ".join(" ".join(body).split())
            if name in queries:
                raise ValueError(f"{path}: statement {name!r} defined twice")
            queries[name] = Query(name, _substitute(text), params, _substitute(row))

    for line in path.read_text().splitlines():
        match = _NAME.match(line)
        if match:
            close()
            name, params, row, body = match.group(1), (), "", []
        elif line.startswith("-- params:"):
            params = tuple(p.strip() for p in line.removeprefix("-- params:").split(","))
        elif line.startswith("-- rows:"):
            row = line.removeprefix("-- rows:").strip()
        elif line.startswith("--") or not line.strip():
            continue
        elif name is not None:
            body.append(line.strip())
    close()
    return queries
