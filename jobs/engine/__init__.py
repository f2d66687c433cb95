"""The run engine: the only code that changes the state of runs.

claim -> start -> finish (-> retry), and reap, exactly as DESIGN.md's "life of a run".
Every state change is a conditional update whose row count (or RETURNING list) says
whether this process won: losing a race is normal and silently skipped.

The hot path works in batches: one transaction and a handful of statements per batch
of runs, written as parametrised SQL, because per-row ORM saves (and even bulk_update's
CASE expressions) cost several times more than the work itself. Ids travel as 32-digit
hex strings ("keys") and datetimes are adapted once per distinct value: profiling a
10,000-run burst showed UUID objects and Django's per-value adapters costing more than
the SQL they fed.
"""

from __future__ import annotations

import logging
import random
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from jobs import alerts, conf, schedules
from jobs.models import Job, JobHistory, OverlapPolicy, RunStatus, ScheduleType, Trigger
from jobs.runs import RunResult, RunTicket, new_key

logger = logging.getLogger(__name__)

JOB_TABLE = Job._meta.db_table
RUN_TABLE = JobHistory._meta.db_table

# Rows per multi-row statement: well under SQLite's 32,766 bound parameters.
_ROWS_PER_STATEMENT = 900

_PENDING = RunStatus.PENDING.value
_RUNNING = RunStatus.RUNNING.value
_SUCCESS = RunStatus.SUCCESS.value
_FAILED = RunStatus.FAILED.value
_SKIPPED = RunStatus.SKIPPED.value
_CANCELLED = RunStatus.CANCELLED.value
_ONCE = ScheduleType.ONCE.value
_CRON = ScheduleType.CRON.value
_ALLOW = OverlapPolicy.ALLOW.value
_FORBID = OverlapPolicy.FORBID.value
_SCHEDULE = Trigger.SCHEDULE.value
_RETRY = Trigger.RETRY.value

# Status conditions are written into the SQL, never passed as parameters. SQLite plans a
# statement whose WHERE compares a column of a partial index's condition with a bound
# parameter again on every execution (the value decides whether the index applies):
# measured, 75 µs instead of 12 µs for the poll of ready runs. PostgreSQL's plan cache
# likewise cannot match a generic plan's `status = $1` to a partial index.
_IS_PENDING = f"status = '{_PENDING}'"
_IS_RUNNING = f"status = '{_RUNNING}'"
_ACTIVE_IN = f"status IN ('{_PENDING}', '{_RUNNING}')"


# --- adapting values for raw SQL ---------------------------------------------------------

_dt_cache: dict[datetime, str] = {}


def _sqlite_dt(value: datetime | None) -> str | None:
    """What Django's SQLite backend stores: naive UTC "YYYY-MM-DD HH:MM:SS[.ffffff]"."""
    if value is None:
        return None
    text = _dt_cache.get(value)
    if text is None:
        if value.tzinfo is None:
            raise ValueError("naive datetime given where an aware one is required")
        utc = value if value.tzinfo is UTC else value.astimezone(UTC)
        text = utc.isoformat(" ")[:-6]  # drop "+00:00"
        if len(_dt_cache) > 20_000:
            _dt_cache.clear()
        _dt_cache[value] = text
    return text


def _sqlite_dt_out(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value).replace(tzinfo=UTC)


def _identity(value: object) -> object:
    return value


def _uuid_hex(value: uuid.UUID | str) -> str:
    return value.hex if isinstance(value, uuid.UUID) else value


@dataclass(frozen=True, slots=True)
class Dialect:
    dt: Callable[[datetime | None], object]  # an aware datetime as a query parameter
    dt_out: Callable[[object], datetime | None]  # a datetime read through `text()`, aware
    key_out: Callable[[object], str]  # an id read by raw SQL, as a key
    for_update: str  # appended to a SELECT that must lock its rows
    skip_locked: str  # appended to the claim's SELECT

    def text(self, column: str) -> str:
        """Select a datetime column so that dt_out can read it cheaply."""
        # SQLite's driver would run Django's regex-based parser on a "datetime" column;
        # as text, datetime.fromisoformat does the same in a fraction of the time.
        return f"CAST({column} AS TEXT)" if self is _SQLITE else column


_SQLITE = Dialect(dt=_sqlite_dt, dt_out=_sqlite_dt_out, key_out=str, for_update="", skip_locked="")
_POSTGRESQL = Dialect(
    dt=_identity,
    dt_out=_identity,
    key_out=_uuid_hex,
    for_update=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
)


def dialect() -> Dialect:
    return _SQLITE if connection.vendor == "sqlite" else _POSTGRESQL


# SQLite has one writer at a time. Threads of one process that collide on its lock fall
# into SQLite's busy handler, which sleeps for milliseconds at a time; measured, that
# halved a burst's throughput. So the threads of a process take turns here first (a
# hand-over costs microseconds) and only processes meet at SQLite's lock.
_sqlite_writer = threading.Lock()


@contextmanager
def _writing() -> Iterator[None]:
    # Every write goes through transaction.atomic() inside this, even a single UPDATE:
    # on SQLite that is BEGIN IMMEDIATE, which waits for the lock (busy timeout) instead
    # of failing at once when another process wrote between our read and our write.
    if connection.vendor == "sqlite":
        with _sqlite_writer:
            yield
    else:
        yield


@contextmanager
def _cursor() -> Iterator[_EngineCursor]:
    """A cursor for the engine's statements: the driver's own, taking `%s` placeholders.

    Django's cursors cost as much as the database's own work on our batch statements of
    thousands of parameters, and on SQLite that cost falls inside the writer lock:
    - on SQLite, Django rewrites every statement with a regex and wraps every call;
    - on PostgreSQL, Django binds parameters in Python (client-side; server-side binding
      doubled a burst's throughput), and psycopg's own cursor parses any statement
      longer than 4 KB for its placeholders on every execution (half of a claim's time,
      measured with py-spy). psycopg's RawCursor takes PostgreSQL's `$n` as they are.
    Each statement is converted once (cached), and errors still surface as django.db
    errors. The engine passes values already adapted (text datetimes on SQLite, hex
    keys), so nothing else is lost.
    """
    connection.ensure_connection()
    if connection.vendor == "sqlite":
        with connection.wrap_database_errors:
            raw = connection.connection.cursor()
            try:
                yield _EngineCursor(raw, _qmarks)
            finally:
                raw.close()
        return
    import psycopg

    with connection.wrap_database_errors, psycopg.RawCursor(connection.connection) as raw:
        yield _EngineCursor(raw, _dollars)


class _EngineCursor:
    """A driver cursor behind the engine's `%s` placeholders (see _cursor)."""

    __slots__ = ("_convert", "_cursor")

    def __init__(self, cursor, convert: Callable[[str], str]) -> None:  # type: ignore[no-untyped-def]
        self._cursor = cursor
        self._convert = convert

    def execute(self, sql: str, params: Sequence = ()) -> _EngineCursor:
        self._cursor.execute(self._convert(sql), params)
        return self

    def executemany(self, sql: str, rows: Iterable[Sequence]) -> _EngineCursor:
        self._cursor.executemany(self._convert(sql), rows)
        return self

    def fetchone(self):  # type: ignore[no-untyped-def]
        return self._cursor.fetchone()

    def fetchall(self) -> list:
        return self._cursor.fetchall()

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


# The engine's SQL holds no literal "%" or "$" (statuses and names are plain words).
# Small caches: a statement's text depends on its batch size and may be 40 KB long.
@lru_cache(maxsize=64)
def _qmarks(sql: str) -> str:
    return sql.replace("%s", "?")


@lru_cache(maxsize=64)
def _dollars(sql: str) -> str:
    parts = sql.split("%s")
    return "".join(f"{part}${number}" for number, part in enumerate(parts[:-1], 1)) + parts[-1]


def _placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- inserting runs ----------------------------------------------------------------------

_INSERT_RUN_COLUMNS = (
    "id",
    "job_id",
    "scheduled_for",
    "attempt",
    "status",
    "trigger",
    "not_before",
    "log",
    "worker",
    "created_at",
    "dispatched_at",
)
_INSERT_ROW_SQL = f"({_placeholders(len(_INSERT_RUN_COLUMNS))})"


def _insert_runs(cursor, rows: list[tuple]) -> set[str]:  # type: ignore[no-untyped-def]
    """Insert pending runs; a run that already exists (same job, occurrence, attempt)
    is left alone. Returns the keys of the runs actually inserted."""
    d = dialect()
    inserted: set[str] = set()
    columns = ", ".join(_INSERT_RUN_COLUMNS)
    for chunk in _chunks(rows, _ROWS_PER_STATEMENT):
        cursor.execute(
            f"INSERT INTO {RUN_TABLE} ({columns}) VALUES "
            + ", ".join([_INSERT_ROW_SQL] * len(chunk))
            + " ON CONFLICT DO NOTHING RETURNING id",
            [value for row in chunk for value in row],
        )
        inserted.update(d.key_out(row[0]) for row in cursor.fetchall())
    return inserted


def _pending_row(
    d: Dialect,
    run_key: str,
    job_key: str,
    scheduled_for: datetime,
    attempt: int,
    trigger: str,
    not_before: datetime,
    db_now: object,
    db_dispatched_at: object = None,
) -> tuple:
    """A row for _insert_runs; `db_now` is already adapted (one value for a batch)."""
    db_scheduled_for = d.dt(scheduled_for)
    return (
        run_key,
        job_key,
        db_scheduled_for,
        attempt,
        _PENDING,
        trigger,
        db_scheduled_for if not_before is scheduled_for else d.dt(not_before),
        "",
        "",
        db_now,
        db_dispatched_at,
    )


# --- claim -------------------------------------------------------------------------------


def claim_due(
    now: datetime | None = None, *, limit: int | None = None, dispatched: bool = False
) -> list[RunTicket]:
    """Claim one batch of due jobs: create their pending runs and advance them.

    Select up to `limit` due jobs (oldest first), insert one pending run per occurrence
    to run, move each job's next_run_at (a once job is deactivated), in one short
    transaction. On PostgreSQL the select skips rows another scheduler has locked. On
    SQLite the jobs are read and planned before the write lock is taken and the plan is
    applied only if no job moved meanwhile (otherwise the batch is claimed again under
    the lock), so that the planning overlaps other threads' writes.
    Whatever the path, the unique (job, scheduled_for, attempt) constraint makes a second
    claim of an occurrence insert nothing. Jobs whose overlap policy forbids or replaces
    overlapping runs cost one more SELECT for the batch (see _plan_overlaps).

    `dispatched`: the caller hands the runs to Huey right after this returns, so they are
    stamped as handed out now (if the hand-over never happens, they are handed out again
    after JOBS_REDISPATCH_SECONDS).
    """
    now = now or timezone.now()
    limit = limit or conf.claim_batch()
    d = dialect()
    db_now = d.dt(now)
    # Uses index jobs_job_due (partial on is_active): cost grows with the due jobs only.
    claim_sql = (
        f"SELECT id, name, command, schedule_type, interval, interval_unit, misfire_policy, "
        f"{d.text('next_run_at')}, max_retries, retry_backoff_seconds, "
        f"cron_expression, timezone, overlap_policy, {_JOB_LIMIT_COLUMNS} FROM {JOB_TABLE} "
        f"WHERE is_active AND next_run_at <= %s ORDER BY next_run_at LIMIT %s{d.skip_locked}"
    )
    if d is _SQLITE:
        with _cursor() as cursor:
            cursor.execute(claim_sql, [db_now, limit])
            jobs = cursor.fetchall()
        if not jobs:
            return []
        plan = _plan_claims(d, jobs, now, db_now, dispatched)
        try:
            with _writing(), transaction.atomic(), _cursor() as cursor:
                if _apply_claims(cursor, plan) != len(plan.job_updates):
                    raise _JobsMoved
                inserted = _insert_runs(cursor, plan.run_rows) if plan.run_rows else set()
                if plan.overlaps:  # only when a job in the batch forbids or replaces
                    _apply_overlaps(cursor, d, plan.overlaps, inserted, db_now)
        except _JobsMoved:
            inserted = None
        if inserted is not None:
            return _claimed(plan.tickets, inserted)
    with _writing(), transaction.atomic(), _cursor() as cursor:
        cursor.execute(claim_sql, [db_now, limit])
        jobs = cursor.fetchall()
        if not jobs:
            return []
        plan = _plan_claims(d, jobs, now, db_now, dispatched)
        _apply_claims(cursor, plan)
        inserted = _insert_runs(cursor, plan.run_rows) if plan.run_rows else set()
        if plan.overlaps:  # only when a job in the batch forbids or replaces
            _apply_overlaps(cursor, d, plan.overlaps, inserted, db_now)
    return _claimed(plan.tickets, inserted)


class _JobsMoved(Exception):
    """A job changed between reading and claiming it; roll back and claim under the lock."""


@dataclass(slots=True)
class _ClaimPlan:
    tickets: list[RunTicket]
    run_rows: list[tuple]
    # (new next_run_at, still active, job key, next_run_at as read)
    job_updates: list[tuple]
    # What the overlap policies decided (None when every job in the batch allows overlap).
    overlaps: _OverlapPlan | None = None


def _plan_claims(
    d: Dialect, jobs: list[tuple], now: datetime, db_now: object, dispatched: bool
) -> _ClaimPlan:
    grace = conf.misfire_grace()
    db_dispatched_at = db_now if dispatched else None
    plan = _ClaimPlan(tickets=[], run_rows=[], job_updates=[])
    # Jobs whose overlap policy is not "allow": their occurrences are decided after the
    # loop, with one query for the whole batch (see _plan_overlaps).
    guarded: list[_Guarded] = []
    for (
        raw_job_id,
        name,
        command,
        schedule_type,
        interval,
        interval_unit,
        misfire_policy,
        raw_next_run_at,
        max_retries,
        backoff,
        cron_expression,
        zone_name,
        overlap_policy,
        timeout,  # _JOB_LIMIT_COLUMNS
        sim_rate,
        sim_min,
        sim_max,
    ) in jobs:
        next_run_at = d.dt_out(raw_next_run_at)
        job_key = d.key_out(raw_job_id)
        try:
            if schedule_type == _ONCE:
                occurrences = schedules.plan_once_claim(
                    next_run_at, now, policy=misfire_policy, grace=grace
                )
            elif schedule_type == _CRON:
                cron = _cron_schedule(cron_expression, zone_name or conf.time_zone())
                occurrences = schedules.plan_cron_claim(
                    next_run_at, cron, now, policy=misfire_policy, grace=grace
                )
            else:
                step = schedules.interval_step(interval, interval_unit)
                occurrences = schedules.plan_interval_claim(
                    next_run_at, step, now, policy=misfire_policy, grace=grace
                )
        except (schedules.ScheduleError, OverflowError, ValueError):
            # The constraints make this unreachable; if it happens, park the job rather
            # than let one bad row stop every claim.
            logger.exception("job %r has an invalid schedule; deactivating it", name)
            plan.job_updates.append((None, False, job_key, raw_next_run_at))
            continue
        if occurrences.missed:
            logger.info(
                "job %r missed %d occurrence(s); misfire policy %s",
                name,
                occurrences.missed,
                misfire_policy,
            )
        run_at = occurrences.run_at
        if overlap_policy != _ALLOW and run_at:
            # Decided below for the whole batch at once.
            guarded.append(
                _Guarded(
                    overlap_policy,
                    run_at,
                    job_key,
                    name,
                    command,
                    max_retries,
                    backoff,
                    (timeout, sim_rate, sim_min, sim_max),
                )
            )
            run_at = ()
        for scheduled_for in run_at:
            run_key = new_key()
            plan.run_rows.append(
                _pending_row(
                    d,
                    run_key,
                    job_key,
                    scheduled_for,
                    1,
                    _SCHEDULE,
                    scheduled_for,
                    db_now,
                    db_dispatched_at,
                )
            )
            plan.tickets.append(
                RunTicket(
                    run_key,
                    job_key,
                    name,
                    command,
                    scheduled_for,
                    1,
                    max_retries,
                    backoff,
                    timeout,
                    sim_rate,
                    sim_min,
                    sim_max,
                )
            )
        following = occurrences.next_run_at
        plan.job_updates.append((d.dt(following), following is not None, job_key, raw_next_run_at))
    if guarded:
        plan.overlaps = _plan_overlaps(d, plan, guarded, now, db_now, db_dispatched_at)
    return plan


def _update_each(
    cursor,  # type: ignore[no-untyped-def]
    d: Dialect,
    rows: list[tuple],
    *,
    sqlite_sql: str,
    pg_sql: str,
    pg_types: tuple[str, ...],
) -> int:
    """Apply one UPDATE per row; returns how many rows it changed.

    SQLite runs in this process, so a prepared statement executed per row (executemany)
    is the cheapest. PostgreSQL is a round trip away: there the rows travel in one
    `UPDATE ... FROM (VALUES ...)` per chunk (measured: executemany cost ~400 us a row).
    `pg_sql` has a {values} slot and names the rows' columns in order.
    """
    if not rows:
        return 0
    if d is _SQLITE:
        cursor.executemany(sqlite_sql, rows)
        return cursor.rowcount
    row_sql = "(" + ", ".join(f"%s::{pg_type}" for pg_type in pg_types) + ")"
    changed = 0
    for chunk in _chunks(rows, _ROWS_PER_STATEMENT):
        cursor.execute(
            pg_sql.format(values=", ".join([row_sql] * len(chunk))),
            [value for row in chunk for value in row],
        )
        changed += cursor.rowcount
    return changed


def _apply_claims(cursor, plan: _ClaimPlan) -> int:  # type: ignore[no-untyped-def]
    """Move the claimed jobs on; returns how many were still as they were read."""
    return _update_each(
        cursor,
        dialect(),
        plan.job_updates,
        sqlite_sql=f"UPDATE {JOB_TABLE} SET next_run_at = %s, is_active = %s "
        f"WHERE id = %s AND is_active AND next_run_at = %s",
        pg_sql=f"UPDATE {JOB_TABLE} AS t SET next_run_at = v.next_run_at, "
        "is_active = v.is_active FROM (VALUES {values}) AS v(next_run_at, is_active, id, "
        "read_next_run_at) WHERE t.id = v.id AND t.is_active "
        "AND t.next_run_at = v.read_next_run_at",
        pg_types=("timestamptz", "boolean", "uuid", "timestamptz"),
    )


def _claimed(tickets: list[RunTicket], inserted: set[str]) -> list[RunTicket]:
    if len(inserted) != len(tickets):
        # Someone else had already created these occurrences: theirs to run.
        return [t for t in tickets if t.run_key in inserted]
    return tickets


# --- cron, limits and overlap policies (issue 7) -----------------------------------------
#
# Kept apart from the claim's hot loop above: a batch whose jobs all allow overlap (the
# default) pays for none of this but a comparison per job. A batch with jobs that forbid
# or replace pays one more SELECT, for those jobs only, and writes only when there is
# something to skip or cancel.

# The job's limits and simulation settings, read with each ticket (RunTicket's last fields).
_JOB_LIMIT_COLUMNS = "timeout_seconds, sim_failure_rate, sim_min_seconds, sim_max_seconds"


@lru_cache(maxsize=1024)
def _cron_schedule(expression: str, zone_name: str) -> schedules.CronSchedule:
    """A parsed cron schedule, kept: the same jobs are claimed again and again."""
    return schedules.CronSchedule(expression, zone_name)


@dataclass(slots=True)
class _Guarded:
    """A claimed job whose overlap policy must look at its runs before it runs again."""

    policy: str
    run_at: tuple[datetime, ...]
    job_key: str
    name: str
    command: str
    max_retries: int
    backoff: int
    limits: Sequence


@dataclass(slots=True)
class _OverlapPlan:
    # Occurrences recorded as skipped: (run_key, job_key, scheduled_for, log).
    skipped: list[tuple[str, str, datetime, str]]
    # Runs to cancel: (run_key, job_key, log note, key of the new run that replaces them).
    replaced: list[tuple[str, str, str, str]]


def _active_runs(d: Dialect, job_keys: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """The pending and running runs of these jobs: {job_key: [(run_key, status)]}.

    One statement, through the two partial indexes that hold only pending and only
    running runs, so it costs in proportion to the backlog and never reads a job's
    history (which the (job, scheduled_for, attempt) index would walk run by run).
    The statuses are literals so that SQLite can match the partial indexes' conditions.
    """
    sqlite = d is _SQLITE
    pending_index = " INDEXED BY jobs_run_pending_ready" if sqlite else ""
    running_index = " INDEXED BY jobs_run_running_heartbeat" if sqlite else ""
    active: dict[str, list[tuple[str, str]]] = {}
    with connection.cursor() as cursor:
        # Two placeholders per job: well within the bound for any batch up to 900 jobs.
        for chunk in _chunks(job_keys, _ROWS_PER_STATEMENT // 2):
            marks = _placeholders(len(chunk))
            cursor.execute(
                f"SELECT job_id, id, status FROM {RUN_TABLE}{pending_index} "
                f"WHERE {_IS_PENDING} AND job_id IN ({marks}) UNION ALL "
                f"SELECT job_id, id, status FROM {RUN_TABLE}{running_index} "
                f"WHERE {_IS_RUNNING} AND job_id IN ({marks})",
                [*chunk, *chunk],
            )
            for job_id, run_id, status in cursor.fetchall():
                active.setdefault(d.key_out(job_id), []).append((d.key_out(run_id), status))
    return active


def _plan_overlaps(
    d: Dialect,
    plan: _ClaimPlan,
    guarded: list[_Guarded],
    now: datetime,
    db_now: object,
    db_dispatched_at: object,
) -> _OverlapPlan:
    """Decide the occurrences of jobs that forbid or replace overlapping runs.

    forbid: while the job has a pending or running run, each occurrence is recorded as
    skipped; otherwise the earliest runs and the later ones of the same claim (which
    would overlap it) are skipped. replace: the latest occurrence runs; the job's
    pending and running runs are cancelled, and earlier occurrences of the same claim
    skipped. "Run now" and retries are explicit and not subject to the policy; a
    scheduled occurrence that comes while they are pending or running is.
    """
    active = _active_runs(d, [g.job_key for g in guarded])
    overlaps = _OverlapPlan(skipped=[], replaced=[])
    stamp = f"[{now:%Y-%m-%d %H:%M:%S} UTC]"
    for g in guarded:
        held = active.get(g.job_key, [])
        if g.policy == _FORBID:
            if held:
                run_key, status = held[0]
                reason = f"its run {uuid.UUID(hex=run_key)} is still {status}"
                to_run, to_skip = (), g.run_at
            else:
                reason = f"the run for {g.run_at[0]:%Y-%m-%d %H:%M:%S} UTC is still pending"
                to_run, to_skip = g.run_at[:1], g.run_at[1:]
            note = f"{stamp} skipped: {reason} (overlap policy: forbid).\n"
        else:
            to_run, to_skip = g.run_at[-1:], g.run_at[:-1]
            note = (
                f"{stamp} skipped: replaced by the run for {to_run[0]:%Y-%m-%d %H:%M:%S} UTC "
                "(overlap policy: replace).\n"
            )
        for scheduled_for in to_skip:
            overlaps.skipped.append((new_key(), g.job_key, scheduled_for, note))
        for scheduled_for in to_run:
            run_key = new_key()
            plan.run_rows.append(
                _pending_row(
                    d,
                    run_key,
                    g.job_key,
                    scheduled_for,
                    1,
                    _SCHEDULE,
                    scheduled_for,
                    db_now,
                    db_dispatched_at,
                )
            )
            plan.tickets.append(
                RunTicket(
                    run_key,
                    g.job_key,
                    g.name,
                    g.command,
                    scheduled_for,
                    1,
                    g.max_retries,
                    g.backoff,
                    *g.limits,
                )
            )
            if g.policy != _FORBID:
                cancel_note = (
                    f"\n{stamp} cancelled: replaced by the run for "
                    f"{scheduled_for:%Y-%m-%d %H:%M:%S} UTC (overlap policy: replace).\n"
                )
                for old_key, _status in held:
                    overlaps.replaced.append((old_key, g.job_key, cancel_note, run_key))
    return overlaps


def _apply_overlaps(
    cursor,  # type: ignore[no-untyped-def]
    d: Dialect,
    overlaps: _OverlapPlan,
    inserted: set[str],
    db_now: object,
) -> None:
    """Write what _plan_overlaps decided, in the claim's transaction.

    Skipped occurrences become finished runs (a second claim of the same occurrence adds
    nothing: the unique constraint). Runs are cancelled for a replacement only if this
    claim created the replacement, and only if they are still pending or running.
    """
    status_rows: list[tuple] = []
    if overlaps.skipped:
        for chunk in _chunks(overlaps.skipped, _ROWS_PER_STATEMENT // 2):
            cursor.execute(
                f"INSERT INTO {RUN_TABLE} (id, job_id, scheduled_for, attempt, status, trigger, "
                "not_before, log, worker, created_at, finished_at) VALUES "
                + ", ".join(["(%s, %s, %s, 1, %s, %s, %s, %s, '', %s, %s)"] * len(chunk))
                + " ON CONFLICT DO NOTHING",
                [
                    value
                    for run_key, job_key, scheduled_for, log in chunk
                    for value in (
                        run_key,
                        job_key,
                        d.dt(scheduled_for),
                        _SKIPPED,
                        _SCHEDULE,
                        d.dt(scheduled_for),
                        log,
                        db_now,
                        db_now,
                    )
                ],
            )
        status_rows += [(_SKIPPED, job_key, d.dt(at)) for _, job_key, at, _ in overlaps.skipped]
    replaced = [row for row in overlaps.replaced if row[3] in inserted]
    if replaced:
        cursor.executemany(
            f"UPDATE {RUN_TABLE} SET status = %s, finished_at = %s, log = log || %s "
            f"WHERE id = %s AND {_ACTIVE_IN}",
            [(_CANCELLED, db_now, note, old_key) for old_key, _, note, _ in replaced],
        )
        status_rows += [(_CANCELLED, job_key, db_now) for _, job_key, _, _ in replaced]
    _record_status_on_jobs(cursor, status_rows)


def _record_status_on_jobs(cursor, rows: list[tuple]) -> None:  # type: ignore[no-untyped-def]
    """Show a skipped or cancelled run as its job's latest outcome, unless a run that
    started later has already finished; last_run_at stays the last run that executed.

    Rows are (status, job_key, the run's place in the job's timeline), adapted.
    """
    if rows:
        cursor.executemany(
            f"UPDATE {JOB_TABLE} SET last_run_status = %s "
            f"WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)",
            rows,
        )


# --- start -------------------------------------------------------------------------------


def start(
    tickets: Sequence[RunTicket], worker: str, now: datetime | None = None
) -> list[RunTicket]:
    """Move pending runs to running, for `worker`. Returns the ones this worker won.

    A run that is no longer pending (another worker started it, it was cancelled or
    deleted) is simply not returned.
    """
    if not tickets:
        return []
    d = dialect()
    db_now = d.dt(now or timezone.now())
    won: set[str] = set()
    with _writing(), transaction.atomic(), _cursor() as cursor:
        for chunk in _chunks(tickets, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET status = %s, worker = %s, started_at = %s, "
                f"heartbeat_at = %s WHERE {_IS_PENDING} AND not_before <= %s "
                f"AND id IN ({_placeholders(len(chunk))}) RETURNING id",
                [_RUNNING, worker, db_now, db_now, db_now] + [t.run_key for t in chunk],
            )
            won.update(d.key_out(row[0]) for row in cursor.fetchall())
    return [t for t in tickets if t.run_key in won]


def release(tickets: Sequence[RunTicket], worker: str) -> int:
    """Hand runs that `worker` started but did not begin executing back to pending."""
    if not tickets:
        return 0
    released = 0
    with _writing(), transaction.atomic(), _cursor() as cursor:
        for chunk in _chunks(tickets, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET status = %s, worker = '', started_at = NULL, "
                f"heartbeat_at = NULL WHERE {_IS_RUNNING} AND worker = %s "
                f"AND id IN ({_placeholders(len(chunk))})",
                [_PENDING, worker] + [t.run_key for t in chunk],
            )
            released += cursor.rowcount
    return released


def heartbeat(run_keys: Iterable[str], now: datetime | None = None) -> int:
    """Stamp running runs as alive. Returns how many are still running."""
    keys = list(run_keys)
    if not keys:
        return 0
    db_now = dialect().dt(now or timezone.now())
    touched = 0
    with _writing(), transaction.atomic(), _cursor() as cursor:
        for chunk in _chunks(keys, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET heartbeat_at = %s WHERE {_IS_RUNNING} "
                f"AND id IN ({_placeholders(len(chunk))})",
                [db_now, *chunk],
            )
            touched += cursor.rowcount
    return touched


# --- finish and retry --------------------------------------------------------------------


def _retry_rows(
    d: Dialect, failed: Iterable[tuple[RunTicket, datetime]], rng: random.Random | None = None
) -> list[tuple]:
    """Pending next attempts for failed attempts that have retries left."""
    rows = []
    for ticket, failed_at in failed:
        if ticket.attempt > ticket.max_retries:
            continue
        delay = schedules.retry_delay(ticket.attempt, ticket.retry_backoff_seconds, rng)
        rows.append(
            _pending_row(
                d,
                new_key(),
                ticket.job_key,
                ticket.scheduled_for,
                ticket.attempt + 1,
                _RETRY,
                failed_at + delay,
                d.dt(failed_at),
            )
        )
    return rows


def finish(results: Sequence[RunResult], worker: str) -> int:
    """Record the outcome of runs `worker` executed; schedule retries for failures.

    Only runs still owned by `worker` (running, stamped with its name) are written: a
    run the reaper already declared lost keeps that verdict, and its retry is not made
    twice. Returns how many results were recorded.
    """
    if not results:
        return 0
    d = dialect()
    # Build the rows before taking the writer lock: this Python work then overlaps
    # another thread's SQL (SQLite releases the GIL while it works).
    run_rows = []
    job_rows = []
    for r in results:
        status = _SUCCESS if r.succeeded else _FAILED
        started_at = d.dt(r.started_at)
        run_rows.append((status, started_at, d.dt(r.finished_at), r.log, r.ticket.run_key))
        job_rows.append((started_at, status, r.ticket.job_key, started_at))
    with _writing(), transaction.atomic(), _cursor() as cursor:
        # Which of these runs does `worker` still own? Locked (FOR UPDATE on PostgreSQL,
        # the write lock on SQLite) so the reaper cannot take one between check and write.
        mine: set[str] = set()
        for chunk in _chunks(results, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"SELECT id FROM {RUN_TABLE} WHERE {_IS_RUNNING} AND worker = %s "
                f"AND id IN ({_placeholders(len(chunk))}){d.for_update}",
                [worker] + [r.ticket.run_key for r in chunk],
            )
            mine.update(d.key_out(row[0]) for row in cursor.fetchall())
        owned = results
        if len(mine) != len(results):
            keep = [r.ticket.run_key in mine for r in results]
            owned = [r for r, k in zip(results, keep, strict=True) if k]
            run_rows = [row for row, k in zip(run_rows, keep, strict=True) if k]
            job_rows = [row for row, k in zip(job_rows, keep, strict=True) if k]
        if not owned:
            return 0
        _update_each(
            cursor,
            d,
            run_rows,
            sqlite_sql=f"UPDATE {RUN_TABLE} SET status = %s, started_at = %s, "
            "finished_at = %s, log = %s WHERE id = %s",
            pg_sql=f"UPDATE {RUN_TABLE} AS t SET status = v.status, started_at = v.started_at, "
            "finished_at = v.finished_at, log = v.log FROM (VALUES {values}) "
            "AS v(status, started_at, finished_at, log, id) WHERE t.id = v.id",
            pg_types=("varchar", "timestamptz", "timestamptz", "text", "uuid"),
        )
        alerts.runs_finished(
            (r.ticket.job_key, r.ticket.run_key, r.started_at, r.succeeded) for r in owned
        )
        _record_on_jobs(cursor, job_rows)
        retries = _retry_rows(d, ((r.ticket, r.finished_at) for r in owned if not r.succeeded))
        if retries:
            _insert_runs(cursor, retries)
    return len(owned)


def _record_on_jobs(cursor, rows: list[tuple]) -> None:  # type: ignore[no-untyped-def]
    """Copy each run's start and outcome onto its job, never moving last_run_at back.

    Rows are (started_at, status, job_key, started_at), adapted; of several rows for one
    job, the one with the latest start is kept.
    """
    latest: dict[str, tuple] = {}
    for row in rows:
        kept = latest.get(row[2])
        if kept is None or kept[0] <= row[0]:
            latest[row[2]] = row
    _update_each(
        cursor,
        dialect(),
        list(latest.values()),
        sqlite_sql=f"UPDATE {JOB_TABLE} SET last_run_at = %s, last_run_status = %s "
        f"WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)",
        pg_sql=f"UPDATE {JOB_TABLE} AS t SET last_run_at = v.started_at, "
        "last_run_status = v.status FROM (VALUES {values}) AS v(started_at, status, id, "
        "started_again) WHERE t.id = v.id AND (t.last_run_at IS NULL "
        "OR t.last_run_at <= v.started_at)",
        pg_types=("timestamptz", "varchar", "uuid", "timestamptz"),
    )


# --- reap --------------------------------------------------------------------------------


def _tickets_sql(d: Dialect, extra_columns: str = "") -> str:
    """SELECT of runs joined to their jobs, producing RunTicket fields first
    (_TICKET_WIDTH columns; `extra_columns` follow them)."""
    return (
        f"SELECT r.id, r.job_id, j.name, j.command, {d.text('r.scheduled_for')}, r.attempt, "
        f"j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate, "
        f"j.sim_min_seconds, j.sim_max_seconds{extra_columns} "
        f"FROM {RUN_TABLE} r JOIN {JOB_TABLE} j ON j.id = r.job_id "
    )


_TICKET_WIDTH = 12


def _ticket(d: Dialect, row: Sequence) -> RunTicket:
    return RunTicket(
        d.key_out(row[0]),
        d.key_out(row[1]),
        row[2],
        row[3],
        d.dt_out(row[4]),
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
        row[11],
    )


def reap(now: datetime | None = None, *, limit: int = 500) -> int:
    """Fail runs whose worker stopped heartbeating (it died), and runs still going long
    after their timeout (their worker could not stop them); retry them per policy.

    Returns how many runs were reaped.
    """
    now = now or timezone.now()
    return _reap_lost(now, limit) + _reap_overdue(now, limit)


def _reap_lost(now: datetime, limit: int) -> int:
    """Fail runs whose worker stopped heartbeating (it died)."""
    lease = conf.lease()
    d = dialect()
    db_now = d.dt(now)
    db_cutoff = d.dt(now - lease)
    with _writing(), transaction.atomic(), _cursor() as cursor:
        # Uses index jobs_run_running_heartbeat.
        cursor.execute(
            _tickets_sql(d, f", r.worker, {d.text('r.heartbeat_at')}, {d.text('r.started_at')}")
            + f"WHERE r.{_IS_RUNNING} AND r.heartbeat_at < %s ORDER BY r.heartbeat_at LIMIT %s"
            + d.for_update.replace("UPDATE", "UPDATE OF r"),
            [db_cutoff, limit],
        )
        stuck = cursor.fetchall()
        if not stuck:
            return 0
        note = (
            f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] worker lost: no heartbeat for "
            f"{lease.total_seconds():g} s; the run is marked failed."
        )
        cursor.execute(
            f"UPDATE {RUN_TABLE} SET status = %s, finished_at = %s, log = log || %s "
            f"WHERE {_IS_RUNNING} AND heartbeat_at < %s "
            f"AND id IN ({_placeholders(len(stuck))}) RETURNING id",
            [_FAILED, db_now, note, db_cutoff] + [row[0] for row in stuck],
        )
        reaped = {d.key_out(row[0]) for row in cursor.fetchall()}
        lost = [(_ticket(d, row), row) for row in stuck if d.key_out(row[0]) in reaped]
        job_rows = []
        for ticket, row in lost:
            worker, heartbeat_at, raw_started_at = row[_TICKET_WIDTH:]
            logger.warning(
                "run %s of job %r lost its worker %s (last heartbeat %s); marked failed",
                ticket.run_id,
                ticket.job_name,
                worker,
                heartbeat_at,
            )
            started_at = d.dt(d.dt_out(raw_started_at) or now)
            job_rows.append((started_at, _FAILED, ticket.job_key, started_at))
        alerts.runs_finished((ticket.job_key, ticket.run_key, now, False) for ticket, _ in lost)
        _record_on_jobs(cursor, job_rows)
        retries = _retry_rows(d, ((ticket, now) for ticket, _ in lost))
        if retries:
            _insert_runs(cursor, retries)
    return len(lost)


def _reap_overdue(now: datetime, limit: int) -> int:
    """Fail running runs that are still going a lease after their timeout.

    A worker stops a run at its timeout (worker.Heartbeater sets the run's stop). An
    executor that ignores the stop keeps its thread busy, and the worker, alive, keeps
    the run's heartbeat fresh; so the run would never end. Here it is failed (and retried
    per policy) once started_at + timeout + JOBS_LEASE_SECONDS has passed; if the
    executor returns after that, finish() finds the run no longer its own and leaves it.

    Reads the running runs of jobs with a timeout (through index
    jobs_run_running_heartbeat: as many as are running) every reap, outside any write
    transaction; writes only when one is overdue, each with a conditional update.
    """
    lease = conf.lease()
    d = dialect()
    db_now = d.dt(now)
    with connection.cursor() as cursor:
        cursor.execute(
            _tickets_sql(d, f", {d.text('r.started_at')}")
            + f"WHERE r.{_IS_RUNNING} AND r.started_at IS NOT NULL "
            "AND j.timeout_seconds IS NOT NULL ORDER BY r.started_at LIMIT %s",
            [limit],
        )
        candidates = cursor.fetchall()
    overdue = []
    for row in candidates:
        ticket = _ticket(d, row)
        started_at = d.dt_out(row[_TICKET_WIDTH])
        if started_at + timedelta(seconds=ticket.timeout_seconds) + lease < now:
            overdue.append((ticket, started_at))
    if not overdue:
        return 0
    with _writing(), transaction.atomic(), connection.cursor() as cursor:
        notes = {
            ticket.run_key: (
                f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] timed out: still running "
                f"{(now - started_at).total_seconds():.0f} s after it started, past its "
                f"timeout of {ticket.timeout_seconds} s, and its worker could not stop it; "
                "the run is marked failed.\n"
            )
            for ticket, started_at in overdue
        }
        reaped: set[str] = set()
        for ticket, _started_at in overdue:
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET status = %s, finished_at = %s, log = log || %s "
                f"WHERE id = %s AND {_IS_RUNNING} RETURNING id",
                [_FAILED, db_now, notes[ticket.run_key], ticket.run_key],
            )
            reaped.update(d.key_out(row[0]) for row in cursor.fetchall())
        timed_out = [(t, started_at) for t, started_at in overdue if t.run_key in reaped]
        for ticket, _started_at in timed_out:
            logger.warning(
                "run %s of job %r is past its timeout of %d s and its worker did not stop it; "
                "marked failed",
                ticket.run_id,
                ticket.job_name,
                ticket.timeout_seconds,
            )
        _record_on_jobs(
            cursor,
            [
                (d.dt(started_at), _FAILED, t.job_key, d.dt(started_at))
                for t, started_at in timed_out
            ],
        )
        retries = _retry_rows(d, ((t, now) for t, _ in timed_out))
        if retries:
            _insert_runs(cursor, retries)
    return len(timed_out)


def running_among(run_keys: Iterable[str]) -> set[str]:
    """Which of these runs are still running (the others were cancelled, reaped or
    deleted). The worker's watch asks this about the runs it holds, once a second."""
    keys = list(run_keys)
    d = dialect()
    running: set[str] = set()
    with connection.cursor() as cursor:
        for chunk in _chunks(keys, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"SELECT id FROM {RUN_TABLE} WHERE {_IS_RUNNING} "
                f"AND id IN ({_placeholders(len(chunk))})",
                list(chunk),
            )
            running.update(d.key_out(row[0]) for row in cursor.fetchall())
    return running


# --- finding work ------------------------------------------------------------------------


def ready_tickets(now: datetime | None = None, *, limit: int = 500) -> list[RunTicket]:
    """Pending runs that may start now, oldest first: retries whose backoff is over, runs
    someone pressed "run now" for, and runs a dead scheduler claimed but never started."""
    d = dialect()
    with _cursor() as cursor:
        # Uses index jobs_run_pending_ready.
        cursor.execute(
            _tickets_sql(d)
            + f"WHERE r.{_IS_PENDING} AND r.not_before <= %s ORDER BY r.not_before LIMIT %s",
            [d.dt(now or timezone.now()), limit],
        )
        return [_ticket(d, row) for row in cursor.fetchall()]


def dispatch_ready(now: datetime | None = None, *, limit: int = 500) -> list[RunTicket]:
    """Pending runs to hand to Huey now: ready ones never handed out, and ones handed out
    more than JOBS_REDISPATCH_SECONDS ago that nobody started (the message was lost).

    Each is stamped as handed out by a conditional update, so of several schedulers
    looking at once only one sends it (and a duplicate would still start it only once).
    """
    now = now or timezone.now()
    d = dialect()
    db_now = d.dt(now)
    db_cutoff = d.dt(now - conf.redispatch_after())
    with _writing(), transaction.atomic(), _cursor() as cursor:
        # Uses index jobs_run_pending_ready.
        cursor.execute(
            _tickets_sql(d) + f"WHERE r.{_IS_PENDING} AND r.not_before <= %s "
            "AND (r.dispatched_at IS NULL OR r.dispatched_at < %s) "
            "ORDER BY r.not_before LIMIT %s",
            [db_now, db_cutoff, limit],
        )
        candidates = [_ticket(d, row) for row in cursor.fetchall()]
        if not candidates:
            return []
        cursor.execute(
            f"UPDATE {RUN_TABLE} SET dispatched_at = %s WHERE {_IS_PENDING} "
            f"AND (dispatched_at IS NULL OR dispatched_at < %s) "
            f"AND id IN ({_placeholders(len(candidates))}) RETURNING id",
            [db_now, db_cutoff] + [t.run_key for t in candidates],
        )
        won = {d.key_out(row[0]) for row in cursor.fetchall()}
    return [t for t in candidates if t.run_key in won]


def mark_dispatched(run_keys: Sequence[str], now: datetime | None = None) -> None:
    """Stamp pending runs as handed to Huey now (used when a worker hands runs back)."""
    if not run_keys:
        return
    db_now = dialect().dt(now or timezone.now())
    with _writing(), transaction.atomic(), _cursor() as cursor:
        for chunk in _chunks(run_keys, _ROWS_PER_STATEMENT):
            cursor.execute(
                f"UPDATE {RUN_TABLE} SET dispatched_at = %s WHERE {_IS_PENDING} "
                f"AND id IN ({_placeholders(len(chunk))})",
                [db_now, *chunk],
            )


def tickets_for(run_keys: Sequence[str], now: datetime | None = None) -> list[RunTicket]:
    """Tickets for the runs among `run_keys` that are pending and may start now."""
    if not run_keys:
        return []
    d = dialect()
    db_now = d.dt(now or timezone.now())
    tickets: list[RunTicket] = []
    with _cursor() as cursor:
        for chunk in _chunks(list(run_keys), _ROWS_PER_STATEMENT):
            cursor.execute(
                _tickets_sql(d) + f"WHERE r.{_IS_PENDING} AND r.not_before <= %s "
                f"AND r.id IN ({_placeholders(len(chunk))})",
                [db_now, *chunk],
            )
            tickets.extend(_ticket(d, row) for row in cursor.fetchall())
    return tickets


def next_wake_at(now: datetime) -> datetime | None:
    """The earliest moment new work appears: a job comes due or a retry's backoff ends."""
    d = dialect()
    # One statement (the idle loop asks after every pass, up to hundreds of times a
    # second under load), each half walking one partial index: jobs_job_due and
    # jobs_run_pending_ready. The status is written out, not a parameter, so that a
    # PostgreSQL plan prepared once still matches the partial index.
    with _cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT {d.text('next_run_at')} FROM {JOB_TABLE} WHERE is_active "
            f"AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1), "
            f"(SELECT {d.text('not_before')} FROM {RUN_TABLE} WHERE {_IS_PENDING} "
            f"AND not_before > %s ORDER BY not_before LIMIT 1)",
            [d.dt(now)],
        )
        present = [d.dt_out(value) for value in cursor.fetchone() if value is not None]
    return min(present) if present else None


# --- actions from the screens ------------------------------------------------------------


def run_now(job: Job, now: datetime | None = None) -> JobHistory:
    """Create a pending run of `job` that may start at once (the "Run now" button)."""
    now = now or timezone.now()
    for _ in range(5):
        try:
            with _writing(), transaction.atomic():
                return JobHistory.objects.create(
                    job=job,
                    scheduled_for=now,
                    not_before=now,
                    attempt=1,
                    trigger=Trigger.MANUAL,
                    created_at=now,
                )
        except IntegrityError:
            # Two presses in the same microsecond: the occurrence is taken, use the next.
            now += timedelta(microseconds=1)
    raise RuntimeError("could not create a manual run")


def set_active(job: Job, active: bool) -> Job:
    """Enable or disable a job. Enabling resumes its grid at the next point to come."""
    job.is_active = active
    job.full_clean()
    job.save()
    return job


class RetryRefused(Exception):
    """retry_run() declined; the message says why, in words fit for the user."""


def retry_run(run: JobHistory, now: datetime | None = None) -> JobHistory:
    """Create the next attempt of a failed run, to start at once (the admin's "retry").

    Only a failed run that has no later attempt yet can be retried, so a double click,
    two operators, or the scheduler's own automatic retry never add a second next
    attempt: the unique (job, scheduled_for, attempt) constraint settles any race.
    An operator's retry is allowed beyond the job's max_retries, like "run now".
    Raises RetryRefused otherwise.
    """
    now = now or timezone.now()
    attempts = JobHistory.objects.filter(job_id=run.job_id, scheduled_for=run.scheduled_for)
    with _writing(), transaction.atomic():
        # Read the status again: the caller's copy may be older than the run.
        status = attempts.filter(pk=run.pk).values_list("status", flat=True).first()
        if status != RunStatus.FAILED:
            raise RetryRefused(gettext("Only a failed run can be retried."))
        # At least run.attempt, unless the run was deleted since the read above.
        highest = attempts.aggregate(highest=Max("attempt"))["highest"] or run.attempt
        if highest > run.attempt:
            raise RetryRefused(gettext("This run has already been retried."))
        try:
            with transaction.atomic():
                return JobHistory.objects.create(
                    job_id=run.job_id,
                    scheduled_for=run.scheduled_for,
                    attempt=highest + 1,
                    status=RunStatus.PENDING,
                    trigger=Trigger.RETRY,
                    not_before=now,
                    created_at=now,
                )
        except IntegrityError:
            # Someone (an operator or the scheduler) created that attempt just now.
            raise RetryRefused(gettext("This run has already been retried.")) from None


class CancelRefused(Exception):
    """cancel_run() declined; the message says why, in words fit for the user."""


def cancel_run(run: JobHistory, by: str, now: datetime | None = None) -> None:
    """Cancel a pending or running run (the dashboard's and the admin's "cancel").

    The run is marked cancelled at once, with who did it, and is not retried. A pending
    run never starts (start() takes only pending runs). A running run's worker learns
    within about a second (worker.Heartbeater watches the runs it holds) and stops it;
    finish() then leaves the run as it is, since it is no longer running. Raises
    CancelRefused if the run has already finished.
    """
    now = now or timezone.now()
    d = dialect()
    note = (
        f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] cancelled by {by}.\n"
        if by
        else f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] cancelled.\n"
    )
    with _writing(), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {RUN_TABLE} SET status = %s, cancelled_by = %s, finished_at = %s, "
            f"log = log || %s WHERE id = %s AND {_ACTIVE_IN} "
            f"RETURNING job_id, {d.text('started_at')}, {d.text('scheduled_for')}",
            [_CANCELLED, by, d.dt(now), note, _uuid_hex(run.pk)],
        )
        row = cursor.fetchone()
        if row is None:
            raise CancelRefused(
                gettext(
                    "This run has already finished: only a pending or running run can be cancelled."
                )
            )
        job_id, started_at, scheduled_for = row
        # Its place in the job's timeline: when it started, or was due if it never did.
        when = d.dt_out(started_at) or d.dt_out(scheduled_for)
        _record_status_on_jobs(cursor, [(_CANCELLED, d.key_out(job_id), d.dt(when))])
    logger.info("run %s cancelled by %s", run.pk, by or "the scheduler")
