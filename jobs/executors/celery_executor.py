"""The celery executor: a run sends its job's task to the project's own Celery workers.

The job's command is the task's registered name, its arguments ``args`` and ``kwargs``
(jobs/executors/celery_names.py); the run's queue is the Celery queue (JOBS_CELERY_QUEUES
renames), the run's id the task id, the job's timeout Celery's ``time_limit`` and
``expires``. With a result backend (JOBS_CELERY_WAIT=result, the default when the app
has one) the run follows the task to its end: the worker that took it, its retries, its
return value or its traceback reach the run's log, and the run ends as the task does.
Without one (or with JOBS_CELERY_WAIT=sent) the run succeeds once the broker accepted
the task, and its log says that this is all that is known.

A cancel or the job's timeout revokes the task (a running one is terminated). When the
scheduler stops, the run is handed back as it is and the next scheduler follows the
same task; when it is killed, the reaper hands the run back the same way (the kind's
``resumes_lost_runs``). Either way the task is sent once: see jobs/executors/celery_app.py.
"""

from __future__ import annotations

from datetime import UTC, datetime

from celery import states
from django.core.exceptions import ImproperlyConfigured

from jobs import conf
from jobs.executors import celery_app
from jobs.executors.base import STOP_SHUTDOWN, ExecutionContext, Outcome
from jobs.executors.celery_names import call_arguments
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.pytasks.signature import short_repr
from jobs.runs import RunTicket

# As much of a task's return value as a python task's reaches the log.
RESULT_MAX_CHARS = 2000
# The first looks at a followed task come this soon, then twice as far apart each time
# up to JOBS_CELERY_POLL_SECONDS: a task of a few milliseconds is seen done at once, a
# long one costs a read per poll interval.
FIRST_POLL_SECONDS = 0.01
# What can go wrong talking to the broker or the result backend: each transport and
# backend raises errors of its own (redis-py's, kombu's, a database driver's), so any
# error there means "not reached"; the message names it.
SEND_ERRORS = (Exception,)


def _stamp() -> str:
    return f"[{datetime.now(UTC):%H:%M:%S} UTC]"


class CeleryExecutor:
    """Sends the run's task once, then follows it through the result backend."""

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output  # read by the live log
        output.line(command_line("celery", ticket.command))
        try:
            app = celery_app.app()
            follow = celery_app.follows_results(app)
        except ImproperlyConfigured as error:
            output.line(f"not run: {error}.")
            return Outcome(succeeded=False, log=output.text())
        task_id = str(ticket.run_id)
        queue = celery_app.celery_queue(app, ticket.queue)
        output.line(f"Celery task id {task_id} (the run's id), queue {queue}")
        try:
            sent_before = follow and celery_app.task_state(app, task_id).state != states.PENDING
            if sent_before:
                output.line(
                    "sent before by an earlier worker of this run (its scheduler stopped or "
                    "was lost): following that task, not sending it again."
                )
            else:
                call = call_arguments(ticket.arguments)
                # A known task's arguments cannot hold scheduled_for (the job's rules).
                when = celery_app.scheduled_for_kwargs(app, ticket.command, ticket.scheduled_for)
                call = call._replace(kwargs={**when, **call.kwargs})
                sending = celery_app.Sending(
                    ticket.command,
                    task_id,
                    call,
                    queue,
                    ticket.timeout_seconds,
                )
                celery_app.send(app, sending, mark=follow)
                output.line(f"{_stamp()} sent: the broker accepted the task.")
        except SEND_ERRORS as error:
            output.line(
                f"not sent: the Celery broker or result backend cannot be reached: {error!r}"
            )
            return Outcome(succeeded=False, log=output.text())
        if not follow:
            output.line(
                "Not followed further (no result backend, or JOBS_CELERY_WAIT=sent): that "
                "the broker accepted the task is all this site knows; Celery's worker "
                "says how it went."
            )
            return Outcome(succeeded=True, log=output.text())
        return _follow(app, task_id, queue, context, output)


def _follow(app, task_id: str, queue: str, context: ExecutionContext, output: RunOutput) -> Outcome:
    """Follow the task to its end, or until the run is stopped."""
    delay = FIRST_POLL_SECONDS
    poll = conf.celery_poll_seconds()
    seen = ""
    ran_on = ""  # the worker's name, once the backend says it (a started or ended task)
    unreachable = False
    while True:
        if context.stop_requested:
            return _stopped(app, task_id, context, output, seen)
        try:
            state = celery_app.task_state(app, task_id)
        except SEND_ERRORS as error:
            if not unreachable:
                output.line(
                    f"{_stamp()} the result backend cannot be reached ({error}); trying again"
                )
            unreachable = True
        else:
            unreachable = False
            ran_on = state.worker or ran_on
            if state.state != seen or state.state == states.RETRY:
                _describe(state, queue, output, seen)
                seen = state.state
            if state.done:
                return Outcome(
                    succeeded=state.state == states.SUCCESS, log=output.text(), ran_on=ran_on
                )
        context.stop.wait(delay)
        delay = min(delay * 2, poll)


def _describe(state: celery_app.TaskState, queue: str, output: RunOutput, seen: str) -> None:
    """The log's line for a state newly seen."""
    on = f" on {state.worker}" if state.worker else ""
    if state.state == celery_app.SENT:
        output.line(f"{_stamp()} waiting for a Celery worker to take it from queue {queue}")
    elif state.state == states.STARTED:
        output.line(f"{_stamp()} started{on}")
    elif state.state == states.RETRY:
        if seen == states.RETRY:
            return  # the same retry, seen again
        output.line(f"{_stamp()} Celery retries the task{on}: {short_repr(state.result, 500)}")
    elif state.state == states.SUCCESS:
        output.line(f"{_stamp()} succeeded{on}")
        output.line(f"returned: {short_repr(state.result, RESULT_MAX_CHARS)}")
    elif state.state == states.FAILURE:
        output.line(f"{_stamp()} failed{on}: {short_repr(state.result, 500)}")
        if state.traceback:
            output.write(state.traceback)
    elif state.state == states.REVOKED:
        output.line(
            f"{_stamp()} revoked in Celery{on} (by someone else, or it expired: not started "
            "within the job's timeout)"
        )
    else:
        output.line(f"{_stamp()} state {state.state}{on}")


def _stopped(app, task_id: str, context: ExecutionContext, output: RunOutput, seen: str) -> Outcome:
    """The run was asked to stop: a shutdown hands it back (the task goes on, the next
    scheduler follows it); a cancel or a timeout revokes the task."""
    if context.reason == STOP_SHUTDOWN:
        context.hand_back = True
        output.line(
            f"{_stamp()} this scheduler is stopping: the run is handed back as it is, and "
            "the next scheduler follows the same task."
        )
        return Outcome(succeeded=False, log=output.text())
    try:
        celery_app.revoke(app, task_id)
        output.line(
            f"{_stamp()} {context.stop_words()}: revoked the task (a worker running it ends it)."
        )
    except SEND_ERRORS as error:
        output.line(f"{_stamp()} {context.stop_words()}, but revoking the task failed: {error}")
    if seen in ("", celery_app.SENT):
        output.line(
            "no Celery worker had taken the task: is one consuming its queue, with the "
            "task registered?"
        )
    return Outcome(succeeded=False, log=output.text())
