"""`python manage.py runscheduler`: the long-running scheduler (and its worker threads)."""

from __future__ import annotations

import gc
import logging
import signal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs import alerts, codesync, conf, metrics
from jobs.alerts import health
from jobs.queues import settings as queues
from jobs.runtime.run_summary import RunSummary
from jobs.runtime.scheduler import DEFAULT_TICK, DEFAULT_WORKERS, Scheduler

MAX_WORKERS = 256
DEFAULT_SUMMARY_EVERY = 60.0

logger = logging.getLogger("jobs.codesync")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise CommandError(f"--workers must be a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_WORKERS:
        raise CommandError(f"--workers must be between 1 and {MAX_WORKERS}, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"--tick must be a number of seconds, got {text!r}") from None
    if not 0.01 <= value <= 3600:
        raise CommandError(f"--tick must be between 0.01 and 3600 seconds, got {value}")
    return value


def _queues(text: str) -> frozenset[str]:
    try:
        return queues.parse_names(text, "--queues")
    except queues.QueueError as exc:
        raise CommandError(str(exc)) from None


def _summary_every(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"--summary-every must be a number of seconds, got {text!r}") from None
    if not (value == 0 or 0.1 <= value <= 86400):
        raise CommandError(
            f"--summary-every must be 0 (no summary) or between 0.1 and 86400 seconds, got {value}"
        )
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise CommandError(f"--metrics-port must be a whole number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise CommandError(f"--metrics-port must be between 1 and 65535, got {value}")
    return value


class Command(BaseCommand):
    help = "Run due jobs on time: claims due runs, executes them in worker threads, reaps."
    # Only the checks of the settings the scheduler runs by (queues, alerts): a wrong one
    # stops the start with its message. The others are the site's (templates, URLs,
    # admin, models) and loading what they check was half of a --once process's
    # start-up; `manage.py check` and `migrate` (which deployments run first) still run them all.
    requires_system_checks = [conf.SETTINGS_CHECKS]

    def run_from_argv(self, argv: list[str]) -> None:
        # A process of its own (call_command does not come here): what start-up loaded,
        # the modules, classes and settings, lives as long as the process. Frozen, the
        # collector stops walking it again: each full collection of the loop (a pause of
        # tens of ms between two due times) and the last one at exit (a tenth of a
        # second after the work of --once was done) walk only what came after.
        gc.freeze()
        super().run_from_argv(argv)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--workers",
            type=_positive_int,
            default=DEFAULT_WORKERS,
            help=f"worker threads executing runs (default {DEFAULT_WORKERS})",
        )
        parser.add_argument(
            "--once",
            action="store_true",
            help="one full pass: claim what is due, run it to the end, reap, exit",
        )
        parser.add_argument(
            "--tick",
            type=_positive_float,
            default=DEFAULT_TICK,
            help=f"longest sleep between passes, in seconds (default {DEFAULT_TICK})",
        )
        parser.add_argument(
            "--queues",
            type=_queues,
            default=None,
            help=(
                "execute only the runs of these queues, comma-separated (default: every "
                "queue); due jobs of every queue are still claimed"
            ),
        )
        parser.add_argument(
            "--summary-every",
            type=_summary_every,
            default=DEFAULT_SUMMARY_EVERY,
            help=(
                "log how many runs succeeded and failed every this many seconds, when some "
                f"finished (default {DEFAULT_SUMMARY_EVERY:g}; 0: never)"
            ),
        )
        parser.add_argument(
            "--metrics-port",
            type=_port,
            default=None,
            help="serve this process's Prometheus metrics over HTTP on this port",
        )
        parser.add_argument(
            "--metrics-address",
            default="127.0.0.1",
            help="address the metrics port listens on (default 127.0.0.1; 0.0.0.0 for all)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if conf.sync_on_start():
            self._sync()
        if options["metrics_port"] is not None:
            try:
                metrics.serve_scheduler_metrics(options["metrics_port"], options["metrics_address"])
            except OSError as exc:
                raise CommandError(f"cannot serve metrics: {exc}") from None
        try:
            self._run(options)
        finally:
            # Let alerts of the last runs go out (they are sent in background threads),
            # and a scheduler-down or recovery notice being sent.
            alerts.shutdown(timeout=conf.shutdown_grace())
            health.flush(timeout=conf.shutdown_grace())

    def _sync(self) -> None:
        """The schedules declared in code, synced before anything runs (JOBS_SYNC_ON_START):
        a wrong declaration stops the start, changing nothing."""
        try:
            report = codesync.sync(actor="runscheduler")
        except codesync.DeclarationError as error:
            raise CommandError(
                "not starting: the schedules in code cannot be synced; nothing was changed "
                f"(JOBS_SYNC_ON_START):\n{error}"
            ) from None
        for line in report.lines():
            logger.info(line)

    def _run(self, options: dict[str, Any]) -> None:
        if options["once"]:
            # One pass, run to the end here: even with Huey configured, --once executes
            # in this process so that it returns when the work is done.
            scheduler = Scheduler(
                workers=options["workers"], tick=options["tick"], queues=options["queues"]
            )
            stats = scheduler.run_once()
            self.stdout.write(
                f"claimed {stats.claimed} runs, ran {stats.fed}, reaped {stats.reaped}"
            )
            return
        # With Huey, runs are handed to `run_huey` workers instead of this process's threads.
        # --queues: with Huey, the queues this process hands out.
        served = options["queues"]
        to_huey = None
        if conf.uses_huey():
            # Here, not at the top: a project without Huey never imports huey or redis.
            from jobs.huey.tasks import handoff

            to_huey = handoff(served)
        scheduler = Scheduler(
            workers=options["workers"], tick=options["tick"], handoff=to_huey, queues=served
        )
        # Said before the wait, so that Ctrl-C is never followed by silence.
        scheduler.on_stop_wait = self._say_waiting

        def stop(signum: int, frame: object) -> None:
            # Only set a flag: the loop notices it between units of work.
            scheduler.request_stop()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        summary = RunSummary(options["summary_every"]) if options["summary_every"] else None
        if summary is not None:
            summary.start()
        try:
            scheduler.serve()
        finally:
            if summary is not None:
                summary.stop()

    def _say_waiting(self, runs: int, grace: float) -> None:
        noun = "run" if runs == 1 else "runs"
        self.stdout.write(f"stopping: waiting for {runs} {noun} (up to {grace:g} s)")
        self.stdout.flush()
