-- The statements the scheduler runs on SQLite, by name (the same names as
-- jobs/sql/postgresql/queries.sql). Read by jobs/sql/loader.py; {run_table}, {job_table}
-- and the status words are filled in when the file is read.
--
-- Differs from PostgreSQL throughout:
-- - datetimes are stored as naive UTC text and selected as text (CAST ... AS TEXT):
--   the driver would run Django's regex-based parser on a "datetime" column, where
--   datetime.fromisoformat does the same in a fraction of the time;
-- - no row locks (FOR UPDATE): SQLite has one writer at a time, and every write
--   transaction holds it from its start (BEGIN IMMEDIATE);
-- - updates of many rows are one statement executed per row (executemany): SQLite runs
--   in this process, so a prepared statement per row is the cheapest.

-- name: due_jobs
-- Active jobs whose next_run_at has come, oldest first. Index jobs_job_due (partial on
-- is_active): the cost grows with the due jobs only.
-- params: now, limit
SELECT id, name, command, schedule_type, interval, interval_unit, misfire_policy,
       CAST(next_run_at AS TEXT), max_retries, retry_backoff_seconds, cron_expression,
       timezone, overlap_policy, timeout_seconds, sim_failure_rate, sim_min_seconds,
       sim_max_seconds, executor, arguments, queue, priority, calendar_id, calendar_policy,
       jitter_seconds, CAST(anchor_at AS TEXT)
  FROM {job_table}
 WHERE is_active AND next_run_at <= %s
 ORDER BY next_run_at LIMIT %s

-- name: move_jobs
-- A claimed job's next occurrence, only if nobody moved it since it was read.
-- params: next_run_at, is_active, job_key, read_next_run_at
UPDATE {job_table} SET next_run_at = %s, is_active = %s
 WHERE id = %s AND is_active AND next_run_at = %s

-- name: insert_runs
-- A second claim of the same occurrence inserts nothing: the unique
-- (job, scheduled_for, attempt) constraint. Each run has its job's queue and priority
-- as the claim read them. A run that this process's pool starts at once is inserted
-- running (status, worker, started_at and heartbeat_at set): one write instead of an
-- insert and a start.
-- rows: (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, trigger, not_before,
                         log, worker, created_at, dispatched_at, arguments, queue, priority,
                         started_at, heartbeat_at)
VALUES {rows}
ON CONFLICT DO NOTHING RETURNING id

-- name: insert_retry_runs
-- The next attempts of failed runs, pending, in their job's queue and with its priority
-- as they are now (a job moved to another queue meanwhile retries there): each joined to
-- its job by primary key. A second insert of the same attempt inserts nothing (the
-- unique constraint). `WHERE true`: SQLite's parser reads ON CONFLICT after a bare join
-- as the join's constraint.
-- rows: (%s, %s, %s, %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, trigger, not_before,
                         log, worker, created_at, arguments, queue, priority)
SELECT v.column1, v.column2, v.column3, v.column4, {pending}, {retry}, v.column5, '', '',
       v.column6, v.column7, j.queue, j.priority
  FROM (VALUES {rows}) AS v JOIN {job_table} j ON j.id = v.column2
 WHERE true
ON CONFLICT DO NOTHING

-- name: insert_skipped_runs
-- Occurrences an overlap policy skips, recorded as finished runs.
-- rows: (%s, %s, %s, 1, {skipped}, {schedule}, %s, %s, '', %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, trigger, not_before,
                         log, worker, created_at, finished_at, queue, priority)
VALUES {rows}
ON CONFLICT DO NOTHING

-- name: cancel_replaced
-- params: now, note, key
UPDATE {run_table} SET status = {cancelled}, finished_at = %s, log = log || %s
 WHERE id = %s AND status IN ({pending}, {running})

-- name: record_status_on_jobs
-- A skipped or cancelled run as its job's latest outcome, unless a run that started
-- later has already finished; last_run_at stays the last run that executed.
-- params: status, job_key, at
UPDATE {job_table} SET last_run_status = %s
 WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)

-- name: active_runs
-- The pending and running runs of some jobs, through the two partial indexes that hold
-- only pending and only running runs, so it costs in proportion to the backlog and
-- never reads a job's history. Differs from PostgreSQL: SQLite's planner picks the
-- unique (job, scheduled_for, attempt) index for `job_id IN (...)` and walks every run
-- of the job, so the partial indexes are named (INDEXED BY).
-- params: keys, keys
SELECT job_id, id, status FROM {run_table} INDEXED BY jobs_run_pending_ready
 WHERE status = {pending} AND job_id IN ({keys})
UNION ALL
SELECT job_id, id, status FROM {run_table} INDEXED BY jobs_run_running_heartbeat
 WHERE status = {running} AND job_id IN ({keys})

-- name: start_runs
-- Runs of queues without a limit, by primary key.
-- params: worker, now, now, now, keys
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE status = {pending} AND not_before <= %s AND id IN ({keys})
RETURNING id

-- name: lock_queue
-- Not run on SQLite (SqliteStore.lock_queue): every write transaction holds the one
-- write lock from its start (BEGIN IMMEDIATE), so no two starts count a queue's running
-- runs at once. Here so that both vendors name the same statements.
-- params: queue
SELECT %s

-- name: start_limited_runs
-- Runs of one queue with a limit, by primary key, best first (priority, then start
-- time), as many as the queue has room for: its limit less its runs running now in
-- every process. Counted in the statement that writes, inside the write lock, so the
-- limit is exact. The running runs through jobs_run_running_heartbeat (as many as are
-- running; their rows are read for the queue); the keys by primary key. SQLite reads a
-- negative LIMIT as none: hence max(0, ...).
-- params: worker, now, now, now, keys, queue, limit, queue
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id IN (
   SELECT id FROM {run_table}
    WHERE status = {pending} AND not_before <= %s AND id IN ({keys}) AND queue = %s
    ORDER BY priority DESC, not_before
    LIMIT max(0, %s - (SELECT COUNT(*) FROM {run_table} INDEXED BY jobs_run_running_heartbeat
                        WHERE status = {running} AND queue = %s)))
RETURNING id

-- name: take_runs
-- The best pending runs of one queue with a limit that may start now (priority, then
-- start time), at most `most` and as many as the queue has room for, moved to running
-- for `worker`: what an idle worker takes instead of holding runs of a limited queue in
-- memory. An ordered walk of jobs_run_pending_queue from (queue, highest priority),
-- skipping only runs still in their backoff; the running runs counted as in
-- start_limited_runs.
-- params: worker, now, now, queue, now, most, limit, queue
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id IN (
   SELECT id FROM {run_table} INDEXED BY jobs_run_pending_queue
    WHERE status = {pending} AND queue = %s AND not_before <= %s
    ORDER BY priority DESC, not_before
    LIMIT max(0, min(%s, %s - (SELECT COUNT(*) FROM {run_table}
                               INDEXED BY jobs_run_running_heartbeat
                               WHERE status = {running} AND queue = %s))))
RETURNING id

-- name: queue_room
-- A limited queue's runs running now (jobs_run_running_heartbeat) and its pending runs
-- that may start now, counted up to `cap` (a walk of jobs_run_pending_queue that stops
-- there): read without the write lock, to decide whether idle workers should take.
-- params: queue, queue, now, cap
SELECT (SELECT COUNT(*) FROM {run_table} INDEXED BY jobs_run_running_heartbeat
         WHERE status = {running} AND queue = %s),
       (SELECT COUNT(*) FROM (SELECT 1 FROM {run_table} INDEXED BY jobs_run_pending_queue
                               WHERE status = {pending} AND queue = %s AND not_before <= %s
                               LIMIT %s))

-- name: started_tickets
-- Tickets of runs just started (take_runs), by primary key.
-- params: keys
SELECT r.id, r.job_id, j.name, j.command, CAST(r.scheduled_for AS TEXT), r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {running} AND r.id IN ({keys})

-- name: release_runs
-- A run a worker started but did not begin executing, back to pending.
-- params: worker, keys
UPDATE {run_table} SET status = {pending}, worker = '', started_at = NULL,
       heartbeat_at = NULL
 WHERE status = {running} AND worker = %s AND id IN ({keys})

-- name: heartbeat_runs
-- params: now, keys
UPDATE {run_table} SET heartbeat_at = %s WHERE status = {running} AND id IN ({keys})

-- name: write_live_logs
-- The output so far of running runs (the live log), each only while the worker that
-- runs it still does: one statement for a batch (a VALUES list's columns are column1..).
-- rows: (%s, %s, %s)
UPDATE {run_table} SET log = v.column3
  FROM (VALUES {rows}) AS v
 WHERE {run_table}.id = v.column1 AND {run_table}.worker = v.column2
   AND {run_table}.status = {running}

-- name: owned_runs
-- Which runs a worker still owns. The transaction's write lock keeps the reaper from
-- taking one between this check and the write.
-- params: worker, keys
SELECT id FROM {run_table} WHERE status = {running} AND worker = %s AND id IN ({keys})

-- name: finish_runs
-- params: status, started_at, finished_at, log, result, worker, key
UPDATE {run_table} SET status = %s, started_at = %s, finished_at = %s, log = %s, result = %s,
       worker = COALESCE(%s, worker)
 WHERE id = %s

-- name: record_on_jobs
-- A run's start and outcome on its job, never moving last_run_at back.
-- params: started_at, status, job_key, started_again
UPDATE {job_table} SET last_run_at = %s, last_run_status = %s
 WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)

-- name: watched_jobs
-- Jobs of a finished batch that send alerts, by primary key, with their count of failed
-- runs in a row (the transaction's write lock keeps it exact until the count is written).
-- params: keys
SELECT id, notify_on_failure, notify_on_recovery, alert_after_failures, consecutive_failures
  FROM {job_table}
 WHERE (notify_on_failure OR notify_on_recovery) AND id IN ({keys})

-- name: record_failure_streaks
-- A watched job's failed runs in a row, as the batch left them.
-- params: consecutive_failures, job_key
UPDATE {job_table} SET consecutive_failures = %s WHERE id = %s

-- name: lost_runs
-- Running runs whose worker stopped heartbeating. Index jobs_run_running_heartbeat.
-- params: cutoff, limit
SELECT r.id, r.job_id, j.name, j.command, CAST(r.scheduled_for AS TEXT), r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority,
       r.worker, CAST(r.heartbeat_at AS TEXT), CAST(r.started_at AS TEXT),
       r.process_host, r.process_group
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {running} AND r.heartbeat_at < %s
 ORDER BY r.heartbeat_at LIMIT %s

-- name: fail_lost_runs
-- params: now, note, cutoff, keys
UPDATE {run_table} SET status = {failed}, finished_at = %s, log = log || %s
 WHERE status = {running} AND heartbeat_at < %s AND id IN ({keys})
RETURNING id

-- name: timed_runs
-- Running runs of jobs with a timeout, through index jobs_run_running_heartbeat: as
-- many as are running.
-- params: limit
SELECT r.id, r.job_id, j.name, j.command, CAST(r.scheduled_for AS TEXT), r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority, CAST(r.started_at AS TEXT)
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {running} AND r.started_at IS NOT NULL
   AND j.timeout_seconds IS NOT NULL
 ORDER BY r.started_at LIMIT %s

-- name: fail_running_run
-- params: now, note, key
UPDATE {run_table} SET status = {failed}, finished_at = %s, log = log || %s
 WHERE id = %s AND status = {running}
RETURNING id

-- name: running_among
-- params: keys
SELECT id FROM {run_table} WHERE status = {running} AND id IN ({keys})

-- name: running_long_candidates
-- Running runs of jobs that alert on failure, not yet found running long, oldest start
-- first. Index jobs_run_running_heartbeat: as many rows as are running, each joined to
-- its job by primary key.
-- params: limit
SELECT r.id, r.job_id, CAST(r.started_at AS TEXT), j.expected_seconds
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {running} AND r.started_at IS NOT NULL AND r.running_long_at IS NULL
   AND j.notify_on_failure
 ORDER BY r.started_at LIMIT %s

-- name: mark_running_long
-- Of several schedulers finding the same run, the one whose update changes the row
-- alerts.
-- params: now, key
UPDATE {run_table} SET running_long_at = %s
 WHERE id = %s AND status = {running} AND running_long_at IS NULL
RETURNING id

-- name: recent_durations
-- How long a job's newest runs that ran to an outcome took, in seconds: a backward walk
-- of the unique (job_id, scheduled_for, attempt) index, reading each run's row for its
-- status and times, until `limit` such runs are found (a job keeps about that many:
-- JOBS_HISTORY_KEEP_PER_JOB), however long the whole history.
-- params: job_key, limit
SELECT ((julianday(finished_at) - julianday(started_at)) * 86400.0)
  FROM {run_table}
 WHERE job_id = %s AND status IN ({success}, {failed})
   AND started_at IS NOT NULL AND finished_at IS NOT NULL
 ORDER BY scheduled_for DESC, attempt DESC LIMIT %s

-- name: pending_queues
-- The queues that have pending runs, for a process that serves every queue: one step of
-- jobs_run_pending_queue per queue (each MIN a seek past the queue before), however
-- many runs wait.
WITH RECURSIVE q(name) AS (
  SELECT (SELECT MIN(queue) FROM {run_table} INDEXED BY jobs_run_pending_queue
           WHERE status = {pending})
  UNION ALL
  SELECT (SELECT MIN(queue) FROM {run_table} INDEXED BY jobs_run_pending_queue
           WHERE status = {pending} AND queue > q.name)
    FROM q WHERE q.name IS NOT NULL)
SELECT name FROM q WHERE name IS NOT NULL

-- name: ready_runs
-- Pending runs of one queue that may start now, best first: higher priority, then the
-- earliest start. An ordered walk of jobs_run_pending_queue from (queue, highest
-- priority), skipping only runs still in their backoff; each joined to its job by
-- primary key.
-- params: queue, now, limit
SELECT r.id, r.job_id, j.name, j.command, CAST(r.scheduled_for AS TEXT), r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r INDEXED BY jobs_run_pending_queue JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {pending} AND r.queue = %s AND r.not_before <= %s
 ORDER BY r.priority DESC, r.not_before LIMIT %s

-- name: undispatched_runs
-- Ready runs of one queue never handed to Huey, or handed out before the cutoff and
-- never started, best first: an ordered walk of jobs_run_pending_queue, as ready_runs.
-- params: queue, now, cutoff, limit
SELECT r.id, r.job_id, j.name, j.command, CAST(r.scheduled_for AS TEXT), r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r INDEXED BY jobs_run_pending_queue JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {pending} AND r.queue = %s AND r.not_before <= %s
   AND (r.dispatched_at IS NULL OR r.dispatched_at < %s)
 ORDER BY r.priority DESC, r.not_before LIMIT %s

-- name: stamp_dispatched
-- params: now, cutoff, keys
UPDATE {run_table} SET dispatched_at = %s
 WHERE status = {pending} AND (dispatched_at IS NULL OR dispatched_at < %s)
   AND id IN ({keys})
RETURNING id

-- name: mark_dispatched
-- params: now, keys
UPDATE {run_table} SET dispatched_at = %s WHERE status = {pending} AND id IN ({keys})

-- name: undispatch_runs
-- Handed-out runs a Huey worker could not start (their queue was at its limit), to be
-- handed out again by the next pass rather than after JOBS_REDISPATCH_SECONDS.
-- params: keys
UPDATE {run_table} SET dispatched_at = NULL WHERE status = {pending} AND id IN ({keys})

-- name: tickets_for
-- params: now, keys
SELECT r.id, r.job_id, j.name, j.command, CAST(r.scheduled_for AS TEXT), r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {pending} AND r.not_before <= %s AND r.id IN ({keys})

-- name: next_wake_at
-- The earliest moment new work appears, and whether the scheduler is paused. One
-- statement (the idle loop asks after every pass, up to hundreds of times a second under
-- load), each of the first two walking one partial index, jobs_job_due and
-- jobs_run_pending_ready; the pause is the one row of {state_table}, by primary key, so
-- every loop sees a pause before it sleeps without a statement of its own.
-- params: now
SELECT (SELECT CAST(next_run_at AS TEXT) FROM {job_table}
         WHERE is_active AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1),
       (SELECT CAST(not_before AS TEXT) FROM {run_table}
         WHERE status = {pending} AND not_before > %s ORDER BY not_before LIMIT 1),
       (SELECT CAST(paused_at AS TEXT) FROM {state_table} WHERE id = 1),
       (SELECT CAST(paused_until AS TEXT) FROM {state_table} WHERE id = 1)

-- name: claims_paused
-- Whether claims are paused now (jobs.models.scheduler.PauseWindow says the same in
-- Python). Asked inside the claim's write transaction, before it writes: a pause, a
-- write too, waits for the writer lock, so a claim that applies after it sees it.
-- params: now
SELECT 1 FROM {state_table}
 WHERE id = 1 AND paused_at IS NOT NULL AND (paused_until IS NULL OR paused_until > %s)

-- name: cancel_run
-- A run with no output yet gets its command line before the note (first_lines).
-- params: by, now, first_lines, note, key
UPDATE {run_table} SET status = {cancelled}, cancelled_by = %s, finished_at = %s,
       log = CASE WHEN log = '' THEN %s ELSE log || %s END
 WHERE id = %s AND status IN ({pending}, {running})
RETURNING job_id, CAST(started_at AS TEXT), CAST(scheduled_for AS TEXT)

-- name: job_page_first
-- params: limit
SELECT id, CAST(last_run_at AS TEXT) FROM {job_table} ORDER BY id LIMIT %s

-- name: job_page_after
-- params: after, limit
SELECT id, CAST(last_run_at AS TEXT) FROM {job_table} WHERE id > %s ORDER BY id LIMIT %s

-- name: prune_edge
-- The newest run beyond the N a job keeps: a walk of N entries of the unique
-- (job_id, scheduled_for, attempt) index, without reading the table.
-- params: job_key, keep
SELECT CAST(scheduled_for AS TEXT), attempt FROM {run_table} WHERE job_id = %s
 ORDER BY scheduled_for DESC, attempt DESC LIMIT 1 OFFSET %s

-- name: count_finished_before
-- params: cutoff
SELECT COUNT(*) FROM {run_table} WHERE created_at < %s AND status IN ({finished})

-- name: delete_finished_before
-- Oldest first, through index jobs_run_recent. The ids deleted: their chained runs are
-- unlinked next (unlink_chained_runs).
-- params: cutoff, limit
DELETE FROM {run_table} WHERE id IN (
  SELECT id FROM {run_table} WHERE created_at < %s AND status IN ({finished})
   ORDER BY created_at LIMIT %s)
RETURNING id

-- name: count_beyond
-- params: job_key, scheduled_for, scheduled_for, attempt
SELECT COUNT(*) FROM {run_table}
 WHERE job_id = %s AND (scheduled_for < %s OR (scheduled_for = %s AND attempt <= %s))
   AND status IN ({finished})

-- name: count_beyond_since
-- What the age rule does not take already (a dry run counts each run once).
-- params: job_key, scheduled_for, scheduled_for, attempt, since
SELECT COUNT(*) FROM {run_table}
 WHERE job_id = %s AND (scheduled_for < %s OR (scheduled_for = %s AND attempt <= %s))
   AND status IN ({finished}) AND created_at >= %s

-- name: delete_beyond
-- params: job_key, scheduled_for, scheduled_for, attempt, limit
DELETE FROM {run_table} WHERE id IN (
  SELECT id FROM {run_table}
   WHERE job_id = %s AND (scheduled_for < %s OR (scheduled_for = %s AND attempt <= %s))
     AND status IN ({finished})
   ORDER BY scheduled_for, attempt LIMIT %s)
RETURNING id

-- --- chains (jobs/engine/chains.py) ----------------------------------------------------

-- name: any_chains
-- Whether any job has a chain at all: one step into each link table. Without any (the
-- usual case), a finished batch reads nothing more: chaining_jobs costs about 2 us per
-- job key on SQLite (its IN list), as much as a tenth of finishing the run.
SELECT EXISTS (SELECT 1 FROM {on_success_table}) OR EXISTS (SELECT 1 FROM {on_failure_table})

-- name: chaining_jobs
-- Which of these jobs have a chain, read before a finished batch's write transaction.
-- Through the unique (from, to) index of each link table.
-- params: keys, keys
SELECT from_job_id FROM {on_success_table} WHERE from_job_id IN ({keys})
UNION
SELECT from_job_id FROM {on_failure_table} WHERE from_job_id IN ({keys})

-- name: chained_jobs
-- The jobs that runs of these jobs start: on success ({success}) and on failure
-- ({failed}), with what starting them needs; inside the write transaction that inserts
-- their runs, so a job deleted meanwhile is not started.
-- params: keys, keys
SELECT c.kind, c.from_job_id, j.id, j.name, j.is_active, j.overlap_policy, j.queue,
       j.priority, j.executor, j.arguments
  FROM (SELECT {success} AS kind, from_job_id, to_job_id FROM {on_success_table}
         WHERE from_job_id IN ({keys})
        UNION ALL
        SELECT {failed}, from_job_id, to_job_id FROM {on_failure_table}
         WHERE from_job_id IN ({keys})) c
  JOIN {job_table} j ON j.id = c.to_job_id

-- name: insert_chained_runs
-- Runs a chain starts: pending, or skipped by their job's overlap policy, each linked
-- to the run that caused it. A row whose (job, scheduled_for, attempt) is taken inserts
-- nothing (the engine moves it by a microsecond and inserts it again). A pending run
-- keeps the arguments it will run with, its job's (NULL for a simulated one).
-- rows: (%s, %s, %s, 1, %s, {chain}, %s, %s, '', %s, %s, %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, trigger, not_before,
                         log, worker, created_at, finished_at, caused_by_id, queue, priority,
                         arguments)
VALUES {rows}
ON CONFLICT DO NOTHING RETURNING id

-- name: unlink_chained_runs
-- Runs whose cause was just deleted stay, linked to nothing. Through the partial index
-- jobs_run_caused_by, which holds only chained runs.
-- params: keys
UPDATE {run_table} SET caused_by_id = NULL
 WHERE caused_by_id IS NOT NULL AND caused_by_id IN ({keys})

-- name: delete_run_notifications
-- The alert attempts of runs just deleted: the raw deletes of the pruning do not cascade
-- as the ORM's would (the foreign key is checked at commit). Through the index of that
-- foreign key; most runs have none.
-- params: keys
DELETE FROM {notification_table} WHERE run_id IN ({keys})

-- name: timeline_jobs
-- Every job, with what the Upcoming page counts its occurrences from (jobs/upcoming.py):
-- a few columns of the whole table. The times as text, which the store reads into whole
-- microseconds (read_micros) with datetime.fromisoformat: 5-8 ms less for 10,000 rows
-- than computing them here with julianday(). Then what the calendar, the windows and
-- the jitter of the rows shown need. No parameters.
SELECT id, name, schedule_type, interval, interval_unit, cron_expression, timezone,
       is_active, CAST(next_run_at AS TEXT), CAST(scheduled_at AS TEXT),
       calendar_id, calendar_policy, jitter_seconds, queue, CAST(anchor_at AS TEXT)
  FROM {job_table}

-- name: record_processes
-- Where a running run's processes are (its host and process group), while its worker
-- still runs it: the reaper kills what is left of them if the worker dies.
-- params: host, group, key, worker
UPDATE {run_table} SET process_host = %s, process_group = %s
 WHERE id = %s AND worker = %s AND status = {running}

-- name: append_run_log
-- A line added to a run's log whatever its status (the reaper saying what it killed, a
-- worker saying a task did not stop); its job's id.
-- params: note, key
UPDATE {run_table} SET log = log || %s WHERE id = %s RETURNING job_id
