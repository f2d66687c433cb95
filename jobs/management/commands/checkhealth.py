"""`python manage.py checkhealth`: is the scheduler down? For cron or a monitoring probe.

Exit 0 and "ok" (or "ok: paused ...": a paused scheduler is not down); exit 1 and one
line saying why. It also opens or closes the incident and sends its alert or recovery
notice (once per incident, whoever notices: jobs/alerts/health.py), unless --no-alerts:
when every scheduler process is gone, only a probe like this one is left to notice.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import DatabaseError

from jobs.alerts import health
from jobs.text import one_line


class Command(BaseCommand):
    help = (
        "Exit 0 if the scheduler is up (or paused), 1 with the reason if it is down; "
        "alerts JOBS_ADMIN_ALERT_URL / JOBS_ADMIN_ALERT_EMAILS once per incident."
    )
    # A probe answers, whatever the state of the site: no system checks first. Some
    # of them connect to the database (a JSONField's asks SQLite for JSON support on
    # Django 6.1), and a database that is gone must be a "down" line, not a traceback.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-alerts",
            action="store_true",
            help="only report: open or close no incident, send nothing",
        )
        parser.add_argument(
            "--quiet", action="store_true", help="print nothing when the scheduler is up"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            found = health.assess() if options["no_alerts"] else health.watch()
        except DatabaseError as exc:
            # No database, no decision about incidents: cron's own mail says it.
            self._down(f"the database did not answer: {one_line(str(exc))}")
        if found.status == health.DOWN:
            self._down(found.reason)
        if not options["quiet"]:
            self.stdout.write("ok" if found.status == health.OK else f"ok: {found.reason}")

    def _down(self, reason: str) -> None:
        self.stdout.write(f"down: {reason}")
        raise SystemExit(1)
