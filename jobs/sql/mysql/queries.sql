-- The statements the scheduler runs on MySQL 8.0+ and MariaDB 10.6+, by name (the same
-- names as jobs/sql/postgresql/queries.sql). Read by jobs/sql/loader.py; {run_table},
-- {job_table} and the status words are filled in when the file is read.
--
-- Differs from PostgreSQL throughout:
-- - datetimes are DATETIME(6) in UTC (the session's zone is set to UTC: settings), bound
--   as text and read as naive UTC datetimes;
-- - `interval` and `trigger` are reserved words: quoted;
-- - no RETURNING (MariaDB has it for INSERT and DELETE only, MySQL not at all): a
--   statement that says which rows it changed is written as steps separated by `;`
--   that jobs/sql/mysql/operations.py runs in order: a locking read of the rows
--   (FOR UPDATE, so nobody changes them before the write), then the write by primary
--   key; an insert is followed by a read of the keys it inserted;
-- - no partial indexes: the pending, running and failed indexes of jobs_jobhistory
--   lead with status (migration 0026_mysql_indexes), so `status = ...` picks the same
--   rows a partial index holds; the statements below name no partial condition;
-- - updates of many rows travel as one `UPDATE ... JOIN (SELECT ... UNION ALL ...)`
--   per chunk: a VALUES list cannot be named alike on both (MySQL's `VALUES ROW()`,
--   MariaDB's `VALUES ()`), a derived table of selected rows can;
-- - `ON CONFLICT DO NOTHING` is `ON DUPLICATE KEY UPDATE id = id` (INSERT IGNORE would
--   also hide truncation and foreign key errors);
-- - `||` is OR: CONCAT appends to a log;
-- - InnoDB detects a cycle of lock waits and fails one transaction (a deadlock) where
--   PostgreSQL would often wait: a locking read of runs by key reads the primary key
--   alone (FORCE INDEX (PRIMARY): through a status-led index it would lock that
--   index's entries too, which the next write of another transaction needs) and in key
--   order (ORDER BY id), so two such transactions never wait on each other in a circle.
-- A key is 32 hex digits, which both Django's CHAR(32) on MySQL and MariaDB's UUID
-- type take as they are; MariaDB returns its UUIDs with dashes (the store strips them).

-- name: due_jobs
-- Active jobs whose next_run_at has come, oldest first. Index jobs_job_due, which is
-- (is_active, next_run_at) here: a range of its active part, as the partial index
-- of the others. Locked, skipping what another scheduler has locked (SKIP LOCKED:
-- MySQL 8.0.1+, MariaDB 10.6+; the system check refuses older servers).
-- params: now, limit
SELECT id, name, command, schedule_type, `interval`, interval_unit, misfire_policy,
       next_run_at, max_retries, retry_backoff_seconds, cron_expression,
       timezone, overlap_policy, timeout_seconds, sim_failure_rate, sim_min_seconds,
       sim_max_seconds, executor, arguments, queue, priority, calendar_id, calendar_policy,
       jitter_seconds, anchor_at
  FROM {job_table}
 WHERE is_active = TRUE AND next_run_at <= %s
 ORDER BY next_run_at LIMIT %s
   FOR UPDATE SKIP LOCKED

-- name: move_jobs
-- A claimed job's next occurrence, only if nobody moved it since it was read (`<=>`
-- is null-safe equality). Each row joined by primary key.
-- params: next_run_at, is_active, job_key, read_next_run_at
-- rows: SELECT %s AS next_run_at, %s AS is_active, %s AS id, %s AS read_next_run_at
UPDATE {job_table} AS t JOIN ({rows}) AS v ON t.id = v.id
   SET t.next_run_at = v.next_run_at, t.is_active = v.is_active
 WHERE t.is_active = TRUE AND t.next_run_at <=> v.read_next_run_at

-- name: insert_runs
-- A second claim of the same occurrence inserts nothing (the unique
-- (job, scheduled_for, attempt) constraint); then the keys inserted, by primary key
-- (each run's key is new, so a key found is a run this statement inserted).
-- rows: (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, `trigger`, not_before,
                         log, worker, created_at, dispatched_at, arguments, queue, priority,
                         started_at, heartbeat_at)
VALUES {rows}
ON DUPLICATE KEY UPDATE id = id;
SELECT id FROM {run_table} WHERE id IN ({keys})

-- name: insert_retry_runs
-- The next attempts of failed runs, pending, in their job's queue and with its
-- priority as they are now: each joined to its job by primary key. A second insert of
-- the same attempt inserts nothing (the unique constraint).
-- rows: SELECT %s AS id, %s AS job_id, %s AS scheduled_for, %s AS attempt, %s AS not_before, %s AS created_at, %s AS arguments
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, `trigger`, not_before,
                         log, worker, created_at, arguments, queue, priority)
SELECT v.id, v.job_id, v.scheduled_for, v.attempt, {pending}, {retry}, v.not_before, '', '',
       v.created_at, v.arguments, j.queue, j.priority
  FROM ({rows}) AS v
  JOIN {job_table} j ON j.id = v.job_id
ON DUPLICATE KEY UPDATE {run_table}.id = {run_table}.id

-- name: insert_skipped_runs
-- Occurrences an overlap policy skips, recorded as finished runs.
-- rows: (%s, %s, %s, 1, {skipped}, {schedule}, %s, %s, '', %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, `trigger`, not_before,
                         log, worker, created_at, finished_at, queue, priority)
VALUES {rows}
ON DUPLICATE KEY UPDATE id = id

-- name: cancel_replaced
-- params: now, note, key
UPDATE {run_table} SET status = {cancelled}, finished_at = %s, log = CONCAT(log, %s)
 WHERE id = %s AND status IN ({pending}, {running})

-- name: record_status_on_jobs
-- A skipped or cancelled run as its job's latest outcome, unless a run that started
-- later has already finished; last_run_at stays the last run that executed.
-- params: status, job_key, at
UPDATE {job_table} SET last_run_status = %s
 WHERE id = %s AND (last_run_at IS NULL OR last_run_at <= %s)

-- name: active_runs
-- The pending and running runs of some jobs, through the status-led indexes
-- jobs_run_pending_ready and jobs_run_running_heartbeat, so it costs in proportion to
-- the backlog and never reads a job's history. Named (FORCE INDEX), as SQLite's
-- INDEXED BY: the optimizer otherwise prefers the job's unique index, whose cost
-- grows with the job's history.
-- params: keys, keys
SELECT job_id, id, status FROM {run_table} FORCE INDEX (jobs_run_pending_ready)
 WHERE status = {pending} AND job_id IN ({keys})
UNION ALL
SELECT job_id, id, status FROM {run_table} FORCE INDEX (jobs_run_running_heartbeat)
 WHERE status = {running} AND job_id IN ({keys})

-- name: start_runs
-- Runs of queues without a limit, by primary key: the ready pending runs locked, then
-- started.
-- params: worker, now, now, now, keys
SELECT id FROM {run_table} FORCE INDEX (PRIMARY)
 WHERE status = {pending} AND not_before <= %s AND id IN ({keys})
   ORDER BY id FOR UPDATE;
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id IN ({keys})

-- name: lock_queue
-- Before a start counts a limited queue's running runs: a named lock of that queue
-- (GET_LOCK), so that starts in other processes wait and then count what this one
-- started. A named lock rather than a row lock: no table has a row per queue, and a
-- row of another table (a job of the queue, the pause switch) would make claims and
-- pauses wait on starts. Named locks are the server's, not the transaction's: the
-- store releases them when the transaction ends (jobs/sql/mysql/store.py), and the
-- name carries the database's (two databases on one server never share a queue) and
-- the queue name's hash (a name is at most 64 characters). A wait of a day: a start
-- waits as long as PostgreSQL's advisory lock would.
-- params: queue
SELECT GET_LOCK(CONCAT('jobs_queue:', DATABASE(), ':', SHA1(%s)), 86400)

-- name: start_limited_runs
-- Runs of one queue with a limit, by primary key, best first (priority, then start
-- time), as many as the queue has room for, after lock_queue: the queue's running
-- runs counted (jobs_run_running_heartbeat), the runs that fit locked, then started.
-- The room is computed between the steps: MySQL's LIMIT takes no expression.
-- params: worker, now, now, now, keys, queue, limit, queue
SELECT COUNT(*) FROM {run_table} WHERE status = {running} AND queue = %s;
SELECT id FROM {run_table}
 WHERE status = {pending} AND not_before <= %s AND id IN ({keys}) AND queue = %s
 ORDER BY priority DESC, not_before LIMIT %s
   FOR UPDATE;
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id IN ({keys})

-- name: take_runs
-- The best pending runs of one queue with a limit that may start now (priority, then
-- start time), at most `most` and as many as the queue has room for, moved to running
-- for `worker`, after lock_queue. An ordered walk of jobs_run_pending_queue
-- (status, queue, priority descending, not_before) from (pending, queue), skipping
-- only runs still in their backoff; the running runs counted as in start_limited_runs.
-- params: worker, now, now, queue, now, most, limit, queue
SELECT COUNT(*) FROM {run_table} WHERE status = {running} AND queue = %s;
SELECT id FROM {run_table}
 WHERE status = {pending} AND queue = %s AND not_before <= %s
 ORDER BY priority DESC, not_before LIMIT %s
   FOR UPDATE;
UPDATE {run_table} SET status = {running}, worker = %s, started_at = %s, heartbeat_at = %s
 WHERE id IN ({keys})

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
-- rows: SELECT %s AS id, %s AS worker, %s AS log
UPDATE {run_table} AS t JOIN ({rows}) AS v ON t.id = v.id
   SET t.log = v.log
 WHERE t.worker = v.worker AND t.status = {running}

-- name: owned_runs
-- Which runs a worker still owns, locked so that the reaper cannot take one between
-- this check and the write.
-- params: worker, keys
SELECT id FROM {run_table} FORCE INDEX (PRIMARY) WHERE status = {running} AND worker = %s AND id IN ({keys})
 ORDER BY id FOR UPDATE

-- name: finish_runs
-- params: status, started_at, finished_at, log, result, worker, key
-- rows: SELECT %s AS status, %s AS started_at, %s AS finished_at, %s AS log, %s AS result, %s AS worker, %s AS id
UPDATE {run_table} AS t JOIN ({rows}) AS v ON t.id = v.id
   SET t.status = v.status, t.started_at = v.started_at, t.finished_at = v.finished_at,
       t.log = v.log, t.result = v.result, t.worker = COALESCE(v.worker, t.worker)

-- name: record_on_jobs
-- A run's start and outcome on its job, never moving last_run_at back.
-- params: started_at, status, job_key, started_again
-- rows: SELECT %s AS started_at, %s AS status, %s AS id, %s AS started_again
UPDATE {job_table} AS t JOIN ({rows}) AS v ON t.id = v.id
   SET t.last_run_at = v.started_at, t.last_run_status = v.status
 WHERE t.last_run_at IS NULL OR t.last_run_at <= v.started_at

-- name: watched_jobs
-- Jobs of a finished batch that send alerts, by primary key, with their count of
-- failed runs in a row, locked (in id order) until the count is written.
-- params: keys
SELECT id, notify_on_failure, notify_on_recovery, alert_after_failures, consecutive_failures
  FROM {job_table}
 WHERE (notify_on_failure OR notify_on_recovery) AND id IN ({keys})
 ORDER BY id
   FOR UPDATE

-- name: record_failure_streaks
-- A watched job's failed runs in a row, as the batch left them.
-- params: consecutive_failures, job_key
-- rows: SELECT %s AS consecutive_failures, %s AS id
UPDATE {job_table} AS t JOIN ({rows}) AS v ON t.id = v.id
   SET t.consecutive_failures = v.consecutive_failures

-- name: lost_runs
-- Running runs whose worker stopped heartbeating: their keys found through index
-- jobs_run_running_heartbeat (status, heartbeat_at) without a lock, then the runs
-- locked by primary key in key order, still stale. Differs because a locking read
-- through that index deadlocked with finish_runs (which locks the run's primary key,
-- then that index's entry; InnoDB's deadlock report of a whole-suite run). Differs from
-- PostgreSQL: MariaDB has no `FOR UPDATE OF`, so the runs' jobs are locked too until
-- the runs are failed (a claim skips such a job for that moment, SKIP LOCKED, and
-- takes it on its next pass).
-- params: cutoff, limit, cutoff, keys
SELECT id FROM {run_table}
 WHERE status = {running} AND heartbeat_at < %s
 ORDER BY heartbeat_at LIMIT %s;
SELECT r.id, r.job_id, j.name, j.command, r.scheduled_for, r.attempt,
       j.max_retries, j.retry_backoff_seconds, j.timeout_seconds, j.sim_failure_rate,
       j.sim_min_seconds, j.sim_max_seconds, j.executor,
       COALESCE(r.arguments, j.arguments), r.queue, r.priority,
       r.worker, r.heartbeat_at, r.started_at, r.process_host, r.process_group
  FROM {run_table} r FORCE INDEX (PRIMARY) JOIN {job_table} j ON j.id = r.job_id
 WHERE r.status = {running} AND r.heartbeat_at < %s AND r.id IN ({keys})
 ORDER BY r.id
   FOR UPDATE

-- name: fail_lost_runs
-- The runs still stale locked, then failed.
-- params: now, note, cutoff, keys
SELECT id FROM {run_table} FORCE INDEX (PRIMARY)
 WHERE status = {running} AND heartbeat_at < %s AND id IN ({keys})
   ORDER BY id FOR UPDATE;
UPDATE {run_table} SET status = {failed}, finished_at = %s, log = CONCAT(log, %s)
 WHERE id IN ({keys})

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
SELECT id FROM {run_table} WHERE id IN ({keys}) AND status = {running} FOR UPDATE;
UPDATE {run_table} SET status = {failed}, finished_at = %s, log = CONCAT(log, %s)
 WHERE id IN ({keys})

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
-- Of several schedulers finding the same run, the one whose locking read still finds
-- it unmarked marks it and alerts.
-- params: now, key
SELECT id FROM {run_table}
 WHERE id IN ({keys}) AND status = {running} AND running_long_at IS NULL FOR UPDATE;
UPDATE {run_table} SET running_long_at = %s WHERE id IN ({keys})

-- name: recent_durations
-- How long a job's newest runs that ran to an outcome took, in seconds: a backward walk
-- of the unique (job_id, scheduled_for, attempt) index until `limit` such runs are
-- found.
-- params: job_key, limit
SELECT TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) / 1000000.0
  FROM {run_table}
 WHERE job_id = %s AND status IN ({success}, {failed})
   AND started_at IS NOT NULL AND finished_at IS NOT NULL
 ORDER BY scheduled_for DESC, attempt DESC LIMIT %s

-- name: pending_queues
-- The queues that have pending runs, in name order: a read of the pending entries of
-- jobs_run_pending_queue (status, queue, ...) alone, never the table. Differs from
-- PostgreSQL's recursive walk (one step per queue): the optimizer may take a loose scan
-- here ("Using index for group-by", one step per queue); MariaDB 10.11 reads every
-- pending entry (EXPLAIN: ref, Using index), which costs in proportion to the backlog.
SELECT queue FROM {run_table} WHERE status = {pending} GROUP BY queue ORDER BY queue

-- name: ready_runs
-- Pending runs of one queue that may start now, best first: higher priority, then the
-- earliest start. An ordered walk of jobs_run_pending_queue from (pending, queue),
-- skipping only runs still in their backoff; each joined to its job by primary key.
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
-- The runs nobody handed out since the cutoff locked, then stamped.
-- params: now, cutoff, keys
SELECT id FROM {run_table} FORCE INDEX (PRIMARY)
 WHERE status = {pending} AND (dispatched_at IS NULL OR dispatched_at < %s)
   AND id IN ({keys})
   ORDER BY id FOR UPDATE;
UPDATE {run_table} SET dispatched_at = %s WHERE id IN ({keys})

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
-- statement, each of the first two a first step into one status-led index,
-- jobs_job_due and jobs_run_pending_ready; the pause is the one row of {state_table},
-- by primary key.
-- params: now
SELECT (SELECT next_run_at FROM {job_table}
         WHERE is_active = TRUE AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1),
       (SELECT not_before FROM {run_table}
         WHERE status = {pending} AND not_before > %s ORDER BY not_before LIMIT 1),
       (SELECT paused_at FROM {state_table} WHERE id = 1),
       (SELECT paused_until FROM {state_table} WHERE id = 1)

-- name: claims_paused
-- Whether claims are paused now, asked inside the claim's transaction before it
-- writes. The row is share-locked whatever it says (LOCK IN SHARE MODE: MariaDB has no
-- FOR SHARE), so a pause waits for the claims in flight to commit.
-- params: now
SELECT paused_at IS NOT NULL AND (paused_until IS NULL OR paused_until > %s)
  FROM {state_table} WHERE id = 1
  LOCK IN SHARE MODE

-- name: cancel_run
-- A run with no output yet gets its command line before the note (first_lines). The
-- run locked and read (what RETURNING gives elsewhere), then cancelled.
-- params: by, now, first_lines, note, key
SELECT job_id, started_at, scheduled_for FROM {run_table}
 WHERE id = %s AND status IN ({pending}, {running})
   FOR UPDATE;
UPDATE {run_table} SET status = {cancelled}, cancelled_by = %s, finished_at = %s,
       log = CASE WHEN log = '' THEN %s ELSE CONCAT(log, %s) END
 WHERE id = %s

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
-- Oldest first, through index jobs_run_recent: the runs locked, then deleted by
-- primary key (MySQL takes no LIMIT in an IN subquery). The ids deleted: their
-- chained runs are unlinked next (unlink_chained_runs).
-- params: cutoff, limit
SELECT id FROM {run_table} WHERE created_at < %s AND status IN ({finished})
 ORDER BY created_at LIMIT %s
   FOR UPDATE;
DELETE FROM {run_table} WHERE id IN ({keys})

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
-- The runs locked, then deleted by primary key, as delete_finished_before.
-- params: job_key, scheduled_for, scheduled_for, attempt, limit
SELECT id FROM {run_table}
 WHERE job_id = %s AND (scheduled_for < %s OR (scheduled_for = %s AND attempt <= %s))
   AND status IN ({finished})
 ORDER BY scheduled_for, attempt LIMIT %s
   FOR UPDATE;
DELETE FROM {run_table} WHERE id IN ({keys})

-- --- chains (jobs/engine/chains.py) ----------------------------------------------------

-- name: any_chains
-- Whether any job has a chain at all: one step into each link table.
SELECT EXISTS (SELECT 1 FROM {on_success_table}) OR EXISTS (SELECT 1 FROM {on_failure_table})

-- name: chaining_jobs
-- Which of these jobs have a chain, read before a finished batch's write transaction.
-- Through the unique (from, to) index of each link table.
-- params: keys, keys
SELECT from_job_id FROM {on_success_table} WHERE from_job_id IN ({keys})
UNION
SELECT from_job_id FROM {on_failure_table} WHERE from_job_id IN ({keys})

-- name: chained_jobs
-- The jobs that runs of these jobs start, with what starting them needs; inside the
-- write transaction that inserts their runs. Differs from PostgreSQL: share-locked
-- (LOCK IN SHARE MODE; there is no FOR KEY SHARE), so a claim moving such a job waits
-- for this transaction, or skips the job for a pass (SKIP LOCKED).
-- params: keys, keys
SELECT c.kind, c.from_job_id, j.id, j.name, j.is_active, j.overlap_policy, j.queue,
       j.priority, j.executor, j.arguments
  FROM (SELECT {success} AS kind, from_job_id, to_job_id FROM {on_success_table}
         WHERE from_job_id IN ({keys})
        UNION ALL
        SELECT {failed}, from_job_id, to_job_id FROM {on_failure_table}
         WHERE from_job_id IN ({keys})) c
  JOIN {job_table} j ON j.id = c.to_job_id
  LOCK IN SHARE MODE

-- name: insert_chained_runs
-- Runs a chain starts, each linked to the run that caused it. A row whose
-- (job, scheduled_for, attempt) is taken inserts nothing; then the keys inserted.
-- rows: (%s, %s, %s, 1, %s, {chain}, %s, %s, '', %s, %s, %s, %s, %s, %s)
INSERT INTO {run_table} (id, job_id, scheduled_for, attempt, status, `trigger`, not_before,
                         log, worker, created_at, finished_at, caused_by_id, queue, priority,
                         arguments)
VALUES {rows}
ON DUPLICATE KEY UPDATE id = id;
SELECT id FROM {run_table} WHERE id IN ({keys})

-- name: unlink_chained_runs
-- Runs whose cause was just deleted stay, linked to nothing. Through the index
-- jobs_run_caused_by (all runs here: NULLs too, so the key is looked up, not scanned).
-- params: keys
UPDATE {run_table} SET caused_by_id = NULL
 WHERE caused_by_id IS NOT NULL AND caused_by_id IN ({keys})

-- name: delete_run_notifications
-- The alert attempts of runs just deleted (the raw deletes of the pruning do not
-- cascade as the ORM's would). Through the index of that foreign key.
-- params: keys
DELETE FROM {notification_table} WHERE run_id IN ({keys})

-- name: timeline_jobs
-- Every job, with what the Upcoming page counts its occurrences from: the id as 32 hex
-- digits (MariaDB's UUID text has dashes) and the times as whole microseconds since
-- the epoch (TIMESTAMPDIFF is exact integer arithmetic). Then what the calendar, the
-- windows and the jitter of the rows shown need. No parameters.
SELECT REPLACE(CAST(id AS CHAR), '-', ''), name, schedule_type, `interval`, interval_unit,
       cron_expression, timezone, is_active,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', next_run_at),
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', scheduled_at),
       calendar_id, calendar_policy, jitter_seconds, queue,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', anchor_at)
  FROM {job_table}

-- name: record_processes
-- Where a running run's processes are (its host and process group), while its worker
-- still runs it.
-- params: host, group, key, worker
UPDATE {run_table} SET process_host = %s, process_group = %s
 WHERE id = %s AND worker = %s AND status = {running}

-- name: append_run_log
-- A line added to a run's log whatever its status; its job's id: the run locked and
-- read, then written.
-- params: note, key
SELECT job_id FROM {run_table} WHERE id = %s FOR UPDATE;
UPDATE {run_table} SET log = CONCAT(log, %s) WHERE id = %s
