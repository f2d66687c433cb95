-- The statements the scheduler runs on PostgreSQL, by name (the same names as
-- jobs/sql/sqlite/queries.sql). Read by jobs/sql/loader.py; {run_table}, {job_table}
-- and the status words are filled in when the file is read.
--
-- Differs from SQLite throughout:
-- - datetimes are timestamptz, read as they come (no text cast);
-- - rows that another transaction must not take meanwhile are locked (FOR UPDATE);
--   the claim skips jobs another scheduler has locked (SKIP LOCKED) instead of waiting;
-- - updates of many rows travel in one `UPDATE ... FROM (VALUES ...)` per chunk of
--   rows: the server is a round trip away, and executemany cost ~400 us a row.

-- name: due_jobs
-- Active jobs whose next_run_at has come, oldest first. Index jobs_job_due (partial on
-- is_active): the cost grows with the due jobs only. Differs from SQLite: the jobs are
-- locked, and jobs another scheduler has locked are skipped, so several schedulers
-- claim different jobs at once.
-- params: now, limit
SELECT id, name, command, schedule_type, interval, interval_unit, misfire_policy,
       next_run_at, max_retries, retry_backoff_seconds, cron_expression,
       timezone, overlap_policy, timeout_seconds, sim_failure_rate, sim_min_seconds,
       sim_max_seconds, executor, arguments, queue, priority, calendar_id, calendar_policy,
       jitter_seconds, anchor_at
  FROM {job_table}
 WHERE is_active AND next_run_at <= %s
 ORDER BY next_run_at LIMIT %s
   FOR UPDATE SKIP LOCKED
-- name: move_jobs
-- A claimed job's next occurrence, only if nobody moved it since it was read. Each row
-- by primary key. Differs from SQLite: `IS NOT DISTINCT FROM` (the same as `=` here, a
-- due job's next_run_at is never NULL) is no condition jobs_job_due can serve, so the
-- planner joins on the primary key. With `=` it walked jobs_job_due for each row, past
-- every job due at the same instant: 10,000 due at once among 1,000,000 took 1.6 s.
-- params: next_run_at, is_active, job_key, read_next_run_at
-- rows: (%s::timestamptz, %s::boolean, %s::uuid, %s::timestamptz)
UPDATE {job_table} AS t SET next_run_at = v.next_run_at, is_active = v.is_active
  FROM (VALUES {rows}) AS v(next_run_at, is_active, id, read_next_run_at)
 WHERE t.id = v.id AND t.is_active AND t.next_run_at IS NOT DISTINCT FROM v.read_next_run_at
-- name: insert_runs
-- A second claim of the same occurrence inserts nothing: the unique
-- (job, scheduled_for, attempt) constraint. Each run has its job's queue and priority
-- as the claim read them. A run that this process's pool starts at once is inserted
-- running (status, worker, started_at and heartbeat_at set): one write instead of an
-- insert and a start.
-- The arguments travel as JSON text, cast here (Django reads jsonb as text too).
-- rows: (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, trigger, not_before,
                         log, worker, created_at, dispatched_at, arguments, queue, priority,
                         started_at, heartbeat_at)
VALUES {rows}
ON CONFLICT DO NOTHING RETURNING id

-- name: insert_retry_runs
-- The next attempts of failed runs, pending, in their job's queue and with its priority
-- as they are now (a job moved to another queue meanwhile retries there): each joined to
-- its job by primary key. A second insert of the same attempt inserts nothing (the
-- unique constraint). Differs from SQLite: the VALUES columns are typed and named.
-- rows: (%s::uuid, %s::uuid, %s::timestamptz, %s::smallint, %s::timestamptz, %s::timestamptz, %s::jsonb)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, trigger, not_before,
                         log, worker, created_at, arguments, queue, priority)
SELECT v.id, v.job_id, v.scheduled_for, v.attempt, {pending}, {retry}, v.not_before, '', '',
       v.created_at, v.arguments, j.queue, j.priority
  FROM (VALUES {rows}) AS v(id, job_id, scheduled_for, attempt, not_before, created_at,
                            arguments)
  JOIN {job_table} j ON j.id = v.job_id
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
-- only pending and only running runs (jobs_run_pending_ready,
-- jobs_run_running_heartbeat), so it costs in proportion to the backlog and never reads
-- a job's history. Differs from SQLite: PostgreSQL's planner finds those indexes itself.
-- params: keys, keys
SELECT job_id, id, status FROM {run_table}
 WHERE status = {pending} AND job_id IN ({keys})
UNION ALL
SELECT job_id, id, status FROM {run_table}
 WHERE status = {running} AND job_id IN ({keys})
-- name: start_runs
-- Runs of queues without a limit, by primary key.
-- params: worker, now, now, now, keys
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE status = {pending} AND not_before <= %s AND id IN ({keys})
RETURNING id

-- name: lock_queue
-- Before a start counts a limited queue's running runs: a lock of that queue until the
-- transaction ends, so that starts in other processes wait and then count what this one
-- started (each statement of theirs sees what committed before it began). An advisory
-- lock, no row: keyed by the queue name's hash under a number of our own (hashtext
-- collisions only make two queues wait on each other). Differs from SQLite, where the
-- write lock does it.
-- params: queue
SELECT pg_advisory_xact_lock(1785686898, hashtext(%s))

-- name: start_limited_runs
-- Runs of one queue with a limit, by primary key, best first (priority, then start
-- time), as many as the queue has room for: its limit less its runs running now in
-- every process, counted after lock_queue. The running runs through
-- jobs_run_running_heartbeat (as many as are running); the keys by primary key.
-- params: worker, now, now, now, keys, queue, limit, queue
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id = ANY(ARRAY(
   SELECT id FROM {run_table}
    WHERE status = {pending} AND not_before <= %s AND id IN ({keys}) AND queue = %s
    ORDER BY priority DESC, not_before
    LIMIT GREATEST(0, %s - (SELECT COUNT(*) FROM {run_table}
                             WHERE status = {running} AND queue = %s))))
RETURNING id

-- name: take_runs
-- The best pending runs of one queue with a limit that may start now (priority, then
-- start time), at most `most` and as many as the queue has room for, moved to running
-- for `worker`, after lock_queue: what an idle worker takes instead of holding runs of a
-- limited queue in memory. An ordered walk of jobs_run_pending_queue from (queue,
-- highest priority), skipping only runs still in their backoff; the running runs
-- counted as in start_limited_runs. Differs from SQLite: `= ANY(ARRAY(...))`, so that
-- the runs chosen are then updated by primary key (a plain `IN (subquery)` let the
-- planner join it to a scan of the table, whose cost grows with the history).
-- params: worker, now, now, queue, now, most, limit, queue
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id = ANY(ARRAY(
   SELECT id FROM {run_table}
    WHERE status = {pending} AND queue = %s AND not_before <= %s
    ORDER BY priority DESC, not_before
    LIMIT GREATEST(0, LEAST(%s, %s - (SELECT COUNT(*) FROM {run_table}
                                       WHERE status = {running} AND queue = %s)))))
RETURNING id

-- name: queue_room
-- A limited queue's runs running now (jobs_run_running_heartbeat) and its pending runs
-- that may start now, counted up to `cap` (a walk of jobs_run_pending_queue that stops
-- there): read without a lock, to decide whether idle workers should take.
-- params: queue, queue, now, cap
SELECT (SELECT COUNT(*) FROM {run_table} WHERE status = {running} AND queue = %s),
       (SELECT COUNT(*) FROM (SELECT 1 FROM {run_table}
                               WHERE status = {pending} AND queue = %s AND not_before <= %s
                               LIMIT %s) AS waiting)

-- name: started_tickets
-- Tickets of runs just started (take_runs), by primary key.
-- params: keys
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
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
-- runs it still does: one statement for a batch.
-- rows: (%s::uuid, %s::varchar, %s::text)
UPDATE {run_table} AS t SET log = v.log
  FROM (VALUES {rows}) AS v(id, worker, log)
 WHERE t.id = v.id AND t.worker = v.worker AND t.status = {running}

-- name: owned_runs
-- Which runs a worker still owns, locked (differs from SQLite, where the write lock does
-- it) so that the reaper cannot take one between this check and the write.
-- params: worker, keys
SELECT id FROM {run_table} WHERE status = {running} AND worker = %s AND id IN ({keys})
   FOR UPDATE
-- name: finish_runs
-- params: status, started_at, finished_at, log, result, worker, key
-- rows: (%s::varchar, %s::timestamptz, %s::timestamptz, %s::text, %s::jsonb, %s::varchar, %s::uuid)
UPDATE {run_table} AS t SET status = v.status, started_at = v.started_at,
       finished_at = v.finished_at, log = v.log, result = v.result,
       worker = COALESCE(v.worker, t.worker)
  FROM (VALUES {rows}) AS v(status, started_at, finished_at, log, result, worker, id)
 WHERE t.id = v.id
-- name: record_on_jobs
-- A run's start and outcome on its job, never moving last_run_at back.
-- params: started_at, status, job_key, started_again
-- rows: (%s::timestamptz, %s::varchar, %s::uuid, %s::timestamptz)
UPDATE {job_table} AS t SET last_run_at = v.started_at, last_run_status = v.status
  FROM (VALUES {rows}) AS v(started_at, status, id, started_again)
 WHERE t.id = v.id AND (t.last_run_at IS NULL OR t.last_run_at <= v.started_at)
-- name: watched_jobs
-- Jobs of a finished batch that send alerts, by primary key, with their count of failed
-- runs in a row. Differs from SQLite: locked (in id order, so two batches never wait on
-- each other in a circle) until the count is written, so two transactions finishing runs
-- of one job at once count both.
-- params: keys
SELECT id, notify_on_failure, notify_on_recovery, alert_after_failures, consecutive_failures
  FROM {job_table}
 WHERE (notify_on_failure OR notify_on_recovery) AND id IN ({keys})
 ORDER BY id
   FOR UPDATE
-- name: record_failure_streaks
-- A watched job's failed runs in a row, as the batch left them.
-- params: consecutive_failures, job_key
-- rows: (%s::integer, %s::uuid)
UPDATE {job_table} AS t SET consecutive_failures = v.consecutive_failures
  FROM (VALUES {rows}) AS v(consecutive_failures, id)
 WHERE t.id = v.id
-- name: lost_runs
-- Running runs whose worker stopped heartbeating. Index jobs_run_running_heartbeat.
-- Differs from SQLite: the runs (not their jobs) are locked until they are failed.
-- params: cutoff, limit
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority,
       r.worker, r.heartbeat_at, r.started_at, r.process_host, r.process_group
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {running} AND r.heartbeat_at < %s
 ORDER BY r.heartbeat_at LIMIT %s
   FOR UPDATE OF r
-- name: fail_lost_runs
-- params: now, note, cutoff, keys
UPDATE {run_table} SET status = {failed}, finished_at = %s, log = log || %s
 WHERE status = {running} AND heartbeat_at < %s AND id IN ({keys})
RETURNING id

-- name: timed_runs
-- Running runs of jobs with a timeout, through index jobs_run_running_heartbeat: as
-- many as are running.
-- params: limit
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority, r.started_at
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
SELECT r.id, r.job_id, r.started_at, j.expected_seconds
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
SELECT CAST(EXTRACT(EPOCH FROM (finished_at - started_at)) AS double precision)
  FROM {run_table}
 WHERE job_id = %s AND status IN ({success}, {failed})
   AND started_at IS NOT NULL AND finished_at IS NOT NULL
 ORDER BY scheduled_for DESC, attempt DESC LIMIT %s

-- name: pending_queues
-- The queues that have pending runs, for a process that serves every queue: one step of
-- jobs_run_pending_queue per queue (each MIN a seek past the queue before), however
-- many runs wait.
WITH RECURSIVE q(name) AS (
  SELECT (SELECT MIN(queue) FROM {run_table} WHERE status = {pending})
  UNION ALL
  SELECT (SELECT MIN(queue) FROM {run_table} WHERE status = {pending} AND queue > q.name)
    FROM q WHERE q.name IS NOT NULL)
SELECT name FROM q WHERE name IS NOT NULL

-- name: ready_runs
-- Pending runs of one queue that may start now, best first: higher priority, then the
-- earliest start. An ordered walk of jobs_run_pending_queue from (queue, highest
-- priority), skipping only runs still in their backoff; each joined to its job by
-- primary key.
-- params: queue, now, limit
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {pending} AND r.queue = %s AND r.not_before <= %s
 ORDER BY r.priority DESC, r.not_before LIMIT %s

-- name: undispatched_runs
-- Ready runs of one queue never handed to Huey, or handed out before the cutoff and
-- never started, best first: an ordered walk of jobs_run_pending_queue, as ready_runs.
-- params: queue, now, cutoff, limit
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
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
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority
  FROM {run_table} r JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {pending} AND r.not_before <= %s AND r.id IN ({keys})

-- name: next_wake_at
-- The earliest moment new work appears, and whether the scheduler is paused. One
-- statement (the idle loop asks after every pass, up to hundreds of times a second under
-- load), each of the first two walking one partial index, jobs_job_due and
-- jobs_run_pending_ready; the pause is the one row of {state_table}, by primary key.
-- params: now
SELECT (SELECT next_run_at FROM {job_table}
         WHERE is_active AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1),
       (SELECT not_before FROM {run_table}
         WHERE status = {pending} AND not_before > %s ORDER BY not_before LIMIT 1),
       (SELECT paused_at FROM {state_table} WHERE id = 1),
       (SELECT paused_until FROM {state_table} WHERE id = 1)

-- name: claims_paused
-- Whether claims are paused now, asked inside the claim's transaction before it writes.
-- Differs from SQLite: the row is locked FOR SHARE whatever it says, so a pause (an
-- UPDATE of it) waits for the claims in flight to commit, and a claim that asks after a
-- pause committed sees it: once pause() has returned, no claim inserts a run.
-- params: now
SELECT paused_at IS NOT NULL AND (paused_until IS NULL OR paused_until > %s)
  FROM {state_table} WHERE id = 1
   FOR SHARE

-- name: cancel_run
-- A run with no output yet gets its command line before the note (first_lines).
-- params: by, now, first_lines, note, key
UPDATE {run_table} SET status = {cancelled}, cancelled_by = %s, finished_at = %s,
       log = CASE WHEN log = '' THEN %s ELSE log || %s END
 WHERE id = %s AND status IN ({pending}, {running})
RETURNING job_id, started_at, scheduled_for

-- name: job_page_first
-- params: limit
SELECT id, last_run_at FROM {job_table} ORDER BY id LIMIT %s

-- name: job_page_after
-- params: after, limit
SELECT id, last_run_at FROM {job_table} WHERE id > %s ORDER BY id LIMIT %s

-- name: prune_edge
-- The newest run beyond the N a job keeps: a walk of N entries of the unique
-- (job_id, scheduled_for, attempt) index, without reading the table.
-- params: job_key, keep
SELECT scheduled_for, attempt FROM {run_table} WHERE job_id = %s
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
-- their runs. Differs from SQLite: the jobs are locked against deletion (FOR KEY SHARE,
-- which a claim's update of next_run_at does not wait for) until the runs are inserted.
-- params: keys, keys
SELECT c.kind, c.from_job_id, j.id, j.name, j.is_active, j.overlap_policy, j.queue,
       j.priority, j.executor, j.arguments
  FROM (SELECT {success} AS kind, from_job_id, to_job_id FROM {on_success_table}
         WHERE from_job_id IN ({keys})
        UNION ALL
        SELECT {failed}, from_job_id, to_job_id FROM {on_failure_table}
         WHERE from_job_id IN ({keys})) c
  JOIN {job_table} j ON j.id = c.to_job_id
   FOR KEY SHARE OF j

-- name: insert_chained_runs
-- Runs a chain starts: pending, or skipped by their job's overlap policy, each linked
-- to the run that caused it. A row whose (job, scheduled_for, attempt) is taken inserts
-- nothing (the engine moves it by a microsecond and inserts it again). A pending run
-- keeps the arguments it will run with, its job's (NULL for a simulated one), as JSON
-- text cast here.
-- rows: (%s, %s, %s, 1, %s, {chain}, %s, %s, '', %s, %s, %s, %s, %s, %s::jsonb)
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
-- a few columns of the whole table. Differs from SQLite: the id as 32 hex digits and the
-- times as whole microseconds since the epoch (EXTRACT gives an exact numeric), so that
-- 10,000 rows make no UUID and no datetime in Python (psycopg's datetimes took 75 ms for
-- them, the integers 21 ms). Then what the calendar, the windows and the jitter of the
-- rows shown need. No parameters.
SELECT replace(CAST(id AS text), '-', ''), name, schedule_type, interval, interval_unit,
       cron_expression, timezone, is_active,
       CAST(EXTRACT(EPOCH FROM next_run_at) * 1000000 AS bigint),
       CAST(EXTRACT(EPOCH FROM scheduled_at) * 1000000 AS bigint),
       calendar_id, calendar_policy, jitter_seconds, queue,
       CAST(EXTRACT(EPOCH FROM anchor_at) * 1000000 AS bigint)
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
